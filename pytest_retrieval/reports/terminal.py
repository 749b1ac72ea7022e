"""The terminal summary (``retrieval summary`` section): a table per suite, the stages, the
gates, the baseline comparison and the notes a reader needs. A writer only: the verdicts come
from ``gates``, the statistics from ``stats``."""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, Sequence

from ..gates.floors import GateKind, ab_percentiles
from ..gates.stages import stage_rows
from ..gates.verdicts import latency_sample_notes
from .formats import (
    candidate_recall,
    delta,
    engine_detail,
    missing,
    percent_shares,
    sparse_precision_lines,
    text_table,
)
from .power import power_line

__all__ = ["expectation_lines", "render_summary", "session_headline"]


def session_headline(states: Sequence[Any], gates: Mapping[str, int]) -> str:
    """The verdict of the session, the first line of the summary: the Markdown and HTML
    headline in plain text, so a partial run says how many gates ran there too."""
    from .view import verdict

    doc = {"suites": [_verdict_entry(s) for s in states], "session": {"gates": dict(gates)}}
    return verdict(doc).headline(icon=False)


def _verdict_entry(state: Any) -> Mapping[str, Any]:
    """What the verdict reads of a suite (as the JSON report has it): did it run, and its
    baseline comparisons."""
    entry: dict = {"suite": state.suite.name, "regressions": [r.as_dict() for r in state.regressions]}
    if state.result is None:
        entry["error"] = str(state.error) if state.error is not None else "not run"
    loaded = state.loaded_baseline
    if loaded is not None and loaded[0] is not None:
        entry["baseline"] = {"retrievers": {}}
    return entry


def render_summary(
    result: Any,
    outcomes: Sequence[Any],
    regressions: Sequence[Any] = (),
    baseline_note: str = "",
    references: Sequence[Any] = (),
    reference_note: str = "",
) -> List[str]:
    """The summary lines of one suite run, without a trailing newline each (``references``: the
    verdicts against the pinned run of the history, gates/reference.py)."""
    lines = _header(result) + _retriever_table(result) + _latency_line(result) + _stage_table(result)
    lines += _gate_lines(outcomes)
    lines += _baseline_lines(regressions, baseline_note)
    lines += _baseline_lines(references, reference_note, "the reference run")
    lines += _ab_lines(result)
    lines += _notes(result)
    return lines


# ------------------------------------------------------------------ sections


def _header(result: Any) -> List[str]:
    suite, info = result.suite, result.backend_info
    engine = info.get("backend", "?")
    detail = engine_detail(info)
    version = f" ({detail})" if detail else ""
    first = next(iter(result.retrievers.values()), None)
    n_eval = len(first.evaluation.evaluated) if first else 0
    return [
        f"{suite.name} ({suite.path.name}) on {engine}{version}: "
        f"{n_eval} judged queries, profile {suite.model.evaluation.profile}",
        f"  ids: {result.overlap.describe()}",
    ] + ["  " + line for line in result.check_lines()]


def _retriever_table(result: Any) -> List[str]:
    metrics = result.suite.metrics
    header = ["retriever"] + list(metrics) + ["p50 ms", "p95 ms"]
    rows = []
    for name, r in result.retrievers.items():
        row = [name] + [_cell(r.evaluation.aggregate.get(m)) for m in metrics]
        row += [_ms(r.latency.p50 if r.latency else None), _ms(r.latency.p95 if r.latency else None)]
        rows.append(row)
    return ["  " + line for line in text_table(header, rows)]


def _latency_line(result: Any) -> List[str]:
    """How the latency columns were measured: which queries, how often, one BLAS thread."""
    timed = next((r.latency for r in result.retrievers.values() if r.latency and r.latency.queries), None)
    if timed is None:
        return []
    short = [f"  latency ERROR: {why}" for why in latency_sample_notes(result)]
    how = (
        "every query"
        if timed.queries == timed.of_queries
        else f"a seeded sample of {timed.queries} of {timed.of_queries} queries"
    )
    return [
        f"  latency: {how} timed, {timed.repetitions} pass(es) after {timed.warmup} warm-up "
        f"request(s), one BLAS thread (latency.max_queries: all times every query)"
    ] + short


def _stage_table(result: Any) -> List[str]:
    stages = stage_rows(result)
    if not stages:
        return []
    head = [
        "stage",
        "builds on",
        stages[0].metric,
        "vs bm25",
        "vs input",
        "mrr@10",
        "recall@window of inputs",
        "p95 ms",
        "p95 vs input",
    ]
    lines = ["  stages (deltas against bm25 and against each stage's best input):"]
    lines += ["    " + line for line in text_table(head, [_stage_cells(r.as_dict()) for r in stages])]
    return lines + [f"    {r.name}: {r.verdict}" for r in stages if r.verdict]


def _stage_cells(r: Mapping[str, Any]) -> List[str]:
    """A stage's row as the JSON report has it (``stages``), in plain text."""
    return [
        r["name"],
        "+".join(r["builds_on"]) or "-",
        _cell(r["value"]),
        delta(r["delta_vs_bm25"], plain=True),
        delta(r["delta_vs_input"], plain=True),
        _cell(r["mrr"]),
        candidate_recall(r) or "-",
        _ms(r["p95_ms"]),
        delta(r["delta_p95_ms"], 1, plain=True),
    ]


def _gate_lines(outcomes: Sequence[Any]) -> List[str]:
    if not outcomes:
        return []
    lines = ["  gates:"]
    for o in outcomes:
        mark = "PASS" if o.passed else "FAIL"
        show, unit = _GATE_FORMAT.get(o.floor.kind, (_cell, ""))
        lines.append(
            f"    {mark}  {o.floor.retriever} {o.floor.name} = {show(o.value)}{unit}"
            f" ({o.floor.op} {show(o.floor.threshold)}{unit})"
        )
    return lines


def _baseline_lines(regressions: Sequence[Any], baseline_note: str, what: str = "the baseline") -> List[str]:
    if not (regressions or baseline_note):
        return []
    lines = [f"  against {what}: {baseline_note}" if baseline_note else f"  against {what}:"]
    for reg in regressions:
        lines += _regression_lines(reg)
    return lines


def _regression_lines(reg: Any) -> List[str]:
    """A baseline verdict, with judged@10 then and now beside it (unjudged documents that
    entered), the metric on judged documents only when judged@10 fell, and its strata."""
    o = reg.overall
    mark = "PASS" if reg.passed else "FAIL"
    judged = getattr(reg, "judged", None)
    lines = [
        f"    {mark}  {reg.retriever} {reg.metric}: mean diff {o.mean_diff:+.4f} "
        f"(lower bound {o.ci_low:+.4f} at {o.confidence:.0%}, margin -{reg.max_drop:g}), "
        f"won/lost/tied {o.won}/{o.lost}/{o.tied}, p={o.p_randomization:.3g}, "
        + (
            f"judged@10 {judged.before:.4f} -> {judged.now:.4f}"
            if judged
            else "judged@10 not in the baseline"
        )
    ]
    judged_only = getattr(reg, "judged_only", None)
    if judged_only is not None:
        lines.append("          " + judged_only.describe())
    for tag, v in sorted(reg.strata.items()):
        if v.result is not None:
            lines.append(
                f"          [{tag}] {v.result.mean_diff:+.4f} over {v.result.n} queries, "
                f"Holm p(drop)={v.p_adjusted:.3g}: {'ok' if v.passed else 'REGRESSED'}"
            )
    return lines


def _ab_lines(result: Any) -> List[str]:
    lines = []
    conf = result.suite.model.latency.confidence
    for name, r in result.retrievers.items():
        if r.ab is not None and r.ab.paired()[0]:
            for q in ab_percentiles(result.suite.floors, name):
                lines.append(
                    "  latency A/B: "
                    + r.ab.result(q, confidence=conf).describe(f"{name} vs {r.ab.baseline}")
                    + f" ({r.ab.repetitions} interleaved rounds)"
                )
    return lines


def _notes(result: Any) -> List[str]:
    """Unjudged share, abstention, power, queries left out, warnings."""
    shares = percent_shares({n: result.unjudged_share(n) for n in result.retrievers})
    lines = [
        f"  unjudged in the top 10: {shares} (unjudged documents count as non-relevant: "
        f"a retriever surfacing new documents can look worse than it is; "
        f"--retrieval-export-unjudged writes them out for annotation)"
    ]
    if result.suite.model.unanswerable is not None:
        lines.append(_abstention_line(result))
    power = power_line(result)
    if power:
        lines.append(power)
    lines += _left_out_lines(result)
    lines += [f"  {line}" for line in sparse_precision_lines(result.backend_info)]
    for r in result.retrievers.values():
        lines += _retriever_notes(r)
    return lines + [f"  warning: {w}" for w in result.warnings]


def _left_out_lines(result: Any) -> List[str]:
    """One line: which judged queries the means are over and why the others are not
    (``measures.aggregate``; nothing when every judged query is averaged)."""
    from ..measures.aggregate import averaging_note

    first = next(iter(result.retrievers.values()), None)
    if first is None:
        return []
    ev = first.evaluation
    note = averaging_note(ev, default=ev.average_over)
    if not note:
        return []
    named = f": {', '.join(ev.no_relevant[:10])}" if ev.no_relevant and ev.average_over == "relevant" else ""
    return [f"  {note}{named}"]


def _retriever_notes(r: Any) -> List[str]:
    """A retriever's queries without hits and its warnings."""
    lines = []
    if getattr(r, "sparse", None) is not None:
        lines.append(f"  {r.name}: {r.sparse.line()}")
    ev = r.evaluation
    if ev.missing:
        absent = set(ev.not_in_run) if ev.average_over == "run" else set()
        counted = len([q for q in ev.missing if q not in absent])
        how = "scored 0, counted" if counted == len(ev.missing) else f"scored 0, {counted} counted"
        lines.append(f"  {r.name}: {len(ev.missing)} queries returned no hits ({how})")
    return lines + [f"  warning: {r.name}: {w}" for w in r.warnings]


def _abstention_line(result: Any) -> str:
    parts = []
    for n, r in result.retrievers.items():
        ab = r.abstention
        if ab is not None and ab.abstained:
            parts.append(
                f"{n} {ab.rate:.0%}"
                + (f" (wrongly on {ab.false_rate:.0%} of answerable)" if ab.false_abstained else "")
            )
    return "  abstention on unanswerable queries: " + (", ".join(parts) or "none tagged")


# ------------------------------------------------------------------ cells


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


def expectation_lines(checked: Sequence[Any]) -> List[str]:
    """The golden queries that ran (``expectations:``): a count, then each item's verdict and,
    for a broken one, what broke."""
    if not checked:
        return []
    failed = sum(1 for *_, broken in checked if broken)
    lines = [f"  golden queries: {len(checked) - failed} passed, {failed} failed"]
    for expectation, retriever, _hits, broken in checked:
        verdict = "FAIL" if broken else "PASS"
        detail = f": {'; '.join(broken)}" if broken else ""
        lines.append(f"    {verdict}  {retriever} expect[{expectation.name}]{detail}")
    return lines
