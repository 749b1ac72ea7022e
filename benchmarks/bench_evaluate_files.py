"""Benchmark: ``pytest-retrieval evaluate`` on files against pytrec_eval's parse + evaluate.

    python benchmarks/bench_evaluate_files.py [--sizes 10000,30000,100000] [--hits 1000]
                                              [--pytrec-max 30000] [--out /tmp/pytest-retrieval-bench]

Input: ``synthetic_runs.py`` files (N queries x H hits, doc ids from an 8.8M-doc
collection, 3-decimal scores so ties happen, 1-20 judged docs a query), written once under
``--out`` (never in the repository).

Each contender runs in its own process (so its peak RSS is its own, read with
``os.wait4``), the two taking turns at each size; the time is the work inside the process
(read the files, evaluate), without the interpreter's start:

* ours: ``io.runfiles.evaluate_files(qrels, run, [ndcg@10, mrr@10, recall@100, map],
  gain="linear", ties="trec")`` -- what ``pytest-retrieval evaluate --profile trec`` runs;
* pytrec_eval: ``parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator(qrels, {ndcg_cut_10,
  recip_rank, recall_100, map}).evaluate(run)``.

pytrec_eval is not run above ``--pytrec-max`` queries: at 100,000 x 1,000 it needs 16 GiB
and 154 s (figure from issue #13, not re-measured here; the machine is shared). Where both
ran, every per-query value of ndcg@10, recall@100 and map is compared (1e-9).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic_runs import write  # noqa: E402

OURS = ["ndcg@10", "mrr@10", "recall@100", "map"]
COMPARED = [("ndcg@10", "ndcg_cut_10"), ("recall@100", "recall_100"), ("map", "map")]

#: Each child reports its own peak RSS (VmHWM of its address space). Not the ``ru_maxrss`` that
#: ``wait4`` returns: Linux carries that over ``execve`` from the parent, so a child spawned by a
#: parent holding the other contender's results would report at least the parent's RSS.
HWM = """
def _peak_rss_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None
"""

CHILD_OURS = (
    HWM
    + """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
from pytest_retrieval.io.runfiles import evaluate_files
ev = evaluate_files(sys.argv[1], sys.argv[2], {metrics}, gain="linear", ties="trec")
elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
json.dump({{"seconds": elapsed, "cpu": cpu, "per_query": {{m: ev.per_query[m] for m in {compared}}},
           "mean_map": ev.aggregate["map"], "peak_rss_mib": _peak_rss_mib()}}, open(sys.argv[3], "w"))
"""
)

CHILD_PYTREC = (
    HWM
    + """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import pytrec_eval
with open(sys.argv[1]) as fh:
    qrels = pytrec_eval.parse_qrel(fh)
with open(sys.argv[2]) as fh:
    run = pytrec_eval.parse_run(fh)
res = pytrec_eval.RelevanceEvaluator(qrels, {{"ndcg_cut.10", "recip_rank", "recall.100", "map"}}).evaluate(run)
elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
json.dump({{"seconds": elapsed, "cpu": cpu, "per_query": {{t: {{q: v[t] for q, v in res.items()}} for t in {compared}}},
           "peak_rss_mib": _peak_rss_mib()}}, open(sys.argv[3], "w"))
"""
)


def run_child(code: str, qrels: Path, run: Path):
    """(seconds of work, peak RSS in MiB, result with "cpu": CPU seconds of all its threads)
    of ``code`` in a fresh interpreter."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", code, str(qrels), str(run), out], env=env)
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode})")
    with open(out) as fh:
        result = json.load(fh)
    os.unlink(out)
    rss = result.get("peak_rss_mib") or usage.ru_maxrss / 1024.0  # ru_maxrss: not Linux, an upper bound
    return result["seconds"], rss, result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,30000,100000")
    ap.add_argument("--hits", type=int, default=1000)
    ap.add_argument("--pytrec-max", type=int, default=30000)
    ap.add_argument("--out", type=Path, default=Path("/tmp/pytest-retrieval-bench"))
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    child_ours = CHILD_OURS.format(metrics=OURS, compared=[m for m, _ in COMPARED])
    child_trec = CHILD_PYTREC.format(compared=[t for _, t in COMPARED])
    rows = []
    failed = False
    for n in sizes:
        t0 = time.perf_counter()
        qrels, run = write(args.out, n, args.hits)
        print(
            f"{n} queries x {args.hits} hits: {run} ({run.stat().st_size / 2**20:.0f} MiB), "
            f"ready in {time.perf_counter() - t0:.0f}s",
            flush=True,
        )
        ours_s, ours_rss, ours = run_child(child_ours, qrels, run)
        print(
            f"  pytest-retrieval evaluate   {ours_s:8.1f}s wall {ours['cpu']:8.1f}s CPU  peak RSS {ours_rss:7.0f} MiB",
            flush=True,
        )
        if n <= args.pytrec_max:
            trec_s, trec_rss, trec = run_child(child_trec, qrels, run)
            print(
                f"  pytrec_eval parse+evaluate  {trec_s:8.1f}s wall {trec['cpu']:8.1f}s CPU  peak RSS {trec_rss:7.0f} MiB",
                flush=True,
            )
            worst = 0.0
            compared = 0
            for m, t in COMPARED:
                for q, v in ours["per_query"][m].items():
                    worst = max(worst, abs(v - trec["per_query"][t][q]))
                    compared += 1
            ok = worst <= 1e-9
            failed |= not ok
            print(
                f"  {compared} per-query values compared: max |diff| = {worst:.1e} {'ok' if ok else 'MISMATCH'}"
            )
        else:
            trec_s = trec_rss = trec = None
            print("  pytrec_eval: not run (issue #13: 16 GiB and 154 s at 100k x 1,000; not re-measured)")
        rows.append((n, ours_s, ours["cpu"], ours_rss, trec_s, trec["cpu"] if trec else None, trec_rss))

    print(
        "\n(wall = elapsed; CPU = CPU seconds of all the process's threads: the steadier figure on "
        "a shared machine)"
    )
    print("queries  ours wall/CPU (s)  ours RSS  pytrec wall/CPU (s)  pytrec RSS  ratio wall  ratio CPU")
    for n, s, c, rss, ts, tc, trss in rows:
        if ts:
            trec_text = f"{ts:8.1f} /{tc:8.1f}"
            ratios = f"{ts / s:9.1f}x {tc / c:9.1f}x"
            trss_text = f"{trss:7.0f} MiB"
        else:
            trec_text, ratios, trss_text = f"{'-':>18}", f"{'-':>10} {'-':>10}", f"{'-':>11}"
        print(f"{n:>7}  {s:7.1f} /{c:7.1f}  {rss:5.0f} MiB  {trec_text}  {trss_text}  {ratios}")
    wall = {n: s for n, s, *_ in rows}
    cpu = {n: c for n, _s, c, *_ in rows}
    for big in (30000, 100000):
        if 10000 in wall and big in wall:
            print(
                f"growth 10k -> {big // 1000}k (ours): wall {wall[big] / wall[10000]:.1f}x, "
                f"CPU {cpu[big] / cpu[10000]:.1f}x (linear = {big // 10000}x)"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
