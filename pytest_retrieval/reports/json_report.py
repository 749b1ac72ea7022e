"""The JSON report (``--retrieval-report``): every suite's metrics, per-query values, stages,
gates and baseline comparisons. A writer only: the verdicts come from ``gates``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple

from .. import __version__
from ..fileio import atomic_write
from ..gates.floors import ab_percentiles
from ..gates.stages import stage_rows
from ..redaction import redact

__all__ = ["REPORT_VERSION", "suite_report", "write_json_report"]

#: 1: the report up to issue #37. 2: each suite's ``fingerprint`` (gates/fingerprint.py), and
#: the ``run`` section of a run record (history/record.py: where and when it ran, partial).
#: ``report`` and ``compare`` read both; a report of a newer version is refused with one line.
REPORT_VERSION = 2


def write_json_report(path: Path, states: Sequence[Any]) -> None:
    doc = {
        "version": REPORT_VERSION,
        "plugin_version": __version__,
        "suites": [suite_report(s) for s in states],
    }
    doc, non_finite = finite_only(doc)
    if non_finite:  # NaN is not JSON: such a value is null and named here as an error
        doc["errors"] = [f"{where}: not a finite number" for where in non_finite]
    text = json.dumps(doc, indent=2, sort_keys=False, allow_nan=False, default=json_default)

    def write(fh: TextIO) -> None:
        fh.write(text + "\n")

    atomic_write(path, write, fsync=False)


def finite_only(value: Any, where: str = "") -> Tuple[Any, List[str]]:
    """``value`` with every NaN / infinity replaced by None, and where each one was."""
    import math

    found: List[str] = []

    def walk(v: Any, at: str) -> Any:
        if isinstance(v, dict):
            return {k: walk(x, f"{at}.{k}" if at else str(k)) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x, f"{at}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, float) and not math.isfinite(v):
            found.append(at)
            return None
        try:
            import numpy as np

            if isinstance(v, np.floating) and not np.isfinite(v):
                found.append(at)
                return None
        except ImportError:  # pragma: no cover
            pass
        return v

    return walk(value, where), found


def json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def suite_report(state: Any) -> Dict[str, Any]:
    from .details import report_extras

    if state.result is None:
        return {
            "suite": state.suite.name,
            "file": str(state.suite.path),
            "error": str(state.error) if state.error else "not run",
            **report_extras(state),
        }
    from ..gates.verdicts import latency_sample_notes

    result = state.result
    retrievers = [_retriever_report(result, name, r) for name, r in result.retrievers.items()]
    first = next(iter(result.retrievers.values()), None)
    return {
        "suite": result.suite.name,
        "file": str(result.suite.path),
        "backend": result.backend_info,  # never holds credentials (backends describe() only facts)
        "profile": result.suite.model.evaluation.profile,
        "ties": result.suite.model.evaluation.ties,
        # the checks as the summary words them (their text reads several objects' facts)
        "judgment_checks": {**result.checks_dict(), "lines": result.check_lines()},
        "overlap": {
            "queries": result.overlap.queries,
            "qrels": result.overlap.qrels,
            "both": result.overlap.both,
            "run": result.overlap.run,
        },
        "queries": _queries_report(first),
        "retrievers": retrievers,
        "stages": [r.as_dict() for r in stage_rows(result)],
        "gates": [o.as_dict() for o in state.outcomes],
        "regressions": [r.as_dict() for r in getattr(state, "regressions", [])],
        "references": [r.as_dict() for r in getattr(state, "references", [])],  # the pinned run's
        "reference": {"note": getattr(state, "reference_note", "")},  # what its comparison said
        "expectations": expectation_records(getattr(state, "expectations", [])),
        "warnings": list(result.warnings),
        # retrievers that failed in the run (their gates are errors), each error said once
        "failed_retrievers": {name: redact(str(exc)) for name, exc in getattr(result, "failed", {}).items()},
        "latency_notes": latency_sample_notes(result),  # latency gates timed too few times
        "unanswerable": result.suite.model.unanswerable is not None,
        "runs": max(getattr(state, "runs", 1), 1),  # more than 1: an xdist --dist mode split the suite
        "retries": _retries_report(result),
        # the engine's _rank_eval beside the plugin's values (evaluation.rank_eval); None: not asked
        "rank_eval": result.rank_eval.as_dict() if getattr(result, "rank_eval", None) is not None else None,
        "fingerprint": _fingerprint(result),
        **report_extras(state),
    }


def _fingerprint(result: Any) -> Optional[Dict[str, Any]]:
    """The suite's input fingerprint (what produced the numbers), as a baseline keeps it; None
    when it cannot be taken (reports never crash the run)."""
    from ..gates.fingerprint import CANARY_HASHES, fingerprint_from_result, text_hashes

    try:
        fp = fingerprint_from_result(result)
        if getattr(result, "canary", None):  # tells a canary query's text changed (stability: issue #33)
            fp[CANARY_HASHES] = text_hashes(result.canary)
        return fp
    except Exception:  # noqa: BLE001 - the fingerprint is information, the numbers stand
        return None


def _retries_report(result: Any) -> Dict[str, Any]:
    """The engine requests retried (HTTP 429, a node that left...): in all, and per pass by reason."""
    passes = {k: dict(v) for k, v in (getattr(result, "retries", None) or {}).items()}
    return {"total": sum(sum(v.values()) for v in passes.values()), **passes}


def _retriever_report(result: Any, name: str, r: Any) -> Dict[str, Any]:
    """A retriever's entry: its aggregates, latency, per-query values (query -> metric ->
    value), queries without hits and warnings."""
    ev = r.evaluation
    per_query: Dict[str, Dict[str, float]] = {}
    for metric, values in ev.per_query.items():
        for qid, v in values.items():
            per_query.setdefault(qid, {})[metric] = v
    return {
        "name": name,
        "type": r.kind,
        "metrics": dict(ev.aggregate),
        "latency_ms": r.latency.as_dict() if r.latency else None,
        "latency_ab": _ab_dict(result, name, r),
        "per_query": per_query,
        "queries_without_hits": list(ev.missing),
        "queries_not_in_run": list(ev.not_in_run),
        "abstention": _abstention_report(r.abstention),
        "warnings": list(r.warnings),
        "sparse": r.sparse.as_dict() if getattr(r, "sparse", None) is not None else None,
    }


def _abstention_report(ab: Any) -> Optional[Dict[str, Any]]:
    """Abstention on the unanswerable queries (and, wrongly, on answerable ones), or None."""
    if ab is None:
        return None
    import math

    def finite(x: float) -> Optional[float]:
        return x if math.isfinite(x) else None  # no unanswerable (answerable) query: no rate

    return {
        "rate": finite(ab.rate),
        "unanswerable": len(ab.abstained),
        "abstained": sum(1 for a in ab.abstained.values() if a),
        "false_rate": finite(ab.false_rate),
        "answerable": len(ab.false_abstained),
        "false_abstained": sum(1 for a in ab.false_abstained.values() if a),
    }


def _queries_report(first: Any) -> Dict[str, Any]:
    """How many queries were judged, and those without a relevant judgment, as the first
    retriever's evaluation counts them."""
    if first is None:
        return {"judged": 0, "no_relevant": []}
    ev = first.evaluation
    return {
        "judged": len(ev.evaluated),  # the queries averaged (measures.aggregate)
        "no_relevant": list(ev.no_relevant),
        "average_over": ev.average_over,
        "of_judged": ev.judged,
    }


def _ab_dict(result: Any, name: str, r: Any) -> Optional[Dict[str, Any]]:
    """The interleaved A/B latency of a retriever with a ratio ceiling (per gated percentile)."""
    if r.ab is None or not r.ab.paired()[0]:
        return None
    conf = result.suite.model.latency.confidence
    out: Dict[str, Any] = {
        "baseline": r.ab.baseline,
        "rounds": r.ab.repetitions,
        "queries": len(r.ab.baseline_ms),
        "samples": len(r.ab.paired()[0]),
        "statistic": "all samples, paired by (query, round)",
    }
    for q in ab_percentiles(result.suite.floors, name):
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


def expectation_records(checked: Sequence[Any]) -> List[Dict[str, Any]]:
    """Every golden-query item that ran: the expectation, the retriever, passed or what broke,
    and the actual top k (rank, doc id, score, grade, title)."""
    out = []
    for expectation, retriever, hits, broken in checked:
        top = [{k: v for k, v in vars(h).items() if v is not None} for h in list(hits)[: expectation.shown_k]]
        out.append(
            {
                "retriever": retriever,
                **expectation.as_dict(),
                "passed": not broken,
                "broken": list(broken),
                "top": top,
            }
        )
    return out
