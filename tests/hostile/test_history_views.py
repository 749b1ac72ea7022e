"""Hostile input at every option of ``pytest-retrieval history list|trend|compare`` and at
``--retrieval-history-last`` / ``retrieval_history_last`` (issue #37, "Look back"): dates that
do not parse, counts out of range, a URL template that is not one, folders and FIFOs where a
file is written, run references that name nothing (``history compare <run_a>``,
``history compare <run_b>``), an empty store, and runs whose branch, tag or suite name carries
markup and control characters. Each refused value is exit 2 and one clear
last line naming the option, never a traceback; stored names are written escaped (one terminal
line, HTML text)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from pytest_retrieval.cli.app import main
from pytest_retrieval.history import open_store
from tests.cli.history_data import record

from ..ci import needs_fifos
from .conftest import BASE, FLOORS, one_line

R = "\u202e"  # a right-to-left override
HOSTILE = "<b>x</b>\x1b[31m\r\nFAIL" + R  # markup, an escape sequence, a forged line, an override

# (the command line, fragments of the last line of stderr); every case exits 2
CASES = [
    ("history list --since 2026-13-45", ["--since", "'2026-13-45' is not a date"]),
    ("history list --until yesterday", ["--until", "'yesterday' is not a date"]),
    (f"history list --until 2026-02-30{R}", ["--until", "is not a date", "\\u202e"]),
    ("history list --limit 0", ["--limit", ">= 1"]),
    ("history list --limit many", ["--limit"]),
    ("history list --json=1", ["--json", "ignored explicit argument"]),
    ("history list --store adir", ["adir", "a folder"]),
    ("history list --store missing.sqlite", ["missing.sqlite", "no such store"]),
    ("history list --suite", ["--suite", "expected one argument"]),
    ("history list --branch", ["--branch", "expected one argument"]),
    ("history trend --since ''", ["--since", "is not a date"]),
    ("history trend --until 31/12/2026", ["--until", "is not a date"]),
    ("history trend --limit -1", ["--limit"]),
    ("history trend --metric ndgc@10", ["--metric", "ndgc@10"]),
    ("history trend --retriever", ["--retriever", "expected one argument"]),
    ("history trend --suite", ["--suite", "expected one argument"]),
    ("history trend --branch", ["--branch", "expected one argument"]),
    ("history trend --all=yes", ["--all", "ignored explicit argument"]),
    ("history trend --include-partial=1", ["--include-partial", "ignored explicit argument"]),
    ("history trend --ascii=no", ["--ascii", "ignored explicit argument"]),
    ("history trend --html adir", ["adir", "a folder"]),
    ("history trend --html fifo", ["fifo", "not a regular file"]),
    ("history trend --commit-url 'javascript:alert(1)//{commit}'", ["--commit-url", "not an http(s) URL"]),
    ("history trend --commit-url https://git.example/c/", ["--commit-url", "{commit} once"]),
    ("history trend --commit-url 'https://x/{commit}/{other}'", ["--commit-url", "{commit} once"]),
    ("history trend --commit-url 'https://x/{commit'", ["--commit-url", "not an http(s) URL"]),
    ("history trend --store fifo", ["fifo"]),
    ("history compare 0000 zzzz", ["no run, tag or commit 'zzzz'"]),
    ("history compare '' 0001", ["an empty run reference"]),
    ("history compare 0 0001", ["run id prefix '0' names"]),
    (f"history compare 0000 {R}", ["no run, tag or commit", "\\u202e"]),
    ("history compare 0000 0001 --max-drop nan", ["--max-drop"]),
    ("history compare 0000 0001 --confidence 2", ["--confidence"]),
    ("history compare 0000 0001 --resamples 0", ["--resamples"]),
    ("history compare 0000 0001 --metric ndgc@10", ["--metric", "ndgc@10"]),
    ("history compare 0000 0001 --markdown adir", ["adir"]),
    ("history compare 0000 0001 --json=1", ["--json", "ignored explicit argument"]),
    (
        "history compare 0000 0001 --fail-on-regression=1",
        ["--fail-on-regression", "ignored explicit argument"],
    ),
    ("history compare 0000", ["RUN_B"]),
    # an output that is the store itself would replace the history
    ("history trend --html h.sqlite", ["--html h.sqlite", "the same file as --store"]),
    ("history compare 0000 0001 --markdown h.sqlite", ["--markdown h.sqlite", "the same file as --store"]),
    ("history compare --store adir 0000 0001", ["adir", "a folder"]),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("history")
    store = open_store(str(d / "h.sqlite"))
    for i, v in enumerate([0.5, 0.49, 0.48]):
        store.append(record(i, v, branch=HOSTILE if i == 1 else "main", tags=(f"t{i}",)))
    store.append(record(3, 0.47, suite=HOSTILE))
    store.close()
    (d / "adir").mkdir()
    os.mkfifo(d / "fifo")
    return d


def _argv(folder: Path, case: str) -> List[str]:
    argv = shlex.split(case)
    if "--store" not in argv:
        argv[2:2] = ["--store", str(folder / "h.sqlite")]
    return argv


@needs_fifos
@pytest.mark.parametrize("case,fragments", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_history_command_is_one_line(folder, monkeypatch, capsys, case, fragments) -> None:
    monkeypatch.chdir(folder)
    try:
        code = main(_argv(folder, case))
    except SystemExit as exc:  # argparse's refusal of a value
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    one_line(err.strip().splitlines()[-1], *fragments)


def test_hostile_names_stay_one_terminal_line(folder, capsys) -> None:
    store = str(folder / "h.sqlite")
    for argv in (
        ["history", "list", "--store", store],
        ["history", "list", "--store", store, "--branch", HOSTILE],
        ["history", "list", "--store", store, "--suite", HOSTILE, "--since", "2026-09-01T00:00:00+02:00"],
        ["history", "trend", "--store", store, "--suite", HOSTILE],
    ):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\r" not in out and R not in out, argv
        assert "\\x1b[31m\\r\\nFAIL\\u202e" in out, argv  # spelled out, on its own line
    assert main(["history", "trend", "--store", store, "--retriever", HOSTILE]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "no metric of these runs matches"


def test_hostile_names_are_text_in_the_history_page(folder, capsys) -> None:
    page = folder / "page.html"
    store = str(folder / "h.sqlite")
    assert (
        main(
            ["history", "trend", "--store", store, "--html", str(page), "--commit-url", "https://x/{commit}"]
        )
        == 0
    )
    html = page.read_text(encoding="utf-8")
    assert "<b>x</b>" not in html and "\x1b" not in html and R not in html
    assert "&lt;b&gt;x&lt;/b&gt;\\x1b[31m\\r\\nFAIL\\u202e" in html
    assert main(["history", "trend", "--store", store, "--html", str(page), "--suite", HOSTILE]) == 0
    html = page.read_text(encoding="utf-8")
    assert html.count('<section class="chart"') == 2 and "<b>x</b>" not in html


def test_an_empty_store(tmp_path, capsys) -> None:
    store = tmp_path / "empty.sqlite"
    open_store(str(store)).runs()  # made, no run in it
    assert main(["history", "list", "--store", str(store)]) == 0
    assert capsys.readouterr().out == f"history {store}: no run\n"
    page = tmp_path / "p.html"
    assert main(["history", "trend", "--store", str(store), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"history {store}: no run to show a trend of"
    assert "No gated metric in these runs." in page.read_text(encoding="utf-8")
    assert main(["history", "compare", "--store", str(store), "a", "b"]) == 2
    assert capsys.readouterr().err.endswith("no run, tag or commit 'a'\n")


# ------------------------------------------------------------------ the plugin's option and ini key


@needs_fifos
@pytest.mark.parametrize(
    "args,ini,fragments",
    [
        (["--retrieval-history-last=-1"], "", ["--retrieval-history-last", "expected 0 to 1000 runs"]),
        ([f"--retrieval-history-last={R}"], "", ["--retrieval-history-last", "expected a whole number"]),
        ([], 'retrieval_history_last = "nan"', ["retrieval_history_last", "expected a whole number"]),
        ([], 'retrieval_history_last = "1001"', ["retrieval_history_last", "from 0 to 1000"]),
    ],
)
def test_hostile_history_last_is_refused_before_the_run(tmp_path, args, ini, fragments) -> None:
    (tmp_path / "retrieval_s.yaml").write_text(BASE + FLOORS)
    if ini:
        (tmp_path / "pyproject.toml").write_text(f"[tool.pytest.ini_options]\n{ini}\n")
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    env = {**os.environ, "GITHUB_STEP_SUMMARY": ""}
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    said = done.stderr + done.stdout
    assert done.returncode == 4, said
    assert "Traceback" not in said
    lines = [x for x in said.splitlines() if fragments[0] in x]
    assert lines, said
    one_line(lines[0][lines[0].index(fragments[0]) :], *fragments)


def test_a_hand_edited_history_section_renders_escaped() -> None:
    """The JSON report's ``history`` (read back by ``pytest-retrieval report``) with odd values:
    the Markdown and HTML are written, names escaped, what is not a number left out."""
    from pytest_retrieval.reports.html import render_html
    from pytest_retrieval.reports.markdown import render_markdown

    doc = record(0, 0.5)
    runs = [{"value": 0.4}, {"value": "x"}, {"value": None}, {"value": True}, "no", {"value": 0.45}]
    doc["history"] = {
        "store": HOSTILE,
        "last": "abc",
        "series": [
            {"suite": "tiny", "retriever": "bm25", "metric": "ndcg@10", "runs": runs},
            {"suite": "tiny", "retriever": HOSTILE, "metric": HOSTILE, "runs": [{"value": 1.0}]},
            "not a series",
        ],
    }
    md = render_markdown(doc)
    assert "**The last 2 runs**" in md and "<b>x</b>" not in md and "\x1b" not in md
    row = next(line for line in md.splitlines() if line.startswith("| `bm25` | ndcg@10 |"))
    assert "0.4000 0.4500" in row and row.endswith("| **0.5000** |")
    html = render_html(doc)
    assert "<h3>The last 2 runs</h3>" in html and "<b>x</b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
