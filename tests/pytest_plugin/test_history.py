"""The plugin writes the run history (issue #37): one record per session, at its end, by the
controller under pytest-xdist; a partial run stored marked partial; a failed write one line
that leaves the exit status to the gates, unless ``--retrieval-history-strict``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_retrieval.history import open_store
from tests.ci import unavailable
from tests.tiny import TINY_SUITE

pytest_plugins = ["pytester"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", retrieval_tiny=TINY_SUITE)
    return pytester


def test_a_session_appends_its_record_the_json_report_is_that_record(project: pytest.Pytester) -> None:
    store, report = project.path / "h" / "history.sqlite", project.path / "r.json"
    args = ("-p", "no:cacheprovider", f"--retrieval-history={store}", f"--retrieval-report={report}")
    result = project.runpytest_subprocess(
        *args, "--retrieval-history-tag=v1", "--retrieval-history-tag=nightly"
    )
    assert result.ret == 0, result.stdout.str()
    runs = open_store(store).runs()
    assert (
        len(runs) == 1
        and runs[0].tags == ("v1", "nightly")
        and not runs[0].partial
        and runs[0].suites == ("tiny",)
    )
    result.stdout.fnmatch_lines(
        [f"*history: run {runs[0].id} written to h/history.sqlite"]
    )  # rootdir-relative
    doc = json.loads(report.read_text())
    assert doc["version"] == 2 and doc["run"]["id"] == runs[0].id
    assert open_store(store).load(runs[0].id) == doc  # the record is the JSON report
    assert doc["suites"][0]["fingerprint"]["corpus"]["count"] == 5
    points = {(p.retriever, p.metric): p for p in open_store(store).points()}
    assert points[("bm25", "ndcg@10")].gated and points[("bm25", "ndcg@10")].verdict == "passed"
    assert points[("bm25", "ndcg@10")].value == doc["suites"][0]["retrievers"][0]["metrics"]["ndcg@10"]
    project.runpytest_subprocess(*args)
    assert len(open_store(store).runs()) == 2


def test_a_partial_run_is_stored_marked_partial(project: pytest.Pytester) -> None:
    store = project.path / "history.sqlite"
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", "-k", "bm25", f"--retrieval-history={store}"
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*written to*(partial: not every gate got a verdict)*"])
    (run,) = open_store(store).runs()
    assert run.partial and open_store(store).runs(include_partial=False) == []


def _newer(store: Path) -> None:
    open_store(store).runs()
    conn = sqlite3.connect(str(store))
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()


def test_a_failed_write_is_one_line_and_the_gates_decide_the_exit_status(project: pytest.Pytester) -> None:
    store = project.path / "history.sqlite"
    _newer(store)
    result = project.runpytest_subprocess("-p", "no:cacheprovider", f"--retrieval-history={store}")
    assert result.ret == 0
    lines = [line for line in result.stdout.lines if "--retrieval-history" in line]
    assert len(lines) == 1 and "Traceback" not in result.stdout.str()
    assert "not written: history" in lines[0] and "written by a newer pytest-retrieval" in lines[0]
    strict = project.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--retrieval-history={store}", "--retrieval-history-strict"
    )
    assert strict.ret == 1
    strict.stdout.fnmatch_lines(
        ["*ERROR: --retrieval-history *: not written: history*newer pytest-retrieval*"]
    )


def test_the_ini_keys(project: pytest.Pytester) -> None:
    project.makepyprojecttoml(
        '[tool.pytest.ini_options]\nretrieval_history = "h/history.sqlite"\nretrieval_history_tag = ["nightly"]\n'
    )
    sub = project.mkdir("sub")
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", "--rootdir", str(project.path), str(project.path)
    )
    assert result.ret == 0, result.stdout.str()
    (run,) = open_store(project.path / "h" / "history.sqlite").runs()
    assert run.tags == ("nightly",) and not (sub / "h").exists()


def test_only_the_controller_writes_under_xdist(project: pytest.Pytester) -> None:
    try:
        import xdist  # noqa: F401
    except ImportError:
        unavailable("needs pytest-xdist (the test extras)")
    store = project.path / "history.sqlite"
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", f"--retrieval-history={store}")
    assert result.ret == 0, result.stdout.str()
    (run,) = open_store(store).runs()
    assert not run.partial and run.suites == ("tiny",)
    assert {p.retriever for p in open_store(store).points()} == {"bm25", "text_only", "rrf"}
