"""One escape per output format, applied to every field: a hostile JSON report (or suite, query
and document names) cannot inject markup into the HTML, ping people from the Markdown or merge
two suites' series in the OpenMetrics text."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from pytest_retrieval.reports.formats import INVALID, count, delta, mark, num, pval
from pytest_retrieval.reports.html import render_html
from pytest_retrieval.reports.markdown import NAME_CHARS, code, esc, render_markdown
from pytest_retrieval.reports.openmetrics import file_labels, render_openmetrics
from pytest_retrieval.reports.outputs import report_document

PAYLOAD = '<x-h onclick="alert(1)">\'&</script><!--@octocat @org/team'
MENTION = re.compile(r"(?<![A-Za-z0-9])@(octocat|org)")


def _strings(x: Any) -> Any:
    """Every string value of the document with the payload appended (keys kept)."""
    if isinstance(x, dict):
        return {k: _strings(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_strings(v) for v in x]
    return x + PAYLOAD if isinstance(x, str) else x


@pytest.fixture(scope="module")
def doc(state):
    return report_document([state])


def test_every_string_field_is_escaped_in_html_and_markdown(doc) -> None:
    bad = _strings(doc)
    html = render_html(bad)
    assert "<x-h" not in html and "</script><!--" not in html
    assert "&lt;x-h onclick=&quot;alert(1)&quot;&gt;&#x27;&amp;" in html  # escaped, shown
    md = render_markdown(bad)
    assert "<x-h" not in md and not MENTION.search(md)
    assert "@&#8203;octocat" in md


def test_numbers_that_are_text_are_never_shown_as_text(doc) -> None:
    bad = copy.deepcopy(doc)
    suite = bad["suites"][0]
    suite["queries"]["judged"] = PAYLOAD
    for reg in suite["regressions"]:
        reg["comparison"].update(
            {k: PAYLOAD for k in ("mean_diff", "ci_low", "ci_high", "won", "lost", "tied")}
        )
        reg["comparison"]["p_randomization"] = PAYLOAD
    html, md = render_html(bad), render_markdown(bad)
    for text in (html, md):
        assert "x-h onclick" not in text and "octocat" not in text
        assert f"{INVALID} judged queries" in text
    assert f"{INVALID}/{INVALID}/{INVALID} p={INVALID}" in html
    assert render_openmetrics(bad).count("NaN") >= 3 * len(suite["regressions"])


def test_formatters_of_numbers_never_echo_text() -> None:
    for f in (num, delta, pval, count):
        assert f(PAYLOAD) == INVALID and f(True) == INVALID
    assert mark({"ci_low": PAYLOAD, "ci_high": PAYLOAD}) == ""
    assert count(3) == "3" and num(0.5) == "0.5000"


def test_markdown_names_and_texts_are_capped_and_mentions_neutralised() -> None:
    assert len(code("r" * 10_000)) <= NAME_CHARS + 2
    assert len(esc("t " * 10_000)) <= 300
    assert esc("ping @octocat and @org/team") == "ping @&#8203;octocat and @&#8203;org/team"
    assert esc("ndcg@10 a@b") == "ndcg@10 a@b"  # not mentions: after a letter or digit
    assert esc("a@b.c") == "a@&#8203;b.c"  # but an e-mail address GitHub would link (issue #32)
    assert code("@octocat") == "`@octocat`"  # a code span notifies no one


@pytest.mark.parametrize("text", ["](javascript:alert(1))", "[x](https://e.example)", "a\\](b"])
def test_markdown_user_text_opens_no_link_destination(text: str) -> None:
    """A query id ``](javascript:...)`` stayed ``\\](javascript:`` (its "(" raw): both brackets
    and the "(" after one are escaped, in running text and in a name that is no code span."""
    for shown in (esc(text), code(text)):
        assert "](" not in shown, shown
        assert "[" not in shown.replace("\\[", ""), shown


def test_a_long_hostile_suite_name_is_capped_in_the_markdown(doc) -> None:
    bad = copy.deepcopy(doc)
    bad["suites"][0]["suite"] = "@octocat " + "x" * 5000
    md = render_markdown(bad)
    assert "x" * (NAME_CHARS + 1) not in md and not MENTION.search(md)


def test_openmetrics_keeps_two_suites_of_one_name_apart(doc) -> None:
    a, b = copy.deepcopy(doc["suites"][0]), copy.deepcopy(doc["suites"][0])
    a["file"], b["file"] = "/ci/x/tests/a/retrieval_tiny.yaml", "/ci/x/tests/b/retrieval_tiny.yaml"
    text = render_openmetrics({**doc, "suites": [a, b]})
    samples = [
        s for f in text_string_to_metric_families(text) if f.name == "retrieval_quality" for s in f.samples
    ]
    files = {s.labels["file"] for s in samples}
    assert files == {"a/retrieval_tiny.yaml", "b/retrieval_tiny.yaml"}
    assert len(samples) == 2 * sum(1 for s in samples if s.labels["file"].startswith("a/"))


def test_file_labels_are_the_shortest_distinguishing_path_end() -> None:
    assert file_labels(["/w/t/retrieval_a.yaml", "/w/t/retrieval_b.yaml"]) == [
        "retrieval_a.yaml",
        "retrieval_b.yaml",
    ]
    assert file_labels(["/w/a/s.yaml", "/w/b/s.yaml", ""]) == ["a/s.yaml", "b/s.yaml", ""]
