"""A cumulative budget against a pinned run of the history (issue #37). Pure, no I/O: the store
is read at the edge (pytest_plugin/state.py), the record handed here.

The baseline gate compares each run with the last accepted one, so a series of accepted small
drops, each within ``max_drop``, adds up unseen. ``regression.reference: {run: v1.0,
max_total_drop: {ndcg@10: 0.02}}`` compares every run with one stored run that does not move:
the same paired statistics (:func:`.regression.judge_against_baseline`), the same comparability
rules (:func:`.baseline.comparable`: like-with-like fingerprints, only the queries whose text
and judgments are unchanged, the others named) and the same never-silent rules, stricter:

* the stored run is read into a :class:`.baseline.Baseline` (:func:`reference_from_record`), so
  both gates take their reference values from one abstraction;
* a reference that is missing (no such run, no such suite in it, no values for the gate's
  retriever and metric), stored as partial (unless ``allow_partial``), of another suite, whose
  inputs changed, or with too few unchanged queries left is an error, never a skip: a pinned
  reference that can no longer be compared must be re-pinned by someone, not passed over.

The record is the JSON report of a run (reports/json_report.py) with its ``run`` section
(history/record.py): ``suites[i]`` holds the suite's ``fingerprint``, per retriever its
``per_query`` values (``{qid: {metric: value}}``) and its ``rankings`` (top ids per query).
"""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Tuple

from ..errors import ConfigError
from .baseline import Baseline, comparable
from .comparable import too_few_remain

__all__ = ["REFERENCE_HINT", "reference_from_record", "comparable_reference", "judge_against_reference"]

#: what to do about a reference that cannot be compared
REFERENCE_HINT = "pin another run in regression.reference.run (pytest-retrieval history lists them)"


def _fail(ref: str, what: str) -> ConfigError:
    return ConfigError(f"regression.reference run {ref!r}: {what}; {REFERENCE_HINT}")


def reference_from_record(
    record: Mapping[str, Any], suite: str, *, ref: str, allow_partial: bool = False
) -> Baseline:
    """The suite's per-query values, top lists and fingerprint in the stored run ``record``
    (named ``ref`` by the suite file), as a :class:`.baseline.Baseline`. ``ConfigError`` for a
    partial run (unless ``allow_partial``), a run without this suite, a suite that did not run
    in it, and values that are not finite numbers."""
    run = record.get("run")
    if not isinstance(run, Mapping):
        raise _fail(ref, "the stored record has no 'run' section (not a run record)")
    if run.get("partial") and not allow_partial:
        raise _fail(
            ref,
            "stored as partial (some of its gates got no verdict), never a reference unless "
            "regression.reference.allow_partial is true",
        )
    entry = _suite_entry(record, suite, ref)
    fingerprint = entry.get("fingerprint")
    if not isinstance(fingerprint, Mapping) or not fingerprint:
        raise _fail(ref, f"suite {suite!r} has no fingerprint in it: its inputs cannot be compared")
    rankings = entry.get("rankings")
    rankings = rankings if isinstance(rankings, Mapping) else {}
    retrievers = {
        str(r.get("name")): _retriever(r, rankings.get(r.get("name")) or {}, ref)
        for r in entry.get("retrievers") or []
        if isinstance(r, Mapping)
    }
    _add_top_depth(retrievers, rankings, entry.get("k"))
    return Baseline(
        suite=suite,
        created=str(run.get("time") or run.get("created") or ""),
        plugin_version=str(record.get("plugin_version") or ""),
        fingerprint=dict(fingerprint),
        retrievers=retrievers,
    )


def _add_top_depth(retrievers: Dict[str, Dict[str, Any]], rankings: Mapping[str, Any], depth: Any) -> None:
    """``top_depth``: the depth ``k`` the record's rankings were cut at (reports/details.py), for
    the stability measures (:meth:`.baseline.Baseline.stored_rankings`)."""
    if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0:
        for name in set(retrievers) & set(rankings):
            retrievers[name]["top_depth"] = depth


def _suite_entry(record: Mapping[str, Any], suite: str, ref: str) -> Mapping[str, Any]:
    entries = [s for s in record.get("suites") or [] if isinstance(s, Mapping)]
    mine = [s for s in entries if s.get("suite") == suite]
    if not mine:
        names = ", ".join(sorted(repr(str(s.get("suite"))) for s in entries)) or "none"
        raise _fail(ref, f"has no suite {suite!r} (its suites: {names}): a run of another suite")
    if len(mine) > 1:
        raise _fail(ref, f"holds suite {suite!r} {len(mine)} times: which one is meant is unclear")
    entry = mine[0]
    if entry.get("error") is not None or not entry.get("retrievers"):
        raise _fail(ref, f"suite {suite!r} did not run in it ({entry.get('error') or 'no retrievers'})")
    return entry


def _retriever(entry: Mapping[str, Any], top: Mapping[str, Any], ref: str) -> Dict[str, Any]:
    """A retriever's record entry in the baseline's shape: ``per_query`` by metric, ``top``."""
    by_metric: Dict[str, Dict[str, float]] = {}
    per_query = entry.get("per_query")
    if not isinstance(per_query, Mapping):
        raise _fail(ref, f"retriever {entry.get('name')!r} has no per-query values")
    for qid, values in per_query.items():
        for metric, v in (values or {}).items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise _fail(
                    ref, f"{entry.get('name')} :: {metric} of query {qid!r} is {v!r}, not a finite number"
                )
            by_metric.setdefault(str(metric), {})[str(qid)] = float(v)
    tops = {str(q): [str(d) for d in docs] for q, docs in top.items() if isinstance(docs, list)}
    return {"per_query": by_metric, "top": tops}


def comparable_reference(reference: Baseline, result: Any, *, ref: str, run_id: str) -> Tuple[Baseline, str]:
    """(reference, note) with ``reference.left_out`` the queries whose text or judgments changed
    since the stored run (:func:`.baseline.comparable`); inputs that changed are an error."""
    checked, note = comparable(
        reference,
        result,
        what=f"regression.reference run {ref!r}",
        where=f"reference run {_short(run_id)} ({ref})",
        file=str(result.suite.path),
        mismatch_is_error=True,
        hint=REFERENCE_HINT,
        queries_of="reference",
    )
    assert checked is not None  # mismatch_is_error: refused with an error, never None
    return checked, note


def judge_against_reference(result: Any, reference: Baseline, gate: Any, *, ref: str, run_id: str) -> Any:
    """The reference gate's ``regression.RegressionOutcome``: the baseline gate's comparison,
    against the stored run. No values for the gate, or too few unchanged queries, is an error."""
    from .regression import judge_against_baseline

    before = reference.per_query(gate.retriever, gate.metric)
    if before is None:
        what = (
            f"retriever {gate.retriever!r}"
            if gate.retriever not in reference.retrievers
            else f"{gate.metric} of {gate.retriever!r}"
        )
        raise _fail(ref, f"has no {what} (added since it was stored?)")
    reg = result.suite.model.regression
    why = too_few_remain(
        before,
        reference.left_out,
        min_compared=reg.min_compared,
        max_drop=gate.max_drop,
        confidence=reg.confidence,
    )
    if why is not None:
        raise _fail(ref, f"the queries' texts or judgments changed since it: {why}")
    against = f"reference run {_short(run_id)} ({ref})"
    out = judge_against_baseline(
        result, reference, gate.retriever, gate.metric, gate.max_drop, against=against
    )
    out.reference = {"run": run_id, "ref": ref, "created": reference.created}
    return out


def _short(run_id: str) -> str:
    return run_id[:12]
