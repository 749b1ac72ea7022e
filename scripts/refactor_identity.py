"""Byte-identity check for behaviour-preserving refactors.

    python scripts/refactor_identity.py save DIR      # before the change
    python scripts/refactor_identity.py check DIR     # after: exit 1 on any difference

Captures, on fixed inputs: the JSON report of ``example_suite`` and of the SciFact suite
(``tests/suites``, needs ../shared), and the outputs of ``pytest-retrieval evaluate``, ``fuse`` and
``sweep``. Timings (latency figures, latency gate values) are removed before comparing; everything
else must be byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TIMING_KEYS = {"latency_ms", "latency_ab", "p95_ms", "delta_p95_ms", "latency", "latency_samples_ms"}


def _strip_timings(obj):
    if isinstance(obj, dict):
        if str(obj.get("metric", "")).endswith(("_ms", "_ratio")):
            obj = {k: v for k, v in obj.items() if k not in ("value", "passed", "message")}
        return {k: _strip_timings(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [_strip_timings(v) for v in obj]
    return obj


def _report(suite: Path, work: Path, name: str) -> str:
    out = work / f"{name}.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            str(suite),
            f"--retrieval-report={out}",
            "-o",
            "testpaths=",
        ],
        cwd=work,
        check=False,
        capture_output=True,
    )
    return json.dumps(_strip_timings(json.loads(out.read_text())), indent=1, sort_keys=True)


def _inputs(work: Path) -> dict:
    rng = np.random.default_rng(7)
    qrels, runs = work / "qrels.txt", [work / "run_a.txt", work / "run_b.txt"]
    with qrels.open("w") as fh:
        for q in range(60):
            for d in rng.choice(200, size=12, replace=False):
                fh.write(f"q{q} 0 d{d} {int(rng.integers(0, 4))}\n")
    for path in runs:
        with path.open("w") as fh:
            for q in range(55):  # 5 judged queries are missing from the run
                docs = rng.choice(200, size=40, replace=False)
                scores = np.round(rng.random(40) * 10, 1)  # rounded: many ties
                for r, (d, s) in enumerate(zip(docs, scores), 1):
                    fh.write(f"q{q} Q0 d{d} {r} {s} t\n")
    return {"qrels": qrels, "runs": runs}


def _cli(*args: str) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "pytest_retrieval.cli", *args], capture_output=True, text=True, check=False
    )
    return f"exit {p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}"


def capture() -> dict:
    outputs = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        outputs["report_example_suite"] = _report(ROOT / "example_suite", work, "example")
        if os.environ.get("SKIP_SCIFACT") != "1":
            outputs["report_scifact"] = _report(ROOT / "tests" / "suites", work, "scifact")
        f = _inputs(work)
        q, a, b = str(f["qrels"]), str(f["runs"][0]), str(f["runs"][1])
        outputs["evaluate_text"] = _cli("evaluate", q, a)
        outputs["evaluate_json"] = _cli(
            "evaluate",
            q,
            a,
            "--json",
            "--per-query",
            "-m",
            "ndcg@5",
            "-m",
            "map",
            "-m",
            "recall@20",
            "-m",
            "precision@10",
            "-m",
            "r-precision",
            "-m",
            "mrr@10",
            "-m",
            "hit@3",
        )
        outputs["evaluate_trec_engine"] = _cli(
            "evaluate", q, a, "--profile", "trec", "--ties", "engine", "--per-query"
        )
        outputs["fuse_rrf"] = _cli("fuse", a, b)
        outputs["fuse_rrf_os"] = _cli("fuse", a, b, "--semantics", "opensearch", "--rank-constant", "5")
        outputs["fuse_weighted"] = _cli(
            "fuse",
            a,
            b,
            "--method",
            "weighted",
            "--norm",
            "l2",
            "--combine",
            "geometric_mean",
            "--weights",
            "0.3,0.7",
        )
        outputs["fuse_linear"] = _cli("fuse", a, b, "--method", "linear", "-k", "10")
        outputs["sweep_json"] = _cli(
            "sweep", str(ROOT / "example_suite" / "retrieval_scifact_mini.yaml"), "--json", "--seed", "3"
        )
        outputs["sweep_text"] = _cli(
            "sweep", str(ROOT / "example_suite" / "retrieval_scifact_mini.yaml"), "--seed", "3", "--top", "5"
        )
    # the checkout's own path (a worktree, a CI folder) is not part of the behaviour
    return {name: text.replace(str(ROOT), "<root>") for name, text in outputs.items()}


def main(argv: list) -> int:
    if len(argv) != 2 or argv[0] not in ("save", "check"):
        print(__doc__)
        return 2
    mode, folder = argv[0], Path(argv[1])
    outputs = capture()
    if mode == "save":
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in outputs.items():
            (folder / name).write_text(text)
        print(f"saved {len(outputs)} outputs to {folder}")
        return 0
    bad = 0
    for name, text in outputs.items():
        before = (folder / name).read_text()
        same = before == text
        bad += not same
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        print(f"{'identical' if same else 'DIFFERENT'}  {name:24s} {len(text):8d} bytes  sha256 {digest}")
        if not same:
            (folder / f"{name}.after").write_text(text)
    print(f"{len(outputs) - bad}/{len(outputs)} identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
