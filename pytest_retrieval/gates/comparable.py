"""Which of a baseline's per-query values are still like with like (issue #28). Pure, no I/O.

A query's baseline value can be compared with this run's only while the query's text and its
judgments are the ones it was measured with: the fingerprint's ``query_hashes`` say so, query
by query (:func:`.fingerprint.query_hashes`). A changed corpus or index is the system under
test and never leaves a query out. The comparison goes on over the queries that did not
change, says how many were left out and why, and is refused only when too few remain:

* fewer than ``regression.min_compared`` (default 0.8) of the baseline's queries of the gate;
* or the queries left out are what makes the gate blind: the baseline's own per-query spread
  says the whole set detects a drop of ``max_drop`` (80% power, the suite's confidence: the
  summary's power line) and the remaining set does not. A suite already too small to detect
  ``max_drop`` with every query is not refused for losing a few (its power line says so).
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional

__all__ = ["left_out_queries", "left_out_summary", "too_few_remain"]

#: how many query ids a left-out summary names per reason
_NAMED = 5


def left_out_queries(old: Mapping[str, str], new: Mapping[str, str]) -> Dict[str, str]:
    """``{qid: why}`` of the baseline's queries (``old``: its ``query_hashes``) that cannot be
    compared with this run's (``new``): text changed, judgments changed, or no longer judged."""
    out: Dict[str, str] = {}
    for qid, before in old.items():
        now = new.get(qid)
        if now is None:
            out[qid] = "no longer judged"
        elif now != before:
            text_changed = now.split(":")[0] != str(before).split(":")[0]
            judgments_changed = now.split(":")[-1] != str(before).split(":")[-1]
            out[qid] = _why(text_changed, judgments_changed)
    return out


def _why(text_changed: bool, judgments_changed: bool) -> str:
    if text_changed and judgments_changed:
        return "text and judgments changed"
    return "text changed" if text_changed else "judgments changed"


def left_out_summary(left_out: Mapping[str, str], total: int, *, of: str = "baseline") -> str:
    """``compared on 95 of 100 baseline queries; left out: 3 judgments changed (q1, q7, q9),
    2 no longer judged (q4, q5)``; "" when none was left out."""
    if not left_out:
        return ""
    by_reason: Dict[str, List[str]] = {}
    for qid, why in sorted(left_out.items()):
        by_reason.setdefault(why, []).append(qid)
    parts = []
    for why, qids in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(_shown_id(q) for q in qids[:_NAMED]) + (", ..." if len(qids) > _NAMED else "")
        parts.append(f"{len(qids)} {why} ({shown})")
    kept = max(total - len(left_out), 0)
    return f"compared on {kept} of {total} {of} queries; left out: " + ", ".join(parts)


def _shown_id(qid: str) -> str:
    """A query id as one printable token (a control character in an id never breaks a line)."""
    return qid if qid.isprintable() else repr(qid)


def too_few_remain(
    before: Mapping[str, float],
    left_out: Mapping[str, str],
    *,
    min_compared: float,
    max_drop: float,
    confidence: float,
) -> Optional[str]:
    """Why the gate over ``before`` (the baseline's ``{qid: value}``) minus ``left_out``
    cannot be trusted, or None (see the module doc)."""
    dropped = [q for q in before if q in left_out]
    if not dropped:
        return None
    kept = {q: v for q, v in before.items() if q not in left_out}
    total = len(before)
    if len(kept) < min_compared * total:
        return (
            f"only {len(kept)} of the baseline's {total} queries are unchanged "
            f"(fewer than regression.min_compared {min_compared:g})"
        )
    return _blind(before, kept, max_drop, confidence)


def _blind(
    before: Mapping[str, float], kept: Mapping[str, float], max_drop: float, confidence: float
) -> Optional[str]:
    """Why the queries left out make the gate blind to ``max_drop``, or None."""
    from ..stats.power import estimate_sd_diff, minimum_detectable_drop

    if len(kept) < 2:
        return f"only {len(kept)} of the baseline's {len(before)} queries are unchanged"
    whole = estimate_sd_diff(list(before.values()))
    sd = estimate_sd_diff(list(kept.values()))
    if not (whole > 0 and sd > 0):
        return None
    could = minimum_detectable_drop(whole, len(before), confidence=confidence)
    can = minimum_detectable_drop(sd, len(kept), confidence=confidence)
    if could <= max_drop < can:
        return (
            f"the {len(kept)} unchanged queries detect a drop of {can:.4f} with 80% power, "
            f"no longer the allowed drop {max_drop:g} (all {len(before)} did: {could:.4f})"
        )
    return None
