"""The retriever fixture, golden-query assertions and ``expectations:`` on the embedded engine,
through pytest itself (pytester): every retriever type, one index per session shared by the
YAML items and the fixtures, messages that show the actual top k, engine faults as errors."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET

import pytest

from pytest_retrieval import ConfigError, assert_in_top, assert_not_in_top, assert_ranked_above
from pytest_retrieval.execution.hits import Hit, Hits
from pytest_retrieval.io.ids import internal_query_id

from ..golden import GOLDEN_MODELS, TYPES, golden_suite, write_golden
from ..tiny import TINY_SUITE

pytest_plugins = ["pytester"]


def test_fixture_and_expectations_for_every_retriever_type_share_one_index(pytester) -> None:
    write_golden(pytester)
    # the fixture tests first: they build the index, the YAML items then reuse it
    result = pytester.runpytest_subprocess(
        "test_fixture.py", "retrieval_golden.yaml", "-q", "-p", "no:cacheprovider"
    )
    names = [n for n in TYPES if n != "template"]
    result.assert_outcomes(passed=len(names) + 1 + 3 * len(names))
    counts = json.loads((pytester.path / "counts.json").read_text())
    assert counts["prepare"] == 1, counts
    out = result.stdout.str()
    assert f"golden queries: {3 * len(names)} passed, 0 failed" in out


def test_expectation_items_are_named_per_retriever(pytester) -> None:
    write_golden(pytester)
    result = pytester.runpytest_subprocess("retrieval_golden.yaml", "--collect-only", "-q")
    lines = [line for line in result.outlines if "expect[" in line]
    assert "retrieval_golden.yaml::rrf::expect[river flood defences cities]" in lines
    assert "retrieval_golden.yaml::rerank::expect[query q1]" in lines
    assert len(lines) == 3 * 6


BROKEN = (
    TINY_SUITE
    + """\
expectations:
  - {query: "solar panels", first: d4, name: wind first, retrievers: [bm25]}
  - {query_id: q2, contains: [d3], k: 1}
"""
)


def test_a_broken_expectation_fails_showing_the_actual_top_k(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=BROKEN)
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "--retrieval-report", "r.json", "--junitxml", "j.xml"
    )
    result.assert_outcomes(passed=3 + 3, failed=1)
    out = result.stdout.str()
    assert "tiny :: bm25 :: expect[wind first]: 'd4' should be first, is at rank 3" in out
    assert "query: 'solar panels'" in out and "expectation set at" in out
    assert "actual top 3 (of 3 hits):" in out
    assert "    1  d1" in out and "Solar panels" in out  # rank, id, score, title
    assert "FAIL  bm25 expect[wind first]" in out and "golden queries: 3 passed, 1 failed" in out
    assert "Traceback" not in out
    report = json.loads((pytester.path / "r.json").read_text())
    (suite,) = report["suites"]
    broken = [e for e in suite["expectations"] if not e["passed"]]
    assert [(e["retriever"], e["name"]) for e in broken] == [("bm25", "wind first")]
    assert [h["doc_id"] for h in broken[0]["top"]] == ["d1", "d2", "d4"]
    assert broken[0]["top"][0]["title"] == "Solar panels"
    judged = next(e for e in suite["expectations"] if e.get("query_id") == "q2")
    assert judged["top"][0]["grade"] == 1  # a judged query's top k carries its grades
    cases = ET.parse(pytester.path / "j.xml").getroot().iter("testcase")
    props = {
        c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}
        for c in cases
        if "expect[" in (c.get("name") or "")
    }
    (wind,) = [v for name, v in props.items() if name.endswith("expect[wind first]")]
    assert wind["retrieval_broken"].startswith("'d4' should be first")
    assert wind["retrieval_top"] == "d1 d2 d4" and wind["retrieval_query"] == "solar panels"


def test_golden_texts_leave_the_judged_rankings_alone(pytester) -> None:
    """A golden query runs in the same pass but is never scored or exported, and a judged query
    named by an expectation for some retrievers stays a query of every retriever."""
    from pytest_retrieval import run_suite

    plain = pytester.makefile(".yaml", retrieval_plain=TINY_SUITE)
    golden = pytester.makefile(
        ".yaml",
        retrieval_golden=TINY_SUITE
        + "expectations:\n  - {query_id: q1, contains: [d1], retrievers: [bm25]}\n"
        + "  - {query: 'solar', min_hits: 1, retrievers: [text_only]}\n",
    )
    a, b = run_suite(plain), run_suite(golden)
    for name in a.retrievers:
        assert a.retrievers[name].metrics == b.retrievers[name].metrics
        assert set(b.retrievers[name].run) == set(a.retrievers[name].run)
    assert set(b.golden_runs["text_only"]) == {internal_query_id("expect", 1)}
    assert internal_query_id("expect", 1) not in b.golden_runs["bm25"]  # only the retrievers it names


@pytest.mark.parametrize(
    "entry, message",
    [
        (
            "{query: x, retrievers: [bm52], min_hits: 1}",
            "expectations[0].retrievers[0]: unknown retriever 'bm52'",
        ),
        ("{query: x}", "an expectation needs a check"),
        ("{query: x, query_id: q1, min_hits: 1}", "exactly one of 'query' (text) or 'query_id'"),
        (
            "{query: x, contains: [d1], k: 500}",
            "expectations[0].k: k 500 is deeper than evaluation.depth (100)",
        ),
        ("{query: x, above: [d1], min_hits: 1}", "above"),
    ],
)
def test_bad_expectations_are_one_line(tmp_path, entry: str, message: str) -> None:
    from pytest_retrieval import load_suite

    path = tmp_path / "retrieval_x.yaml"
    path.write_text(TINY_SUITE + f"expectations:\n  - {entry}\n")
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_precomputed_vectors_cannot_embed_free_text(pytester) -> None:
    from pytest_retrieval import load_suite

    example = pytester.copy_example  # noqa: F841 - the example suite is read in place
    from pathlib import Path

    suite = Path(__file__).resolve().parents[2] / "example_suite" / "retrieval_scifact_mini.yaml"
    override = pytester.makefile(".yaml", team="expectations:\n  - {query: 'vitamin D', min_hits: 1}\n")
    with pytest.raises(ConfigError) as err:
        load_suite(suite, overrides=(override,))
    text = str(err.value)
    assert "dense, rrf, weighted cannot embed free text" in text
    assert "onnx, sentence-transformers or callable" in text and "team.yaml" in text
    # the fixture says the same in one line, and a judged query's text keeps its vector
    pytester.makepyfile(
        test_free=f"""
        import pytest
        from pytest_retrieval import ConfigError

        def test_free_text(retrieval_retriever):
            dense = retrieval_retriever({str(suite)!r}, "dense")
            with pytest.raises(ConfigError, match="cannot embed free text .* onnx, sentence-transformers, callable"):
                dense.search("vitamin D deficiency")
            hits = dense.search("AIRE is expressed in some skin tumors.", k=3)
            assert hits.query_id == "50" and hits.doc_ids[0] == "12580014"
        """
    )
    pytester.runpytest_subprocess("test_free.py", "-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_expectations_may_live_in_a_team_file(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=TINY_SUITE)
    pytester.makefile(
        ".yaml", team="expectations:\n  - {query: 'river flood', first: d3, retrievers: [rrf]}\n"
    )
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "--retrieval-override", "team.yaml"
    )
    result.assert_outcomes(passed=4)
    assert "PASS  rrf expect[river flood]" in result.stdout.str()


def test_an_engine_fault_in_a_fixture_is_an_error(pytester) -> None:
    down = golden_suite("elasticsearch", "http://127.0.0.1:1").replace(
        "connection: {hosts: ['http://127.0.0.1:1']}",
        "connection: {hosts: ['http://127.0.0.1:1'], max_retries: 0, request_timeout: 2}",
    )
    pytester.makefile(".yaml", retrieval_down=down)
    pytester.makepyfile(
        golden_models=GOLDEN_MODELS,
        test_down="""
        def test_search(retrieval_retriever):
            retrieval_retriever("retrieval_down.yaml", "bm25").search("river flood")

        def test_search_again(retrieval_retriever):
            retrieval_retriever("retrieval_down.yaml", "bm25").search("river flood")
        """,
    )
    result = pytester.runpytest_subprocess("test_down.py", "-q", "-p", "no:cacheprovider", "-rE")
    result.assert_outcomes(errors=2)
    out = result.stdout.str()
    assert "InfrastructureError" in out and "passed" not in out


HITS = Hits(
    "solar",
    "bm25",
    [Hit("d1", 3.5, 1, "Solar panels", 2), Hit("d2", 1.25, 2, None, None), Hit("d4", 0.5, 3, "Wind", 0)],
    query_id="q1",
    suite="tiny",
)


def test_assertions_pass_and_fail_with_the_top_k() -> None:
    assert_in_top(HITS, "d2", 2)
    assert_not_in_top(HITS, "d4", 2)
    assert_ranked_above(HITS, "d1", "d4")
    assert_ranked_above(HITS, "d1", "zzz")  # b not among the hits
    assert "d1" in HITS and HITS.rank("d4") == 3
    with pytest.raises(AssertionError) as err:
        assert_in_top(HITS, "d4", 2)
    assert str(err.value) == textwrap.dedent(
        """\
        tiny :: bm25: 'd4' should be in the top 2, is at rank 3
          query: 'solar' (judged query q1)
          actual top 3 (of 3 hits):
            1  d1      3.5000  grade 2   Solar panels
            2  d2      1.2500  unjudged
            3  d4      0.5000  grade 0   Wind"""
    )
    with pytest.raises(AssertionError, match="'d4' should rank above 'd1': 'd4' at 3, 'd1' at 1"):
        assert_ranked_above(HITS, "d4", "d1")
    with pytest.raises(AssertionError, match="'zzz' should rank above 'd1': 'zzz' at no rank"):
        assert_ranked_above(HITS, "zzz", "d1")
    with pytest.raises(AssertionError, match="'d1' should not be in the top 3, is at rank 1"):
        assert_not_in_top(HITS, "d1", 3)


def test_retrieval_queries_and_per_query_results() -> None:
    from pathlib import Path

    from pytest_retrieval import retrieval_queries, run_suite

    suite = Path(__file__).resolve().parents[2] / "example_suite" / "retrieval_scifact_mini.yaml"
    queries = retrieval_queries(suite)
    assert len(queries) == 100 and str(queries[0]) == queries[0].id
    assert all(q.relevant for q in queries)
    tagged = retrieval_queries(suite, tag="contradicts")
    assert tagged and all("contradicts" in q.tags for q in tagged)
    result = run_suite(suite)
    got = result.query("rrf", queries[0].id)
    assert got.metrics["ndcg@10"] == result.retrievers["rrf"].evaluation.per_query["ndcg@10"][queries[0].id]
    depth = result.retrievers["rrf"].depth
    assert len(got.hits) == depth == 100  # the ranking as scored: cut at evaluation.depth
    assert got.hits.doc_ids == result.retrievers["rrf"].run[queries[0].id].doc_ids[:depth]
    assert {h.doc_id for h in got.hits if h.grade} <= set(queries[0].grades)
    assert "top 10:" in str(got)
    # `assert ok, got` shows repr(got): one line that pytest (saferepr, 240 characters) keeps whole
    shown = repr(got)
    assert "\n" not in shown and len(shown) <= 240 and "ndcg@10" in shown, shown
    assert all(h.doc_id in shown for h in list(got.hits)[:10]), shown


def test_search_drops_self_hits_like_the_suite_run(pytester) -> None:
    """With ``evaluation.exclude_self_hits`` a query's own document leaves every leaf before
    fusion; the fixture's ``search`` ranks exactly as the run does."""
    suite = TINY_SUITE.replace("latency:\n", "evaluation: {exclude_self_hits: true}\nlatency:\n").replace(
        '- {id: q2, text: "river flood defences", relevant: {d3: 1}}',
        '- {id: d3, text: "river flood defences", relevant: {d1: 1}}',
    )
    pytester.makefile(".yaml", retrieval_self=suite)
    pytester.makepyfile(
        test_self="""
        def test_self(retrieval_retriever, retrieval_suite):
            for name in ("bm25", "rrf"):
                hits = retrieval_retriever("retrieval_self.yaml", name).search("river flood defences", k=5)
                assert hits.query_id == "d3" and "d3" not in hits
                run = retrieval_suite("retrieval_self.yaml").retrievers[name].run["d3"]
                assert hits.doc_ids == run.doc_ids[:5]
        """
    )
    pytester.runpytest_subprocess("test_self.py", "-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_expectation_names_keep_node_ids_whole(pytester) -> None:
    pytester.makefile(
        ".yaml",
        retrieval_tiny=TINY_SUITE
        + "expectations:\n  - {query: 'solar::panels', min_hits: 1, retrievers: [bm25]}\n"
        + "  - {query: 'solar::panels', min_hits: 1, retrievers: [bm25]}\n",
    )
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    lines = [line for line in result.outlines if "expect[" in line]
    assert lines == [
        "retrieval_tiny.yaml::bm25::expect[solar:panels]",
        "retrieval_tiny.yaml::bm25::expect[solar:panels #2]",
    ]
    pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider").assert_outcomes(passed=5)


def test_retrieval_queries_reads_the_suite_as_the_run_does(pytester) -> None:
    """Under pytest, ``retrieval_queries`` applies the run's ``--retrieval-override`` files (a
    team's file may swap the judgments), so the parametrized queries are the evaluated ones; the
    judgments are loaded once per session, for the parametrization and the run together."""
    pytester.makefile(".yaml", retrieval_tiny=TINY_SUITE)
    pytester.makeconftest(
        """
        from pytest_retrieval.execution import plan as build, shared

        LOADS = []
        _load = build.load_judgments

        def counted(suite):
            LOADS.append(suite.name)
            return _load(suite)

        build.load_judgments = shared.load_judgments = counted

        def pytest_sessionfinish(session):
            assert LOADS == ["tiny"], LOADS

        def pytest_unconfigure(config):  # the run is in-process: put the loader back
            build.load_judgments = shared.load_judgments = _load
        """
    )
    pytester.makefile(
        ".yaml",
        team=(
            "judgments:\n  inline:\n"
            '    - {id: t1, text: "solar panels", relevant: {d1: 1}}\n'
            '    - {id: t2, text: "flood", relevant: {d3: 1}}\n'
        ),
    )
    pytester.makepyfile(
        test_each="""
        import pytest
        from pytest_retrieval import retrieval_queries

        @pytest.mark.parametrize("q", retrieval_queries("retrieval_tiny.yaml"), ids=str)
        def test_each(retrieval_suite, q):
            assert retrieval_suite("retrieval_tiny.yaml").query("bm25", q.id).metrics
        """
    )
    plain = pytester.runpytest("-p", "no:cacheprovider", "test_each.py", "--collect-only", "-q")
    assert "test_each.py::test_each[q1]" in plain.stdout.str()
    team = pytester.runpytest(
        "-p", "no:cacheprovider", "test_each.py", "--retrieval-override", "team.yaml", "-v"
    )
    team.assert_outcomes(passed=2)
    team.stdout.fnmatch_lines(
        ["*test_each.py::test_each[[]t1[]] PASSED*", "*test_each.py::test_each[[]t2[]] PASSED*"]
    )
    from pytest_retrieval import retrieval_queries

    assert [q.id for q in retrieval_queries(pytester.path / "retrieval_tiny.yaml")] == ["q1", "q2", "3"]
