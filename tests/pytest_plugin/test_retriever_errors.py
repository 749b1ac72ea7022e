"""One retriever's problem errors that retriever's gates only (issue #36): the other retrievers'
gates are judged, the error is shown in full once (its other gates point to it, the summary and
the JSON report name it once), what builds on it errors too, and an engine fault is still an
error of every gate."""

from __future__ import annotations

import json

from tests.tiny import TINY_SUITE

pytest_plugins = ["pytester"]

SUITE = TINY_SUITE.replace(
    "  rrf:\n    type: rrf\n    of: [bm25, text_only]\n",
    "  rrf:\n    type: rrf\n    of: [bm25, text_only]\n"
    "  broken:\n    type: bm25\n    fields: [no_such_field]\n"
    "  on_broken:\n    type: rrf\n    of: [bm25, broken]\n",
).replace(
    "floors:\n",
    "floors:\n  broken:\n    ndcg@10: 0.1\n    mrr@10: 0.1\n  on_broken:\n    ndcg@10: 0.1\n",
)


def test_a_broken_retriever_errors_its_gates_once_and_the_others_are_judged(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=SUITE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--retrieval-report", "r.json")
    result.assert_outcomes(passed=3, errors=3)
    out = result.stdout.str()
    cause = "no document of the corpus has the field 'no_such_field'"
    # once in its first gate's error, once in the retrieval summary: never once per gate
    # (pytest's own short summary, whose lines are cut to the terminal's width, comes after)
    ours = out.split("short test summary info")[0]
    assert ours.count(cause) == 2, out
    assert (
        "not judged: the retriever failed (the error is shown once, at retrieval_tiny.yaml::broken::ndcg@10)"
        in out
    )
    assert (
        "tiny :: on_broken: the retriever failed, its gates are not judged: built on retriever 'broken'"
        in out
    )
    assert "ERROR broken: the retriever failed" in out
    report = json.loads((pytester.path / "r.json").read_text())
    suite = report["suites"][0]
    assert sorted(suite["failed_retrievers"]) == ["broken", "on_broken"]
    assert [r["name"] for r in suite["retrievers"]] == ["bm25", "text_only", "rrf"]


def test_a_baseline_update_with_a_failed_retriever_is_not_written(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=SUITE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--retrieval-baseline-update")
    assert "not written: retriever 'broken' (and 1 more) failed in this run" in result.stdout.str()
    assert not list(pytester.path.rglob("*.baseline.json"))
