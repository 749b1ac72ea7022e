"""``retrieval_queries``: a tag no judged query has is an error naming the suite and its tags,
never an empty parameter set that pytest skips silently (issue #26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_retrieval import ConfigError, retrieval_queries

EXAMPLE = Path(__file__).resolve().parents[2] / "example_suite" / "retrieval_scifact_mini.yaml"


def test_a_known_tag_selects_its_queries() -> None:
    got = retrieval_queries(EXAMPLE, tag="contradicts")
    assert got and all("contradicts" in q.tags for q in got)


def test_an_unknown_tag_is_an_error_naming_the_tags() -> None:
    with pytest.raises(ConfigError) as err:
        retrieval_queries(EXAMPLE, tag="contradict")
    message = str(err.value)
    assert "retrieval_scifact_mini.yaml" in message and "'contradict'" in message
    assert "'contradicts'" in message and "\n" not in message


def test_a_misspelt_tag_names_the_suite_s_tags(tmp_path: Path) -> None:
    from ..tiny import TINY_SUITE

    suite = tmp_path / "retrieval_tiny.yaml"
    suite.write_text(TINY_SUITE)
    assert retrieval_queries(suite)
    with pytest.raises(ConfigError, match=r"no query has the tag 'hard' \(tags: 'energy'\)"):
        retrieval_queries(suite, tag="hard")


def test_under_pytest_the_empty_parametrization_is_a_collection_error(pytester) -> None:
    pytester.makefile(
        ".yaml", retrieval_s=EXAMPLE.read_text().replace("data/", str(EXAMPLE.parent / "data") + "/")
    )
    pytester.makepyfile(
        test_q="""
        import pytest
        from pytest_retrieval import retrieval_queries

        @pytest.mark.parametrize("q", retrieval_queries("retrieval_s.yaml", tag="nope"), ids=str)
        def test_each(q):
            pass
        """
    )
    result = pytester.runpytest_subprocess("test_q.py", "-q", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ["ConfigError: retrieval_s.yaml: retrieval_queries(tag='nope'): no query has the tag 'nope'*"]
    )
    out = result.stdout.str()
    assert "skipped" not in out
    # one line, its path under the rootdir: no traceback through the plugin's frames
    assert "Traceback" not in out and "pytest_retrieval/" not in out and f"{pytester.path}/" not in out


pytest_plugins = ["pytester"]
