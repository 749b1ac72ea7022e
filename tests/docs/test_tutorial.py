"""The tutorial's promise, walked as a new user would, in a fresh git repository: step 1's git and
.gitignore commands, the suite of step 2, `pytest search` of step 3 (passes, with the lines the
page shows), the workflow of step 4 (actionlint; it installs the wheel step 1 installs; its gate
command run as written, with a step summary), the commits of steps 4 and 5 and the page's own
`sed` change, which fails the workflow's command with the message the page shows, line for line.
Only the install, the push and the GitHub side are not run (the wheel pass of `scripts/test`
installs the wheel; `tests/reports/test_ci_recipes.py` checks the full recipes)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import yaml

from pytest_retrieval import __version__
from tests.docs.snippets import ROOT, snippets
from tests.reports.conftest import need_tool

TUTORIAL = ROOT / "docs" / "tutorial.md"
WHEEL = f"./wheels/pytest_retrieval-{__version__}-py3-none-any.whl[html]"


def _blocks(page: str, lang: str) -> List[str]:
    return re.findall(rf"```{lang}\n(.*?)```", page, re.S)


def _env(**extra: str) -> Dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.update(extra)
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t")
    env.update(GIT_COMMITTER_EMAIL="t@example.org", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def _shell(lines: List[str], cwd: Path) -> None:
    """The page's shell lines, as written (one bash -e script)."""
    p = subprocess.run(["bash", "-ec", "\n".join(lines)], cwd=cwd, env=_env(), capture_output=True, text=True)
    assert p.returncode == 0, "\n".join(lines) + "\n" + p.stdout + p.stderr


def _pytest(cwd: Path, args: List[str], **env: str) -> subprocess.CompletedProcess:
    """``pytest ARGS`` as the page writes it, with this checkout's plugin."""
    assert args[0] == "pytest", args
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args[1:]]
    return subprocess.run(cmd, cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=600)


def test_the_tutorial_from_an_empty_repository_to_a_failing_pull_request(tmp_path: Path) -> None:
    page = TUTORIAL.read_text(encoding="utf-8")
    bash = _blocks(page, "bash")
    # step 1: the repository, its .gitignore, and the wheel the workflow installs too
    setup = bash[0].splitlines()
    assert setup[0] == "git init shop-search && cd shop-search"
    assert any(f'pip install "{WHEEL}"' in line for line in setup), "step 1 installs another wheel"
    _shell([setup[0]] + [line for line in setup if line.startswith("printf ")], tmp_path)
    repo = tmp_path / "shop-search"
    assert ".venv/" in (repo / ".gitignore").read_text().split()
    # step 2: the suite
    suite = next(s for s in snippets(TUTORIAL) if s.lang == "yaml" and s.code.startswith("suite: shop"))
    (repo / "search").mkdir()
    (repo / "search" / "retrieval_shop.yaml").write_text(suite.code, encoding="utf-8")
    # step 3: `pytest search` passes with the summary the page shows
    assert "pytest search\n" in bash
    done = _pytest(repo, ["pytest", "search"])
    assert done.returncode == 0, done.stdout[-3000:]
    shown = re.search(r"```\n(Retrieval gates passed.+?)\n```", page, re.S)
    assert shown, "the tutorial's passing summary moved"
    for line in shown[1].splitlines():
        if line.strip() != "..." and "ms" not in line and not line.startswith("  bm25 "):  # timings vary
            assert line in done.stdout, line
    # step 4: the workflow
    workflow = next(s for s in snippets(TUTORIAL) if s.lang == "yaml" and s.code.startswith("name: "))
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "retrieval.yml").write_text(workflow.code, encoding="utf-8")
    steps = yaml.safe_load(workflow.code)["jobs"]["gates"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert runs[0] == f'pip install "{WHEEL}"', runs
    gate = shlex.split(runs[1])
    actionlint = need_tool("actionlint", "go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12")
    lint = subprocess.run(
        [actionlint, "-no-color", ".github/workflows/retrieval.yml"], cwd=repo, capture_output=True
    )
    assert lint.returncode == 0, lint.stdout
    push = next(b for b in bash if b.startswith("git add -A"))
    _shell(push.splitlines()[:1], repo)  # the commit; not the remote and the push
    # step 5: the page's own branch, sed change and commit (not the push)
    change = next(b for b in bash if b.startswith("git switch -c"))
    _shell([re.sub(r" && git push.*$", "", line) for line in change.splitlines()], repo)
    summary = tmp_path / "step_summary.md"
    done = _pytest(repo, gate, GITHUB_STEP_SUMMARY=str(summary))
    assert done.returncode == 1, done.stdout[-3000:]
    failure = re.search(r"```\n(shop :: bm25 :: ndcg@10 = .+?)\n```", page, re.S)
    assert failure, "the tutorial's failure message moved"
    for line in failure[1].splitlines():  # every line, the rootdir-relative "floor set at" included
        assert line in done.stdout, line
        assert line.strip() in summary.read_text(encoding="utf-8"), line
    log = [line for line in done.stdout.splitlines() if not line.startswith("rootdir: ")]
    assert not [line for line in log if str(tmp_path) in line]  # no checkout path in the job log
    assert (repo / "retrieval" / "report.html").is_file() and (repo / "retrieval" / "report.json").is_file()
