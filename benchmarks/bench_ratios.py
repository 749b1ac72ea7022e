"""The three speed ratios of issue #24 in one run, side by side: ``evaluate`` on files against
pytrec_eval's parse + evaluate (``bench_evaluate_files.py``), the in-memory API against
pytrec_eval including the conversion from Python dicts (``bench_metrics.py``), and the peak
memory at 100k x 1,000 (``bench_evaluate_files.py --sizes 100000``, ours only).

    python benchmarks/bench_ratios.py [--queries 10000] [--hits 1000] [--big 100000]

Each part runs in its own process, one after the other; the load average is printed before
and after (the machine is shared: the ratios, not the seconds, are the figures).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def _part(title: str, argv: list) -> None:
    print(f"\n## {title} ({_load()})", flush=True)
    subprocess.run([sys.executable, *argv], check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--hits", type=int, default=1_000)
    ap.add_argument("--big", type=int, default=100_000, help="size of the memory check (0: skip)")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    n, h = str(args.queries), str(args.hits)
    _part(
        "files: evaluate vs pytrec_eval parse + evaluate",
        [str(HERE / "bench_evaluate_files.py"), "--sizes", n, "--hits", h, "--pytrec-max", n],
    )
    _part(
        "in memory: evaluate vs pytrec_eval (with the dict conversion)",
        [str(HERE / "bench_metrics.py"), "--queries", n, "--hits", h, "--repeat", str(args.repeat)],
    )
    if args.big:
        _part(
            f"memory at {args.big} x {h} (ours only)",
            [
                str(HERE / "bench_evaluate_files.py"),
                "--sizes",
                str(args.big),
                "--hits",
                h,
                "--pytrec-max",
                "0",
            ],
        )
    print(f"\n({_load()})")


if __name__ == "__main__":
    main()
