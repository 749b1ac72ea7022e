"""Golden-query checks ("known-item" tests): does a query still return a document in its top k,
keep a banned one out, rank one document above another?

The checks are pure functions of a retriever's hits (``suite.retriever.Hits``); a failed one
says the query, the expectation and the actual top k with ranks, scores, titles and grades,
so the message alone tells what the ranking does instead. They back both the Python
assertions (``assert_in_top`` ...) and the YAML ``expectations:`` items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

from ..io.ids import internal_query_id

__all__ = [
    "ExpectationFailed",
    "assert_in_top",
    "assert_not_in_top",
    "assert_ranked_above",
    "check_expectation",
    "describe_top",
]

TITLE_CHARS = 70


class ExpectationFailed(AssertionError):
    """A golden query whose expectation does not hold; the message is the whole report."""


@dataclass(frozen=True)
class Checks:
    """What one expectation asks of a ranking (any of them; each is checked)."""

    contains: Sequence[str] = ()
    k: int = 10
    excludes: Sequence[str] = ()
    first: Optional[str] = None
    above: Optional[Sequence[str]] = None  # (a, b): a ranked above b
    min_hits: Optional[int] = None


def _ids(hits: Any) -> List[str]:
    return [str(getattr(h, "doc_id", h)) for h in hits]


def _rank(hits: Any, doc_id: str) -> Optional[int]:
    ids = _ids(hits)
    return ids.index(str(doc_id)) + 1 if str(doc_id) in ids else None


def check_expectation(hits: Any, checks: Checks) -> List[str]:
    """Every part of ``checks`` that ``hits`` breaks, as a short sentence (empty: all hold)."""
    broken: List[str] = []
    for d in checks.contains:
        broken += _check_contains(hits, d, checks.k)
    for d in checks.excludes:
        r = _rank(hits, d)
        if r is not None and r <= checks.k:
            broken.append(f"{d!r} should not be in the top {checks.k}, is at rank {r}")
    if checks.first is not None:
        broken += _check_first(hits, checks.first)
    if checks.above is not None:
        broken += _check_above(hits, *(str(x) for x in checks.above))
    if checks.min_hits is not None and len(_ids(hits)) < checks.min_hits:
        broken.append(f"at least {checks.min_hits} hits expected, got {len(_ids(hits))}")
    return broken


def _where(rank: Optional[int]) -> str:
    return f"at rank {rank}" if rank else "not among the hits"


def _check_contains(hits: Any, doc_id: str, k: int) -> List[str]:
    r = _rank(hits, doc_id)
    if r is None or r > k:
        return [f"{doc_id!r} should be in the top {k}, is {_where(r)}"]
    return []


def _check_first(hits: Any, doc_id: str) -> List[str]:
    r = _rank(hits, doc_id)
    return [f"{doc_id!r} should be first, is {_where(r)}"] if r != 1 else []


def _check_above(hits: Any, a: str, b: str) -> List[str]:
    ra, rb = _rank(hits, a), _rank(hits, b)
    if ra is None or (rb is not None and rb < ra):
        shown = f"{a!r} at {ra or 'no rank'}, {b!r} at {rb or 'no rank'}"
        return [f"{a!r} should rank above {b!r}: {shown}"]
    return []


def describe_top(hits: Any, k: int) -> List[str]:
    """The actual top ``k``: rank, doc id, score, grade (when judged) and title."""
    shown = list(hits)[:k]
    if not shown:
        return ["  (no hits)"]
    width = max(len(h) for h in _ids(shown))
    lines = []
    for i, h in enumerate(shown, 1):
        doc_id = str(getattr(h, "doc_id", h))
        rank = getattr(h, "rank", i)
        score = getattr(h, "score", None)
        grade = getattr(h, "grade", None)
        title = getattr(h, "title", None) or ""
        if len(title) > TITLE_CHARS:
            title = title[: TITLE_CHARS - 1] + "…"
        line = f"  {rank:>3}  {doc_id:<{width}}"
        line += f"  {score:10.4f}" if isinstance(score, (int, float)) else ""
        if _judged(hits):
            line += f"  {'unjudged' if grade is None else f'grade {grade}':<8}"
        lines.append((line + f"  {title}").rstrip())
    return lines


def _judged(hits: Any) -> bool:
    return getattr(hits, "query_id", None) is not None


def failure_message(hits: Any, broken: List[str], k: int, *, label: str = "", origin: str = "") -> str:
    """The report of a broken expectation: what was expected, the query, the actual top k."""
    query = getattr(hits, "query", None)
    qid = getattr(hits, "query_id", None)
    if not label:
        suite, retriever = getattr(hits, "suite", ""), getattr(hits, "retriever", "")
        label = " :: ".join(x for x in (suite, retriever) if x)
    head = f"{label}: " if label else ""
    lines = [f"{head}{broken[0]}"] + [f"  and {b}" for b in broken[1:]]
    if query is not None:
        lines.append(f"  query: {query!r}" + (f" (judged query {qid})" if qid else ""))
    if origin:
        lines.append(f"  expectation set at {origin}")
    total = len(list(hits))
    lines.append(f"  actual top {min(k, total)} (of {total} hits):")
    return "\n".join(lines + describe_top(hits, k))


def _shown_k(hits: Any, k: int, *doc_ids: str) -> int:
    """Show at least ``k`` hits, and down to the ranks of the documents named (at most 50)."""
    ranks = [r for r in (_rank(hits, d) for d in doc_ids) if r is not None]
    return min(max([k] + ranks), max(k, 50))


def known_ranks(hits: Any) -> Optional[int]:
    """How many ranks of the full ranking ``hits`` tells: all (None) when fewer hits came back
    than were asked for (``hits.depth``); else the hits fetched (a plain list: its length)."""
    got = len(list(hits))
    depth = getattr(hits, "depth", None)
    if isinstance(depth, int) and not isinstance(depth, bool) and got < depth:
        return None
    return got


def _checked_k(hits: Any, k: Any, doc_id: str, call: str) -> int:
    """``k`` of an assertion about ``doc_id``: a positive int, within the ranks ``hits`` tells
    when ``doc_id`` is not among them; else ValueError (a check beyond the hits fetched would
    pass, or fail, on ranks nobody looked at)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{call}: k must be a positive integer, got {k!r}")
    known = known_ranks(hits)
    if _rank(hits, doc_id) is None and known is not None and k > known:
        raise ValueError(
            f"{call}: k {k} is beyond the {known} hits fetched: ranks {known + 1}..{k} are unknown; "
            f"search with k={k} or more"
        )
    return k


def _check(hits: Any, checks: Checks, k: int, *doc_ids: str) -> None:
    broken = check_expectation(hits, checks)
    if broken:
        raise ExpectationFailed(failure_message(hits, broken, _shown_k(hits, k, *doc_ids)))


def assert_in_top(hits: Any, doc_id: Any, k: int = 10) -> None:
    """``doc_id`` is among the first ``k`` of ``hits`` (a retriever's ``search`` answer);
    ValueError when ``k`` is beyond the hits fetched and ``doc_id`` is not among them."""
    _checked_k(hits, k, str(doc_id), "assert_in_top")
    _check(hits, Checks(contains=(str(doc_id),), k=k), k, str(doc_id))


def assert_not_in_top(hits: Any, doc_id: Any, k: int = 10) -> None:
    """``doc_id`` is not among the first ``k`` of ``hits``; ValueError when ``k`` is beyond the
    hits fetched (``doc_id`` could be at a rank nobody looked at)."""
    _checked_k(hits, k, str(doc_id), "assert_not_in_top")
    _check(hits, Checks(excludes=(str(doc_id),), k=k), k)


def assert_ranked_above(hits: Any, a: Any, b: Any) -> None:
    """``a`` is among the hits and ranked above ``b`` (or ``b`` is not among them); ValueError
    when ``a`` and ``b`` are one document (no document ranks above itself: the check would
    fail whatever the ranking, or pass on nothing, as the YAML ``above`` refuses it too)."""
    if str(a) == str(b):
        raise ValueError(
            f"assert_ranked_above: a and b are both {str(a)!r}: give two documents, a ranked above b"
        )
    _check(hits, Checks(above=(str(a), str(b))), 10, str(a), str(b))


# ------------------------------------------------------------------ YAML expectations


@dataclass(frozen=True)
class Expectation:
    """One entry of a suite's ``expectations:``, parsed: its query (text, or a judged id), the
    retrievers it applies to, its checks and where it was written."""

    index: int
    name: str
    text: Optional[str]
    query_id: Optional[str]
    retrievers: Sequence[str]
    checks: Checks
    origin: str = ""

    @property
    def qid(self) -> str:
        """The id its query runs under: the judged id, or for a text an internal id that no
        judged query can have (``io.ids.internal_query_id``)."""
        return self.query_id if self.query_id is not None else internal_query_id("expect", self.index)

    @property
    def shown_k(self) -> int:
        return max(self.checks.k, 10)

    def as_dict(self) -> dict:
        c = self.checks
        out: dict = {"name": self.name, "query": self.text, "query_id": self.query_id}
        out.update({"k": c.k, "contains": list(c.contains), "excludes": list(c.excludes)})
        out.update({"first": c.first, "above": list(c.above) if c.above else None, "min_hits": c.min_hits})
        return {k: v for k, v in out.items() if v not in (None, [])} | {"origin": self.origin}


def parse_expectations(suite: Any, vector_retrievers: Sequence[str]) -> List[Expectation]:
    """The suite's ``expectations:``; ConfigError (file, line, key) for an unknown retriever, a
    ``k`` deeper than the run fetches, or a text that a precomputed embedder cannot embed."""
    from ..config.yamlio import locate

    out: List[Expectation] = []
    seen: dict = {}
    for i, e in enumerate(suite.model.expectations):
        key = ("expectations", i)
        names = list(e.retrievers) if e.retrievers is not None else list(suite.order)
        _check_entry(suite, key, e, names, vector_retrievers)
        qid = None if e.query_id is None else str(e.query_id)
        name = _unique_name(seen, e.name or (e.query if e.query is not None else f"query {qid}"))
        file, line = locate(suite.positions, key)
        origin = f"{file}:{line}" if file and line else (file or "")
        out.append(Expectation(i, name, e.query, qid, tuple(names), _checks_of(e), origin))
    return out


def _check_entry(suite: Any, key: tuple, e: Any, names: List[str], vector_retrievers: Sequence[str]) -> None:
    """An unknown retriever, a ``k`` deeper than the run, or free text a precomputed embedder
    cannot embed: a ConfigError at its key."""
    model = suite.model
    for j, r in enumerate(names):
        if r not in model.retrievers:
            raise suite.error(key + ("retrievers", j), f"unknown retriever {r!r}")
    depth = model.evaluation.depth
    if e.k > depth:
        raise suite.error(key + ("k",), f"k {e.k} is deeper than evaluation.depth ({depth})")
    vectors = [r for r in names if r in vector_retrievers]
    embedder = model.embedder
    if e.query is not None and vectors and embedder is not None and embedder.type == "precomputed":
        raise suite.error(
            key + ("query",),
            f"{', '.join(vectors)} cannot embed free text: the embedder is precomputed (vectors of "
            "the judged queries only); use query_id, limit 'retrievers', or an embedder of kind "
            "onnx, sentence-transformers or callable",
        )


def _unique_name(seen: dict, name: str) -> str:
    """``name`` on one line, ``#2``, ``#3``... appended when it was seen before."""
    name = " ".join(name.split()).replace("::", ":")  # "::" would split the pytest node id
    seen[name] = seen.get(name, 0) + 1
    return f"{name} #{seen[name]}" if seen[name] > 1 else name


def _checks_of(e: Any) -> Checks:
    return Checks(
        contains=tuple(str(d) for d in e.contains),
        k=e.k,
        excludes=tuple(str(d) for d in e.excludes),
        first=None if e.first is None else str(e.first),
        above=tuple(str(d) for d in e.above) if e.above else None,
        min_hits=e.min_hits,
    )
