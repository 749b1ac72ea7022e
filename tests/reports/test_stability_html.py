"""The JSON report's stability section in the HTML report (issue #33): a tiny suite with canary
queries and stability gates, its baseline written, then run with a ranking change (the text is
searched too); the page, rendered from the JSON report, shows per retriever the canary and judged
queries compared, the gates' verdicts and the most changed queries with what came and went, and
escapes the hostile query text and titles. Two pytest runs of a few seconds each."""

from __future__ import annotations

import copy
import json

from pytest_retrieval.reports.html import render_html

from ..stability_suite import SEARCH_TEXT_TOO, canary_rows, stability_suite, write_canary

pytest_plugins = ["pytester"]

HOSTILE = '<script>alert("q")</script>'
TITLE = '<img src=x onerror="alert(1)">'

SUITE = stability_suite(wind_title="Wind " + TITLE)
CANARY = canary_rows(first_suffix=" " + HOSTILE)


def test_the_html_report_shows_the_stability_section(pytester) -> None:
    suite = pytester.makefile(".yaml", retrieval_stable=SUITE)
    write_canary(pytester, CANARY)
    pytester.runpytest_subprocess("-q", "--retrieval-baseline-update")
    suite.write_text(SUITE.replace(*SEARCH_TEXT_TOO))
    report, page = pytester.path / "report.json", pytester.path / "report.html"
    pytester.runpytest_subprocess("-q", f"--retrieval-report={report}", f"--retrieval-html={page}")
    doc = json.loads(report.read_text())
    html = render_html(doc)

    assert "<h3>Stability against the baseline's rankings (top 10)</h3>" in html
    assert "Stability against the baseline's rankings" in page.read_text()  # the file the run wrote
    assert '<td class="n">3 canary</td>' in html and '<td class="n">2 judged</td>' in html
    assert "<th>top 10 unchanged</th>" in html and "<th>mean rbo@10</th>" in html
    bm25 = doc["suites"][0]["stability"]["retrievers"]["bm25"]
    entered = bm25["entered_unjudged"]
    assert entered > 0 and f"{entered} documents entered the top 10 unjudged" in html
    # the gates' verdicts, in the words of the summary and the failure message
    assert "<code>bm25::stability:rbo@10</code>" in html and "below the floor" in html
    assert '<span class="fail">FAIL</span>' in html and "<th>canary queries</th>" in html
    # the most changed queries: the canary whose ranking moved, the document that entered
    assert "most changed queries of <code>bm25</code>" in html
    assert "<code>c1</code>" in html and "<code>d4</code>" in html and "unjudged)" in html
    # hostile query text and titles: escaped, shown
    assert "&lt;script&gt;alert(&quot;q&quot;)&lt;/script&gt;" in html and HOSTILE not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html and "<img" not in html

    # no comparison: the reason, never a figure; numbers that are text: "invalid"
    bad = copy.deepcopy(doc)
    section = bad["suites"][0]["stability"]
    section["note"] = "no baseline " + HOSTILE
    assert "Not compared: no baseline &lt;script&gt;" in render_html(bad)
    section["note"] = ""
    section["retrievers"]["bm25"]["canary"]["rbo@10"] = HOSTILE
    section["retrievers"]["bm25"]["most_changed"][0]["rbo"] = HOSTILE
    section["outcomes"][0]["value"] = HOSTILE
    html = render_html(bad)
    assert "invalid" in html and "alert(&quot;q&quot;)" in html  # the query text, escaped
    assert html.count("&lt;script&gt;") == render_html(doc).count("&lt;script&gt;")
