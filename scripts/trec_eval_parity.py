"""Compare ``pytest-retrieval evaluate`` with a trec_eval binary on trec_eval's own test files.

    python scripts/trec_eval_parity.py /path/to/trec_eval /path/to/trec_eval/test

Build trec_eval from source first (``git clone https://github.com/usnistgov/trec_eval``,
``git checkout v9.0.8``, ``make``). Each case runs trec_eval and ``pytest-retrieval evaluate
--profile trec`` with the matching options (``-c``, ``-M``, ``-l``, ndcg gains) and compares
every ``all`` line trec_eval prints (4 decimals). Exit status 1 when a line differs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TE_MEASURES = "-m map -m P.5,10,30 -m recall.10,100 -m ndcg -m ndcg_cut.10,100 -m recip_rank -m Rprec -m map_cut.10 -m num_q"
OURS = (
    "map P_5 P_10 P_30 recall_10 recall_100 ndcg ndcg_cut_10 ndcg_cut_100 recip_rank Rprec map_cut_10".split()
)
NAMES = {
    "precision@": "P_",
    "recall@": "recall_",
    "ndcg@": "ndcg_cut_",
    "mrr": "recip_rank",
    "r-precision": "Rprec",
}
# (trec_eval options, ours, qrels, run)
CASES = [
    ("", "", "qrels.test", "results.test"),
    ("", "", "qrels.test", "results.trunc"),
    ("-c", "-c", "qrels.test", "results.trunc"),
    ("-c -M100", "-c --depth 100", "qrels.test", "results.trunc"),
    ("-M5", "--depth 5", "qrels.test", "results.test"),
    ("-l2", "--relevance-threshold 2 --grade-map=-1:-1", "qrels.rel_level", "results.test"),
    ("-l0", "--relevance-threshold 0 --grade-map=-1:-1", "qrels.rel_level", "results.test"),
    ("-l2 -c", "-c --relevance-threshold 2 --grade-map=-1:-1", "qrels.rel_level", "results.trunc"),
]
GAINS = [
    ("ndcg.1=3,2=9,4=4.5", "1:3,2:9,4:4.5", "qrels.test"),
    ("ndcg.0=1,1=3,2=5", "0:1,1:3,2:5", "qrels.rel_level"),
]


def _ours_name(name: str) -> str:
    for ours, theirs in NAMES.items():
        if name.startswith(ours):
            return theirs + name[len(ours) :]
    return name.replace("map@", "map_cut_")


def _table(out: str, rename=lambda n: n) -> dict:
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return {rename(r[0]): r[2] for r in rows if r[1] == "all"}


def _ours(args: str, qrels: Path, run: Path, metrics) -> dict:
    argv = [
        sys.executable,
        "-m",
        "pytest_retrieval.cli",
        "evaluate",
        str(qrels),
        str(run),
        "--profile",
        "trec",
    ]
    argv += args.split() + [x for m in metrics for x in ("-m", m)]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return _table(
        subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stdout, _ours_name
    )


def _trec_eval(argv) -> dict:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode:  # trec_eval 10.0-rc3 exits 4 on a qrels topic absent from the run (no -c)
        return {
            "error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else str(done.returncode)
        }
    return _table(done.stdout)


def main(trec_eval: str, test: Path) -> int:
    bad = 0
    for te, ours, q, r in CASES:
        want = _trec_eval([trec_eval, *te.split(), *TE_MEASURES.split(), test / q, test / r])
        got = _ours(ours, test / q, test / r, OURS)
        diff = {k: (v, got.get(k)) for k, v in want.items() if got.get(k) != v}
        bad += bool(diff)
        print(f"trec_eval {te or '(defaults)'} {q} {r}: {len(want)} lines, {'same' if not diff else diff}")
    for te, ours, q in GAINS:
        want = _trec_eval([trec_eval, "-m", te, test / q, test / "results.test"])
        got = _ours(f"--gains {ours} --grade-map=-1:-1", test / q, test / "results.test", ["ndcg"])
        same = want[f"ndcg_{te.split('.', 1)[1]}"] == got["ndcg"]
        bad += not same
        print(f"trec_eval -m {te} {q}: {'same' if same else (want, got)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
