"""``pytest-retrieval history`` over 1,000 stored runs (issue #37: "answers in under a second"):
the time of ``history list``, ``history trend`` (table and sparklines) and ``history trend
--html`` on a SQLite store of N run records (each suite of 300 queries x 3 retrievers, per-query
values as the plugin writes them), against the named peer: the same trend read from the same N
records as N JSON report files (``--retrieval-report`` of every run kept as a CI artefact:
each file parsed, its aggregates taken). Each command is run in this process, its output to
/dev/null; the best of 3.

    PYTHONPATH=$PWD python benchmarks/bench_history_views.py [--runs 1000] [--queries 300]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_retrieval.cli.app import main  # noqa: E402
from pytest_retrieval.history import open_store  # noqa: E402
from tests.cli.history_data import record  # noqa: E402


def best_of(n: int, work: Callable[[], object]) -> tuple:
    """(wall seconds, CPU seconds of this process), each the best of ``n``: on a shared machine
    the wall time waits for a core; the CPU time is what the command costs."""
    wall, cpu = [], []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        work()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu)


def quiet(argv: list) -> Callable[[], None]:
    def run() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(argv) == 0

    return run


def json_trend(folder: Path) -> Callable[[], dict]:
    """The peer: every report file parsed, (suite, retriever, metric) -> values, in time order."""

    def run() -> dict:
        series: dict = {}
        for path in sorted(folder.glob("*.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            for s in doc["suites"]:
                for r in s["retrievers"]:
                    for metric, value in r["metrics"].items():
                        series.setdefault((s["suite"], r["name"], metric), []).append(value)
        return series

    return run


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_history_"))
    db, reports = tmp / "history.sqlite", tmp / "reports"
    reports.mkdir()
    store = open_store(str(db))
    t0 = time.perf_counter()
    for i in range(args.runs):
        rec = record(i, 0.5 + (i % 7) * 0.002, queries=args.queries, retrievers=("bm25", "dense", "rrf"))
        store.append(rec)
        (reports / f"{i:05d}.json").write_text(json.dumps(rec), encoding="utf-8")
    store.close()
    fill = time.perf_counter() - t0
    size_db = db.stat().st_size / 1e6
    size_json = sum(p.stat().st_size for p in reports.iterdir()) / 1e6
    print(f"{args.runs} runs of {args.queries} queries x 3 retrievers written in {fill:.1f} s")
    print(f"  SQLite store {size_db:.1f} MB; the same records as JSON report files {size_json:.1f} MB")

    peer, peer_cpu = best_of(3, json_trend(reports))
    every = ["--limit", str(args.runs)]
    rows = [
        ("history list", quiet(["history", "list", "--store", str(db)])),
        ("history trend", quiet(["history", "trend", "--store", str(db), *every])),
        ("history trend --all", quiet(["history", "trend", "--store", str(db), "--all", *every])),
        (
            "history trend --html",
            quiet(["history", "trend", "--store", str(db), *every, "--html", str(tmp / "h.html")]),
        ),
    ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} on {os.cpu_count()} cores (wall times wait for a core; CPU times do not)")
    print(f"peer: the trend read from {args.runs} JSON report files: {peer:.3f} s wall, {peer_cpu:.3f} s CPU")
    for label, work in rows:
        t, c = best_of(3, work)
        verdict = "under a second" if t < 1.0 else "OVER A SECOND"
        print(
            f"{label:<22} {t:.3f} s wall ({verdict}), {c:.3f} s CPU; "
            f"{peer / t:.1f}x faster than reading the JSON files (CPU {peer_cpu / c:.1f}x)"
        )


if __name__ == "__main__":
    main_()
