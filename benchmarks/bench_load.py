"""Load benchmark (issue #16 item 7): 10,000 queries at concurrency 8 against each engine, the
plugin's quality pass against a bare client loop doing the same ``_msearch`` calls.

    python benchmarks/bench_load.py [--engines elasticsearch,opensearch] [--queries 10000]
                                    [--concurrency 8] [--es-url URL] [--os-url URL]

Needs the engines (``scripts/engines up``) and SciFact in ``../shared``. A 2-node cluster from
``scripts/engines up --nodes 2`` is measured by naming both nodes and a sharded, replicated
index::

    python benchmarks/bench_load.py --shards 2 --replicas 1 \
        --es-url http://127.0.0.1:19210,http://127.0.0.1:19211 \
        --os-url http://127.0.0.1:19220,http://127.0.0.1:19221

(the Elasticsearch 8.19 cluster with the 8.x client: ``PYTHONPATH=.venv-es8``). Per engine one
throwaway index of SciFact (5,183 abstracts, MiniLM vectors) is built and deleted at the end. The 300 test queries are repeated under distinct ids up to
``--queries``. Each contender runs in its own process (so its peak RSS is its own), BM25 then
kNN, top 10, in batches of 100 with ``--concurrency`` batches in flight:

* plugin: ``backend.search_batch`` on the existing index (every sub-response checked, hits read
  into a Run);
* bare: the engine's official client, ``msearch`` with the same bodies from a ThreadPoolExecutor
  (``bench_msearch_overhead.make_bare``), with the same ``preference`` header line as the
  plugin's searches, so both send the same calls;
* bare-nopref: the same loop without a ``preference``. On a replicated index this lets the
  engine spread the searches over the shard copies (adaptive replica selection), which is what
  the plugin gives up for reproducible scores; the ratio plugin/bare-nopref shows what that costs.

Untimed warm-up passes run first, until two in a row agree within 5% (``--no-warmup`` skips
them), then ``--rounds`` (default 2) of the contenders in alternating order (A B C, C B A):
without them, whichever contender ran first was 15-30% slower, as running them in both orders
showed on the 2-node clusters (``--sides`` sets the order); the ratios compare mean walls. Prints wall time, queries answered and
errors per contender and spec, the ratio plugin / bare and each process's peak RSS. Every query must be accounted for: a missing one is an error.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_msearch_overhead as base  # noqa: E402

from pytest_retrieval.backends.base import BM25Spec, KnnSpec  # noqa: E402
from pytest_retrieval.types import Query  # noqa: E402

K = 10


def _queries(n: int) -> List[Query]:
    _, _, queries = base.load_scifact()
    return [
        Query(f"{q.qid}#{i // len(queries)}", q.text, q.vector)
        for i, q in enumerate(queries * (n // len(queries) + 1))
    ][:n]


def _backend_class(engine: str) -> Any:
    if engine == "elasticsearch":
        from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend

        return ElasticsearchBackend
    from pytest_retrieval.backends.opensearch import OpenSearchBackend

    return OpenSearchBackend


def peak_rss_mib() -> float:
    """This process's peak resident set: VmHWM, the high-water mark of its own address space.
    Not ``ru_maxrss``: Linux carries that over ``execve`` from the parent (the address space it
    replaced), so every child of a 300 MiB parent would report at least 300 MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: The contenders, each in its own process, in this order.
SIDES = ("bare-nopref", "bare", "plugin")


def child(engine: str, url: str, index: str, side: str, n: int, concurrency: int) -> Dict[str, Any]:
    """One contender over both specs; returns its figures (printed as JSON)."""
    queries = _queries(n)
    out: Dict[str, Any] = {}
    if side == "plugin":
        backend = _backend_class(engine)(
            {
                "hosts": url.split(","),
                "batch_size": base.BATCH_SIZE,
                "concurrency": concurrency,
                "request_timeout": 120,
            },
            {"name": index, "suite": "bench load"},
        )
        backend.prepare(None, None)

        def search(spec: Any) -> Dict[str, List[str]]:
            return {q: [d for d, _ in r.pairs()] for q, r in backend.search_batch(spec, queries, K).items()}

    else:
        base.CONCURRENCY = concurrency
        # the plugin's default preference: "pytest-retrieval-" and the suite name's slug
        header = {"preference": "pytest-retrieval-bench-load"} if side == "bare" else None
        client, bare = base.make_bare(engine, url, index, header)

        def search(spec: Any) -> Dict[str, List[str]]:
            return {q: [d for d, _ in h] for q, h in bare(spec, queries, K).items()}

    for name, spec in (("bm25", BM25Spec()), ("knn", KnnSpec())):
        t0 = time.perf_counter()
        errors = 0
        try:
            run = search(spec)
        except Exception as exc:  # noqa: BLE001 - counted, then reported
            errors, run = 1, {}
            out[f"{name}_error"] = f"{type(exc).__name__}: {exc}"[:300]
        wall = time.perf_counter() - t0
        missing = sum(1 for q in queries if q.qid not in run)
        out[name] = {"wall_s": wall, "answered": len(run), "missing": missing, "errors": errors}
    if side == "plugin":
        backend.close()  # an existing index: nothing is deleted
    out["peak_rss_mib"] = peak_rss_mib()
    return out


def settle(engine: str, url: str, index: str, n: int, concurrency: int, passes: int = 6) -> List[float]:
    """Untimed passes of the bare loop until two in a row take walls within 5% of each other (at
    most ``passes``): a freshly built index gets faster for a minute or more (segment merges,
    JIT, caches), and a contender timed meanwhile would pay for it. Returns the walls."""
    walls: List[float] = []
    while len(walls) < passes:
        got = child(engine, url, index, "bare-nopref", n, concurrency)
        walls.append(got["bm25"]["wall_s"] + got["knn"]["wall_s"])
        if len(walls) >= 2 and abs(walls[-1] - walls[-2]) <= 0.05 * walls[-2]:
            break
    return walls


def bench(
    engine: str,
    url: str,
    n: int,
    concurrency: int,
    settings: Dict[str, int],
    sides: Sequence[str] = SIDES,
    warmup: bool = True,
    rounds: int = 2,
) -> None:
    corpus, vectors, _ = base.load_scifact()
    backend = _backend_class(engine)(
        {"hosts": url.split(","), "request_timeout": 120}, {"suite": "bench load", "settings": settings}
    )
    try:
        backend.prepare(corpus, vectors)
        index = backend.index_name
        warm = settle(engine, url, str(index), n, concurrency) if warmup else []
        # A B C, then C B A, ...: a drift of the engine's speed over the run (merges finishing,
        # caches filling) falls on every contender alike
        runs: Dict[str, List[Dict[str, Any]]] = {side: [] for side in sides}
        for r in range(rounds):
            for side in sides if r % 2 == 0 else list(reversed(sides)):
                cmd = [sys.executable, __file__, "--child", side, "--engines", engine, "--url", url]
                cmd += ["--index", str(index), "--queries", str(n), "--concurrency", str(concurrency)]
                done = subprocess.run(cmd, capture_output=True, text=True, check=True)
                runs[side].append(json.loads(done.stdout.strip().splitlines()[-1]))
        facts = backend.describe()
        print(
            f"{engine} {facts.get('version', '')} at {url}: {n} queries, concurrency {concurrency}, top {K}, "
            f"batches of {base.BATCH_SIZE}, {facts.get('shards')} shards, {facts.get('replicas')} replicas, "
            f"{rounds} rounds (order {' '.join(sides)}, then reversed), "
            + (
                f"after {len(warm)} untimed warm-up passes (BM25+kNN walls "
                + " / ".join(f"{w:.1f}" for w in warm)
                + " s)"
                if warmup
                else "no warm-up"
            )
        )
        mean: Dict[str, Dict[str, float]] = {}
        for spec in ("bm25", "knn"):
            for side in sides:
                rs = [run[spec] for run in runs[side]]
                walls = [r["wall_s"] for r in rs]
                mean.setdefault(side, {})[spec] = sum(walls) / len(walls)
                failures = [run.get(spec + "_error") for run in runs[side] if run.get(spec + "_error")]
                print(
                    f"  {spec:4s} {side:11s} mean {mean[side][spec]:7.2f} s ("
                    + " / ".join(f"{w:.2f}" for w in walls)
                    + f")  answered {sum(r['answered'] for r in rs)} of {n * len(rs)}  "
                    f"missing {sum(r['missing'] for r in rs)}  errors {sum(r['errors'] for r in rs)}"
                    + (f"  ({failures[0]})" if failures else "")
                )
            for other in [o for o in ("bare", "bare-nopref") if o in mean and "plugin" in mean]:
                ratio = mean["plugin"][spec] / mean[other][spec]
                print(f"  {spec:4s} ratio plugin/{other} mean wall: {ratio:.3f}")
        for side in sides:
            print(f"  peak RSS {side:11s} {max(run['peak_rss_mib'] for run in runs[side]):.0f} MiB")
    finally:
        backend.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="elasticsearch,opensearch")
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--es-url", default=base.URLS["elasticsearch"])
    ap.add_argument("--os-url", default=base.URLS["opensearch"])
    ap.add_argument("--shards", type=int, default=1, help="shards of the throwaway index")
    ap.add_argument("--replicas", type=int, default=0, help="replicas of the throwaway index")
    ap.add_argument(
        "--sides",
        default=",".join(SIDES),
        help=f"the contenders, run in this order (default {','.join(SIDES)}; the first meets a colder index)",
    )
    ap.add_argument(
        "--rounds", type=int, default=2, help="each contender runs this many times, order alternating"
    )
    ap.add_argument(
        "--no-warmup",
        action="store_true",
        help="skip the untimed pass that warms the index before the contenders",
    )
    ap.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--index", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(
            json.dumps(child(args.engines, args.url, args.index, args.child, args.queries, args.concurrency))
        )
        return 0
    sides = [side.strip() for side in args.sides.split(",") if side.strip()]
    if not sides or not set(sides) <= set(SIDES):
        ap.error(f"--sides: a comma-separated list of {', '.join(SIDES)}")
    urls = {"elasticsearch": args.es_url, "opensearch": args.os_url}
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        if not base.reachable(urls[engine]):
            print(f"{engine}: not reachable at {urls[engine]} (scripts/engines up); skipped")
            continue
        settings = {"number_of_shards": args.shards, "number_of_replicas": args.replicas}
        bench(
            engine,
            urls[engine],
            args.queries,
            args.concurrency,
            settings,
            sides,
            not args.no_warmup,
            max(1, args.rounds),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
