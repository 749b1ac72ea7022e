"""With a run history (``--retrieval-history``), the Markdown and HTML reports and the JSON
report's ``history`` section show the last runs of every gated metric beside this run's value
(``--retrieval-history-last N``, default 10; 0: none); the stored record has no such section;
the terminal summary is the same with or without a history."""

from __future__ import annotations

import json

from pytest_retrieval.history import open_store
from tests.tiny import TINY_SUITE

pytest_plugins = ["pytester"]

#: without its latency floor: --retrieval-no-latency then leaves no gate without a verdict (a
#: partial run is stored, but never read back as one of the last runs)
SUITE = TINY_SUITE.replace("    p95_ms: 10000\n", "")


def _run(pytester, *extra: str) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:randomly", "--retrieval-no-latency", *extra
    )
    assert result.ret == 0, result.stdout.str()


def test_the_reports_show_the_last_runs_of_the_gated_metrics(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=SUITE)
    store = pytester.path / "h.sqlite"
    first = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--retrieval-no-latency",
        f"--retrieval-history={store}",
    )
    assert first.ret == 0
    _run(pytester, f"--retrieval-history={store}", "--retrieval-history-last=3")
    out = [
        f"--retrieval-{k}={pytester.path / ('r.' + x)}"
        for k, x in (("markdown", "md"), ("html", "html"), ("report", "json"))
    ]
    third = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--retrieval-no-latency",
        f"--retrieval-history={store}",
        *out,
    )
    assert third.ret == 0
    doc = json.loads((pytester.path / "r.json").read_text())
    section = doc["history"]
    assert section["last"] == 10 and section["store"] == str(store)
    series = {(s["retriever"], s["metric"]): s for s in section["series"]}
    assert set(series) == {("bm25", "ndcg@10"), ("rrf", "recall@10")}  # the gated ones (p95_ms: no latency)
    runs = series[("bm25", "ndcg@10")]["runs"]
    assert len(runs) == 2 and doc["run"]["id"] not in {r["id"] for r in runs}  # this run is the report's own
    today = next(r for r in doc["suites"][0]["retrievers"] if r["name"] == "bm25")["metrics"]["ndcg@10"]
    assert all(r["value"] == today for r in runs)  # the same suite three times
    md = (pytester.path / "r.md").read_text()
    assert "**The last 10 runs** of the gated metrics" in md
    row = next(line for line in md.splitlines() if line.startswith("| `bm25` | ndcg@10 |"))
    assert "`▄▄▄`" in row and row.endswith(f"| **{today:.4f}** |")
    html = (pytester.path / "r.html").read_text()
    assert "<h3>The last 10 runs</h3>" in html and '<span class="spark"' in html
    # the stored record (the third run) holds no history section
    s = open_store(str(store))
    try:
        assert len(s.runs()) == 3 and "history" not in s.load(doc["run"]["id"])
    finally:
        s.close()


def test_no_history_section_with_last_0_or_without_a_history(tmp_path) -> None:
    from types import SimpleNamespace

    from pytest_retrieval.pytest_plugin.history_view import recent_history

    def config(**options):
        return SimpleNamespace(getoption=lambda name, default=None: options.get(name, default))

    store = tmp_path / "h.sqlite"
    store.write_bytes(b"")
    doc = {"suites": [{"suite": "tiny", "retrievers": []}]}
    assert recent_history(None, config(retrieval_history=str(store), retrieval_history_last=0), doc) is None
    assert recent_history(None, config(), doc) is None
    # a history not written yet (the first run makes it): nothing to look back on, nothing made
    missing = tmp_path / "new.sqlite"
    assert recent_history(None, config(retrieval_history=str(missing)), doc) is None and not missing.exists()
