"""Trust round 3 (issue #32), sections 4 and 5: output paths that are inputs or each other or
have the wrong extension, hostile query logs for ``judge sample``, baselines that lost their
checksums or a retriever, reports under a crashing xdist worker, Markdown that a name or a query
could turn into HTML or links, and the small ones (a suggestion equal to the key, the ini
``retrieval_baseline_update``, TOML lists for path keys, non-ASCII digits in ``--gains``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_retrieval import cli
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError

from .conftest import bounded, one_line


def _cli_error(capsys, argv) -> str:
    with bounded():
        rc = cli.main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2, (rc, err)
    one_line(err)
    return err


# ------------------------------------------------------------------ the small ones


def test_a_misspelt_key_is_never_suggested_back_to_itself(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: t\njudgments:\n  inline:\n    - {query_id: q1, text: hi, relevant: {d1: 1}}\n"
        "  documents:\n    - {id: d1, text: hi}\nretrievers:\n  bm: {type: bm25}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_suite(suite)
    message = str(info.value)
    one_line(message, "unknown key 'query_id'", "keys here: id, relevant, tags, text")
    assert "did you mean 'query_id'" not in message


def test_a_misspelt_key_still_gets_its_suggestion(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: t\njudgments:\n  inline:\n    - {id: q1, txt: hi, relevant: {d1: 1}}\n"
        "  documents:\n    - {id: d1, text: hi}\nretrievers:\n  bm: {type: bm25}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_suite(suite)
    one_line(str(info.value), "unknown key 'txt' (did you mean 'text'?)")


@pytest.mark.parametrize("gains", ["\u0661:3", "1:\u0663", "\uff11:3", "1_0:3", "1:1_0", "\u0967:2"])
def test_gains_take_ascii_digits_only(gains: str) -> None:
    from pytest_retrieval.measures.gains import parse_gains

    with pytest.raises(ValueError, match="is not GRADE:GAIN"):
        parse_gains(gains)
    assert parse_gains("0:0,1:1.5,2:3e0,+3:4") == {0: 0.0, 1: 1.5, 2: 3.0, 3: 4.0}


def test_gains_with_arabic_indic_digits_are_one_line_on_the_command_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1.0 t\n")
    with pytest.raises(SystemExit) as info:
        cli.main(["evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "--gains", "\u0661:3"])
    assert info.value.code == 2
    one_line(capsys.readouterr().err, "--gains", "is not GRADE:GAIN")


def test_the_ini_opt_in_to_rewrite_baselines_is_always(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from .conftest import BASE, FLOORS

    (tmp_path / "retrieval_s.yaml").write_text(BASE + FLOORS)
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nretrieval_baseline_update = "always"\n')
    env = {**os.environ, "GITHUB_STEP_SUMMARY": ""}
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--retrieval-no-latency"]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(tmp_path.rglob("*baseline*.json")), done.stdout


# ------------------------------------------------------------------ Markdown and golden queries


def _github_html(markdown: str) -> str:
    """``markdown`` as GitHub renders it (cmark-gfm, GitHub's fork of cmark, with its
    extensions: autolinks, tables)."""
    try:
        import cmarkgfm
    except ImportError:  # pragma: no cover - a test extra
        from ..ci import unavailable

        unavailable("cmarkgfm is not installed (pip install 'pytest-retrieval[test]')")
    return cmarkgfm.github_flavored_markdown_to_html(markdown)


QUERY_TEXTS = [
    "see https://evil.example/login now",
    "www.evil.example deals",
    "HTTP://EVIL.EXAMPLE",
    "mail bob_x@corp.example.com",
    "ftp://files.example/x",
]


@pytest.mark.parametrize("text", QUERY_TEXTS)
def test_a_url_in_a_query_text_is_no_link_on_github(text: str) -> None:
    from pytest_retrieval.reports.markdown import esc

    assert "<a " in _github_html(text)  # GitHub would link it as it is
    html = _github_html(f"**`q1`** {esc(text)} — ndcg@10")
    assert "<a " not in html, html
    assert "ndcg@10" in html  # a metric's @ stays as it is


def test_an_expectation_name_with_markup_is_escaped_in_the_markdown() -> None:
    from pytest_retrieval.reports.markdown import render_markdown

    name = '<img src=x onerror="alert(1)"> see https://evil.example'
    doc = {
        "suites": [
            {
                "name": "s",
                "items": [
                    {
                        "retriever": "bm25",
                        "gate": f"expect[{name}]",
                        "outcome": "failed",
                        "message": f"golden query {name}: d1 not in the top 10",
                    }
                ],
            }
        ]
    }
    md = render_markdown(doc)
    html = _github_html(md)
    assert "<img" not in html  # the message's fenced block shows it as text
    assert "expect\\[&lt;img src=x" in md
    assert 'href="https://evil.example' not in html


def test_assert_ranked_above_a_document_and_itself_is_refused() -> None:
    from pytest_retrieval import assert_ranked_above
    from pytest_retrieval.execution.hits import Hit

    hits = [Hit("d1", 2.0, 1), Hit("d2", 1.0, 2)]
    with pytest.raises(ValueError, match="a and b are both 'd1'"):
        assert_ranked_above(hits, "d1", "d1")
    assert_ranked_above(hits, "d1", "d2")
