"""terminal.py: the summary section, line by line, on a real run (timings are not asserted),
rendered from the run's JSON report document as the plugin renders it."""

from __future__ import annotations

import re

from pytest_retrieval.reports.outputs import report_document
from pytest_retrieval.reports.terminal import render_summary


def render(state, **kw):
    """The summary of ``state``'s report entry; ``outcomes``, ``regressions`` and
    ``baseline_note`` replace what the entry holds."""
    s = report_document([state])["suites"][0]
    if "outcomes" in kw:
        s["gates"] = [o.as_dict() for o in kw["outcomes"]]
    if "regressions" in kw:
        s["regressions"] = [r.as_dict() for r in kw["regressions"]]
    note = kw.get("baseline_note", state.baseline_note)
    s["baseline"] = {**(s.get("baseline") or {}), "note": note} if note else None
    return render_summary(s)


def test_header_and_retriever_table(state):
    lines = render(state)
    assert lines[0].startswith("tiny (retrieval_tiny.yaml) on embedded (")
    assert lines[0].endswith("): 3 judged queries, profile exp")
    assert lines[1].startswith("  ids: ")
    assert lines[2].startswith("  query set: ")  # the judgment checks (#12) follow the ids line
    h = next(i for i, line in enumerate(lines) if line.split()[:1] == ["retriever"])
    header = lines[h].split()
    assert header[-4:] == ["p50", "ms", "p95", "ms"]
    assert set(lines[h + 1].strip()) == {"-", " "}
    assert [line.split()[0] for line in lines[h + 2 : h + 5]] == ["bm25", "text_only", "rrf"]
    assert all(isinstance(line, str) and "\n" not in line for line in lines)


def test_stage_table_follows_with_deltas(state):
    lines = render(state)
    i = lines.index("  stages (deltas against bm25 and against each stage's best input):")
    assert lines[i + 1].split()[:3] == ["stage", "builds", "on"]
    rrf = [line for line in lines[i + 3 : i + 6] if line.strip().startswith("rrf")]
    assert rrf and "bm25+text_only" in rrf[0]


def test_gate_lines_one_per_outcome_formatted_by_kind(state):
    lines = render(state)
    i = lines.index("  gates:")
    gates = lines[i + 1 : i + 1 + len(state.outcomes)]
    assert len(gates) == 8
    for line, o in zip(gates, state.outcomes):
        assert line.startswith(f"    {'PASS' if o.passed else 'FAIL'}  {o.floor.retriever} {o.floor.name} = ")
    by_name = {line.split()[2]: line for line in gates}
    ndcg = state.outcomes[0]
    # every gate, passed or failed, names the file and line its floor was set at (issue #36)
    at = {o.floor.name: f" set at {o.floor.origin}" for o in state.outcomes}
    assert all(o.floor.origin.startswith(str(state.suite.path)) for o in state.outcomes)
    assert by_name["ndcg@10"] == f"    PASS  bm25 ndcg@10 = {ndcg.value:.4f} (>= 0.5000){at['ndcg@10']}"
    assert re.fullmatch(
        r"    PASS  bm25 p95_ms = \d+\.\d ms \(<= 10000\.0 ms\) set at \S+:\d+", by_name["p95_ms"]
    )
    assert re.fullmatch(
        r"    PASS  bm25 p95_ratio = \d+\.\d{3} \(<= 1000\.000\) set at \S+:\d+", by_name["p95_ratio"]
    )
    assert by_name["abstention"] == f"    FAIL  rrf abstention = 0.5000 (>= 0.9000){at['abstention']}"


def test_baseline_ab_and_notes(state):
    lines = render(state)
    i = lines.index("  against the baseline: compared with retrieval_tiny.baseline.json")
    assert lines[i + 1].startswith("    PASS  bm25 ndcg@10: mean diff +0.0000 (lower bound +0.0000 at 95%")
    ab = [line for line in lines if line.startswith("  latency A/B: ")]
    assert [line.split()[2:5] for line in ab] == [["bm25", "vs", "text_only:"]] * 2
    assert " p50 " in ab[0] and " p95 " in ab[1] and ab[0].endswith("(4 interleaved rounds)")
    assert any(line.startswith("  unjudged in the top 10: bm25 ") for line in lines)
    assert "  abstention on unanswerable queries: bm25 50%" in "\n".join(lines)
    assert any(line.startswith("  power: ") for line in lines)
    assert (
        "  averaged over 3 of 4 judged queries: 1 judged without a relevant document left out (average_over: relevant): q4"
        in lines
    )


def test_sections_without_content_are_left_out(state):
    lines = render(state, outcomes=[], regressions=[], baseline_note="")
    assert "  gates:" not in lines
    assert not any(line.startswith("  against the baseline") for line in lines)
    just_note = render(state, outcomes=[], regressions=[], baseline_note="no baseline at x: floors only")
    assert "  against the baseline: no baseline at x: floors only" in just_note


def test_the_averaging_line_under_profile_trec_names_what_trec_eval_does():
    from pytest_retrieval.measures.metrics import evaluate
    from pytest_retrieval.reports.terminal import _left_out_lines
    from pytest_retrieval.types import Ranking

    qrels = {"1": {"a": 1}, "2": {"b": 0}}
    run = {"1": Ranking(["a"], [1.0]), "2": Ranking([], [])}
    ev = evaluate(qrels, run, ["map"], average_over="run")  # what profile: trec resolves to
    entry = {  # the report's entry, as json_report writes it
        "queries": {
            "judged": len(ev.evaluated),
            "of_judged": ev.judged,
            "no_relevant": list(ev.no_relevant),
            "average_over": ev.average_over,
        },
        "retrievers": [{"name": "bm25", "queries_not_in_run": list(ev.not_in_run)}],
    }
    assert _left_out_lines(entry) == [
        "  averaged over all 2 judged queries: 1 judged without a relevant document averaged in (as 0) "
        "(average_over: run, as trec_eval, pytrec_eval and BEIR)"
    ]
