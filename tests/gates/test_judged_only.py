"""The drop on judged documents only beside a baseline verdict whose judged@10 fell (issue #24):
computed by hand, equal to the suite's own condensed metric per query, end to end through pytest
(unjudged documents entering the top 10: the drop comes from them; a real drop among judged
documents: it holds), and "unavailable" for a baseline without top-k lists."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Dict, List

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.gates import evaluate
from pytest_retrieval.gates.baseline import (
    Baseline,
    load_comparable_baseline,
    read_baseline,
    update_baseline,
    write_baseline,
)
from pytest_retrieval.gates.judged_only import (
    JudgedOnlyChange,
    current_values,
    judged_only_change,
    judged_only_metric,
)
from pytest_retrieval.measures.metrics import evaluate as score
from pytest_retrieval.types import Ranking

from ..tiny import TINY_SUITE, run_tiny

pytest_plugins = ["pytester"]

TOPICS = ["solar", "river", "gravity", "coffee", "chess", "piano"]
WORDS = 14  # every field of every document has 14 words: BM25's length norm orders nothing


def _words(term: str, n: int, pad: str) -> str:
    return " ".join([term] * n + [pad] * (WORDS - n))


def dense_suite(new: int = 0, fields: str = "[text]", tail: str = "") -> str:
    """Six one-word queries, each with 12 judged documents (grades 2, 2, 2, 1, 1, 1, then 0):
    the word 12..1 times in the text (text order = grade order), 1..12 times in the title
    (reversed). ``new``: unjudged documents per query with the word in every position (they rank
    first on either field)."""
    queries, docs = [], []
    for i, t in enumerate(TOPICS):
        grades = {f"{t}{j:02d}": 2 if j < 3 else 1 if j < 6 else 0 for j in range(12)}
        for j in range(12):
            docs.append(
                f'    - {{id: {t}{j:02d}, title: "{_words(t, j + 1, "note")}", text: "{_words(t, 12 - j, "pad")}"}}\n'
            )
        docs += [
            f'    - {{id: {t}new{n}, title: "{_words(t, WORDS, "")}", text: "{_words(t, WORDS, "")}"}}\n'
            for n in range(new)
        ]
        judged = ", ".join(f"{d}: {g}" for d, g in grades.items())
        queries.append(f'    - {{id: q{i}, text: "{t}", relevant: {{{judged}}}}}\n')
    return (
        "suite: dense\njudgments:\n  inline:\n"
        + "".join(queries)
        + "  documents:\n"
        + "".join(docs)
        + "latency:\n  enabled: false\n"
        + f"retrievers:\n  bm25:\n    type: bm25\n    fields: {fields}\n"
        + "regression:\n  max_drop: {ndcg@10: 0.01}\n  resamples: 200\n"
        + tail
    )


def _suite_path(directory: Path, text: str) -> Path:
    path = directory / "retrieval_dense.yaml"
    path.write_text(text)
    return path


def _compare(directory: Path, text: str):
    suite = load_suite(_suite_path(directory, text))
    result = SuiteRunner(suite).run()
    baseline, note = load_comparable_baseline(suite, result)
    assert baseline is not None, note
    return suite, result, baseline


def _baseline(directory: Path, text: str) -> None:
    suite = load_suite(_suite_path(directory, text))
    update_baseline(suite, SuiteRunner(suite).run())


# --------------------------------------------------------------------------- by hand


def test_the_judged_only_values_by_hand(tmp_path: Path) -> None:
    tail = 'evaluation:\n  metrics: [ndcg@3, "ndcg\'@3"]\n'
    result = run_tiny(tmp_path, TINY_SUITE + tail)
    # q1 judged {d1: 1, d4: 2, d2: 0}, q2 {d3: 1}, 3 {d5: 1}; stored lists 5 deep
    top = {
        "q1": ["x", "d4", "y", "d2", "d1"],  # 3 judged: decides the condensed top 3
        "q2": ["d3", "z", "w", "v", "u"],  # every judged document of q2
        "3": ["a", "b", "c", "e", "f"],  # none of 3's: its condensed top 3 lies deeper, left out
    }
    baseline = Baseline("tiny", "", "0", {}, {"bm25": {"per_query": {}, "top": top}})
    condensed = judged_only_metric("ndcg@3")
    assert str(condensed) == "ndcg'@3"
    overall = SimpleNamespace(mean_diff=-0.2, max_drop=0.05)
    change = judged_only_change(result, baseline, "bm25", condensed, ["q1", "q2", "3"], overall)
    # q1 condensed: d4 (2), d2 (0), d1 (1): DCG 3 + 0 + 1/log2(4) = 3.5; ideal 3 + 1/log2(3)
    q1 = 3.5 / (3 + 1 / 1.584962500721156)
    assert change.before == pytest.approx((q1 + 1.0) / 2, abs=1e-12)
    own = result.retrievers["bm25"].evaluation.per_query["ndcg'@3"]
    assert change.now == pytest.approx((own["q1"] + own["q2"]) / 2, abs=1e-15)
    assert (change.queries, change.compared, change.depth) == (2, 3, 5)
    assert change.describe().startswith(
        f"judged only (ndcg'@3 over the current judgments): {change.before:.4f} -> {change.now:.4f} "
        f"({change.diff:+.4f}) on 2 of 3 compared queries (the others have fewer than 3 judged "
        "documents in the baseline's top 5)"
    )
    # a compared query without a stored list is left out too, never scored as an empty ranking
    unlisted = judged_only_change(result, baseline, "bm25", condensed, ["q1", "q2", "3", "q9"], overall)
    assert (unlisted.queries, unlisted.compared, unlisted.before) == (2, 4, change.before)
    assert change.as_dict() == {
        "metric": "ndcg'@3",
        "baseline": change.before,
        "current": change.now,
        "queries": 2,
        "compared": 3,
        "depth": 5,  # the stored lists' depth the usable queries were decided on (the summary reads it)
    }


def test_the_reading_of_the_two_values() -> None:
    def line(before: float, now: float, drop: float = -0.1) -> str:
        return JudgedOnlyChange("ndcg'@10", before, now, 5, 5, drop=drop, margin=0.01, depth=10).describe()

    assert line(0.7012, 0.7120).endswith("0.7012 -> 0.7120 (+0.0108): the drop comes from unjudged documents")
    assert line(0.75, 0.71).endswith("(-0.0400): the drop holds on judged documents")
    assert line(0.75, 0.745).endswith("(-0.0050): on judged documents the drop is within the margin (-0.01)")
    assert line(0.75, 0.71, drop=0.02).endswith("(-0.0400)")  # the metric did not drop: no reading
    gone = JudgedOnlyChange("ndcg'@10", unavailable="the baseline keeps no top-k lists")
    assert gone.describe() == "judged-only comparison unavailable: the baseline keeps no top-k lists"
    assert gone.as_dict() == {"metric": "ndcg'@10", "unavailable": "the baseline keeps no top-k lists"}


@pytest.mark.parametrize(
    ("metric", "condensed"),
    [
        ("ndcg@10", "ndcg'@10"),
        ("P@10", "precision'@10"),
        ("RR@10", "mrr'@10"),
        ("map@20", "map'@20"),
        ("map", "map'"),
    ],
)
def test_a_rank_metric_has_a_condensed_form(metric: str, condensed: str) -> None:
    assert str(judged_only_metric(metric)) == condensed


@pytest.mark.parametrize(
    "metric", ["ndcg'@10", "condensed(ndcg@10)", "judged@10", "p95_ms", "lift@ndcg@10", "abstention"]
)
def test_no_condensed_form(metric: str) -> None:
    assert judged_only_metric(metric) is None


@pytest.mark.parametrize(
    ("metric", "top", "expected"),
    [
        ("ndcg@10", {}, "the baseline keeps no top-k lists (rewrite it with --retrieval-baseline-update)"),
        (
            "ndcg@20",
            {"q1": ["d1"] * 10},
            "the baseline keeps the top 10 of each ranking, ndcg'@20 needs the top 20 (rewrite it with "
            "--retrieval-baseline-update)",
        ),
        (
            "recall@100",
            {"q1": ["d1"] * 20},
            "the baseline keeps the top 20 of each ranking, recall'@100 needs the top 100 (a baseline "
            "keeps at most the top 20)",
        ),
        ("map", {"q1": ["d1"] * 20}, "map' has no cut-off; the baseline keeps the top 20 of each ranking"),
        ("ndcg@10", {"q1": ["x"] * 10}, "no compared query has 10 judged documents in the baseline's top 10"),
    ],
)
def test_unavailable_says_why(metric: str, top: Dict[str, List[str]], expected: str) -> None:
    result = SimpleNamespace(judgments=SimpleNamespace(qrels={"q1": {"d1": 1, "d2": 1}}))
    baseline = Baseline("s", "", "0", {}, {"bm25": {"per_query": {}, "top": top}})
    overall = SimpleNamespace(mean_diff=-0.2, max_drop=0.05)
    change = judged_only_change(result, baseline, "bm25", judged_only_metric(metric), ["q1"], overall)
    assert change.describe() == "judged-only comparison unavailable: " + expected


# --------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("metric", ["ndcg@10", "precision@10", "mrr@10", "map@10", "recall@5", "ndcg@5"])
def test_a_stored_list_decides_the_condensed_value_when_judged_only_change_uses_it(metric: str) -> None:
    """The rule that keeps a query (``_complete``): its stored top-D list gives the condensed
    value of the whole ranking exactly. Random rankings 5 to 40 deep, lists stored 15 deep (as
    a baseline stores them: the first 15, or the whole ranking when it is shorter)."""
    from pytest_retrieval.gates.judged_only import _complete  # noqa: PLC2701 - the rule under test

    rng = random.Random(7)
    condensed = judged_only_metric(metric)
    qrels, full, kept = {}, {}, {}
    for i in range(300):
        q = f"q{i}"
        pool = [f"d{j}" for j in range(40)]
        qrels[q] = {d: rng.choice([-1, 0, 0, 1, 2]) for d in rng.sample(pool, rng.randint(1, 30))}
        ranking = rng.sample(pool, rng.randint(5, 40))
        full[q] = ranking
        kept[q] = ranking[:15]
    depth = max(len(v) for v in kept.values())

    def run(lists: Dict[str, List[str]]) -> Dict[str, Ranking]:
        return {q: Ranking(d, [float(len(d) - n) for n in range(len(d))]) for q, d in lists.items()}

    whole = score(qrels, run(full), [condensed]).per_query[str(condensed)]
    cut = score(qrels, run(kept), [condensed]).per_query[str(condensed)]
    decided = [q for q in whole if _complete(kept[q], qrels[q], condensed.k, depth)]
    assert len(decided) > 30
    assert all(cut[q] == whole[q] for q in decided)
    assert any(cut[q] != whole[q] for q in whole if q not in decided)  # the rule is not vacuous


@pytest.mark.parametrize("ties", ["engine", "trec"])
def test_the_current_side_equals_the_suites_own_condensed_metric_per_query(tmp_path: Path, ties: str) -> None:
    metrics = ["ndcg@10", "precision@10", "mrr@10", "map@10"]
    primed = [str(judged_only_metric(m)) for m in metrics]

    def run(names: List[str]):
        listed = ", ".join(f'"{m}"' for m in names)
        return run_tiny(
            tmp_path, dense_suite(new=4) + f"evaluation:\n  ties: {ties}\n  metrics: [{listed}]\n"
        )

    own, plain = run(metrics + primed), run(metrics)
    for m in metrics:
        condensed = judged_only_metric(m)
        expected = own.retrievers["bm25"].evaluation.per_query[str(condensed)]
        assert str(condensed) not in plain.retrievers["bm25"].evaluation.per_query
        assert current_values(plain, "bm25", condensed) == expected  # bit for bit, every query


def test_the_baseline_side_equals_the_baselines_own_condensed_metric(tmp_path: Path) -> None:
    """Written by a suite that gates ndcg'@10 too: re-scoring its stored lists over the same
    judgments gives back the values it wrote, on every query the lists decide."""
    gated = 'evaluation:\n  metrics: [ndcg@10, "ndcg\'@10"]\n'
    _baseline(tmp_path, dense_suite(new=4) + gated)  # 4 unjudged, then 12 judged: 6 in the top 10
    suite, result, baseline = _compare(tmp_path, dense_suite(new=4) + gated)
    wrote = baseline.per_query("bm25", "ndcg'@10")
    condensed = judged_only_metric("ndcg@10")
    overall = SimpleNamespace(mean_diff=-0.1, max_drop=0.01)
    change = judged_only_change(result, baseline, "bm25", condensed, sorted(wrote), overall)
    # the stored top 10 hold 6 of 12 judged documents: no list decides ndcg'@10 of 10
    assert change.unavailable == "no compared query has 10 judged documents in the baseline's top 10"
    deeper = gated + "floors:\n  bm25:\n    ndcg@20: 0.0\n"  # a gated ndcg@20: lists 20 deep
    _baseline(tmp_path, dense_suite(new=4) + deeper)
    suite, result, baseline = _compare(tmp_path, dense_suite(new=4) + deeper)
    wrote = baseline.per_query("bm25", "ndcg'@10")
    change = judged_only_change(result, baseline, "bm25", condensed, sorted(wrote), overall)
    assert (change.queries, change.depth) == (6, 16)  # the whole rankings: 16 documents match
    assert change.before == change.now == pytest.approx(sum(wrote.values()) / len(wrote), abs=1e-15)


# --------------------------------------------------------------------------- in the verdict


def test_the_verdict_says_where_the_drop_comes_from(tmp_path: Path) -> None:
    _baseline(tmp_path, dense_suite())
    # 4 unjudged documents per query rank first: ndcg@10 drops, the judged order is the same
    suite, result, baseline = _compare(tmp_path, dense_suite(new=4))
    outcome = evaluate(result, suite.regression[0], baseline=baseline)
    assert not outcome.passed  # information only: ndcg@10's verdict is unchanged
    assert outcome.judged is not None and outcome.judged.diff == pytest.approx(-0.4)
    line = "judged only (ndcg'@10 over the current judgments): 1.0000 -> 1.0000 (+0.0000): the drop comes from unjudged documents"
    assert "  " + line + "\n" in outcome.message
    assert outcome.as_dict()["judged_only"] == {
        "metric": "ndcg'@10",
        "baseline": 1.0,
        "current": 1.0,
        "queries": 6,
        "compared": 6,
        "depth": 10,
    }
    # the same pipeline: judged@10 did not fall, no line
    suite, result, baseline = _compare(tmp_path, dense_suite())
    outcome = evaluate(result, suite.regression[0], baseline=baseline)
    assert outcome.judged_only is None and "judged only" not in outcome.message
    assert outcome.as_dict()["judged_only"] is None


def test_an_older_baseline_without_top_lists_says_unavailable(tmp_path: Path) -> None:
    _baseline(tmp_path, dense_suite())
    path = tmp_path / "retrieval_dense.baseline.json"
    old = read_baseline(path)
    old.retrievers["bm25"].pop("top")
    write_baseline(path, old)
    suite, result, baseline = _compare(tmp_path, dense_suite(new=4))
    assert baseline.top("bm25") == {}
    outcome = evaluate(result, suite.regression[0], baseline=baseline)
    assert (
        "  judged-only comparison unavailable: the baseline keeps no top-k lists "
        "(rewrite it with --retrieval-baseline-update)" in outcome.message.splitlines()
    )
    assert outcome.as_dict()["judged_only"]["unavailable"].startswith("the baseline keeps no top-k lists")


# --------------------------------------------------------------------------- end to end


def _pytest(pytester: pytest.Pytester, *args: str):
    report = pytester.path / "report.json"
    markdown = pytester.path / "summary.md"
    result = pytester.runpytest_subprocess(
        "-q",
        f"--retrieval-report={report}",
        f"--retrieval-markdown={markdown}",
        "--retrieval-no-step-summary",
        *args,
    )
    return result, json.loads(report.read_text()), markdown.read_text()


def test_end_to_end_unjudged_documents_then_a_real_drop(pytester: pytest.Pytester) -> None:
    suite = pytester.makefile(".yaml", retrieval_dense=dense_suite())
    result, _, _ = _pytest(pytester, "--retrieval-baseline-update")
    assert result.ret == 0, result.stdout.str()

    # new unjudged documents take the top 4 places: ndcg@10 drops, judged documents keep their order
    suite.write_text(dense_suite(new=4))
    result, report, markdown = _pytest(pytester)
    out = result.stdout.str()
    assert result.ret == 1  # the ndcg@10 gate still fails: the judged-only line is information
    reading = "(+0.0000): the drop comes from unjudged documents"
    assert "judged@10 1.0000 -> 0.6000 (-0.4000)" in out
    assert f"judged only (ndcg'@10 over the current judgments): 1.0000 -> 1.0000 {reading}" in out
    # in the gate's failure message and in the summary (the short test summary repeats the whole
    # message too when pytest runs under CI=true, which never truncates it: not counted)
    assert out.split("short test summary info")[0].count(reading) == 2
    (reg,) = report["suites"][0]["regressions"]
    assert not reg["passed"] and reg["judged_only"]["current"] == reg["judged_only"]["baseline"] == 1.0
    # the Markdown cell (an "@" after a quote gets a zero-width space: no @mention)
    assert (
        "judged@10 Δ −0.4000 · ndcg'@&#8203;10 Δ +0.0000<br><sub>retrieval" in markdown
    )  # then where max_drop was set
    assert "  judged only (ndcg'@10 over the current judgments): 1.0000 -> 1.0000 (+0.0000)" in markdown

    # the titles instead, where the judged order is reversed: the drop holds on judged documents
    suite.write_text(dense_suite(new=4, fields="[title]"))
    result, report, _ = _pytest(pytester)
    out = result.stdout.str()
    assert (
        "judged only (ndcg'@10 over the current judgments): 1.0000 -> 0.2401 (-0.7599): the drop holds on judged documents"
        in out
    )
    (reg,) = report["suites"][0]["regressions"]
    assert reg["judged_only"]["current"] == pytest.approx(0.2401, abs=1e-4)
    assert "Traceback" not in out
