"""Every ```python and ```yaml block of the README and of docs/ runs as a reader would paste it.

* python: run in a fresh folder holding a copy of ``example_suite/`` (the clone's root, as the
  docs assume); a block that defines ``test_`` functions is a test file run with ``pytest``.
* yaml: parsed; a suite (``suite`` and ``retrievers``) is saved in that ``example_suite/`` copy
  (so ``data/...`` are the example's files), loaded with the suite schema and run on the
  embedded engine when that is its backend; a fragment of a suite (top-level suite keys) is
  merged over the example suite as an override file, loaded and run (without the timing pass)
  on the embedded engine, so it is checked in context;
  other YAML (CI recipes, pre-commit) is parsed only.

A block that cannot run on its own carries ``<!-- skip-snippet: reason -->``: they are counted
below and kept few."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.docs.snippets import ROOT, Snippet, all_snippets

SNIPPETS = all_snippets()
RUN = [s for s in SNIPPETS if s.skip is None]
SKIPPED = [s for s in SNIPPETS if s.skip is not None]
MAX_SKIPPED = 12  # keep the blocks that cannot run standalone few
SUITE_KEYS = {
    "suite", "description", "judgments", "backend", "embedder", "evaluation", "latency", "retrievers",
    "regression", "unanswerable", "floors", "expectations", "include", "stability",
}  # fmt: skip
# the variables the docs' connection examples name (a reader sets their own)
ENV = {
    "SEARCH_USER": "reader",
    "SEARCH_PASSWORD": "secret",
    "ES_API_KEY": "a2V5OnNlY3JldA==",
    "SEARCH_TOKEN": "token",
    "SEARCH_URL": "http://127.0.0.1:9200",
}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "example_suite", tmp_path / "example_suite")
    return tmp_path


def _run(args: list, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **ENV)
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _python(snippet: Snippet, workdir: Path) -> None:
    if "def test_" in snippet.code:
        (workdir / "test_snippet.py").write_text(snippet.code, encoding="utf-8")
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_snippet.py"]
    else:
        (workdir / "snippet.py").write_text(snippet.code, encoding="utf-8")
        args = [sys.executable, "snippet.py"]
    done = _run(args, workdir)
    assert done.returncode == 0, f"{snippet.id} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"


def _yaml(snippet: Snippet, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    data = yaml.safe_load(snippet.code)
    if not isinstance(data, dict) or not set(data) & SUITE_KEYS:
        return  # not a suite: a CI recipe, a pre-commit config (parsed above)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    example = workdir / "example_suite" / "retrieval_scifact_mini.yaml"
    if "suite" in data and "retrievers" in data:
        path = workdir / "example_suite" / "retrieval_snippet.yaml"
        path.write_text(snippet.code, encoding="utf-8")
        suite = load_suite(path)
        if suite.model.backend.type == "embedded":  # run as written, latency pass included
            result = SuiteRunner(suite).run()
            assert result.retrievers, snippet.id
    else:
        override = workdir / "example_suite" / "override.yaml"  # its data/... paths: the example's
        override.write_text(snippet.code, encoding="utf-8")
        suite = load_suite(example, overrides=(override,))
        if suite.model.backend.type == "embedded":  # and run (without the timing pass)
            suite.model.latency.enabled = False
            assert SuiteRunner(suite).run().retrievers, snippet.id


@pytest.mark.parametrize("snippet", RUN, ids=[s.id for s in RUN])
def test_snippet_runs(snippet: Snippet, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if snippet.lang == "python":
        _python(snippet, workdir)
    else:
        _yaml(snippet, workdir, monkeypatch)


def test_the_docs_have_snippets_and_few_skipped_ones() -> None:
    assert len(RUN) >= 20, [s.id for s in RUN]
    assert len(SKIPPED) <= MAX_SKIPPED, [f"{s.id}: {s.skip}" for s in SKIPPED]


def test_every_fence_names_a_language_the_collector_knows() -> None:
    """``yml`` or ``py`` would slip past the collector: say ``yaml`` and ``python``."""
    known = {"python", "yaml", "bash", "text", "json", "toml", "console", "html", "markdown"}
    for page in (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))):
        for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            fence = line.strip()
            if fence.startswith("```") and fence != "```":
                lang = fence[3:].split()[0].lower()
                assert lang in known, f"{page.relative_to(ROOT)}:{i}: fence language {lang!r}"


def test_a_skip_marker_stands_right_before_a_fence() -> None:
    """A marker anywhere else would skip nothing (and hide that it does not)."""
    for page in (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))):
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if "skip-snippet" in line and line.strip().startswith("<!--"):
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                assert nxt.lstrip().startswith(("```python", "```yaml")), f"{page.name}:{i + 1}: {line}"
