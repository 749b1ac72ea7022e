"""Per-query tests in Python: the judged queries of a suite for ``pytest.mark.parametrize``, and
each query's metrics, ranking and grades in a suite's result.

.. code-block:: python

    from pytest_retrieval import retrieval_queries

    @pytest.mark.parametrize("q", retrieval_queries("retrieval_x.yaml"), ids=str)
    def test_each_query(retrieval_suite, q):
        got = retrieval_suite("retrieval_x.yaml").query("rrf", q.id)
        assert got.metrics["ndcg@10"] >= 0.3, got
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["JudgedQuery", "QueryResult", "query_result", "retrieval_queries"]


@dataclass(frozen=True)
class JudgedQuery:
    """A judged query of a suite: id, text, tags and its judgments (doc id -> grade).
    ``str(q)`` is its id, so ``ids=str`` names the parametrized tests by query id."""

    id: str
    text: str
    tags: Tuple[str, ...] = ()
    grades: Dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    def __str__(self) -> str:
        return self.id

    @property
    def relevant(self) -> List[str]:
        """The documents judged relevant (grade > 0), best grade first."""
        return [d for d, g in sorted(self.grades.items(), key=lambda kv: -kv[1]) if g > 0]


#: How ``retrieval_queries`` gets a suite's judgments. Inside a pytest run the plugin installs
#: the loader its YAML items use (``--retrieval-override`` files and the other command-line
#: settings applied; suite and judgments loaded once per session, shared with the run), so the
#: parametrized queries are the ones the run evaluates; outside pytest, the file alone. A
#: stack: nested in-process runs restore it.
_loaders: List[Callable[[Path], Any]] = []


def push_suite_loader(loader: Callable[[Path], Any]) -> None:
    _loaders.append(loader)


def pop_suite_loader(loader: Callable[[Path], Any]) -> None:
    if loader in _loaders:
        _loaders.remove(loader)


def retrieval_queries(path: Any, *, tag: Optional[str] = None) -> List[JudgedQuery]:
    """The judged queries of the suite at ``path`` (those with a relevant judgment: the ones its
    metrics average over), in the judgment set's order; with ``tag``, only that stratum. A
    relative path is looked up beside the calling file first, then in the working directory.
    Under pytest the suite is read as the run reads it, with its ``--retrieval-override`` files."""
    from ..config.load import load_suite
    from .plan import load_judgments

    p = _beside_caller(Path(path))
    js = _loaders[-1](p) if _loaders else load_judgments(load_suite(p))
    out = []
    for qid, grades in js.qrels.items():
        if qid not in js.queries or not any(g > 0 for g in grades.values()):
            continue
        tags = tuple(js.tags.get(qid, ()))
        if tag is None or tag in tags:
            out.append(JudgedQuery(qid, js.queries[qid], tags, dict(grades)))
    if tag is not None and not out:  # an empty parameter set would skip silently (issue #26)
        _no_query_with(tag, js.tags, p)
    return out


def _no_query_with(tag: str, tags: Dict[str, Any], path: Path) -> None:
    from ..errors import ConfigError

    known = sorted({t for ts in tags.values() for t in ts})
    if tag in known:
        why = f"no judged query (a text and a relevant judgment) has the tag {tag!r}"
    else:
        shown = ", ".join(repr(t) for t in known[:20]) + (", ..." if len(known) > 20 else "")
        why = (
            f"no query has the tag {tag!r} (tags: {shown})"
            if known
            else f"no tag {tag!r}: the suite has no tags"
        )
    raise ConfigError(f"retrieval_queries(tag={tag!r}): {why}", file=str(path))


def _beside_caller(path: Path) -> Path:
    if path.is_absolute():
        return path
    frame = inspect.currentframe()
    caller = frame.f_back.f_back if frame and frame.f_back else None  # retrieval_queries' caller
    if caller is None:  # an interpreter without frame support: the working directory only
        return path
    here = Path(caller.f_code.co_filename).resolve().parent / path
    return here if here.exists() else path


@dataclass
class QueryResult:
    """One query of a suite run through one retriever: its metrics, its ranking (as
    ``Hits``, with titles and grades) and its judgments."""

    retriever: str
    query: JudgedQuery
    metrics: Dict[str, float]
    hits: Any  # execution.hits.Hits

    def __str__(self) -> str:
        from ..gates.expectations import describe_top

        values = ", ".join(f"{m} {v:.4f}" for m, v in self.metrics.items())
        head = f"{self.retriever} on query {self.query.id} {self.query.text!r}: {values or 'not evaluated'}"
        return "\n".join([head, "  top 10:"] + describe_top(self.hits, 10))

    def __repr__(self) -> str:
        # one line that pytest's assertion message (``assert ok, got``: saferepr, cut at 240
        # characters unless -vv) keeps whole for short ids: the metrics, the top 10 ids
        # (``id=grade`` for a judged one); str() has the full table with scores and titles
        values = ", ".join(f"{m} {v:.4f}" for m, v in self.metrics.items()) or "not evaluated"
        text = self.query.text if len(self.query.text) <= 24 else self.query.text[:23] + "…"
        top = " ".join(h.doc_id if h.grade is None else f"{h.doc_id}={h.grade}" for h in list(self.hits)[:10])
        return f"<{self.retriever} query {self.query.id} {text!r}: {values}; top 10: {top or 'no hits'}>"


def query_result(result: Any, retriever: str, qid: Any) -> QueryResult:
    """``SuiteResult.query``: one query's metrics, ranking and grades for ``retriever``."""
    from .hits import make_hits, titles_of

    qid = str(qid)
    js = result.judgments
    if retriever not in result.retrievers:
        raise KeyError(f"no retriever {retriever!r} (defined: {', '.join(result.retrievers)})")
    if qid not in js.queries:
        raise KeyError(f"no query {qid!r} in the suite's judgments")
    rr = result.retrievers[retriever]
    grades = dict(js.qrels.get(qid, {}))
    query = JudgedQuery(qid, js.queries[qid], tuple(js.tags.get(qid, ())), grades)
    metrics = {m: v[qid] for m, v in rr.evaluation.per_query.items() if qid in v}
    ranking = rr.run.get(qid)
    from ..types import Ranking

    hits = make_hits(
        ranking if ranking is not None else Ranking(),
        rr.depth or len(ranking or ()),
        query=query.text,
        retriever=retriever,
        titles=titles_of(js.judged_corpus),
        grades=grades,
        query_id=qid,
        suite=result.suite.name,
    )
    return QueryResult(retriever, query, metrics, hits)
