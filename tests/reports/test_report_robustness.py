"""Reports never crash the run, never hide an errored suite, and never show credentials."""

from __future__ import annotations

import json

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ..test_plugin import SUITE

pytest_plugins = ["pytester"]


def _outputs(p):
    return [
        f"--retrieval-report={p / 'r.json'}",
        f"--retrieval-markdown={p / 'r.md'}",
        f"--retrieval-html={p / 'r.html'}",
        f"--retrieval-openmetrics={p / 'r.txt'}",
    ]


def test_an_unwritable_report_is_said_and_does_not_change_the_verdict(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=SUITE)
    (pytester.path / "taken.html").mkdir()  # a directory where the HTML file should go
    result = pytester.runpytest_subprocess(
        "-q",
        f"--retrieval-html={pytester.path / 'taken.html'}",
        f"--retrieval-markdown={pytester.path / 'r.md'}",
    )
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    out = result.stdout.str()
    # relative to the rootdir, as the reports (issue #26)
    assert (
        "[retrieval] --retrieval-html taken.html: not written: a folder, not a regular file: taken.html"
        in out
    )
    assert str(pytester.path) not in out.split("rootdir: ")[-1].split("\n", 1)[-1]
    assert "Traceback" not in out
    assert (
        (pytester.path / "r.md")
        .read_text()
        .startswith("## ✅ Retrieval gates passed: 0 failed, 0 errored, 3 passed")
    )


def test_an_errored_suite_is_the_verdict_and_credentials_stay_out(pytester) -> None:
    text = SUITE.replace(
        "latency:\n",
        "backend:\n  type: elasticsearch\n  connection:\n"
        "    hosts: ['http://gate:hunter2-very-secret@127.0.0.1:9']\n    username: gate\n"
        "    password: hunter2-very-secret\n    max_retries: 0\n"
        "    request_timeout: 2\nlatency:\n",
    )
    pytester.makefile(".yaml", retrieval_tiny=text)
    result = pytester.runpytest_subprocess("-q", *_outputs(pytester.path))
    result.assert_outcomes(errors=3)
    for name in ("r.json", "r.md", "r.html", "r.txt"):
        assert "hunter2-very-secret" not in (pytester.path / name).read_text(), name
    assert "hunter2-very-secret" not in result.stdout.str()
    md = (pytester.path / "r.md").read_text()
    assert md.startswith(
        "## ⚠️ Retrieval gates errored: 0 of 3 gates ran (3 not judged: 3 errored); "
        "3 errored, 1 suite did not run; no verdict on the gates that did not run"
    )
    assert "⚠️ **errored** `bm25::ndcg@10`: InfrastructureError" in md
    doc = json.loads((pytester.path / "r.json").read_text())
    assert [i["outcome"] for i in doc["suites"][0]["items"]] == ["error"] * 3
    families = {f.name: f for f in text_string_to_metric_families((pytester.path / "r.txt").read_text())}
    errors = [s.value for s in families["retrieval_gates"].samples if s.labels["outcome"] == "error"]
    assert errors == [3]


def test_a_collection_error_is_in_the_verdict(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=SUITE.replace("ndcg@10: 0.5", "ndcg@11x: 0.5"))
    pytester.makefile(".yaml", retrieval_ok=SUITE.replace("suite: tiny", "suite: ok"))
    result = pytester.runpytest_subprocess("-q", *_outputs(pytester.path))
    assert result.ret != 0
    md = (pytester.path / "r.md").read_text()
    # pytest stops on a collection error: the other suite's gates did not run either, and say so
    assert md.startswith(
        "## ⚠️ Retrieval gates errored: 0 of 3 gates ran (3 not judged: 3 not reached); "
        "1 collection error; no verdict on the gates that did not run"
    )
    assert "collection error** `retrieval_tiny.yaml`: ConfigError:" in md and "floors.bm25.ndcg@11x" in md
    assert "the suite did not run**: not run: none of its gates ran" in md
