"""pytest-xdist (issue #16 item 6): with ``-n 2`` each suite runs once, on one worker, and the
controller writes the summary and every report exactly as a serial run does (timings aside)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Dict, List

from tests.tiny import RICH_SUITE, TINY_SUITE

pytest_plugins = ["pytester"]

# What a second run times differently; everything else must be identical.
_TIMED = re.compile(r"(_ms|ms_|latency|time|duration|seconds|created|started|finished|timestamp|ratio)", re.I)


def _untimed(obj: Any) -> Any:
    if isinstance(obj, dict):
        if _TIMED.search(str(obj.get("metric", ""))):  # a latency gate: its value is a timing
            obj = {k: v for k, v in obj.items() if k not in ("value", "message")}
        return {k: _untimed(v) for k, v in obj.items() if not _TIMED.search(k)}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def _gates(report: Dict[str, Any]) -> List[Any]:
    """Gate verdicts, except the latency ones (their values are timings)."""
    return [
        (g.get("retriever"), g.get("metric"), g.get("outcome"), g.get("value"))
        for s in report["suites"]
        for g in s.get("gates", [])
        if not re.search(r"_ms$|_ratio$", str(g.get("metric")))
    ]


def _suites(pytester) -> None:
    """Two folders of suites, so two workers have work; a Python test beside one of them."""
    pytester.makefile(".yaml", **{"a/retrieval_tiny": TINY_SUITE})
    pytester.makefile(".yaml", **{"b/retrieval_rich": RICH_SUITE.replace("suite: tiny", "suite: rich")})
    (pytester.path / "a" / "test_beside.py").write_text(
        "def test_asks_for_the_suite(retrieval_suite):\n"
        "    result = retrieval_suite('retrieval_tiny.yaml')\n"
        "    assert result.retrievers['bm25'].metrics['ndcg@10'] > 0\n"
    )
    for name in ("test_other_1.py", "test_other_2.py"):
        (pytester.path / name).write_text("def test_plain():\n    assert True\n")


def _run(pytester, tag: str, *args: str):
    out = pytester.path / f"out-{tag}"
    out.mkdir()
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        f"--retrieval-report={out / 'report.json'}",
        f"--junitxml={out / 'junit.xml'}",
        f"--retrieval-markdown={out / 'summary.md'}",
        "--retrieval-baseline-update",
        *args,
    )
    return result, out


def test_reports_of_two_workers_equal_the_serial_run(pytester) -> None:
    _suites(pytester)
    serial, s_out = _run(pytester, "serial")
    baselines = {p: p.read_text() for p in pytester.path.rglob("*.baseline.json")}
    for p in baselines:
        p.unlink()
    parallel, p_out = _run(pytester, "n2", "-n", "2")
    assert serial.ret == parallel.ret, parallel.stdout.str()[-3000:]
    assert parallel.parseoutcomes() == serial.parseoutcomes()

    # every suite ran once: one entry each, and no "ran N times" note
    a, b = (json.loads((o / "report.json").read_text()) for o in (s_out, p_out))
    assert [s["suite"] for s in b["suites"]] == [s["suite"] for s in a["suites"]] == ["tiny", "rich"]
    assert "ran 2 times" not in parallel.stdout.str()
    assert _gates(a) == _gates(b)
    assert _untimed(a["suites"]) == _untimed(b["suites"])

    # the summary lines that are not timings are the same, in the same order
    def summary(result) -> List[str]:
        text = result.stdout.str()
        block = text[text.index("retrieval summary") : text.rindex(" in ")]
        lines = [
            ln for ln in block.splitlines() if not re.search(r"_ms|_ratio|\d ms", ln) and "=====" not in ln
        ]
        return [re.sub(r"[+-]?\b\d+\.\d\b", "#", ln) for ln in lines]  # latency columns: one decimal

    assert summary(parallel) == summary(serial)

    # JUnit: the same items carry the same retrieval properties (timings aside)
    def props(path: Path) -> Dict[str, Dict[str, str]]:
        out = {}
        for case in ET.parse(path).iter("testcase"):
            values = {p.get("name"): p.get("value") for p in case.iter("property")}
            if _TIMED.search(str(values.get("retrieval_metric", ""))):  # a latency gate's value is a timing
                values = {
                    k: v for k, v in values.items() if k not in ("retrieval_value", "retrieval_message")
                }
            out[f"{case.get('classname')}::{case.get('name')}"] = {
                k: v for k, v in values.items() if not _TIMED.search(str(k))
            }
        return out

    assert props(p_out / "junit.xml") == props(s_out / "junit.xml")
    assert (p_out / "summary.md").is_file()

    # the baseline is written once, by the controller, with the serial run's numbers
    again = {p: p.read_text() for p in pytester.path.rglob("*.baseline.json")}
    assert sorted(again) == sorted(baselines)
    for path, text in again.items():
        assert _untimed(json.loads(text)).get("retrievers") == _untimed(json.loads(baselines[path])).get(
            "retrievers"
        )


def test_a_suite_split_by_an_explicit_dist_mode_says_so(pytester) -> None:
    """An explicit ``--dist`` mode is honoured (``each``: every worker runs every item, so each
    runs the suite): the summary names the second run instead of hiding it."""
    _suites(pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist", "each")
    assert "ran 2 times, on 2 xdist workers" in result.stdout.str()


def test_a_python_test_in_another_folder_does_not_run_the_suite_again(pytester) -> None:
    """``-n 2``: a Python test in another folder that names a suite file joins the suite's
    worker (issue #26), so the suite runs once; without that it would be the second scope, given
    to the second worker, which would run the suite again."""
    pytester.makefile(".yaml", **{"suites/retrieval_tiny": TINY_SUITE})
    (pytester.path / "a_tests").mkdir()
    (pytester.path / "a_tests" / "test_golden.py").write_text(
        "SUITE = '../suites/retrieval_tiny.yaml'\n\n\n"
        "def test_asks_for_the_suite(retrieval_suite):\n"
        "    assert retrieval_suite(SUITE).retrievers['bm25'].metrics['ndcg@10'] > 0\n"
    )
    for name in ("test_other_1.py", "test_other_2.py"):
        (pytester.path / name).write_text("def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    out = result.stdout.str()
    assert result.ret == 0, out[-3000:]
    assert "ran 2 times" not in out, out[-3000:]
    assert "tiny (retrieval_tiny.yaml)" in out


def test_suite_scopes_join_the_folders_a_python_test_names(tmp_path: Path) -> None:
    from pytest_retrieval.pytest_plugin.xdist import suite_scopes

    for name in ("suites/retrieval_a.yaml", "more/b.retrieval.yml", "c/retrieval_c.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("suite: x\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_g.py").write_text('A = "../suites/retrieval_a.yaml"\nB = "b.retrieval.yml"\n')
    (tmp_path / "tests" / "test_o.py").write_text("def test_o():\n    pass\n")
    (tmp_path / "c" / "test_beside.py").write_text("def test_b():\n    pass\n")
    files = ["suites/retrieval_a.yaml", "more/b.retrieval.yml", "c/retrieval_c.yaml"]
    scopes = suite_scopes([*files, "tests/test_g.py", "tests/test_o.py", "c/test_beside.py"], tmp_path)
    joined = {scopes["suites/retrieval_a.yaml"], scopes["more/b.retrieval.yml"], scopes["tests/test_g.py"]}
    assert len(joined) == 1  # one worker for both suites and the test naming them
    assert scopes["c/test_beside.py"] == scopes["c/retrieval_c.yaml"] not in joined
    assert "tests/test_o.py" not in scopes  # a plain test: a scope of its own
