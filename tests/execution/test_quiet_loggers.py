"""The embedded engine's library (bm25s) keeps its DEBUG and INFO records out of the logs pytest
captures, even under ``--log-level=DEBUG`` (issue #26): a failing golden-query test shows the
test's own log lines, not "Building index from tokens"."""

from __future__ import annotations

import logging

from pytest_retrieval.execution.runner import quiet_client_loggers

from ..tiny import TINY_SUITE

pytest_plugins = ["pytester"]


def test_bm25s_is_quiet_but_for_warnings_while_the_block_runs() -> None:
    lg = logging.getLogger("bm25s")
    before = lg.level
    with quiet_client_loggers():
        assert not lg.isEnabledFor(logging.INFO) and lg.isEnabledFor(logging.WARNING)
    assert lg.level == before


def test_a_failing_golden_query_test_captures_no_bm25s_debug(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=TINY_SUITE)
    pytester.makepyfile(
        test_golden="""
        import logging

        def test_fails(retrieval_retriever):
            logging.getLogger("team").debug("the team's own line")
            hits = retrieval_retriever("retrieval_tiny.yaml", "bm25").search("solar", k=3)
            assert not hits.doc_ids
        """
    )
    result = pytester.runpytest_subprocess(
        "test_golden.py", "-q", "-p", "no:cacheprovider", "--log-level=DEBUG"
    )
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "the team's own line" in out  # the capture works
    assert "bm25s" not in out and "Building index" not in out, out
