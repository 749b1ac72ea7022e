"""The XQuAD-R suites of ``tests/suites`` (#35: BM25 with the engines' language analyzers) run
whole through pytest on OpenSearch (the newest major of the matrix: one engine is the CI budget),
switching only ``--retrieval-backend``: the throwaway index maps ``text`` with the built-in
analyzer, and the floors measured on the embedded engine hold (docs/how-to/languages.md: nDCG@10
within 0.005 of the embedded engine's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ci import unavailable

from .conftest import OS_INSTANCES, _require, instance_params

pytestmark = pytest.mark.engines

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "tests" / "suites"
NEWEST = [max(OS_INSTANCES, key=lambda i: i.major)] if OS_INSTANCES else []


@pytest.mark.parametrize("instance", instance_params(NEWEST))
def test_xquad_suites_pass_on_opensearch(instance, tmp_path):
    _require(instance)
    shared = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED") or ROOT.parent / "shared")
    if not (shared / "data" / "xquad-r").is_dir():
        unavailable(f"{shared / 'data' / 'xquad-r'} is missing (the shared data beside the checkout)")
    suites = [str(SUITES / f"retrieval_xquad_r_{lang}.yaml") for lang in ("de", "zh")]
    env = dict(os.environ, RETRIEVAL_HOSTS=instance.url)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [sys.executable, "-m", "pytest", *suites, "-p", "no:cacheprovider", "-q", "--rootdir", str(SUITES)]
    cmd += ["--retrieval-backend", "opensearch", "--retrieval-no-latency"]
    proc = subprocess.run(
        cmd, cwd=SUITES, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    for name in ("german", "cjk"):
        assert f"analyzers: text {name}" in proc.stdout or f"text standard, {name}" in proc.stdout, (
            proc.stdout[-3000:]
        )
