"""Ranking diffs: what moved between the baseline's top k and this run's, per query. Pure.

Used by the regression gate's failure message, the Markdown summary and the HTML report, so
the three say the same thing: relevant documents that left the top k, documents that entered
(with their grade, or "unjudged"), and rank moves of judged documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

#: The deepest ranking a baseline keeps per query for the relevance gates' diffs.
MAX_DEPTH = 20
#: The deepest ranking a baseline (and a run record) keeps per query for the stability measures
#: (``rbo@100``: issue #33).
STABILITY_MAX_DEPTH = 100
#: The rankings shown side by side (and diffed) in every report.
SHOWN = 10


def ranking_depth(suite: Any) -> int:
    """k for the rankings kept in baselines and reports: the deepest gated cut-off (floors and
    regression metrics; a metric without one, e.g. ``map``, counts as the maximum), at least
    :data:`SHOWN` and at most :data:`MAX_DEPTH`; or deeper, up to :data:`STABILITY_MAX_DEPTH`,
    for the suite's stability measures (``suite.stability_metrics``: metric names such as
    ``rbo@100``, when the suite has them)."""
    from ..measures.metrics import parse_metric

    names = [f.metric for f in getattr(suite, "floors", ())]
    names += [
        metric for _, metric, *_ in getattr(suite, "regression", ())
    ]  # (retriever, metric, max_drop, ...)
    deepest = SHOWN
    for name in names:
        name = name[len("lift@") :] if name.startswith("lift@") else name
        try:
            m = parse_metric(name)
        except ValueError:  # latency, abstention: no ranking depth
            continue
        deepest = max(deepest, m.k if m.k is not None else MAX_DEPTH)
    return max(min(deepest, MAX_DEPTH), stability_depth(getattr(suite, "stability_metrics", None) or ()))


def stability_depth(metrics: Iterable[Any]) -> int:
    """The depth the comparison measures among ``metrics`` need (their deepest k; 1 for
    ``top1_changed``), at most :data:`STABILITY_MAX_DEPTH`; 0 without one. ``ValueError`` for a
    deeper k, which no baseline stores."""
    from ..measures.metrics import parse_metric
    from ..measures.registry import BY_NAME

    deepest = 0
    for name in metrics:
        m = parse_metric(name)
        if not BY_NAME[m.name].compares_rankings:
            continue
        k = 1 if m.k is None else m.k
        if k > STABILITY_MAX_DEPTH:
            raise ValueError(
                f"{m}: a stability measure compares at most the top {STABILITY_MAX_DEPTH} (what a baseline stores)"
            )
        deepest = max(deepest, k)
    return deepest


def top_ids(run: Mapping[str, Any], qids: Iterable[str], k: int) -> Dict[str, List[str]]:
    """``{qid: the first k doc ids}`` of a run (``types.Run``), for the given queries."""
    out: Dict[str, List[str]] = {}
    for q in qids:
        ranking = run.get(q)
        out[q] = [str(d) for d in ranking.doc_ids[:k]] if ranking is not None else []
    return out


def _grade_word(grade: Optional[int]) -> str:
    return "unjudged" if grade is None else f"grade {grade}"


@dataclass
class RankDiff:
    """``before``/``now``: the two top-k lists. Ranks are 1-based."""

    k: int
    left: List[Tuple[str, Optional[int], int]] = field(default_factory=list)  # (doc, grade, old rank)
    left_other: int = 0  # non-relevant or unjudged documents that left too
    entered: List[Tuple[str, Optional[int], int]] = field(default_factory=list)  # (doc, grade, new rank)
    moved: List[Tuple[str, Optional[int], int, int]] = field(default_factory=list)  # judged docs
    moved_other: int = 0  # unjudged documents that moved
    same: bool = False  # identical top k

    def as_dict(self) -> Dict[str, Any]:
        return {
            "k": self.k,
            "left": [{"doc": d, "grade": g, "was": r} for d, g, r in self.left],
            "left_other": self.left_other,
            "entered": [{"doc": d, "grade": g, "now": r} for d, g, r in self.entered],
            "moved": [{"doc": d, "grade": g, "was": a, "now": b} for d, g, a, b in self.moved],
            "moved_other": self.moved_other,
            "same": self.same,
        }

    def lines(self, titles: Optional[Mapping[str, str]] = None, limit: int = 5) -> List[str]:
        """Plain-text lines (no markup): ``left the top 10: ...``, ``entered: ...``, ``moved: ...``."""
        if self.same:
            return [f"top {self.k} unchanged"]
        titles = titles or {}
        out = []
        if self.left or self.left_other:
            out.append(f"relevant that left the top {self.k}: " + ", ".join(self._left_parts(titles, limit)))
        if self.entered:
            parts = [f"{_named(d, titles)} ({_grade_word(g)}, now #{r})" for d, g, r in self.entered[:limit]]
            out.append("entered: " + ", ".join(parts + _hidden(self.entered, limit)))
        if self.moved or self.moved_other:
            out.append("moved: " + ", ".join(self._moved_parts(titles, limit)))
        return out

    def _left_parts(self, titles: Mapping[str, str], limit: int) -> List[str]:
        parts = [f"{_named(d, titles)} ({_grade_word(g)}, was #{r})" for d, g, r in self.left[:limit]]
        parts = (parts or ["none"]) + _hidden(self.left, limit)
        if self.left_other:
            parts.append(f"and {self.left_other} non-relevant or unjudged left")
        return parts

    def _moved_parts(self, titles: Mapping[str, str], limit: int) -> List[str]:
        parts = [f"{_named(d, titles)} ({_grade_word(g)}) #{a} -> #{b}" for d, g, a, b in self.moved[:limit]]
        parts += _hidden(self.moved, limit)
        if self.moved_other:
            parts.append(f"{self.moved_other} unjudged moved")
        return parts


def _named(doc: str, titles: Mapping[str, str]) -> str:
    t = titles.get(doc)
    return f'{doc} "{_clip(t, 50)}"' if t else doc


def _hidden(items: Sequence[Any], limit: int) -> List[str]:
    return [f"{len(items) - limit} more"] if len(items) > limit else []


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def ranking_diff(
    before: Sequence[str], now: Sequence[str], grades: Mapping[str, int], k: int = SHOWN
) -> RankDiff:
    """What changed from ``before`` to ``now`` in the top ``k``. ``grades``: the query's
    judgments (a document absent from it is unjudged). Relevant means grade > 0."""
    b = [str(d) for d in before[:k]]
    n = [str(d) for d in now[:k]]
    out = RankDiff(k=k, same=b == n)
    if out.same:
        return out
    _compare(out, {d: i for i, d in enumerate(b, 1)}, {d: i for i, d in enumerate(n, 1)}, grades)
    _most_telling_first(out)
    return out


def _compare(
    out: RankDiff, rank_b: Dict[str, int], rank_n: Dict[str, int], grades: Mapping[str, int]
) -> None:
    """The documents that left, entered or moved, by their ranks before and now."""
    for d, r in rank_b.items():
        if d not in rank_n:
            _add_left(out, d, grades.get(d), r)
    for d, r in rank_n.items():
        if d not in rank_b:
            out.entered.append((d, grades.get(d), r))
        elif rank_b[d] != r:
            _add_moved(out, d, grades.get(d), rank_b[d], r)


def _most_telling_first(out: RankDiff) -> None:
    """Relevant before non-relevant, then by rank."""
    out.left.sort(key=lambda t: (-(t[1] or 0), t[2]))
    out.entered.sort(key=lambda t: (-(t[1] if t[1] is not None else -1), t[2]))
    out.moved.sort(key=lambda t: (-(t[1] or 0), -abs(t[3] - t[2]), t[2]))


def _add_left(out: RankDiff, doc: str, grade: Optional[int], was: int) -> None:
    if grade is not None and grade > 0:
        out.left.append((doc, grade, was))
    else:
        out.left_other += 1


def _add_moved(out: RankDiff, doc: str, grade: Optional[int], was: int, now: int) -> None:
    if grade is None:
        out.moved_other += 1
    else:
        out.moved.append((doc, grade, was, now))


def message_lines(
    baseline_top: Mapping[str, Sequence[str]],
    run: Mapping[str, Any],
    qrels: Mapping[str, Mapping[str, int]],
    worst: Sequence[Any],
    metric: str,
    k: int = SHOWN,
) -> List[str]:
    """The lines a regression gate's failure message adds for its worst queries
    (``significance.QueryDelta``s): the ranking diff of each against the baseline."""
    lines: List[str] = []
    for q in worst:
        before = baseline_top.get(q.qid)
        if before is None:
            continue
        ranking = run.get(q.qid)
        now = ranking.doc_ids[:k] if ranking is not None else []
        diff = ranking_diff(before, now, qrels.get(q.qid, {}), k=k)
        lines.append(f"    {q.qid} ({metric} {q.baseline:.4f} -> {q.current:.4f}):")
        lines += [f"      {l}" for l in diff.lines(limit=4)]
    if lines:
        lines.insert(0, f"  ranking changes in the top {k} (baseline -> now) of the largest drops:")
    return lines
