"""The terminal summary (``retrieval summary`` section): a table per suite, the stages, the
gates, the baseline comparison and the notes a reader needs. A renderer of the JSON report
(``outputs.report_document``), as the Markdown, HTML and OpenMetrics ones are: every line reads
a suite's entry of the report, never the live run, so the run record (issue #37) is the one
model of every view."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable, List, Mapping, Optional

from ..gates.floors import GateKind, kind_of
from ..wording import word
from .formats import (
    analyzer_lines,
    candidate_recall,
    delta,
    engine_line,
    missing,
    percent_shares,
    sparse_precision_lines,
    stage_reference,
    text_table,
)
from .stability_view import stability_lines
from .view import gate_name, owners_of, verdict

__all__ = ["expectation_lines", "render_summary", "session_headline", "summary_lines"]


def session_headline(doc: Mapping[str, Any]) -> str:
    """The verdict of the session, the first line of the summary: the Markdown and HTML
    headline in plain text, so a partial run says how many gates ran there too."""
    return verdict(doc).headline(icon=False)


def summary_lines(doc: Mapping[str, Any]) -> List[str]:
    """The whole ``retrieval summary`` section of a report: the headline, then every suite
    that ran, its gates and golden queries."""
    lines = [session_headline(doc)]
    for s in doc.get("suites", []):
        if s.get("error") is not None or "retrievers" not in s:
            continue
        lines += render_summary(s)
        runs = s.get("runs") or 1
        if runs > 1:  # pytest-xdist with a --dist mode that split the suite's items
            lines.append(
                f"  note: the suite ran {runs} times, on {runs} xdist workers (a Python test "
                "built its path at run time, or a --dist mode split its items; the default `-n N` keeps a "
                "suite, the Python tests beside it and those naming its file on one worker)"
            )
        lines += expectation_lines(s.get("expectations") or [])
    return lines


def render_summary(s: Mapping[str, Any]) -> List[str]:
    """The summary lines of one suite entry of the JSON report, without a trailing newline each."""
    lines = _header(s) + _retriever_table(s) + _latency_line(s) + _stage_table(s)
    lines += [
        f"  ERROR {name}: the retriever failed, its gates are not judged: {why}"
        for name, why in (s.get("failed_retrievers") or {}).items()
    ]
    lines += _gate_lines(s.get("gates") or [])
    lines += _baseline_lines(s)
    lines += _reference_lines(s)
    lines += [f"  {line}" for line in stability_lines(s.get("stability"))]
    lines += _ab_lines(s)
    lines += _notes(s)
    return lines


# ------------------------------------------------------------------ sections


def _header(s: Mapping[str, Any]) -> List[str]:
    from ..io.judgment_set import Overlap

    info = s.get("backend") or {}
    n_eval = (s.get("queries") or {}).get("judged", 0) if s.get("retrievers") else 0
    ov = s.get("overlap") or {}
    overlap = Overlap(ov.get("queries", 0), ov.get("qrels", 0), ov.get("both", 0), ov.get("run"))
    checks = (s.get("judgment_checks") or {}).get("lines") or []
    return [
        f"{s.get('suite', '?')} ({Path(str(s.get('file', '?'))).name}) on {engine_line(info)}: "
        f"{n_eval} judged queries, profile {s.get('profile')}",
        f"  ids: {overlap.describe()}",
    ] + ["  " + line for line in checks + analyzer_lines(info)]


def _metrics(s: Mapping[str, Any]) -> List[str]:
    if s.get("metrics"):
        return list(s["metrics"])
    first = next(iter(s.get("retrievers") or []), None)
    return list(first["metrics"]) if first else []


def _retriever_table(s: Mapping[str, Any]) -> List[str]:
    metrics = _metrics(s)
    header = ["retriever"] + metrics + ["p50 ms", "p95 ms"]
    rows = []
    for r in s.get("retrievers") or []:
        lat = r.get("latency_ms") or {}
        row = [r["name"]] + [_cell(r.get("metrics", {}).get(m)) for m in metrics]
        row += [_ms(lat.get("p50")), _ms(lat.get("p95"))]
        rows.append(row)
    return ["  " + line for line in text_table(header, rows)]


def _latency_line(s: Mapping[str, Any]) -> List[str]:
    """How the latency columns were measured: which queries, how often, one BLAS thread."""
    timed = next(
        (
            r["latency_ms"]
            for r in s.get("retrievers") or []
            if (r.get("latency_ms") or {}).get("queries_timed")
        ),
        None,
    )
    if timed is None:
        return []
    short = [f"  latency ERROR: {why}" for why in s.get("latency_notes") or []]
    how = (
        "every query"
        if timed["queries_timed"] == timed.get("queries")
        else f"a seeded sample of {timed['queries_timed']} of {timed.get('queries')} queries"
    )
    return [
        f"  latency: {how} timed, {timed.get('repetitions')} pass(es) after {timed.get('warmup')} warm-up "
        f"request(s), one BLAS thread (latency.max_queries: all times every query)"
    ] + short


def _stage_table(s: Mapping[str, Any]) -> List[str]:
    stages = s.get("stages") or []
    if not stages:
        return []
    reference = stage_reference(stages)
    head = [
        "stage",
        "builds on",
        stages[0]["metric"],
        *([f"vs {reference}"] if reference is not None else []),
        "vs input",
        "mrr@10",
        "recall@window of inputs",
        "p95 ms",
        "p95 vs input",
    ]
    against = f"against {reference} and " if reference is not None else ""
    lines = [f"  stages (deltas {against}against each stage's best input):"]
    lines += ["    " + line for line in text_table(head, [_stage_cells(r, reference) for r in stages])]
    return lines + [f"    {r['name']}: {r['verdict']}" for r in stages if r.get("verdict")]


def _stage_cells(r: Mapping[str, Any], reference: Optional[str]) -> List[str]:
    """A stage's row as the JSON report has it (``stages``), in plain text."""
    return [
        r["name"],
        "+".join(r["builds_on"]) or "-",
        _cell(r["value"]),
        *([delta(r.get("delta_vs_bm25"), plain=True)] if reference is not None else []),
        delta(r["delta_vs_input"], plain=True),
        _cell(r["mrr"]),
        candidate_recall(r) or "-",
        _ms(r["p95_ms"]),
        delta(r["delta_p95_ms"], 1, plain=True),
    ]


def _gate_lines(gates: List[Mapping[str, Any]]) -> List[str]:
    if not gates:
        return []
    lines = ["  gates:"]
    for g in gates:
        mark = "PASS" if g.get("passed") else "FAIL"
        show, unit = _GATE_FORMAT.get(kind_of(g["metric"]), (_cell, ""))
        team = f"{g['team']} :: " if g.get("team") else ""
        lines.append(
            f"    {mark}  {team}{g['retriever']} {gate_name(g)} = {show(g.get('value'))}{unit}"
            f" ({g['op']} {show(g.get('threshold'))}{unit}){_gate_origin(g)}"
        )
    return lines


def _gate_origin(g: Mapping[str, Any]) -> str:
    """Where a gate's floor was set (and the stricter value a later file replaced), and its
    owners: `` set at teams/ranking.yaml:4, owner @org/ranking``."""
    parts = []
    if g.get("origin"):
        parts.append(f"set at {g['origin']}")
    if g.get("lowered_from"):
        parts.append(f"lowered from {g['lowered_from']}")
    if owners_of(g):
        parts.append("owner " + " ".join(owners_of(g)))
    return f" {', '.join(parts)}" if parts else ""


def _baseline_lines(s: Mapping[str, Any]) -> List[str]:
    """The baseline verdicts and the baseline's note; the note of a suite with baseline gates
    (a suite with floors only names its baseline nowhere in the summary)."""
    regressions = s.get("regressions") or []
    gated = any(g.get("kind") == "regression" for g in s.get("gated") or [])
    note = str((s.get("baseline") or {}).get("note") or "") if (regressions or gated) else ""
    if not (regressions or note):
        return []
    lines = [f"  against the baseline: {note}" if note else "  against the baseline:"]
    for reg in regressions:
        lines += _regression_lines(reg)
    return lines


def _reference_lines(s: Mapping[str, Any]) -> List[str]:
    """The verdicts against the pinned run of the history (gates/reference.py) and its note."""
    references = s.get("references") or []
    note = str((s.get("reference") or {}).get("note") or "")
    if not (references or note):
        return []
    lines = [f"  against the reference run: {note}" if note else "  against the reference run:"]
    for reg in references:
        lines += _regression_lines(reg)
    return lines


def _max_drop_origin(reg: Mapping[str, Any]) -> str:
    """``, max_drop set at teams/ranking.yaml:6, owner @org/ranking`` of a baseline verdict."""
    parts = [f"max_drop set at {reg['origin']}"] if reg.get("origin") else []
    if owners_of(reg):
        parts.append("owner " + " ".join(owners_of(reg)))
    return "".join(f", {p}" for p in parts)


def _team(gate: Mapping[str, Any]) -> str:
    return f"{gate['team']} :: " if gate.get("team") else ""


def _regression_lines(reg: Mapping[str, Any]) -> List[str]:
    """A baseline verdict, with judged@10 then and now beside it (unjudged documents that
    entered), the metric on judged documents only when judged@10 fell, and its strata."""
    o = reg["comparison"]
    mark = "PASS" if reg.get("passed") else "FAIL"
    judged = reg.get("judged@10")
    lines = [
        f"    {mark}  {_team(reg)}{reg['retriever']} {reg['metric']}: mean diff {_f(o.get('mean_diff')):+.4f} "
        f"(lower bound {_f(o.get('ci_low')):+.4f} at {_f(o.get('confidence')):.0%}, margin -{reg['max_drop']:g}), "
        f"won/lost/tied {o.get('won')}/{o.get('lost')}/{o.get('tied')}, p={_f(o.get('p_randomization')):.3g}, "
        + (
            f"judged@10 {_f(judged.get('baseline')):.4f} -> {_f(judged.get('current')):.4f}"
            if judged
            else "judged@10 not in the baseline"
        )
        + _max_drop_origin(reg)
    ]
    judged_only = _judged_only(reg)
    if judged_only is not None:
        lines.append("          " + judged_only.describe())
    for tag, v in sorted((reg.get("strata") or {}).items()):
        c = v.get("comparison") or {}
        lines.append(
            f"          [{tag}] {_f(c.get('mean_diff')):+.4f} over {c.get('n')} queries, "
            f"Holm p(drop)={_f(v.get('p_drop_holm')):.3g}: {word('no_drop' if v.get('passed') else 'regressed')}"
        )
    return lines


def _judged_only(reg: Mapping[str, Any]) -> Any:
    """The judged-only comparison of a baseline verdict, read back from the report."""
    from ..gates.judged_only import JudgedOnlyChange

    d = reg.get("judged_only")
    if not d:
        return None
    if d.get("unavailable"):
        return JudgedOnlyChange(d.get("metric", "?"), unavailable=d["unavailable"])
    return JudgedOnlyChange(
        d.get("metric", "?"),
        before=_f(d.get("baseline")),
        now=_f(d.get("current")),
        queries=d.get("queries", 0),
        compared=d.get("compared", 0),
        drop=_f(reg["comparison"].get("mean_diff")),
        margin=reg["max_drop"],
        depth=d.get("depth", 0),
    )


def _ab_lines(s: Mapping[str, Any]) -> List[str]:
    from ..stats.latency import ABResult

    lines = []
    for r in s.get("retrievers") or []:
        ab = r.get("latency_ab")
        if not ab:
            continue
        for key, v in ab.items():
            m = re.fullmatch(r"p(\d+(?:\.\d+)?)", key)
            if m is None or not isinstance(v, dict):
                continue
            result = ABResult(
                float(m.group(1)),
                _f(v.get("baseline_ms")),
                _f(v.get("current_ms")),
                _f(v.get("ratio")),
                _f(v.get("lower")),
                _f(v.get("upper")),
                _f(v.get("confidence")),
                paired=True,
            )
            lines.append(
                "  latency A/B: "
                + result.describe(f"{r['name']} vs {ab.get('baseline')}")
                + f" ({ab.get('rounds')} interleaved rounds)"
            )
    return lines


def _notes(s: Mapping[str, Any]) -> List[str]:
    """Unjudged share, abstention, power, queries left out, warnings."""
    shares = percent_shares({n: _f(x) for n, x in (s.get("unjudged_share") or {}).items()})
    lines = [
        f"  unjudged in the top 10: {shares} (unjudged documents count as non-relevant: "
        f"a retriever surfacing new documents can look worse than it is; "
        f"--retrieval-export-unjudged writes them out for annotation)"
    ]
    if s.get("unanswerable"):
        lines.append(_abstention_line(s))
    if s.get("power"):
        lines.append("  " + str(s["power"]))
    lines += _left_out_lines(s)
    lines += [f"  {line}" for line in (s.get("rank_eval") or {}).get("lines") or []]
    lines += [f"  {line}" for line in sparse_precision_lines(s.get("backend") or {})]
    queries = s.get("queries") or {}
    for r in s.get("retrievers") or []:
        lines += _retriever_notes(r, queries.get("average_over"))
    return lines + [f"  warning: {w}" for w in s.get("warnings") or []]


def _left_out_lines(s: Mapping[str, Any]) -> List[str]:
    """One line: which judged queries the means are over and why the others are not
    (``measures.aggregate``; nothing when every judged query is averaged)."""
    from ..measures.aggregate import averaging_note_of

    first = next(iter(s.get("retrievers") or []), None)
    q = s.get("queries") or {}
    if first is None or "average_over" not in q:
        return []
    mode, no_relevant = q["average_over"], list(q.get("no_relevant") or [])
    note = averaging_note_of(
        mode,
        q.get("judged", 0),
        q.get("of_judged", 0),
        no_relevant,
        first.get("queries_not_in_run") or [],
        mode,
    )
    if not note:
        return []
    named = f": {', '.join(no_relevant[:10])}" if no_relevant and mode == "relevant" else ""
    return [f"  {note}{named}"]


def _retriever_notes(r: Mapping[str, Any], average_over: Optional[str]) -> List[str]:
    """A retriever's queries without hits and its warnings."""
    from ..sparse.weights import sparse_line

    lines = []
    if isinstance(r.get("sparse"), dict):
        lines.append(f"  {r['name']}: {sparse_line(r['sparse'])}")
    missing_hits = list(r.get("queries_without_hits") or [])
    if missing_hits:
        absent = set(r.get("queries_not_in_run") or ()) if average_over == "run" else set()
        counted = len([q for q in missing_hits if q not in absent])
        how = "scored 0, counted" if counted == len(missing_hits) else f"scored 0, {counted} counted"
        lines.append(f"  {r['name']}: {len(missing_hits)} queries returned no hits ({how})")
    return lines + [f"  warning: {r['name']}: {w}" for w in r.get("warnings") or []]


def _abstention_line(s: Mapping[str, Any]) -> str:
    parts = []
    for r in s.get("retrievers") or []:
        ab = r.get("abstention")
        if ab and ab.get("unanswerable"):
            parts.append(
                f"{r['name']} {_f(ab.get('rate')):.0%}"
                + (
                    f" (wrongly on {_f(ab.get('false_rate')):.0%} of answerable)"
                    if ab.get("answerable")
                    else ""
                )
            )
    return "  abstention on unanswerable queries: " + (", ".join(parts) or "none tagged")


# ------------------------------------------------------------------ cells


def _f(x: Any) -> float:
    """A number of the report as a float: null (a non-finite value) reads as NaN, as it was."""
    return math.nan if x is None else float(x)


def _cell(x: Any) -> str:
    if missing(x):
        return "-"
    return f"{x:.4f}" if isinstance(x, float) else str(x)


def _ms(x: Any) -> str:
    if missing(x):
        return "-"
    return f"{x:.1f}"


def _ratio(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}"


#: How a gate's value and threshold are shown, by kind (default: a 4-decimal cell).
_GATE_FORMAT: dict[GateKind, tuple[Callable[[Any], str], str]] = {
    GateKind.LATENCY: (_ms, " ms"),
    GateKind.LATENCY_RATIO: (_ratio, ""),
}


def expectation_lines(checked: List[Mapping[str, Any]]) -> List[str]:
    """The golden queries that ran (``expectations:`` of the report): a count, then each
    item's verdict and, for a broken one, what broke."""
    if not checked:
        return []
    failed = sum(1 for e in checked if not e.get("passed"))
    lines = [f"  golden queries: {len(checked) - failed} passed, {failed} failed"]
    for e in checked:
        broken = list(e.get("broken") or [])
        verdict_ = "FAIL" if not e.get("passed") else "PASS"
        detail = f": {'; '.join(broken)}" if broken else ""
        lines.append(f"    {verdict_}  {e.get('retriever')} expect[{e.get('name')}]{detail}")
    return lines
