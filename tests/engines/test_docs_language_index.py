"""The engines how-to's "An index of your own with a language analyzer (OpenSearch)", walked as
written (issue #36): from an empty folder, its shell lines create an index with the ``german``
analyzer on OpenSearch 3 and bulk-load XQuAD-R German, its suite is saved where the page says,
and ``pytest`` on it prints the lines the page shows. Only the index name (one per run, deleted
after) and the data folder are put in; ``--retrieval-no-latency`` keeps the run short (the
page's command also times 400 queries)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List

import pytest

from tests.ci import unavailable
from tests.reports.conftest import need_tool

from .conftest import OS_INSTANCES, ROOT, Instance, http, instance_params, random_name

PAGE = ROOT / "docs" / "how-to" / "engines.md"
HEADING = "### An index of your own with a language analyzer (OpenSearch)"
SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED") or ROOT.parent / "shared")
LOCAL = "http://127.0.0.1:19203"


def _section() -> str:
    page = PAGE.read_text(encoding="utf-8")
    start = page.index(HEADING)
    return page[start : page.index("\n## ", start)]


def _blocks(text: str, lang: str) -> List[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


@pytest.fixture(params=instance_params([i for i in OS_INSTANCES if i.major >= 3]))
def index(request) -> Iterator[tuple]:
    instance: Instance = request.param
    name = random_name("docs-de")
    yield instance, name
    http(instance.url, "DELETE", f"/{name}")


def test_the_language_analyzer_walkthrough_runs_as_written(index, tmp_path: Path) -> None:
    instance, name = index
    need_tool("jq", "apt-get install jq")
    data = SHARED / "data" / "xquad-r" / "de"
    if not data.is_dir():
        unavailable(f"XQuAD-R German not found at {data} (set PYTEST_RETRIEVAL_SHARED)")
    text = _section()

    def put_in(s: str) -> str:
        return (
            s.replace("/path/to/xquad-r/de", str(data))
            .replace(LOCAL, instance.url)
            .replace("products-de", name)
        )

    setup, command = (put_in(b) for b in _blocks(text, "bash"))
    (suite,) = (put_in(b) for b in _blocks(text, "yaml"))
    (shown,) = (put_in(b) for b in _blocks(text, "text"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run(
        ["bash", "-ec", setup], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, setup + done.stdout + done.stderr
    path = tmp_path / "search" / "retrieval_products_de.yaml"  # the file the page names
    assert f"`search/{path.name}`:" in text and command.strip() == f"pytest search/{path.name}"
    path.write_text(suite, encoding="utf-8")
    env["SEARCH_URL"] = instance.url  # the setup's export, for the run
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        f"search/{path.name}",
        "--retrieval-no-latency",
    ]
    run = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    out = run.stdout
    assert run.returncode == 0, out[-4000:] + run.stderr[-2000:]
    versions = re.compile(r"opensearch [\d.]+ \(client opensearch-py [\d.]+\)")
    for line in shown.splitlines():
        assert versions.sub("V", line) in versions.sub("V", out), line
