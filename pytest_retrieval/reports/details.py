"""What the JSON report holds beyond the numbers, so every renderer (Markdown, HTML,
OpenMetrics, ``compare``) reads the JSON report alone: each query's text, tags and relevant
judgments, the top-k doc ids per retriever (and the baseline's), document titles, latency
samples, the unjudged share, the gated metrics and every item's outcome and message.

``report_extras(state)`` is merged into each suite's entry of the JSON report;
``record_item`` is called by the plugin for every gate item's report.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Set, Tuple

#: Latency samples kept per retriever (more are reduced to this many quantiles).
MAX_SAMPLES = 1000
TITLE_CHARS = 120
MESSAGE_CHARS = 6000


def record_item(item: Any, call: Any, report: Any) -> Optional[str]:
    """Keep a gate item's outcome and message on its suite state (``state.items``): passed,
    failed (a gate not met), error (the run or the gate could not be judged) or skipped.
    Returns that outcome (None for a phase that says nothing: a teardown, a setup that passed)."""
    if call.when == "teardown" or (call.when == "setup" and report.passed):
        return None
    outcome, message = _outcome(call, report)
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS] + f"\n... ({len(message) - MESSAGE_CHARS} more characters)"
    items = getattr(item.state, "items", None)
    if items is None:
        items = item.state.items = []
    record = {"retriever": item.parent.name, "gate": item.name, "outcome": outcome, "message": message}
    gate: Any = getattr(item, "floor", None) or getattr(item, "gate", None)  # a floor or a baseline gate
    if getattr(gate, "team", ""):  # a team threshold file's item: its team and owners
        record["team"] = gate.team
    if getattr(gate, "owners", ()):
        record.update(owners=list(gate.owners), mention=gate.mention)
    items.append(record)
    return outcome


def _outcome(call: Any, report: Any) -> Tuple[str, str]:
    """(outcome, message) of one phase's report: a failed assertion in the call is a failed
    gate, anything else that went wrong an error."""
    if report.skipped:
        return "skipped", _skip_reason(report.longrepr)
    if report.passed:
        return "passed", ""
    is_gate = call.when == "call" and call.excinfo is not None and call.excinfo.errisinstance(AssertionError)
    return ("failed" if is_gate else "error"), report.longreprtext or ""


def _skip_reason(longrepr: Any) -> str:
    message = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
    return message[len("Skipped: ") :] if message.startswith("Skipped: ") else message


def _title(doc: Any) -> Optional[str]:
    fields = getattr(doc, "fields", None) or {}
    text = fields.get("title") or next((v for v in fields.values() if isinstance(v, str) and v), None)
    if not text:
        return None
    text = " ".join(str(text).split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def _samples(samples: List[float]) -> List[float]:
    xs = sorted(float(x) for x in samples if x is not None and math.isfinite(x))
    if len(xs) > MAX_SAMPLES:  # evenly spaced order statistics: the same CDF, smaller
        xs = [xs[round(i * (len(xs) - 1) / (MAX_SAMPLES - 1))] for i in range(MAX_SAMPLES)]
    return [float(f"{x:.4g}") for x in xs]


def _gated(suite: Any) -> List[Dict[str, Any]]:
    out = []
    for f in suite.floors:
        entry = {
            "retriever": f.retriever,
            "metric": f.name,
            "kind": f.kind.value if hasattr(f.kind, "value") else str(f.kind),
            "op": f.op,
            "threshold": f.threshold,
            "origin": f.origin,
        }
        if f.team:
            entry["team"] = f.team
        out.append(entry)
    for g in suite.regression:
        gate = {"retriever": g.retriever, "metric": g.metric, "kind": "regression", "max_drop": g.max_drop}
        gate["origin"] = g.origin
        if g.team:
            gate["team"] = g.team
        out.append(gate)
    return out


def report_extras(state: Any) -> Dict[str, Any]:
    """The suite's additions to the JSON report (see the module doc). Never raises: a
    problem is reported under ``details_error`` (reports must not crash the run)."""
    extras: Dict[str, Any] = {"items": list(getattr(state, "items", None) or [])}
    try:
        extras["gated"] = _gated(state.suite)
        if state.result is not None:
            extras.update(_result_extras(state))
    except Exception as exc:  # pragma: no cover - defensive: reports never crash the run
        extras["details_error"] = f"{type(exc).__name__}: {exc}"
    return extras


def _result_extras(state: Any) -> Dict[str, Any]:
    from ..gates.rankings import ranking_depth, top_ids
    from .power import power_line
    from .stability import stability_report

    result = state.result
    suite = result.suite
    k = ranking_depth(suite)
    first = next(iter(result.retrievers.values()), None)
    qids = list(first.evaluation.evaluated) if first else []
    rankings = {name: top_ids(r.run, qids, k) for name, r in result.retrievers.items()}
    baseline_doc = _baseline_doc(state, qids)
    base_tops = [entry["top"] for entry in (baseline_doc or {}).get("retrievers", {}).values()]
    queries, relevant = _query_details(result.judgments, qids, list(rankings.values()) + base_tops)
    return {
        "metrics": list(suite.metrics),
        "k": k,
        "query_details": queries,
        "titles": _titles(result.judgments, list(rankings.values()) + base_tops, relevant),
        "rankings": rankings,
        # the canary queries' top k (judgments.canary): a later run's stability against this one
        "canary_rankings": {
            name: top_ids(result.canary_runs.get(name, {}), result.canary, k) for name in result.retrievers
        }
        if getattr(result, "canary", None)
        else None,
        "latency_samples_ms": {
            name: _samples(r.latency.samples_ms) for name, r in result.retrievers.items() if r.latency
        },
        "unjudged_share": {name: result.unjudged_share(name) for name in result.retrievers},
        "power": power_line(result).strip(),
        "baseline": baseline_doc,
        "stability": stability_report(state),
    }


def _baseline_doc(state: Any, qids: List[str]) -> Optional[Dict[str, Any]]:
    """The baseline's note and, when there is one, its values and top lists for these queries."""
    cached = _baseline_of(state)
    if cached is None:
        return None
    baseline, note = cached
    doc: Dict[str, Any] = {"note": note}
    if baseline is None:
        return doc
    from ..gates.baseline import baseline_path

    suite, result = state.result.suite, state.result

    def entry_doc(entry: Dict[str, Any]) -> Dict[str, Any]:
        top = entry.get("top", {})
        return {
            "aggregate": {m: v for m, v in entry.get("aggregate", {}).items() if m in suite.metrics},
            "per_query": {m: v for m, v in entry.get("per_query", {}).items() if m in suite.metrics},
            "top": {q: list(top.get(q, [])) for q in qids if q in top},
        }

    doc.update(
        file=str(baseline_path(suite)),
        created=baseline.created,
        plugin_version=baseline.plugin_version,
        retrievers={
            name: entry_doc(entry) for name, entry in baseline.retrievers.items() if name in result.retrievers
        },
    )
    return doc


def _query_details(
    js: Any, qids: List[str], tops: List[Dict[str, List[str]]]
) -> Tuple[Dict[str, Any], Set[str]]:
    """Per query: its text, tags and the judgments worth showing (relevant, or in a ranking)."""
    queries: Dict[str, Dict[str, Any]] = {}
    relevant: Set[str] = set()
    for q in qids:
        judged = js.qrels.get(q, {})
        if all(g > 0 for g in judged.values()):  # every one is kept: no need of the rankings
            keep = {d: int(g) for d, g in judged.items()}
        else:
            in_rankings = {d for top in tops for d in top.get(q, ())}
            keep = {d: int(g) for d, g in judged.items() if g > 0 or d in in_rankings}
        relevant.update(d for d, g in keep.items() if g > 0)
        queries[q] = {"text": js.queries.get(q, ""), "tags": list(js.tags.get(q, ())), "judged": keep}
    return queries, relevant


def _titles(js: Any, tops: List[Dict[str, List[str]]], relevant: Set[str]) -> Dict[str, str]:
    """Titles of the documents shown (the top ``SHOWN`` now and in the baseline) and the relevant ones."""
    from ..gates.rankings import SHOWN

    if not js.judged_corpus:
        return {}
    wanted = set(relevant)
    for top in tops:
        for docs in top.values():
            wanted.update(docs[:SHOWN])
    titles: Dict[str, str] = {}
    for doc in js.judged_corpus:
        if doc.doc_id in wanted:
            t = _title(doc)
            if t:
                titles[doc.doc_id] = t
    return titles


def _baseline_of(state: Any) -> Optional[Tuple[Any, str]]:
    """(Baseline, note) if the run already read its baseline, else None (never read here)."""
    return getattr(state, "loaded_baseline", None)
