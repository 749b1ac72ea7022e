"""The baseline never goes silent on a pipeline change (issue #28): a changed corpus is a system
change, compared; a changed query text or judgment leaves only that query out; too few unchanged
queries refuse the comparison; judged@10 beside every verdict; a retriever without a baseline
is skipped with the reason."""

from __future__ import annotations

from pathlib import Path

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.gates import evaluate
from pytest_retrieval.gates.baseline import load_comparable_baseline, update_baseline
from pytest_retrieval.gates.comparable import left_out_queries, left_out_summary, too_few_remain
from pytest_retrieval.gates.regression import baseline_gate_refusal

from ..tiny import TINY_SUITE

SUITE = TINY_SUITE + "regression:\n  max_drop: {ndcg@10: 0.05}\n  resamples: 200\n"


def _write(directory: Path, text: str) -> Path:
    path = directory / "retrieval_tiny.yaml"
    path.write_text(text)
    return path


def _baseline(directory: Path, text: str = SUITE) -> Path:
    path = _write(directory, text)
    suite = load_suite(path)
    update_baseline(suite, SuiteRunner(suite).run())
    return path


def _compare(path: Path, text: str):
    _write(path.parent, text)
    suite = load_suite(path)
    result = SuiteRunner(suite).run()
    baseline, note = load_comparable_baseline(suite, result)
    return suite, result, baseline, note


def test_a_corpus_change_is_a_system_change_compared(tmp_path: Path) -> None:
    path = _baseline(tmp_path)
    # a truncated document and one more unjudged document: compared, reported
    text = SUITE.replace("efficiency of solar panels in winter", "efficiency").replace(
        "  documents:\n", "  documents:\n    - {id: d9, title: Solar, text: solar panels efficiency news}\n"
    )
    suite, result, baseline, note = _compare(path, text)
    assert baseline is not None, note
    assert "system changes, compared: corpus changed: 5 -> 6 documents" in note
    outcome = evaluate(result, suite.regression[0], baseline=baseline)
    assert outcome.judged is not None and outcome.judged.now == outcome.judged.before  # fewer than 10 hits
    assert "judged@10 " in outcome.message and outcome.as_dict()["judged@10"]["queries"] == 3
    # rows merely reordered: still compared
    lines = SUITE.splitlines(keepends=True)
    docs = [i for i, line in enumerate(lines) if line.startswith("    - {id: d")]
    lines[docs[0]], lines[docs[1]] = lines[docs[1]], lines[docs[0]]
    _, _, baseline, note = _compare(path, "".join(lines))
    assert baseline is not None and "same 5 documents, different content or order" in note


def test_a_changed_judgment_leaves_that_query_out(tmp_path: Path) -> None:
    path = _baseline(tmp_path)
    text = SUITE.replace("relevant: {d3: 1}", "relevant: {d3: 2}")
    suite, result, baseline, note = _compare(path, text)
    assert baseline is not None and baseline.left_out == {"q2": "judgments changed"}
    assert "compared on 3 of 4 baseline queries; left out: 1 judgments changed (q2)" in note
    # one of 3 valued queries out: fewer than min_compared 0.8 remain
    refused = baseline_gate_refusal(result, baseline, "bm25", "ndcg@10", 0.05)
    assert refused is not None and "only 2 of the baseline's 3 queries are unchanged" in refused
    suite.model.regression.min_compared = 0.5
    assert baseline_gate_refusal(result, baseline, "bm25", "ndcg@10", 0.05) is None
    outcome = evaluate(result, suite.regression[0], baseline=baseline)
    assert outcome.overall.n == 2 and outcome.left_out == {"q2": "judgments changed"}
    assert "left out: 1 judgments changed (q2)" in outcome.message


def test_a_retriever_without_a_baseline_is_skipped_with_the_reason(tmp_path: Path) -> None:
    path = _baseline(tmp_path)
    text = SUITE.replace("retrievers:\n", "retrievers:\n  title_only: {type: bm25, fields: [title]}\n")
    _, result, baseline, _ = _compare(path, text)
    refused = baseline_gate_refusal(result, baseline, "title_only", "ndcg@10", 0.05)
    assert refused is not None and "the baseline has no retriever 'title_only' yet" in refused
    assert "--retrieval-baseline-update" in refused


def test_left_out_reasons_and_summary() -> None:
    old = {"a": "t1:j1", "b": "t1:j1", "c": "t1:j1", "d": "t1:j1", "e\x00": "t:j"}
    new = {"a": "t1:j1", "b": "t2:j1", "c": "t1:j2", "d": "t2:j2"}
    out = left_out_queries(old, new)
    assert out == {
        "b": "text changed",
        "c": "judgments changed",
        "d": "text and judgments changed",
        "e\x00": "no longer judged",
    }
    summary = left_out_summary(out, 5)
    assert summary.startswith("compared on 1 of 5 baseline queries; left out: ")
    assert "1 no longer judged ('e\\x00')" in summary and "\x00" not in summary


def test_too_few_remain_by_share_and_by_power() -> None:
    before = {f"q{i}": (i % 10) / 10 for i in range(400)}
    assert too_few_remain(before, {}, min_compared=0.8, max_drop=0.05, confidence=0.95) is None
    few = {f"q{i}": "judgments changed" for i in range(100)}
    why = too_few_remain(before, few, min_compared=0.8, max_drop=0.05, confidence=0.95)
    assert (
        why == "only 300 of the baseline's 400 queries are unchanged (fewer than regression.min_compared 0.8)"
    )
    # all 400 detect a drop of 0.0226 (80% power), the 330 unchanged ones 0.0249: a gate of
    # 0.024 is blind without the 70 left out, refused
    some = {f"q{i}": "text changed" for i in range(70)}
    why = too_few_remain(before, some, min_compared=0.8, max_drop=0.024, confidence=0.95)
    assert why == (
        "the 330 unchanged queries detect a drop of 0.0249 with 80% power, no longer the "
        "allowed drop 0.024 (all 400 did: 0.0226)"
    )
    assert too_few_remain(before, some, min_compared=0.8, max_drop=0.03, confidence=0.95) is None
    # a suite that cannot detect max_drop with every query is not refused for losing a few
    assert too_few_remain(before, some, min_compared=0.8, max_drop=0.01, confidence=0.95) is None


def test_judged_at_10_from_an_older_baselines_rankings() -> None:
    from pytest_retrieval.gates.baseline import Baseline
    from pytest_retrieval.gates.judged import baseline_judged, judged_change

    older = Baseline(
        suite="s",
        created="",
        plugin_version="0.1.0",
        fingerprint={},
        retrievers={"bm25": {"per_query": {"ndcg@10": {"q1": 1.0}}, "top": {"q1": ["d1", "d2", "x"]}}},
    )
    before = baseline_judged(older, "bm25", {"q1": {"d1": 1, "d2": 0}})
    assert before == {"q1": 0.2}
    change = judged_change(before, {"q1": 0.1}, ["q1"])
    assert change is not None and change.describe().startswith(
        "judged@10 0.2000 -> 0.1000 (-0.1000): unjudged"
    )
    assert judged_change(None, {"q1": 0.1}, ["q1"]) is None
