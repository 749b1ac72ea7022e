"""Two teams' floors over one shared retrieval (issue #36): the suite's ``teams:`` (one run)
against today's way, one suite per team that ``include:``s the shared suite (a run per team).

Both layouts gate the same floors on the shipped SciFact subset (``example_suite``: 100 queries,
671 abstracts, BM25, dense, RRF and weighted hybrid, the latency pass on): the shared suite's own
floors plus two teams' floors. Each layout is one ``pytest`` session in a subprocess, the two
alternating ``N`` times in the same run; prints each one's median and min and the ratio
include-suites / team files (the saving: about 2x for two teams, as each include-suite repeats
the whole retrieval and its latency pass).

    python benchmarks/bench_team_files.py [N]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N = int(sys.argv[1]) if len(sys.argv) > 1 else 3
RANKING = "floors:\n  rrf:\n    ndcg@10: 0.60\n    recall@100: 0.80\n"
RELEVANCE = "floors:\n  weighted:\n    ndcg@10: 0.60\n  bm25:\n    mrr@10: 0.50\n"


def _layouts(d: Path) -> dict:
    """Two folders holding the same gates: ``teams`` (one suite, two team files) and
    ``includes`` (two suites, each including the shared one and adding its team's floors)."""
    shared = (ROOT / "example_suite" / "retrieval_scifact_mini.yaml").read_text(encoding="utf-8")
    out = {}
    for name in ("teams", "includes"):
        folder = d / name
        shutil.copytree(ROOT / "example_suite" / "data", folder / "data")
        (folder / "conftest.py").write_text("", encoding="utf-8")
        out[name] = folder
    t = out["teams"]
    (t / "teams").mkdir()
    (t / "teams" / "ranking.yaml").write_text("owner: '@org/ranking'\n" + RANKING, encoding="utf-8")
    (t / "teams" / "relevance.yaml").write_text("owner: '@org/relevance'\n" + RELEVANCE, encoding="utf-8")
    (t / "retrieval_search.yaml").write_text(
        shared + "\nteams: [teams/ranking.yaml, teams/relevance.yaml]\n", encoding="utf-8"
    )
    i = out["includes"]
    (i / "shared.yaml").write_text(shared, encoding="utf-8")  # not a suite file name: included only
    for team, floors in (("ranking", RANKING), ("relevance", RELEVANCE)):
        (i / f"retrieval_{team}.yaml").write_text(
            f"include: shared.yaml\nsuite: {team}\n" + floors, encoding="utf-8"
        )
    return out


def _run(folder: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "pytest", str(folder), "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    if done.returncode not in (0, 1):  # 1: a floor failed, still a full run
        raise SystemExit(
            f"{folder.name}: pytest exited {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return took


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        layouts = _layouts(Path(d))
        times: dict = {name: [] for name in layouts}
        for _ in range(N):
            for name, folder in layouts.items():
                times[name].append(_run(folder))
    print(f"two teams' floors over the SciFact subset, {N} interleaved pytest sessions each:")
    for stat in (statistics.median, min):
        a, b = stat(times["teams"]), stat(times["includes"])
        print(
            f"  {stat.__name__:6}  teams: (one run) {a:6.1f} s, one include-suite per team {b:6.1f} s, "
            f"ratio {b / a:.2f}x"
        )


if __name__ == "__main__":
    main()
