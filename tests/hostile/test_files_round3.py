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
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nretrieval_baseline_update = "always"\n'
    )
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


# ------------------------------------------------------------------ output paths (section 4)

LOG = "query,count\nsolar panels,3\nriver floods,2\n"


def _sample_case(t: Path) -> list:
    (t / "log.csv").write_text(LOG)
    return ["judge", "sample", t / "log.csv", "--no-progress"]


OUTPUT_CASES = [
    # (name, argv after the command's inputs, fragments of the one line)
    (
        "sample: --out is the log",
        lambda t: _sample_case(t) + ["--out", t / "log.csv"],
        ["--out", "log.csv", "which is read"],
    ),
    (
        "sample: --out is the log by another spelling",
        lambda t: _sample_case(t) + ["--out", t / "sub" / ".." / "log.csv"],
        ["--out", "which is read"],
    ),
    (
        "sample: --out and --tags-out one file",
        lambda t: _sample_case(t) + ["--out", t / "q.jsonl", "--tags-out", t / "q.jsonl"],
        ["--out", "--tags-out", "one file for two outputs"],
    ),
    (
        "sample: --out q.csv gets JSON lines",
        lambda t: _sample_case(t) + ["--out", t / "q.csv"],
        ["--out", "q.csv", "writes queries (JSON lines, or TSV)", ".jsonl"],
    ),
    (
        "sample: --tags-out t.json",
        lambda t: _sample_case(t) + ["--out", t / "q.jsonl", "--tags-out", t / "t.json"],
        ["--tags-out", "writes tags"],
    ),
    (
        "clicks: --qrels-out is the log",
        lambda t: (
            _sample_case(t)[:0] + ["judge", "clicks", _write(t / "c.csv", LOG), "--qrels-out", t / "c.csv"]
        ),
        ["--qrels-out", "c.csv", "which is read"],
    ),
    (
        "clicks: --queries-out and --qrels-out one file",
        lambda t: [
            "judge",
            "clicks",
            _write(t / "c.csv", LOG),
            "--qrels-out",
            t / "o.txt",
            "--queries-out",
            t / "o.txt",
        ],
        ["--qrels-out", "--queries-out", "one file"],
    ),
    (
        "import: --out is an annotation file",
        lambda t: [
            "judge",
            "import",
            _write(t / "a.csv", "query_id,doc_id,grade\nq1,d1,1\n"),
            "--qrels",
            t / "q.txt",
            "--out",
            t / "a.csv",
        ],
        ["--out", "a.csv", "which is read"],
    ),
    (
        "import: --qrels q.csv would get TREC",
        lambda t: [
            "judge",
            "import",
            _write(t / "a.csv", "query_id,doc_id,grade\nq1,d1,1\n"),
            "--qrels",
            t / "q.csv",
        ],
        ["--qrels", "writes qrels"],
    ),
    (
        "pool: --out is the suite",
        lambda t: ["judge", "pool", _write(t / "s.jsonl", "{}"), "--out", t / "s.jsonl"],
        ["--out", "s.jsonl", "which is read"],
    ),
    (
        "llm: --out is the pairs file, before any request",
        lambda t: [
            "judge",
            "llm",
            _write(t / "p.jsonl", "{}"),
            "--out",
            t / "p.jsonl",
            "--provider",
            "callable",
            "--function",
            "no_such_module_x:f",
        ],
        ["--out", "p.jsonl", "which is read"],
    ),
    (
        "llm: --failures is the cache",
        lambda t: [
            "judge",
            "llm",
            _write(t / "p.jsonl", "{}"),
            "--out",
            t / "q.txt",
            "--failures",
            t / "c.jsonl",
            "--cache",
            t / "c.jsonl",
            "--provider",
            "callable",
            "--function",
            "no_such_module_x:f",
        ],
        ["--failures", "--cache", "one file"],
    ),
    (
        "llm: --out q.json",
        lambda t: [
            "judge",
            "llm",
            _write(t / "p.jsonl", "{}"),
            "--out",
            t / "q.json",
            "--provider",
            "callable",
            "--function",
            "no_such_module_x:f",
        ],
        ["--out", "writes qrels"],
    ),
    (
        "synth: --out and --qrels-out one file",
        lambda t: [
            "judge",
            "synth",
            "--corpus",
            _write(t / "c.jsonl", "{}"),
            "--out",
            t / "o.jsonl",
            "--qrels-out",
            t / "o.jsonl",
            "--provider",
            "callable",
            "--function",
            "no_such_module_x:f",
        ],
        ["--out", "--qrels-out", "one file"],
    ),
    (
        "synth: --qrels-out is the corpus",
        lambda t: [
            "judge",
            "synth",
            "--corpus",
            _write(t / "c.jsonl", "{}"),
            "--out",
            t / "o.jsonl",
            "--qrels-out",
            t / "c.jsonl",
            "--provider",
            "callable",
            "--function",
            "no_such_module_x:f",
        ],
        ["--qrels-out", "which is read"],
    ),
    (
        "report: --markdown is the report",
        lambda t: ["report", _write(t / "r.json", "{}"), "--markdown", t / "r.json"],
        ["--markdown", "r.json", "which is read"],
    ),
    (
        "report: --html and --markdown one file",
        lambda t: [
            "report",
            _write(t / "r.json", "{}"),
            "--markdown",
            t / "o.txt",
            "--openmetrics",
            t / "o.txt",
        ],
        ["--markdown", "--openmetrics", "one file"],
    ),
    (
        "report: --html r.md",
        lambda t: ["report", _write(t / "r.json", "{}"), "--html", t / "r.md"],
        ["--html", "writes HTML", ".html"],
    ),
    (
        "compare: --markdown is a report",
        lambda t: [
            "compare",
            _write(t / "a.json", "{}"),
            _write(t / "b.json", "{}"),
            "--markdown",
            t / "b.json",
        ],
        ["--markdown", "b.json", "which is read"],
    ),
]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize("name,argv,fragments", OUTPUT_CASES, ids=[c[0] for c in OUTPUT_CASES])
def test_an_output_path_that_is_an_input_or_another_output_is_refused(
    tmp_path: Path, capsys, name: str, argv, fragments
) -> None:
    args = argv(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    err = _cli_error(capsys, args)
    one_line(err, *fragments)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # nothing written, nothing overwritten


def test_a_hard_link_or_a_symbolic_link_to_the_input_is_the_input(tmp_path: Path, capsys) -> None:
    import os

    (tmp_path / "log.csv").write_text(LOG)
    os.link(tmp_path / "log.csv", tmp_path / "hard.jsonl")
    os.symlink(tmp_path / "log.csv", tmp_path / "soft.jsonl")
    for out in ("hard.jsonl", "soft.jsonl"):
        err = _cli_error(capsys, ["judge", "sample", tmp_path / "log.csv", "--out", tmp_path / out])
        one_line(err, f"--out {tmp_path / out}", "which is read")
    assert (tmp_path / "log.csv").read_text() == LOG


def test_the_output_check_passes_what_it_should() -> None:
    from pytest_retrieval.output_paths import Output, check_outputs

    check_outputs(
        [
            Output("--out", "q.jsonl", "queries"),
            Output("--tags-out", "t.tsv", "tags"),
            Output("--x", None, "json"),
        ],
        [("the log", "log.csv"), ("--corpus", None)],
    )
    check_outputs([Output("--qrels-out", "dev.qrels", "qrels"), Output("--out", "q", "queries")])  # no claim
    check_outputs([Output("--markdown", "SUMMARY.MD", "markdown")])  # case of the extension


PYTEST_OUTPUT_CASES = [
    (
        ["--retrieval-report=o.json", "--retrieval-markdown=o.json"],
        ["--retrieval-report", "--retrieval-markdown", "one file"],
    ),
    (["--retrieval-report=r.md"], ["--retrieval-report r.md", "writes JSON"]),
    (
        ["--retrieval-html=floors.yaml", "--retrieval-override=floors.yaml"],
        ["--retrieval-html", "which is read"],
    ),
    (["--retrieval-export-unjudged=u.csv"], ["--retrieval-export-unjudged", "writes JSON lines"]),
    (["--retrieval-runs=out", "--retrieval-html=out"], ["--retrieval-html", "--retrieval-runs", "one file"]),
]


@pytest.mark.parametrize("args,fragments", PYTEST_OUTPUT_CASES, ids=[a[0] for a, _ in PYTEST_OUTPUT_CASES])
def test_pytest_outputs_that_collide_are_refused_when_pytest_starts(tmp_path: Path, args, fragments) -> None:
    import os
    import subprocess
    import sys

    from .conftest import BASE, FLOORS

    (tmp_path / "retrieval_s.yaml").write_text(BASE + FLOORS)
    (tmp_path / "floors.yaml").write_text(FLOORS)
    env = {**os.environ, "GITHUB_STEP_SUMMARY": ""}
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    said = done.stdout + done.stderr
    assert done.returncode == 4, said
    line = next(x for x in said.splitlines() if fragments[0] in x)
    one_line(line, *fragments)
    assert (tmp_path / "floors.yaml").read_text() == FLOORS


# ------------------------------------------------------------------ judge sample (section 4)


def _sample(tmp_path: Path, log: str, *args: str, name: str = "log.csv"):
    (tmp_path / name).write_text(log, encoding="utf-8")
    argv = ["judge", "sample", tmp_path / name, "--out", tmp_path / "q.jsonl", "--no-progress", *args]
    with bounded():
        return cli.main([str(a) for a in argv])


@pytest.mark.parametrize(
    "log,line",
    [
        ('query,count\n"solar" panels,3\nriver,2\n', 2),  # text after a closing quote
        ('query,count\nriver,2\n"solar panels,3\nwind,1\n', 3),  # a quote never closed
    ],
    ids=["text-after-quote", "unclosed-quote"],
)
def test_malformed_csv_quoting_is_an_error_with_its_line(tmp_path: Path, capsys, log: str, line: int) -> None:
    assert _sample(tmp_path, log) == 2
    one_line(capsys.readouterr().err, f"log.csv:{line}", "malformed CSV quoting")
    assert not (tmp_path / "q.jsonl").exists()


def test_a_header_naming_a_column_twice_is_refused(tmp_path: Path, capsys) -> None:
    assert _sample(tmp_path, "query,count,Query\nsolar,3,wind\n") == 2
    one_line(capsys.readouterr().err, "log.csv:1", "names the column 'query' twice")


def test_rows_empty_after_folding_are_counted(tmp_path: Path, capsys) -> None:
    assert _sample(tmp_path, "query,count\nsolar panels,3\n???,4\n  ,2\n...,1\nwind,0\n") == 0
    out = capsys.readouterr()
    said = out.out + out.err
    assert "3 row(s) left out: their query text is empty once folded" in said, said
    assert "1 row(s) with count 0 left out" in said, said


def test_n_with_quota_must_equal_the_quotas(tmp_path: Path, capsys) -> None:
    log = "query,count,locale\nsolar,3,de\nwind,2,de\nriver,2,en\nrain,1,en\n"
    assert (
        _sample(tmp_path, log, "--stratify", "locale", "--quota", "de=1", "--quota", "en=1", "-n", "5") == 2
    )
    one_line(capsys.readouterr().err, "-n 5 with --quota", "give -n 2 or leave -n out")
    assert (
        _sample(tmp_path, log, "--stratify", "locale", "--quota", "de=1", "--quota", "en=1", "-n", "2") == 0
    )
    assert _sample(tmp_path, log, "--stratify", "locale", "--quota", "de=2", "--quota", "en=1") == 0
    assert len((tmp_path / "q.jsonl").read_text().splitlines()) == 3


PII_TEXTS = [
    ("mail ｊｏｈｎ＠ｅｘａｍｐｌｅ．ｃｏｍ please", "email"),
    ("josé@exämple.com refund", "email"),
    ("call ０３０ １２３４ ５６７８", "phone"),
    ("call 555 - 123 - 4567", "phone"),
    ("call 030/123 4567", "phone"),
    ("call 555\u2013123\u20134567", "phone"),
    ("call 555.123-4567", "phone"),
    ("call 555\u00a0123\u00a04567", "phone"),
    ("order １２３４５６７８９", "digits"),
]


@pytest.mark.parametrize("text,kind", PII_TEXTS)
def test_the_pii_guard_runs_on_folded_text(text: str, kind: str) -> None:
    from pytest_retrieval.judge.querytext import find_pii, mask_pii

    assert [k for k, _, _ in find_pii(text)] == [kind]
    masked, counts = mask_pii(text)
    assert counts == {kind: 1} and f"[{'number' if kind == 'digits' else kind}]" in masked
    assert text.startswith(masked.split("[")[0])  # the original span is masked, the rest kept


@pytest.mark.parametrize(
    "text", ["p 0.53 (0.27-1.04)", "pages 12442-12448", "ndcg@10 vs bm25", "iso 9001 2015"]
)
def test_the_pii_guard_leaves_what_is_no_pii(text: str) -> None:
    from pytest_retrieval.judge.querytext import find_pii

    assert find_pii(text) == []


def test_full_width_pii_is_dropped_by_judge_sample(tmp_path: Path, capsys) -> None:
    log = "query,count\nmail ｊｏｈｎ＠ｅｘａｍｐｌｅ．ｃｏｍ,3\nsolar,2\n"
    assert _sample(tmp_path, log) == 0
    written = (tmp_path / "q.jsonl").read_text(encoding="utf-8")
    assert "ｊｏｈｎ" not in written and "solar" in written


# ------------------------------------------------------------------ xdist: a worker that crashes

_PASSING_SUITE = """\
suite: a
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
    - {id: q2, text: "river floods", relevant: {d2: 1}}
  documents:
    - {id: d1, text: "solar panels in winter"}
    - {id: d2, text: "river flood defences"}
latency: {enabled: false}
retrievers:
  bm25: {type: bm25}
floors:
  bm25: {ndcg@10: 0.1}
"""
_ERRORING_SUITE = """\
suite: b
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
backend:
  type: python
  function: "boom_fn:search"
latency: {enabled: false}
retrievers:
  svc: {type: service}
floors:
  svc: {ndcg@10: 0.1}
"""


def test_a_worker_that_crashes_after_its_suite_keeps_it_in_the_report(tmp_path: Path) -> None:
    """Each suite's folder is one xdist scope (one worker): its YAML items run, then the test
    beside it kills the worker (``os._exit``) before the end-of-session hand-over."""
    import json
    import os
    import subprocess
    import sys

    for folder, suite in (("a", _PASSING_SUITE), ("b", _ERRORING_SUITE)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"retrieval_{folder}.yaml").write_text(suite)
        (tmp_path / folder / f"test_zz_crash_{folder}.py").write_text(
            f"import os\n\n\ndef test_crash_{folder}():\n    os._exit(3)\n"
        )
    (tmp_path / "b" / "boom_fn.py").write_text(
        "def search(text, k):\n    raise RuntimeError('service down')\n"
    )
    env = {**os.environ, "GITHUB_STEP_SUMMARY": "", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    run = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "-n",
        "2",
        "--max-worker-restart=0",
    ]
    run += ["--retrieval-report=r.json"]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    said = done.stdout + done.stderr
    assert "crashed" in said and done.returncode != 0, said
    doc = json.loads((tmp_path / "r.json").read_text())
    suites = {s["suite"]: s for s in doc["suites"]}
    assert set(suites) == {"a", "b"}, said
    assert [(i["gate"], i["outcome"]) for i in suites["a"]["items"]] == [("ndcg@10", "passed")]
    assert suites["a"].get("error") is None
    # the function's problem fails its retriever (issue #36), named in the report's failed_retrievers
    failed = suites["b"].get("error") or " ".join((suites["b"].get("failed_retrievers") or {}).values())
    assert "boom_fn:search" in failed
    assert [i["outcome"] for i in suites["b"]["items"]] == ["error"]


def test_breaking_links_never_hides_a_credential_from_the_redaction() -> None:
    from pytest_retrieval.reports.markdown import esc, render_markdown

    url = "http://gate:hunter2-very-secret@db.example:9200/x"
    assert "hunter2" not in esc(f"cannot reach {url}")
    doc = {"suites": [{"name": "s", "error": f"cannot reach {url}", "items": []}]}
    assert "hunter2" not in render_markdown(doc)
