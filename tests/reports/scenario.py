"""The example suite with a baseline and an induced regression, run through pytest itself.

``build(workdir)`` writes ``retrieval_demo.yaml`` (the example suite, included, plus a
``regression`` section), writes its baseline, runs it unchanged (``good.*`` outputs: the
reference report), then drops BM25's abstracts field (``fields: [title]``) and runs again
(``bad.*`` outputs): BM25 and the fusions built on it regress against the baseline.
Used by the tests and by ``scripts/make_report_docs.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "example_suite" / "retrieval_scifact_mini.yaml"

SUITE = f"""\
include: {EXAMPLE}
suite: demo
latency:
  max_queries: 50
regression:
  max_drop: {{ndcg@10: 0.01}}
  strata: true
  resamples: 2000
"""

REGRESSION = """\
retrievers:
  bm25:
    type: bm25
    fields: [title]          # the induced regression: the abstracts are no longer searched
"""


@dataclass
class Run:
    rc: int
    out: str
    files: Dict[str, Path]


def run_pytest(
    workdir: Path, prefix: str, extra: List[str] = (), env: Optional[Dict[str, str]] = None
) -> Run:
    files = {
        "json": workdir / f"{prefix}.json",
        "md": workdir / f"{prefix}.md",
        "html": workdir / f"{prefix}.html",
        "om": workdir / f"{prefix}.metrics.txt",
    }
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "retrieval_demo.yaml",
        f"--retrieval-report={files['json']}",
        f"--retrieval-markdown={files['md']}",
        f"--retrieval-html={files['html']}",
        f"--retrieval-openmetrics={files['om']}",
        *extra,
    ]
    full_env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    full_env.update(env or {})
    p = subprocess.run(args, cwd=workdir, capture_output=True, text=True, env=full_env, timeout=900)
    return Run(p.returncode, p.stdout + p.stderr, files)


def build(workdir: Path) -> Dict[str, Run]:
    workdir.mkdir(parents=True, exist_ok=True)
    suite = workdir / "retrieval_demo.yaml"
    suite.write_text(SUITE)
    update = run_pytest(workdir, "update", ["--retrieval-baseline-update"])
    assert update.rc == 0, update.out
    good = run_pytest(workdir, "good")
    suite.write_text(SUITE + REGRESSION)
    summary = workdir / "step_summary.md"
    summary.write_text("earlier step\n")
    bad = run_pytest(workdir, "bad", env={"GITHUB_STEP_SUMMARY": str(summary)})
    bad.files["step_summary"] = summary
    return {"update": update, "good": good, "bad": bad}
