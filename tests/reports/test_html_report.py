"""The HTML report of the example suite's induced regression: self-contained, and working in
a real headless Chromium (no console errors, no network requests; plots and the per-query
table present; clicking a query shows its ranking diff). Screenshot under tmp_path."""

from __future__ import annotations

import json
import re

from pytest_retrieval.reports.html import render_html


def test_html_is_self_contained(scenario) -> None:
    html = scenario["bad"].files["html"].read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html, re.I)
    assert not re.search(r"<link\b|@import|url\(\s*['\"]?(?:https?:)?//", html, re.I)
    assert "<?xml" not in html and "<!DOCTYPE svg" not in html
    assert html.count("<svg") == 6  # scatter, distribution, latency, frontier, strata, judged@k
    assert 'data-qid="1024"' in html and "3D Chromosome Regulatory Landscape" in html
    assert len(html) < 2_000_000


def test_html_without_matplotlib_still_renders(bad_doc, monkeypatch) -> None:
    import builtins

    real = builtins.__import__

    def no_mpl(name, *a, **kw):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_mpl)
    html = render_html(bad_doc)
    assert "<svg" not in html and "pip install 'pytest-retrieval[html]'" in html
    assert 'class="queries"' in html


#: Every pair of label boxes of a plot that overlap, as the browser lays the SVG out: each text
#: (tick labels, annotations, titles) and each legend as one box (issue #36: a ceiling's label ran
#: through the legend). The boxes are the renderer's own (getBoundingClientRect of the SVG
#: elements); a pair must overlap by more than a pixel each way to count.
LABEL_OVERLAPS = """
var found = [];
document.querySelectorAll("figure.plot svg").forEach(function (svg, plot) {
  var boxes = [];
  svg.querySelectorAll("g[id^=legend]").forEach(function (g) {
    boxes.push(["legend", g.getBoundingClientRect()]);
  });
  svg.querySelectorAll("text").forEach(function (t) {
    if (t.closest("g[id^=legend]") || !t.textContent.trim()) return;
    boxes.push([t.textContent.trim(), t.getBoundingClientRect()]);
  });
  for (var i = 0; i < boxes.length; i++) {
    for (var j = i + 1; j < boxes.length; j++) {
      var a = boxes[i][1], b = boxes[j][1];
      var w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      var h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1 && h > 1) found.push([plot, boxes[i][0], boxes[j][0]]);
    }
  }
});
return found;
"""


def test_plot_labels_never_overlap_in_chromium(scenario, browser) -> None:
    """The plots as the browser draws them: no label box over another or over a legend."""
    browser.get(scenario["bad"].files["html"].as_uri())
    svgs = browser.find_elements("css selector", "figure.plot svg")
    assert svgs and any("ceiling" in svg.get_attribute("innerHTML") for svg in svgs)
    assert browser.execute_script(LABEL_OVERLAPS) == []


def test_html_report_in_headless_chromium(scenario, browser, tmp_path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = scenario["bad"].files["html"]
    browser.get(page.as_uri())
    assert "Retrieval gates failed" in browser.title

    # plots and the per-query table are there
    assert len(browser.find_elements(By.CSS_SELECTOR, "figure.plot svg")) == 6
    rows = browser.find_elements(By.CSS_SELECTOR, "table.queries tbody tr")
    assert len(rows) == 100
    assert "100 of 100 queries" in browser.find_element(By.CSS_SELECTOR, ".count").text

    # filter, and the "only dropped" switch
    box = browser.find_element(By.CSS_SELECTOR, ".qbox")
    Select(box.find_element(By.CSS_SELECTOR, "select.retriever")).select_by_visible_text("bm25")
    search = box.find_element(By.CSS_SELECTOR, "input[type=search]")
    search.send_keys("TNFAIP3")
    assert [r.get_attribute("data-qid") for r in rows if r.is_displayed()] == ["1137"]
    search.clear()
    search.send_keys(" ")  # an input event with an empty filter
    box.find_element(By.CSS_SELECTOR, "input.dropped").click()
    assert "44 of 100 queries" in box.find_element(By.CSS_SELECTOR, ".count").text
    box.find_element(By.CSS_SELECTOR, "input.dropped").click()

    # sort by bm25's difference: the largest drop first
    header = next(
        h for h in box.find_elements(By.CSS_SELECTOR, "table.queries th") if h.text.strip() == "bm25 Δ"
    )
    header.click()
    first = box.find_element(By.CSS_SELECTOR, "table.queries tbody tr")
    assert float(first.find_elements(By.TAG_NAME, "td")[4].get_attribute("data-v")) == -1.0

    # click a regressed query: its top 10 now and in the baseline, with the diff
    row = box.find_element(By.CSS_SELECTOR, 'table.queries tbody tr[data-qid="1024"]')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
    row.click()
    panel = box.find_element(By.CSS_SELECTOR, ".panel")
    assert "1024: Recurrent mutations occur frequently" in panel.text
    assert "relevant that left the top 10: 5373138 (grade 1, was #1)" in panel.text
    now = panel.find_elements(By.CSS_SELECTOR, ".side .now li")
    base = panel.find_elements(By.CSS_SELECTOR, ".side .baseline li")
    assert len(now) == 10 and len(base) == 10
    left = panel.find_elements(By.CSS_SELECTOR, ".side .baseline li.left")
    assert any("5373138" in li.text and "grade 1" in li.text and "3D Chromosome" in li.text for li in left)
    assert panel.find_elements(By.CSS_SELECTOR, ".side .now li.entered")

    shot = tmp_path / "report.png"
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000

    # no console errors, no network requests
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    requests = []  # (document, url) of every request the browser made
    for entry in browser.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            requests.append((msg["params"].get("documentURL"), msg["params"]["request"]["url"]))
    ours = [url for doc, url in requests if doc == page.as_uri()]
    assert ours == [page.as_uri()], ours  # the page itself, and nothing it loads
    assert not [url for _, url in requests if url.startswith(("http:", "https:", "ws:", "wss:"))]


def test_a_query_with_no_hits_says_no_hits_in_the_detail(bad_doc, browser, tmp_path) -> None:
    """Issue #36: an empty ranking is "no hits" in the query's detail, not an empty list."""
    import copy

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    doc = copy.deepcopy(bad_doc)
    suite = doc["suites"][0]
    suite["rankings"]["bm25"]["1024"] = []
    page = tmp_path / "nohits.html"
    page.write_text(render_html(doc))
    browser.get(page.as_uri())
    box = browser.find_element(By.CSS_SELECTOR, ".qbox")
    Select(box.find_element(By.CSS_SELECTOR, "select.retriever")).select_by_visible_text("bm25")
    row = box.find_element(By.CSS_SELECTOR, 'table.queries tbody tr[data-qid="1024"]')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
    row.click()
    now = box.find_element(By.CSS_SELECTOR, ".panel .side .now")
    assert "no hits" in now.text and not now.find_elements(By.CSS_SELECTOR, "li")
