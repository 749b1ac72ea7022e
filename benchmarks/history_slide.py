"""Benchmark: the slow slide (issue #37) -- a scripted sequence of accepted changes on SciFact, each
a small nDCG@10 drop the per-change baseline gate accepts, with the baseline updated after each:
does the reference gate (``regression.reference``, a cumulative budget against a pinned stored
run) fail once the cumulative loss passes ``max_total_drop``, and never on harmless changes?

    python benchmarks/history_slide.py [--steps 12] [--out /tmp/history-slide] [--json PATH]

The system: the regression zoo's SciFact gate suite (``benchmarks/zoo_data.py``: the test split's
300 queries, BM25 on title + text, the embedded engine), ``regression: {max_drop: {ndcg@10:
0.01}, reference: {run: v1, max_total_drop: {ndcg@10: 0.02}}}``. It runs once; its run is stored
in a SQLite history tagged ``v1`` (the record the plugin writes: the JSON report with its run
section) and read back as the reference, as ``pytest --retrieval-history`` does.

A change is scripted on that real run (a ranking edit, so that each one is the small drop the
issue describes; the zoo's pipeline edits move nDCG@10 by 0.01 to 0.3): a *harmful* step
demotes the best-ranked relevant document of a few more queries by a few ranks, queries added
until the step costs 0.002-0.006 nDCG@10 (a target drawn per step); a *harmless* step demotes
in some queries and promotes a relevant document in others, the step's net change kept near 0
and the sequence's within +-0.002. Changes accumulate: step i is step i-1 changed again. Each
step is judged by the plugin's own gates: the baseline gate against step i-1 (the baseline
rewritten after each accepted step, ``--retrieval-baseline-update``) and the reference gate
against the stored ``v1`` (gates/reference.py).

The reference gate asks for non-inferiority, as the baseline gate does: it fails unless a
cumulative drop beyond ``max_total_drop`` is ruled out at 95%, so it fails at the latest when the
cumulative loss passes the budget, and earlier when the loss is close to it and the queries
cannot rule out the rest (the printed lower bound says how close). The script prints, per step,
the step's drop, the cumulative drop, both gates' lower bounds and verdicts, and at which step
the reference gate first failed and the cumulative loss first passed the budget.

The false-alarm rate of ``history drift`` (stats/changepoint.py) is measured here too, on
simulated nightly runs of the unchanged system (per-run values drawn around this run's nDCG@10
with the run-to-run noise of a live index), with its detection of a shift.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from zoo_data import MAX_DROP, SHARED, build_base  # noqa: E402

from pytest_retrieval.types import Ranking  # noqa: E402

METRIC = "ndcg@10"
MAX_TOTAL_DROP = 0.02
STEP_DROP = (0.002, 0.006)
REF = "v1"
MAX_QUERY_MOVE = 0.15  # a step's edit moves one query's nDCG@10 by at most this much


@dataclass
class Step:
    step: int
    kind: str  # harmful / harmless
    step_drop: float  # nDCG@10 of step i-1 minus step i
    total_drop: float  # of the reference minus step i
    baseline_ci_low: float
    baseline_passed: bool
    reference_ci_low: float
    reference_passed: bool


# ----------------------------------------------------------------------------- the system


def suite_folder(out: Path, dataset: str = "scifact", shared: Path = SHARED) -> Path:
    """The zoo's gate suite of ``dataset`` (a BEIR folder under ``shared``) with BM25 only, the
    reference gate, no latency pass."""
    import yaml

    case = build_base(out / dataset, dataset, "embedded", shared)
    gate = case.gate
    gate.pop("embedder", None)
    gate["retrievers"] = {"bm25": gate["retrievers"]["bm25"]}
    gate["evaluation"] = {"metrics": [METRIC]}
    gate["latency"] = {"enabled": False}
    gate["regression"] = {
        "max_drop": {METRIC: MAX_DROP},
        "resamples": 2000,
        "reference": {"run": REF, "max_total_drop": {METRIC: MAX_TOTAL_DROP}},
    }
    path = case.root / "retrieval_gate.yaml"
    path.write_text(yaml.safe_dump(gate, sort_keys=False), encoding="utf-8")
    return path


def run_suite(path: Path) -> Any:
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    return SuiteRunner(load_suite(path)).run()


def store_reference(result: Any, history: Path) -> str:
    """The run stored as the plugin stores it (the JSON report with its run section), tagged v1."""
    from pytest_retrieval.execution.runner import SuiteRunner  # noqa: F401 - same import order as the plugin
    from pytest_retrieval.history import open_store
    from pytest_retrieval.history.record import build_record, run_section
    from pytest_retrieval.pytest_plugin.state import SuiteState
    from pytest_retrieval.reports.json_report import REPORT_VERSION, suite_report

    state = SuiteState(result.suite)
    state.result = result
    doc = {"version": REPORT_VERSION, "plugin_version": "bench", "suites": [suite_report(state)]}
    store = open_store(str(history))
    try:
        return store.append(build_record(doc, run_section(root=ROOT, tags=[REF], env={})))
    finally:
        store.close()


def read_reference(result: Any, history: Path) -> Tuple[Any, str]:
    from pytest_retrieval.gates.reference import comparable_reference, reference_from_record
    from pytest_retrieval.history import open_store

    store = open_store(str(history))
    try:
        run_id = store.resolve(REF)
        record = store.load(run_id)
    finally:
        store.close()
    values = reference_from_record(record, result.suite.name, ref=REF)
    return comparable_reference(values, result, ref=REF, run_id=run_id)[0], run_id


# ----------------------------------------------------------------------------- the changes


def with_run(result: Any, run: Dict[str, Ranking]) -> Any:
    """``result`` with bm25's run replaced and scored again."""
    from pytest_retrieval.measures.metrics import evaluate

    rr = result.retrievers["bm25"]
    ev = evaluate(result.judgments.qrels, run, [METRIC], **result.suite.scoring())
    out = copy.copy(result)
    out.retrievers = {**result.retrievers, "bm25": replace(rr, run=run, evaluation=ev)}
    return out


def _move(ranking: Ranking, qrels: Dict[str, int], by: int) -> Optional[Ranking]:
    """A relevant document moved ``by`` ranks, scores kept in place; None when none can move.
    Down (``by`` > 0): the lowest-ranked relevant one of the top 10 below rank 1 (a small loss
    per query, as a slightly worse analyzer or boost costs); up: the first relevant one of the
    top 30 below rank 1."""
    docs = list(ranking.doc_ids)
    top = docs[:10]
    if by > 0:
        at = next(
            (i for i in range(len(top) - 1, 0, -1) if qrels.get(top[i], 0) > 0 and i + by < len(docs)), None
        )
    else:
        at = next((i for i, d in enumerate(docs[:30]) if qrels.get(d, 0) > 0 and i > 0), None)
    if at is None:
        return None
    to = max(0, at + by)
    docs.insert(to, docs.pop(at))
    return Ranking(docs, list(ranking.scores))


def _mean(result: Any) -> float:
    return float(result.retrievers["bm25"].evaluation.aggregate[METRIC])


def change(result: Any, rng: random.Random, lo: float, hi: float, down_only: bool) -> Any:
    """One step: queries edited (demoted; for a harmless step, demoted or promoted) until the
    step's drop is in [lo, hi]."""
    run = dict(result.retrievers["bm25"].run)
    qrels = result.judgments.qrels
    start, now = _mean(result), result
    qids = sorted(run)
    rng.shuffle(qids)
    per_query = now.retrievers["bm25"].evaluation.per_query[METRIC]
    for q in qids:
        by = rng.choice((1, 2)) if down_only or rng.random() < 0.5 else -rng.choice((1, 2))
        moved = _move(run[q], qrels.get(q, {}), by)
        if moved is None:
            continue
        trial = with_run(now, {**run, q: moved})
        drop = start - _mean(trial)
        lost = per_query[q] - trial.retrievers["bm25"].evaluation.per_query[METRIC][q]
        if drop > hi or abs(lost) > MAX_QUERY_MOVE:
            continue
        run[q], now = moved, trial
        if lo <= drop <= hi:
            return now
    return now


def slide(result: Any, steps: int, harmful: bool, seed: int = 0) -> List[Any]:
    """The results of ``steps`` accumulated changes, each a drop in STEP_DROP (harmful) or a
    reshuffle with no net loss (harmless: each step's net within +-0.001, the sequence's within
    +-0.002)."""
    rng = random.Random(seed)
    out, now, start = [], result, _mean(result)
    for _ in range(steps):
        if harmful:
            target = rng.uniform(0.003, 0.005)
            now = change(now, rng, target, STEP_DROP[1], down_only=True)
        else:
            total = start - _mean(now)  # >0: lost so far; steer back toward 0
            lo, hi = (-0.001 - total, 0.001 - total) if abs(total) > 0.001 else (-0.001, 0.001)
            now = change(now, rng, max(lo, -0.002 - total), min(hi, 0.002 - total), down_only=False)
        out.append(now)
    return out


# ----------------------------------------------------------------------------- the gates


def judge(result: Any, steps: List[Any], reference: Any, run_id: str, kind: str) -> List[Step]:
    from pytest_retrieval.gates.baseline import baseline_from_result
    from pytest_retrieval.gates.reference import judge_against_reference
    from pytest_retrieval.gates.regression import judge_against_baseline

    rows: List[Step] = []
    before, ref0 = result, _mean(result)
    gate = next(g for g in result.suite.reference if g.retriever == "bm25")
    for i, now in enumerate(steps, 1):
        baseline = baseline_from_result(before)  # --retrieval-baseline-update after each accepted step
        per_change = judge_against_baseline(now, baseline, "bm25", METRIC, MAX_DROP)
        cumulative = judge_against_reference(now, reference, gate, ref=REF, run_id=run_id)
        rows.append(
            Step(
                i,
                kind,
                _mean(before) - _mean(now),
                ref0 - _mean(now),
                per_change.overall.ci_low,
                per_change.passed,
                cumulative.overall.ci_low,
                cumulative.passed,
            )
        )
        before = now
    return rows


def first(rows: List[Step], test: Any) -> Optional[int]:
    return next((r.step for r in rows if test(r)), None)


def print_rows(rows: List[Step]) -> None:
    print(
        f"  {'step':>4} {'drop':>8} {'total':>8} {'baseline lo':>12} {'gate':>5} {'reference lo':>13} {'gate':>5}"
    )
    for r in rows:
        print(
            f"  {r.step:>4} {r.step_drop:+8.4f} {r.total_drop:+8.4f} {r.baseline_ci_low:+12.4f} "
            f"{'pass' if r.baseline_passed else 'FAIL':>5} {r.reference_ci_low:+13.4f} "
            f"{'pass' if r.reference_passed else 'FAIL':>5}"
        )


def summary(harmful: List[Step], harmless: List[Step]) -> Dict[str, Any]:
    return {
        "per_change_gates_passed": all(r.baseline_passed for r in harmful + harmless),
        "step_drops_in_range": all(STEP_DROP[0] <= r.step_drop <= STEP_DROP[1] for r in harmful),
        "reference_failed_at": first(harmful, lambda r: not r.reference_passed),
        "budget_passed_at": first(harmful, lambda r: r.total_drop > MAX_TOTAL_DROP),
        "harmless_reference_failures": sum(not r.reference_passed for r in harmless),
    }


# ----------------------------------------------------------------------------- drift


def drift_rates(mean: float, sd: float = 0.004, runs: int = 30, series: int = 400) -> Dict[str, float]:
    """The measured false-alarm rate of the drift test on runs of the unchanged system, and its
    detection rate of a shift of 2 sd after 20 of 30 runs (alpha 0.05, fixed seed)."""
    import numpy as np

    from pytest_retrieval.stats.changepoint import change_point

    rng = np.random.default_rng(37)
    alarms = sum(
        change_point(mean + sd * rng.standard_normal(runs), n_permutations=999, seed=i).flagged
        for i in range(series)
    )
    found = 0
    for i in range(series):
        x = mean + sd * rng.standard_normal(runs)
        x[20:] -= 2 * sd
        found += change_point(x, n_permutations=999, seed=i).flagged
    return {
        "alpha": 0.05,
        "series": series,
        "false_alarm_rate": alarms / series,
        "detection_2sd": found / series,
    }


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--out", type=Path, default=Path("/tmp/history-slide"))
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    history = args.out / "history.sqlite"
    history.unlink(missing_ok=True)
    result = run_suite(suite_folder(args.out))
    run_id = store_reference(result, history)
    reference, run_id = read_reference(result, history)
    n = len(result.retrievers["bm25"].evaluation.per_query[METRIC])
    print(f"SciFact test ({n} queries), BM25 on the embedded engine: {METRIC} {_mean(result):.4f}")
    print(
        f"per-change gate: max_drop {MAX_DROP}; reference gate: max_total_drop {MAX_TOTAL_DROP} (run {run_id[:12]}, tag {REF})"
    )
    harmful = judge(result, slide(result, args.steps, True, args.seed), reference, run_id, "harmful")
    harmless = judge(result, slide(result, args.steps, False, args.seed), reference, run_id, "harmless")
    print(f"\n{args.steps} harmful changes, the baseline updated after each:")
    print_rows(harmful)
    print(f"\n{args.steps} harmless changes:")
    print_rows(harmless)
    s = summary(harmful, harmless)
    s["drift"] = drift_rates(_mean(result))
    s["seconds"] = round(time.perf_counter() - t0, 1)
    print(
        f"\nevery per-change gate passed: {s['per_change_gates_passed']}; every harmful step drop in "
        f"{STEP_DROP}: {s['step_drops_in_range']}\nreference gate first failed at step {s['reference_failed_at']}; "
        f"the cumulative loss first passed {MAX_TOTAL_DROP} at step {s['budget_passed_at']}\n"
        f"harmless sequence: the reference gate failed {s['harmless_reference_failures']} times of {args.steps}"
    )
    d = s["drift"]
    print(
        f"history drift on {d['series']} simulated series of 30 unchanged nightly runs: false-alarm rate "
        f"{d['false_alarm_rate']:.3f} (alpha {d['alpha']}); a 2-sd shift found in {d['detection_2sd']:.2f}"
    )
    print(f"{s['seconds']} s")
    if args.json:
        args.json.write_text(
            json.dumps(
                {**s, "harmful": [asdict(r) for r in harmful], "harmless": [asdict(r) for r in harmless]},
                indent=1,
            )
        )
    ok = (
        s["per_change_gates_passed"]
        and s["reference_failed_at"] is not None
        and not s["harmless_reference_failures"]
    )
    budget = s["budget_passed_at"]
    ok = ok and (budget is None or s["reference_failed_at"] <= budget)
    return 0 if ok and not math.isnan(_mean(result)) else 1


if __name__ == "__main__":
    sys.exit(main())
