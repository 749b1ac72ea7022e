"""Nothing is lost under concurrency (issue #37): two processes appending 100 runs each at once
into one SQLite file end with 200 records and no error (WAL, one transaction per append, the
busy timeout)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any, List

from pytest_retrieval.history import open_store

from .records import record

RUNS = 100


def _writer(path: str, first: int, start: Any, errors: Any) -> None:
    store = open_store(path)
    start.wait(30)
    try:
        for i in range(first, first + RUNS):
            store.append(record(i / 100, queries=20))
    except Exception as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"{type(exc).__name__}: {exc}")
    finally:
        store.close()


def test_two_processes_writing_100_runs_each_into_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "h.sqlite")
    ctx = multiprocessing.get_context("spawn")
    start, errors = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(path, n * RUNS, start, errors)) for n in range(2)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
    alive = [p for p in procs if p.is_alive()]
    for p in alive:
        p.kill()
    said: List[str] = []
    while not errors.empty():
        said.append(errors.get())
    assert not alive and not said and all(p.exitcode == 0 for p in procs), said
    store = open_store(path)
    assert len(store.runs()) == 2 * RUNS
    assert len({p.run_id for p in store.points(metric="ndcg@10")}) == 2 * RUNS
    store.close()
