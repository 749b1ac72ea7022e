"""Benchmark: the regression zoo -- does the baseline gate catch harmful changes to a pipeline, and
leave harmless ones alone?

    python benchmarks/regression_zoo.py [--dataset scifact,nfcorpus] [--engine embedded,elasticsearch]
                                        [--only N] [--out /tmp/regression-zoo] [--json PATH]

For every (dataset, engine): the unchanged suite's baseline is written once
(``pytest --retrieval-baseline-update``); then, per change of the catalogue
(``benchmarks/zoo_changes.py``: harmful ones -- text truncated, analyzer, field boosts, k1/b,
embedder degraded, fusion weights and windows, a stale index -- and harmless ones -- corpus row
order, float16 vectors, cosmetic YAML, an added retriever, tiny weight moves), a copy of the
suite folder is changed and ``pytest`` runs it in a subprocess, as CI would. The run is
classified (``benchmarks/zoo_outcome.py``): caught / missed (harmful), flagged / ok (harmless),
or *silent* (a baseline item skipped, e.g. "corpus changed").

The gate suite (``benchmarks/zoo_data.py``) is the documented default (docs/how-to/baselines.md): BM25 (title + text),
dense kNN (the shared all-MiniLM-L6-v2 vectors), RRF and weighted fusion of the two (window 100),
``regression: {max_drop: {ndcg@10: 0.01}}`` over every retriever, evaluated on the test split
(SciFact 300 queries, NFCorpus 323). The same pytest run also evaluates every judged query
(SciFact 1,109; NFCorpus train + dev + test) in a second, ungated suite: the *cost* of a change
is the largest nDCG@10 drop of a retriever on that full set, so that "every change costing at
least 2 x max_drop is caught" can be checked. Latency passes are off (``--retrieval-no-latency``).

Data: ``../shared/data/{scifact,nfcorpus}`` beside the repo root; Elasticsearch 9.5 at
``http://127.0.0.1:19202`` (the plugin makes and deletes its own throwaway index). Everything is
written under ``--out``, never in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from zoo_changes import HARMFUL, HARMLESS, Change  # noqa: E402
from zoo_data import MAX_DROP, SHARED, Case, build_base, copy_case  # noqa: E402
from zoo_outcome import (  # noqa: E402
    FULL_FILE,
    GATE_FILE,
    classify,
    largest_drop,
    read_items,
    read_metrics,
    read_stability,
    verdict,
)

#: the documented default floor of a stability gate's mean RBO@10 (docs/how-to/stability.md)
DEFAULT_RBO = 0.85

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("scifact", "nfcorpus")
ENGINES = ("embedded", "elasticsearch")
TIMEOUT_S = 1200


@dataclass
class Row:
    dataset: str
    engine: str
    change: str
    harmful: bool
    outcome: str
    verdict: str
    cost: Optional[float]  # largest ndcg@10 drop of a retriever on every judged query
    cost_retriever: Optional[str]
    gate_drop: Optional[float]  # that retriever's drop on the gate queries
    seconds: float
    detail: str
    rbo: Optional[float] = None  # the lowest mean RBO@10 of a retriever over every query as a canary
    rbo_retriever: Optional[str] = None


def run_pytest(folder: Path, update: bool = False) -> float:
    """pytest on the folder's suites, as CI would; JUnit XML and the JSON report beside them."""
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--retrieval-no-latency"]
    args += [f"--junitxml={folder / 'junit.xml'}", f"--retrieval-report={folder / 'report.json'}"]
    args += ["--retrieval-baseline-update"] if update else []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    with open(folder / "pytest.log", "w", encoding="utf-8") as log:
        subprocess.run(
            args + [str(folder)], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=TIMEOUT_S
        )
    return time.perf_counter() - t0


def run_change(base: Case, base_metrics: Dict[str, Dict[str, float]], change: Change, index: int) -> Row:
    dataset, engine = base.gate["suite"].split("-")[1], base.gate["backend"]["type"]
    case = copy_case(base, base.root.parent / f"{index:02d}")
    change.edit(case)
    case.write()
    if not change.harmful:  # only a harmful change's cost is needed: half the work on 2 cores
        (case.root / FULL_FILE).unlink()
    seconds = run_pytest(case.root)
    result = classify(read_items(case.root / "junit.xml"), change.added_retrievers)
    metrics = read_metrics(case.root / "report.json")
    rbo_retriever, rbo = read_stability(case.root / "report.json")
    worst, cost = largest_drop(base_metrics.get(FULL_FILE, {}), metrics.get(FULL_FILE, {}))
    if worst is None:  # no full suite: the largest drop on the gate queries
        worst, gate_drop = largest_drop(base_metrics[GATE_FILE], metrics.get(GATE_FILE, {}))
    elif worst in metrics.get(GATE_FILE, {}):
        gate_drop = base_metrics[GATE_FILE][worst] - metrics[GATE_FILE][worst]
    else:
        gate_drop = None
    return Row(
        dataset,
        engine,
        change.name,
        change.harmful,
        result.outcome,
        verdict(result.outcome, change.harmful, change.should_refuse),
        cost,
        worst,
        gate_drop,
        seconds,
        result.detail,
        rbo,
        rbo_retriever,
    )


def print_row(row: Row) -> None:
    print(format_row(row), flush=True)


def run_setup(
    out: Path,
    dataset: str,
    engine: str,
    changes: List[Change],
    shared: Path = SHARED,
    record: Callable[[Row], None] = print_row,
) -> List[Row]:
    base = build_base(out / f"{dataset}-{engine}" / "base", dataset, engine, shared)
    seconds = run_pytest(base.root, update=True)
    base_metrics = read_metrics(base.root / "report.json")
    if not (base.root / "retrieval_gate.baseline.json").exists() or GATE_FILE not in base_metrics:
        print(f"{dataset} on {engine}: the baseline run failed, see {base.root / 'pytest.log'}")
        return []
    print(
        f"{dataset} on {engine}: baseline written in {seconds:.0f}s; ndcg@10 full set {fmt_metrics(base_metrics[FULL_FILE])}"
    )
    rows = []
    for i, change in enumerate(changes, 1):
        rows.append(run_change(base, base_metrics, change, i))
        record(rows[-1])
    return rows


def fmt_metrics(metrics: Dict[str, float]) -> str:
    return ", ".join(f"{r} {v:.4f}" for r, v in metrics.items())


def fmt_num(value: Optional[float]) -> str:
    return "     -" if value is None else f"{value:+.4f}"


def format_row(row: Row) -> str:
    kind = "harmful" if row.harmful else "harmless"
    cost = f"{fmt_num(row.cost)} {row.cost_retriever or '-':<8}"
    rbo = "     -" if row.rbo is None else f"{row.rbo:.4f} {row.rbo_retriever or '-':<8}"
    return (
        f"  {row.dataset:<8} {row.engine[:7]:<7} {kind:<8} {row.change:<38} {row.verdict:<7} "
        f"{cost} {fmt_num(row.gate_drop)} {rbo:<15} {row.seconds:4.0f}s  {row.detail[:120]}"
    )


HEADER = (
    f"  {'dataset':<8} {'engine':<7} {'kind':<8} {'change':<38} {'verdict':<7} "
    f"{'cost(full)':<16} {'gate':>7} {'rbo@10 (min)':<15} {'time':>5}  detail"
)


def summary(rows: List[Row]) -> List[str]:
    """Per (dataset, engine): caught x/N, flagged y/N, silent z, and the 2 x max_drop check."""
    lines = []
    for key in sorted({(r.dataset, r.engine) for r in rows}):
        mine = [r for r in rows if (r.dataset, r.engine) == key]
        harmful = [r for r in mine if r.harmful]
        harmless = [r for r in mine if not r.harmful]
        caught = sum(r.verdict == "caught" for r in harmful)
        flagged = sum(r.verdict == "flagged" for r in harmless)
        silent = sum(r.verdict == "silent" for r in mine)
        big = [r for r in harmful if r.cost is not None and r.cost >= 2 * MAX_DROP]
        big_missed = [r.change for r in big if r.verdict != "caught"]
        lines.append(
            f"{key[0]} on {key[1]}: harmful caught {caught}/{len(harmful)}, harmless flagged "
            f"{flagged}/{len(harmless)}, silent {silent} ({sum(r.verdict == 'silent' for r in harmful)} harmful); "
            f"costing >= {2 * MAX_DROP:g}: {len(big) - len(big_missed)}/{len(big)} caught"
            + (f" (not: {'; '.join(big_missed)})" if big_missed else "")
        )
        lines.append(rbo_line(big, harmless))
    return lines


def rbo_line(big: List[Row], harmless: List[Row]) -> str:
    """Whether one mean RBO@10 floor separates the harmful changes costing >= 2 x max_drop
    (below it) from the harmless ones (at or above it), and the default's verdict."""
    lows = [r.rbo for r in big if r.rbo is not None]
    highs = [r.rbo for r in harmless if r.rbo is not None]
    if not lows or not highs:
        return "  rbo@10: not measured (no stability section in the reports)"
    top, bottom = max(lows), min(highs)
    below = sum(r < DEFAULT_RBO for r in lows)
    above = sum(r >= DEFAULT_RBO for r in highs)
    split = (
        f"any floor in ({top:.4f}, {bottom:.4f}] separates them"
        if top < bottom
        else f"no single floor separates them (highest harmful {top:.4f} >= lowest harmless {bottom:.4f})"
    )
    return (
        f"  rbo@10 (lowest retriever mean over every query as a canary): harmful costing >= {2 * MAX_DROP:g} "
        f"at most {top:.4f}, harmless at least {bottom:.4f}: {split}; the default {DEFAULT_RBO} puts "
        f"{below}/{len(lows)} harmful below it and {above}/{len(highs)} harmless at or above it"
    )


def selected(only: Optional[int], engine: str, interleave: bool = False, kind: str = "both") -> List[Change]:
    """The first ``only`` changes of each kind (or of ``kind`` alone); harmful ones first, or
    taking turns."""
    harmful = [c for c in HARMFUL if c.applies_to(engine) and kind != "harmless"]
    harmless = [c for c in HARMLESS if c.applies_to(engine) and kind != "harmful"]
    if only is not None:
        harmful, harmless = harmful[:only], harmless[:only]
    if not interleave:
        return harmful + harmless
    turns = [c for pair in zip(harmful, harmless) for c in pair]
    n = min(len(harmful), len(harmless))
    return turns + harmful[n:] + harmless[n:]


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--dataset", default=",".join(DATASETS), help="comma-separated: scifact, nfcorpus")
    ap.add_argument("--engine", default="embedded", help="comma-separated: embedded, elasticsearch")
    ap.add_argument("--only", type=int, default=None, help="the first N harmful and N harmless changes")
    ap.add_argument("--out", type=Path, default=Path("/tmp/regression-zoo"))
    ap.add_argument(
        "--interleave",
        action="store_true",
        help="harmful and harmless changes take turns (a cut-short run has both)",
    )
    ap.add_argument(
        "--summarize", type=Path, nargs="+", default=None, help="print the summary of saved --json files"
    )
    ap.add_argument("--json", type=Path, default=None, help="also write every row here")
    ap.add_argument(
        "--match",
        default=None,
        help="only the changes whose name contains one of these '|'-separated texts",
    )
    ap.add_argument(
        "--kind",
        choices=("both", "harmful", "harmless"),
        default="both",
        help="run only the harmful or the harmless changes (two processes side by side; --summarize both)",
    )
    args = ap.parse_args(argv)
    args.datasets = [d for d in args.dataset.split(",") if d]
    args.engines = [e for e in args.engine.split(",") if e]
    for value, allowed, what in ((args.datasets, DATASETS, "--dataset"), (args.engines, ENGINES, "--engine")):
        unknown = [v for v in value if v not in allowed]
        if unknown or not value:
            ap.error(f"{what}: {', '.join(unknown) or 'empty'}: choose from {', '.join(allowed)}")
    if args.only is not None and args.only < 1:
        ap.error("--only: at least 1")
    return args


def summarize(paths: List[Path]) -> int:
    """The summary lines of rows saved by ``--json`` (a run cut short included)."""
    rows = []
    for path in paths:
        try:
            rows += [Row(**row) for row in json.loads(path.read_text(encoding="utf-8"))]
        except (OSError, ValueError, TypeError) as exc:  # not rows saved by --json
            print(f"--summarize: {path}: not a file of zoo rows ({type(exc).__name__})", file=sys.stderr)
            return 2
    for line in summary(rows):
        print(line)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if args.summarize:
        return summarize(args.summarize)
    missing = [d for d in args.datasets if not (SHARED / d / "corpus.jsonl").exists()]
    if missing:
        print(f"needs {', '.join(str(SHARED / d) for d in missing)}")
        return 1
    print(
        f"regression zoo: max_drop ndcg@10 {MAX_DROP}; cost(full) = a harmful change's largest ndcg@10 drop of a"
        " retriever on every judged query; gate = that retriever's drop on the gate queries"
    )
    print(HEADER)
    rows: List[Row] = []

    def record(row: Row) -> None:
        print(format_row(row), flush=True)
        rows.append(row)
        if args.json:  # after every row: a long run interrupted keeps what it measured
            args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1), encoding="utf-8")

    for engine in args.engines:
        for dataset in args.datasets:
            changes = selected(args.only, engine, args.interleave, args.kind)
            if args.match:
                changes = [c for c in changes if any(m and m in c.name for m in args.match.split("|"))]
            run_setup(args.out, dataset, engine, changes, record=record)
    print()
    for line in summary(rows):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
