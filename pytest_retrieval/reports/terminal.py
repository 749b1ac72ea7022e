"""Report writers: the terminal summary table and the JSON report. No logic lives here."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .. import __version__

REPORT_VERSION = 1


def _cell(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.4f}" if isinstance(x, float) else str(x)


def _ms(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.1f}"


def _power_line(result: Any) -> str:
    """The smallest drop of the headline metric the suite can detect (95%, power 0.8)."""
    from ..stats.significance import estimate_sd_diff, minimum_detectable_drop

    metric = "ndcg@10" if "ndcg@10" in result.suite.metrics else result.suite.metrics[0]
    first = next(iter(result.retrievers.values()), None)
    if first is None or len(first.evaluation.evaluated) < 2:
        return ""
    values = first.evaluation.per_query[metric]
    reg = result.suite.model.regression
    confidence = reg.confidence if reg is not None else 0.95
    sd = estimate_sd_diff(values)
    if not sd > 0:
        return (
            f"  power: {first.name}'s {metric} has no per-query spread over {len(values)} "
            f"queries; the detectable drop cannot be estimated (add varied queries)"
        )
    mdd = minimum_detectable_drop(sd, len(values), confidence=confidence, power=0.8)
    caveat = " (a normal approximation: optimistic below 30 queries)" if len(values) < 30 else ""
    return (
        f"  power: with {len(values)} queries a {metric} drop of {mdd:.4f} is detected with "
        f"80% power at {confidence:.0%} confidence (estimated from {first.name}'s per-query "
        f"spread; more queries detect smaller drops){caveat}"
    )


def _ratio(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}"


def _delta(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:+.{digits}f}"


def _table(header: List[str], rows: List[List[str]]) -> List[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = lambda cells: "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
        for i, (c, w) in enumerate(zip(cells, widths))
    )
    return [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


def render_summary(
    result: Any, outcomes: Sequence[Any], regressions: Sequence[Any] = (), baseline_note: str = ""
) -> List[str]:
    suite = result.suite
    info = result.backend_info
    engine = info.get("backend", "?")
    detail = " ".join(str(info[k]) for k in ("engine", "version") if info.get(k))
    version = f" ({detail})" if detail else ""
    first = next(iter(result.retrievers.values()), None)
    n_eval = len(first.evaluation.evaluated) if first else 0
    lines = [
        f"{suite.name} ({suite.path.name}) on {engine}{version}: "
        f"{n_eval} judged queries, profile {suite.model.evaluation.profile}",
        f"  ids: {result.overlap.describe()}",
    ]
    header = ["retriever"] + list(suite.metrics) + ["p50 ms", "p95 ms"]
    rows = []
    for name, r in result.retrievers.items():
        row = [name] + [_cell(r.evaluation.aggregate.get(m)) for m in suite.metrics]
        row += [_ms(r.latency.p50 if r.latency else None), _ms(r.latency.p95 if r.latency else None)]
        rows.append(row)
    lines += ["  " + l for l in _table(header, rows)]
    from ..gates.stages import stage_rows

    stages = stage_rows(result)
    if stages:
        lines += ["  stages (deltas against bm25 and against each stage's best input):"]
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
        body = [
            [
                r.name,
                "+".join(r.builds_on) or "-",
                _cell(r.value),
                _delta(r.delta_vs_bm25),
                _delta(r.delta_vs_input),
                _cell(r.mrr),
                " ".join(f"{k}@{r.window}={v:.3f}" for k, v in r.candidate_recall.items()) or "-",
                _ms(r.p95_ms),
                _delta(r.delta_p95_ms, 1),
            ]
            for r in stages
        ]
        lines += ["    " + l for l in _table(head, body)]
        lines += [f"    {r.name}: {r.verdict}" for r in stages if r.verdict]
    if outcomes:
        lines.append("  gates:")
        for o in outcomes:
            mark = "PASS" if o.passed else "FAIL"
            unit = " ms" if o.floor.is_latency else ""
            show = _ms if o.floor.is_latency else (_ratio if o.floor.is_latency_ratio else _cell)
            lines.append(
                f"    {mark}  {o.floor.retriever} {o.floor.name} = {show(o.value)}{unit}"
                f" ({o.floor.op} {show(o.floor.threshold)}{unit})"
            )
    if regressions or baseline_note:
        lines.append(
            f"  against the baseline: {baseline_note}" if baseline_note else "  against the baseline:"
        )
        for reg in regressions:
            o = reg.overall
            mark = "PASS" if reg.passed else "FAIL"
            lines.append(
                f"    {mark}  {reg.retriever} {reg.metric}: mean diff {o.mean_diff:+.4f} "
                f"(lower bound {o.ci_low:+.4f} at {o.confidence:.0%}, margin -{reg.max_drop:g}), "
                f"won/lost/tied {o.won}/{o.lost}/{o.tied}, p={o.p_randomization:.3g}"
            )
            for tag, v in sorted(reg.strata.items()):
                if v.result is not None:
                    lines.append(
                        f"          [{tag}] {v.result.mean_diff:+.4f} over {v.result.n} queries, "
                        f"Holm p(drop)={v.p_adjusted:.3g}: {'ok' if v.passed else 'REGRESSED'}"
                    )
    for name, r in result.retrievers.items():
        if r.ab is not None and r.ab.paired()[0]:
            qs = sorted(
                {f.percentile for f in suite.floors if f.retriever == name and f.is_latency_ratio}
            ) or [95]
            conf = suite.model.latency.confidence
            for q in qs:
                lines.append(
                    "  latency A/B: "
                    + r.ab.result(q, confidence=conf).describe(f"{name} vs {r.ab.baseline}")
                    + f" ({r.ab.repetitions} interleaved rounds)"
                )
    shares = ", ".join(f"{n} {result.unjudged_share(n):.0%}" for n in result.retrievers)
    lines.append(
        f"  unjudged in the top 10: {shares} (unjudged documents count as non-relevant: "
        f"a retriever surfacing new documents can look worse than it is; "
        f"--retrieval-export-unjudged writes them out for annotation)"
    )
    if result.suite.model.unanswerable is not None:
        parts = []
        for n, r in result.retrievers.items():
            ab = r.abstention
            if ab is not None and ab.abstained:
                parts.append(
                    f"{n} {ab.rate:.0%}"
                    + (f" (wrongly on {ab.false_rate:.0%} of answerable)" if ab.false_abstained else "")
                )
        lines.append("  abstention on unanswerable queries: " + (", ".join(parts) or "none tagged"))
    power = _power_line(result)
    if power:
        lines.append(power)
    ev = first.evaluation if first else None
    if ev is not None and ev.no_relevant:
        lines.append(
            f"  {len(ev.no_relevant)} queries without a relevant judgment are left out "
            f"of the averages: {', '.join(ev.no_relevant[:10])}"
        )
    for r in result.retrievers.values():
        if r.evaluation.missing:
            lines.append(
                f"  {r.name}: {len(r.evaluation.missing)} queries returned no hits (scored 0, counted)"
            )
        for w in r.warnings:
            lines.append(f"  warning: {r.name}: {w}")
    for w in result.warnings:
        lines.append(f"  warning: {w}")
    return lines


def suite_report(state: Any) -> Dict[str, Any]:
    from ..gates.stages import stage_rows
    from .details import report_extras

    if state.result is None:
        return {
            "suite": state.suite.name,
            "file": str(state.suite.path),
            "error": str(state.error) if state.error else "not run",
            **report_extras(state),
        }
    result = state.result
    retrievers = []
    for name, r in result.retrievers.items():
        ev = r.evaluation
        per_query: Dict[str, Dict[str, float]] = {}
        for metric, values in ev.per_query.items():
            for qid, v in values.items():
                per_query.setdefault(qid, {})[metric] = v
        retrievers.append(
            {
                "name": name,
                "type": r.kind,
                "metrics": dict(ev.aggregate),
                "latency_ms": r.latency.as_dict() if r.latency else None,
                "latency_ab": _ab_dict(result, name, r),
                "per_query": per_query,
                "queries_without_hits": list(ev.missing),
                "warnings": list(r.warnings),
            }
        )
    first = next(iter(result.retrievers.values()), None)
    return {
        "suite": result.suite.name,
        "file": str(result.suite.path),
        "backend": result.backend_info,  # never holds credentials (backends describe() only facts)
        "profile": result.suite.model.evaluation.profile,
        "ties": result.suite.model.evaluation.ties,
        "overlap": {
            "queries": result.overlap.queries,
            "qrels": result.overlap.qrels,
            "both": result.overlap.both,
            "run": result.overlap.run,
        },
        "queries": {
            "judged": len(first.evaluation.evaluated) if first else 0,
            "no_relevant": list(first.evaluation.no_relevant) if first else [],
        },
        "retrievers": retrievers,
        "stages": [r.as_dict() for r in stage_rows(result)],
        "gates": [o.as_dict() for o in state.outcomes],
        "regressions": [r.as_dict() for r in getattr(state, "regressions", [])],
        "warnings": list(result.warnings),
        **report_extras(state),
    }


def _ab_dict(result: Any, name: str, r: Any) -> Optional[Dict[str, Any]]:
    """The interleaved A/B latency of a retriever with a ratio ceiling (per gated percentile)."""
    if r.ab is None or not r.ab.paired()[0]:
        return None
    conf = result.suite.model.latency.confidence
    qs = sorted(
        {f.percentile for f in result.suite.floors if f.retriever == name and f.is_latency_ratio}
    ) or [95]
    out: Dict[str, Any] = {
        "baseline": r.ab.baseline,
        "rounds": r.ab.repetitions,
        "queries": len(r.ab.baseline_ms),
        "samples": len(r.ab.paired()[0]),
        "statistic": "all samples, paired by (query, round)",
    }
    for q in qs:
        v = r.ab.result(q, confidence=conf)
        out[f"p{q}"] = {
            "baseline_ms": v.baseline,
            "current_ms": v.current,
            "ratio": v.ratio,
            "lower": v.lo,
            "upper": v.hi,
            "confidence": v.confidence,
        }
    return out


def write_json_report(path: Path, states: Sequence[Any]) -> None:
    doc = {
        "version": REPORT_VERSION,
        "plugin_version": __version__,
        "suites": [suite_report(s) for s in states],
    }
    from ..fileio import atomic_write

    text = json.dumps(doc, indent=2, sort_keys=False, allow_nan=False, default=_json_default)
    atomic_write(path, lambda fh: fh.write(text + "\n"), fsync=False)


def _json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_unjudged(path: Path, states: Sequence[Any], k: int = 10) -> int:
    """JSONL annotation queue: every (query, doc) in any retriever's top k with no judgment."""
    from ..fileio import atomic_write

    rows: Dict[tuple, Dict[str, Any]] = {}
    for state in states:
        result = state.result
        if result is None:
            continue
        texts = result.judgments.queries
        for name in result.retrievers:
            for qid, doc, rank in result.unjudged(name, k):
                row = rows.setdefault(
                    (result.suite.name, qid, doc),
                    {
                        "suite": result.suite.name,
                        "query_id": qid,
                        "query": texts.get(qid, ""),
                        "doc_id": doc,
                        "retrievers": {},
                    },
                )
                row["retrievers"][name] = rank
    atomic_write(path, lambda fh: fh.writelines(json.dumps(r) + "\n" for r in rows.values()), fsync=False)
    return len(rows)
