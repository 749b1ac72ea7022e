"""Which queries a suite run sends: the judged ones, the unanswerable ones, and the texts of its
golden queries (expectations); and how the query set lines up with the qrels."""

from __future__ import annotations

from typing import Dict, List, Set, Tuple

from ..config.load import Suite
from ..io.judgment_set import JudgmentSet
from ..types import Query
from .integrity import QuerySetCheck


def check_query_set(suite: Suite, js: JudgmentSet) -> QuerySetCheck:
    """How queries and qrels line up; with ``judgments.require_all`` any gap is an error."""
    check = QuerySetCheck.of(js)
    j = suite.model.judgments
    if j.require_all:
        problem = check.problem(unjudged_expected=bool(j.beir and not j.queries))
        if problem:
            raise suite.error(
                ("judgments", "require_all"),
                f"{problem} ({js.sources.get('queries', 'queries')} vs {js.sources.get('qrels', 'qrels')})",
            )
    return check


def queries_to_run(suite: Suite, js: JudgmentSet) -> Tuple[List[str], List[str]]:
    """(the queries sent: the judged ones, then the unanswerable ones without judgments;
    the unanswerable ones). Refuses unanswerable queries with a relevant judgment."""
    qids = [q for q in js.queries if q in js.qrels]
    if suite.model.unanswerable is None:
        return qids, []
    unanswerable = _unanswerable(suite, js, suite.model.unanswerable.tag)
    return qids + [q for q in unanswerable if q not in js.qrels], unanswerable


def _unanswerable(suite: Suite, js: JudgmentSet, tag: str) -> List[str]:
    """The queries tagged ``tag``; an error when one has a relevant judgment."""
    unanswerable = [q for q in js.queries if tag in js.tags.get(q, ())]
    relevant = [q for q in unanswerable if _has_relevant(js.qrels.get(q, {}))]
    if relevant:
        raise suite.error(
            ("unanswerable", "tag"),
            f"{len(relevant)} queries tagged {tag!r} have relevant judgments "
            f"(e.g. {relevant[0]!r}): unanswerable means no relevant document",
        )
    return unanswerable


def _has_relevant(judged: Dict[str, int]) -> bool:
    return any(g > 0 for g in judged.values())


def golden_queries(suite: Suite, js: JudgmentSet, running: Set[str]) -> List[Query]:
    """The texts of the suite's expectations, run in the same pass as the judged queries
    (an expectation naming a judged query reads that query's ranking)."""
    out: List[Query] = []
    for e in suite.expectations:
        if e.query_id is None:
            out.append(Query(e.qid, e.text or ""))
            continue
        if e.query_id not in js.queries:
            raise suite.error(
                ("expectations", e.index, "query_id"),
                f"no query {e.query_id!r} in {js.sources.get('queries', 'the judgments')}",
            )
        if e.query_id not in running and all(q.qid != e.query_id for q in out):
            out.append(Query(e.query_id, js.queries[e.query_id]))  # a query not run otherwise
    return out


def golden_retrievers(suite: Suite, extra: Set[str]) -> Dict[str, Set[str]]:
    """id of a query run only for golden checks (in ``extra``; never a judged query, which
    every retriever answers) -> the retrievers its expectations need, with their inputs."""
    out: Dict[str, Set[str]] = {}
    for e in suite.expectations:
        if e.qid in extra:
            out.setdefault(e.qid, set()).update(suite.with_inputs(list(e.retrievers)))
    return out


def canary_queries(suite: Suite, js: JudgmentSet, running: Set[str], golden: List[Query]) -> List[Query]:
    """The suite's canary queries (``judgments.canary``) to send beside the judged ones: every
    one but those that are a judged query already (same id, same text: its judged ranking is
    compared). A canary id that is a judged query's with another text, or a golden query's,
    is refused in one line."""
    from ..io.queries import load_queries

    value = suite.model.judgments.canary
    if not value:
        return []
    path = suite.resolve_path(("judgments", "canary"), value)
    texts = load_queries(path)  # a bad line: one ConfigError naming the file and line
    golden_ids = {q.qid for q in golden}
    out: List[Query] = []
    for qid, text in texts.items():
        if qid in running:
            if js.queries.get(qid) != text:
                raise suite.error(
                    ("judgments", "canary"),
                    f"canary query {qid!r} has the id of a judged query with another text: give it another id",
                )
            continue
        if qid in golden_ids:
            raise suite.error(("judgments", "canary"), f"canary query {qid!r} has the id of a golden query")
        out.append(Query(qid, text))
    return out
