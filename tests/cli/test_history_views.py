"""``pytest-retrieval history list|trend|compare`` on a SQLite store of hand-made run records
(``history_data.py``): what each prints, its filters, the sparkline and its ASCII fallback, the
page ``trend --html`` writes (charts, markers, verdicts, links) and ``history compare`` being
``compare`` on two stored runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_retrieval.cli.app import main
from pytest_retrieval.history import open_store
from pytest_retrieval.history.views import ASCII_LEVELS, BLOCKS, sparkline, wants_ascii

from .history_data import FINGERPRINT, record

VALUES = [0.50, 0.51, 0.49, 0.52, 0.50, 0.47, 0.46, 0.45]
CHANGED = dict(FINGERPRINT, engine={"name": "embedded", "version": "2"})  # from run 5 on


@pytest.fixture
def store_path(tmp_path: Path) -> str:
    path = tmp_path / "history.sqlite"
    store = open_store(str(path))
    for i, v in enumerate(VALUES):
        store.append(
            record(
                i,
                v,
                branch="main" if i % 2 == 0 else "feature",
                fingerprint=CHANGED if i >= 5 else FINGERPRINT,
                exitstatus=1 if i == 6 else 0,
                tags=("nightly",) if i == 3 else (),
            )
        )
    store.append(record(8, 0.44, suite="other", partial=True))
    store.close()
    return str(path)


def run(capsys, *argv: str) -> tuple:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ the sparkline


def test_sparkline_scales_lowest_to_highest_and_leaves_gaps() -> None:
    assert sparkline([0.1, 0.2, 0.3]) == "▁▅█"
    assert sparkline([1.0, None, float("nan"), 8.0]) == "▁  █"
    assert sparkline([0.5, 0.5]) == "▄▄"  # flat: the middle level
    assert sparkline([]) == "" and sparkline([None]) == " "
    assert sparkline([0.0, 0.5, 1.0], ascii=True) == "_=#"
    assert len(BLOCKS) == len(ASCII_LEVELS) == 8


def test_ascii_when_the_stream_cannot_write_the_blocks() -> None:
    assert wants_ascii("ascii") and wants_ascii("latin-1") and wants_ascii(None) and wants_ascii("nope")
    assert not wants_ascii("utf-8")


# ------------------------------------------------------------------ list


def test_list_prints_every_run_oldest_first(store_path, capsys) -> None:
    code, out, _ = run(capsys, "history", "list", "--store", store_path)
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"history {store_path}: 9 runs"
    assert lines[1].split() == ["run", "time", "(UTC)", "branch", "commit", "PR", "verdict", "suites", "tags"]
    rows = lines[3:]
    assert [r.split()[0] for r in rows] == [f"{i:04d}abababab" for i in range(9)]
    assert rows[0].split()[1:7] == ["2026-09-01", "03:00", "main", "0000cccccccc", "-", "passed"]
    assert rows[6].split()[6] == "failed" and rows[8].split()[6] == "partial"
    assert rows[3].split()[-1] == "nightly"


def test_list_filters(store_path, capsys) -> None:
    _, out, _ = run(capsys, "history", "list", "--store", store_path, "--branch", "feature")
    assert out.splitlines()[0] == f"history {store_path}: 4 runs (branch feature)"
    _, out, _ = run(capsys, "history", "list", "--store", store_path, "--suite", "other")
    assert [r.split()[0] for r in out.splitlines()[3:]] == ["0008abababab"]
    _, out, _ = run(
        capsys, "history", "list", "--store", store_path, "--since", "2026-09-03", "--until", "2026-09-05"
    )
    ids = [r.split()[0][:4] for r in out.splitlines()[3:]]
    assert ids == ["0002", "0003", "0004"]  # --until's day is included
    _, out, _ = run(capsys, "history", "list", "--store", store_path, "--limit", "2", "--json")
    runs = json.loads(out)
    assert [r["id"][:4] for r in runs] == ["0007", "0008"] and runs[1]["verdict"] == "partial"


def test_list_of_a_filter_matching_nothing(store_path, capsys) -> None:
    code, out, _ = run(capsys, "history", "list", "--store", store_path, "--branch", "nope")
    assert code == 0 and out == f"history {store_path}: no run (branch nope)\n"


# ------------------------------------------------------------------ trend


def test_trend_table_per_suite_retriever_and_gated_metric(store_path, capsys) -> None:
    code, out, _ = run(capsys, "history", "trend", "--store", store_path)
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == f"history {store_path}: 8 runs, 2026-09-01 .. 2026-09-08"  # the partial run left out
    assert lines[1].split() == [
        "suite", "retriever", "metric", "runs", "first", "last", "change", "min", "max", "trend", "verdict",
    ]  # fmt: skip
    bm25 = lines[3].split()
    assert bm25[:9] == ["tiny", "bm25", "ndcg@10", "8", "0.5000", "0.4500", "-0.0500", "0.4500", "0.5200"]
    assert bm25[9] == sparkline(VALUES) == "▆▇▅█▆▃▂▁" and bm25[10] == "passed"
    assert lines[4].split()[:2] == ["tiny", "rrf"] and len(lines) == 5  # gated metrics only


def test_trend_filters_and_every_metric(store_path, capsys) -> None:
    _, out, _ = run(capsys, "history", "trend", "--store", store_path, "--all", "--retriever", "rrf")
    metrics = [line.split()[2] for line in out.splitlines()[3:]]
    assert metrics == ["ndcg@10", "recall@100", "p50_ms", "p95_ms", "p99_ms"]
    assert "recall@100 (not gated)" in out
    _, out, _ = run(capsys, "history", "trend", "--store", store_path, "-m", "recall@100", "--limit", "3")
    rows = out.splitlines()[3:]
    assert [r.split()[:6] for r in rows] == [
        ["tiny", "bm25", "recall@100", "(not", "gated)", "3"],
        ["tiny", "rrf", "recall@100", "(not", "gated)", "3"],
    ]
    _, out, _ = run(
        capsys, "history", "trend", "--store", store_path, "--include-partial", "--suite", "other"
    )
    assert out.splitlines()[3].split()[:4] == ["other", "bm25", "ndcg@10", "1"]


def test_trend_sparkline_is_ascii_when_stdout_is_not_utf8(store_path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(Path.cwd())}
    out = subprocess.run(
        [sys.executable, "-m", "pytest_retrieval.cli", "history", "trend", "--store", store_path],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert sparkline(VALUES, ascii=True) in out.stdout and not set(BLOCKS) & set(out.stdout)


def test_trend_html_page_has_a_chart_per_gated_metric(store_path, capsys, tmp_path) -> None:
    page = tmp_path / "trend.html"
    code, out, _ = run(
        capsys,
        "history", "trend", "--store", store_path, "--html", str(page),
        "--commit-url", "https://git.example/r/commit/{commit}",
    )  # fmt: skip
    assert code == 0 and out.splitlines()[-1] == f"history page written: {page}"
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert html.count('<section class="chart"') == 2 and html.count("<svg") == 2
    assert html.count('<a class="point"') == 16 and html.count('class="band"') == 2
    # the fingerprint changed at run 5 (the engine's version): one marker per chart, named
    markers = re.findall(r'<g class="marker"><title>([^<]*)</title>', html)
    assert len(markers) == 2 and "engine" in markers[0]
    # each point: its run, commit and verdicts on hover, the commit on click
    assert f'href="https://git.example/r/commit/0006{"c" * 36}"' in html
    tip = re.search(r"<title>(run 0006abababab[^<]*)</title>", html).group(1)
    assert "main @ 0006cccccccc" in tip and "gate passed" in tip and tip.endswith("run failed")
    assert 'class="v-failed">failed</td>' in html


def test_trend_html_links_to_the_run_row_without_a_commit_url(store_path, capsys, tmp_path) -> None:
    page = tmp_path / "trend.html"
    run(capsys, "history", "trend", "--store", store_path, "--html", str(page))
    html = page.read_text(encoding="utf-8")
    run_id = "0003" + "ab" * 14
    assert f'href="#run-{run_id}"' in html and f'id="run-{run_id}"' in html


# ------------------------------------------------------------------ compare


def test_history_compare_is_compare_of_the_two_stored_records(store_path, capsys, tmp_path) -> None:
    code, out, _ = run(capsys, "history", "compare", "--store", store_path, "0000", "nightly")
    assert code == 0
    assert out.splitlines()[0] == "A = run 0000abababab (reference), B = run 0003abababab"
    store = open_store(store_path)
    for name, ref in (("run 0000abababab", "0000"), ("run 0003abababab", "0003")):
        (tmp_path / name).write_text(json.dumps(store.load(store.resolve(ref))))
    store.close()
    _, files, _ = run(
        capsys, "compare", str(tmp_path / "run 0000abababab"), str(tmp_path / "run 0003abababab")
    )
    assert out == files  # the same comparison, the same words
    code, out, _ = run(
        capsys, "history", "compare", "--store", store_path, "0000", "0007", "--fail-on-regression", "--json"
    )
    assert code == 1 and json.loads(out)["regressions"]


def test_history_compare_of_an_unknown_run_is_one_line(store_path, capsys) -> None:
    code, out, err = run(capsys, "history", "compare", "--store", store_path, "0000", "zzzz")
    assert code == 2 and out == ""
    assert err == f"pytest-retrieval: error: history {store_path}: no run, tag or commit 'zzzz'\n"
