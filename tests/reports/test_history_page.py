"""The history page (``history trend --html``) opened in a real headless Chromium: a chart per
gated metric is drawn, each with a point per run, its band and the fingerprint marker; hovering
a point names its run, commit and verdict; clicking it reaches the commit's row; no console
errors and no network request."""

from __future__ import annotations

import json

from pytest_retrieval.cli.app import main
from pytest_retrieval.history import open_store
from tests.cli.history_data import FINGERPRINT, record


def test_history_page_in_headless_chromium(browser, tmp_path, capsys) -> None:
    from selenium.webdriver.common.by import By

    path = tmp_path / "history.sqlite"
    store = open_store(str(path))
    values = [0.50, 0.51, 0.49, 0.52, 0.50, 0.47, 0.46, 0.45, 0.46, 0.44]
    changed = dict(FINGERPRINT, corpus={"count": 5200, "sha256": "c1"})  # the corpus grew at run 6
    for i, v in enumerate(values):
        store.append(record(i, v, fingerprint=changed if i >= 6 else FINGERPRINT, exitstatus=int(i == 8)))
    store.close()
    page = tmp_path / "history.html"
    assert main(["history", "trend", "--store", str(path), "--html", str(page)]) == 0
    capsys.readouterr()

    browser.get(page.as_uri())
    assert browser.title == "Retrieval quality over time"
    charts = browser.find_elements(By.CSS_SELECTOR, "section.chart")
    assert [c.get_attribute("data-retriever") for c in charts] == ["bm25", "rrf"]
    for chart in charts:
        svg = chart.find_element(By.TAG_NAME, "svg")
        assert svg.size["width"] > 500 and svg.size["height"] > 150  # drawn, not an empty box
        points = chart.find_elements(By.CSS_SELECTOR, "a.point circle")
        assert len(points) == len(values) and all(p.is_displayed() for p in points)
        assert len(chart.find_elements(By.CSS_SELECTOR, "polygon.band")) == 1
        assert len(chart.find_elements(By.CSS_SELECTOR, "g.marker line")) == 1
    # the points run left to right, the lowest value drawn lowest
    circles = charts[0].find_elements(By.CSS_SELECTOR, "a.point circle")
    xs = [float(c.get_attribute("cx")) for c in circles]
    ys = [float(c.get_attribute("cy")) for c in circles]
    assert xs == sorted(xs) and ys.index(max(ys)) == values.index(min(values))
    # hover: the point's title; marker: what changed
    tip = circles[8].find_element(By.XPATH, "..").find_element(By.TAG_NAME, "title")
    assert "run 0008abababab" in tip.get_attribute("textContent") and "run failed" in tip.get_attribute(
        "textContent"
    )
    marker = charts[0].find_element(By.CSS_SELECTOR, "g.marker title").get_attribute("textContent")
    assert marker.startswith("fingerprint changed: ") and "corpus" in marker
    # click: the run's row (no --commit-url), highlighted as the target
    circles[8].click()
    assert browser.current_url.endswith("#run-0008" + "ab" * 14)
    row = browser.find_element(By.CSS_SELECTOR, "tr:target")
    assert row.find_element(By.CSS_SELECTOR, "td.v-failed").text == "failed"
    # no console error, no network request but the file itself
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
    requests = []  # (document, url) of every request the browser made
    for entry in browser.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            requests.append((msg["params"].get("documentURL"), msg["params"]["request"]["url"]))
    ours = {url for doc, url in requests if doc.startswith(page.as_uri())}
    assert ours <= {page.as_uri(), page.as_uri() + "#run-0008" + "ab" * 14}, ours  # nothing it loads
