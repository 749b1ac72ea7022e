"""The tutorial's promise, checked: its suite passes as written, and the change its pull request
makes (BM25 without the title field) fails the gate with the message the page shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.docs.snippets import ROOT, snippets

TUTORIAL = ROOT / "docs" / "tutorial.md"


def _pytest(cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "search"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_tutorial_suite_passes_then_fails_in_its_pull_request(tmp_path: Path) -> None:
    suite = next(s for s in snippets(TUTORIAL) if s.lang == "yaml" and s.code.startswith("suite: shop"))
    page = TUTORIAL.read_text(encoding="utf-8")
    (tmp_path / "search").mkdir()
    path = tmp_path / "search" / "retrieval_shop.yaml"
    path.write_text(suite.code, encoding="utf-8")
    done = _pytest(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "PASS  bm25 ndcg@10 = 1.0000 (>= 0.9000)" in done.stdout
    # step 5: the page's own sed command, applied as sed would
    sed = re.search(r"sed -i 's/(.+?)/(.+?)/' search/retrieval_shop.yaml", page)
    assert sed, "the tutorial's sed command moved"
    old = sed[1].replace("\\[", "[").replace("\\]", "]")
    assert old in suite.code
    path.write_text(suite.code.replace(old, sed[2]), encoding="utf-8")
    done = _pytest(tmp_path)
    assert done.returncode == 1, done.stdout[-3000:]
    shown = re.search(r"```\n(shop :: bm25 :: ndcg@10 = .+?)\n```", page, re.S)
    assert shown, "the tutorial's failure message moved"
    for line in shown[1].splitlines():
        if "floor set at" not in line:  # the path differs: search/... on the page
            assert line in done.stdout, line
