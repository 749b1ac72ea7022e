"""The rankings a stored run kept (issue #33): each retriever's top k document ids per query, as
the run record (the JSON report: ``suites[i].rankings`` and its depth ``suites[i].k``,
reports/details.py; the canary queries' in ``suites[i].canary_rankings``, their text hashes in the
fingerprint's ``canary_hashes``) holds them, for comparing this run's rankings with any stored run's
(:mod:`pytest_retrieval.measures.stability`). Reading a record is pure; :func:`load_rankings`
reads one from a store.

Size: the record keeps each query's top k as a JSON list of its document ids, about
(id length + 4) bytes a document: NFCorpus's ids (8 characters on average) take 119 bytes a
query and retriever at the top 10, 1,194 bytes at the top 100 (measured for issue #33).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

if TYPE_CHECKING:
    from .store import HistoryStore

__all__ = ["LATEST", "StoredRankings", "stored_rankings", "resolve_run", "load_rankings"]


@dataclass(frozen=True)
class StoredRankings:
    """A stored run's rankings of one suite: ``depth`` (the k they were cut at: a shorter list
    means the retriever returned fewer documents) and ``by_retriever[name][qid]`` the document
    ids best first; ``canary`` the same of the canary queries (``None``: the run kept none, it
    had no ``judgments.canary`` or an older pytest-retrieval wrote it); ``fingerprint`` the
    suite's fingerprint in the run (what tells a changed query text, corpus or index)."""

    run_id: str
    suite: str
    depth: int
    by_retriever: Dict[str, Dict[str, List[str]]]
    canary: Optional[Dict[str, Dict[str, List[str]]]] = None
    fingerprint: Dict[str, Any] = field(default_factory=dict)

    def of(self, retriever: str, k: int) -> Dict[str, List[str]]:
        """One retriever's top ``k`` per query. ``ValueError`` (one line) when the run has no such
        retriever or kept its rankings less than ``k`` deep."""
        if retriever not in self.by_retriever:
            names = ", ".join(sorted(self.by_retriever)) or "none"
            raise ValueError(
                f"run {self.run_id}: suite {self.suite!r} kept no rankings of {retriever!r} (it has {names})"
            )
        if k > self.depth:
            raise ValueError(
                f"run {self.run_id}: suite {self.suite!r} kept the top {self.depth} of each ranking, "
                f"a stability measure needs the top {k}"
            )
        return {q: docs[:k] for q, docs in self.by_retriever[retriever].items()}


def stored_rankings(record: Mapping[str, Any], suite: str) -> StoredRankings:
    """The rankings ``record`` (a run record of the history) kept of ``suite``. ``ValueError``
    (one line) when the record has no such suite, or its rankings are missing or malformed."""
    run_id, entry = _suite_entry(record, suite)
    rankings, depth = entry.get("rankings"), entry.get("k")
    if not isinstance(rankings, Mapping) or not rankings:
        raise ValueError(f"run {run_id}: suite {suite!r} kept no rankings (it did not run, or failed)")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"run {run_id}: suite {suite!r} has no ranking depth k, got {depth!r}")
    out = {str(name): _retriever(run_id, str(name), by_query, depth) for name, by_query in rankings.items()}
    fingerprint = entry.get("fingerprint")
    return StoredRankings(
        run_id=run_id,
        suite=suite,
        depth=depth,
        by_retriever=out,
        canary=_canary(run_id, suite, entry.get("canary_rankings"), depth),
        fingerprint=dict(fingerprint) if isinstance(fingerprint, Mapping) else {},
    )


def _canary(run_id: str, suite: str, canary: Any, depth: int) -> Optional[Dict[str, Dict[str, List[str]]]]:
    """The canary queries' rankings per retriever (``canary_rankings``), None when not kept."""
    if canary is None:
        return None
    if not isinstance(canary, Mapping):
        raise ValueError(f"run {run_id}: suite {suite!r}: canary_rankings is not an object")
    return {str(name): _retriever(run_id, str(name), by_query, depth) for name, by_query in canary.items()}


def _suite_entry(record: Mapping[str, Any], suite: str) -> Tuple[str, Mapping[str, Any]]:
    """(the run id, the record's one entry of ``suite``)."""
    run = record.get("run")
    run_id = str(run.get("id") or "?") if isinstance(run, Mapping) else "?"
    entries = [s for s in record.get("suites") or [] if isinstance(s, Mapping) and s.get("suite") == suite]
    if len(entries) != 1:
        what = "no" if not entries else f"{len(entries)} entries for"
        raise ValueError(f"run {run_id}: {what} suite {suite!r}")
    return run_id, entries[0]


def _retriever(run_id: str, name: str, by_query: Any, depth: int) -> Dict[str, List[str]]:
    if not isinstance(by_query, Mapping):
        raise ValueError(f"run {run_id}: rankings of {name!r} are not an object")
    return {str(q): _docs(run_id, name, str(q), docs, depth) for q, docs in by_query.items()}


def _docs(run_id: str, retriever: str, qid: str, docs: Any, depth: int) -> List[str]:
    if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
        raise ValueError(f"run {run_id}: the ranking of {retriever!r} for query {qid!r} is not a list of ids")
    if len(docs) > depth or len(set(docs)) != len(docs):
        raise ValueError(
            f"run {run_id}: the ranking of {retriever!r} for query {qid!r} is longer than k = {depth} "
            "or holds a document twice"
        )
    return list(docs)


#: the run reference meaning the newest stored run that holds the suite
LATEST = "latest"


def resolve_run(store: HistoryStore, ref: str, suite: str) -> str:
    """The run id ``ref`` names: :data:`LATEST` (the newest stored run holding ``suite``), or a
    run id or prefix, a tag, a commit (``store.resolve``). ``HistoryError`` (one line) for none."""
    from ..errors import HistoryError

    if ref == LATEST:
        newest = store.runs(suite=suite, limit=1)
        if not newest:
            raise HistoryError(f"history {store.location}: no stored run of suite {suite!r} ({LATEST})")
        return newest[-1].id
    return store.resolve(ref)


def load_rankings(store: HistoryStore, ref: str, suite: str) -> StoredRankings:
    """The rankings of ``suite`` in the stored run ``ref`` (:func:`resolve_run`). ``HistoryError``
    from the store, ``ValueError`` from the record."""
    return stored_rankings(store.load(resolve_run(store, ref, suite)), suite)
