"""Pooling what changed (issue #33, section 3): from a JSON report's ``stability`` sections, the
documents that entered the top 10 of the most changed canary and judged queries and have no
judgment yet, as a :class:`.pool.Pool` (written as the annotation files ``judge llm`` and
``judge import`` read). The loop: a stability gate fails or the summary says documents entered
the top 10 unjudged -> ``judge pool --from-diff report.json`` -> grade them (an LLM judge or
people) -> ``judge import`` merges the grades -> re-run: the relevance verdict now rests on judged
documents. Pure over the report's data; the corpus (document texts) and more labels are handed in."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from .pool import Pool, PoolPair, did_judged

__all__ = ["pool_from_diff"]


def pool_from_diff(
    doc: Mapping[str, Any],
    *,
    queries: int = 20,
    retrievers: Optional[Sequence[str]] = None,
    judged: Optional[Mapping[str, Mapping[str, int]]] = None,
    documents: Optional[Mapping[str, Tuple[str, str]]] = None,
) -> Pool:
    """The unjudged documents that entered the top k of the ``queries`` most changed queries of
    each retriever (all, or ``retrievers``: ``name`` or ``suite:name``), per suite of ``doc``.
    ``judged``: more labels counting as judged; ``documents``: doc id -> (title, text)."""
    judged = judged or {}
    documents = documents or {}
    pairs: Dict[Tuple[str, str], PoolPair] = {}
    systems: List[str] = []
    texts: Dict[str, str] = {}
    notes: List[str] = []
    tally = {"candidates": 0, "judged": 0}
    for suite in doc.get("suites") or []:
        section = suite.get("stability") if isinstance(suite, Mapping) else None
        name = str(suite.get("suite", "?")) if isinstance(suite, Mapping) else "?"
        if not isinstance(section, Mapping):
            continue
        if section.get("note"):
            notes.append(f"{name}: not compared ({section['note']})")
        for retriever, entry in (section.get("retrievers") or {}).items():
            if not _wanted(retrievers, name, retriever) or not isinstance(entry, Mapping):
                continue
            system = f"{name}:{retriever}"
            systems.append(system)
            for change in (entry.get("most_changed") or [])[:queries]:
                _add(change, system, pairs, texts, judged, documents, tally)
    contributed = {s: sum(1 for p in pairs.values() if s in p.pooled_by) for s in systems}
    only = {s: sum(1 for p in pairs.values() if list(p.pooled_by) == [s]) for s in systems}
    chosen = sorted(pairs.values(), key=lambda p: (list(texts).index(p.query_id), p.best_rank, p.doc_id))
    return Pool(
        pairs=chosen,
        depth=int(_first_k(doc)),
        systems=systems,
        queries=texts,
        candidates=tally["candidates"],
        unique=len(pairs) + tally["judged"],
        judged=tally["judged"],
        contributed=contributed,
        only_found_by=only,
        missing_text=sum(1 for p in chosen if not (p.title or p.text)),
        notes=notes,
    )


def _wanted(retrievers: Optional[Sequence[str]], suite: str, retriever: str) -> bool:
    return retrievers is None or retriever in retrievers or f"{suite}:{retriever}" in retrievers


def _add(
    change: Mapping[str, Any],
    system: str,
    pairs: Dict[Tuple[str, str], PoolPair],
    texts: Dict[str, str],
    judged: Mapping[str, Mapping[str, int]],
    documents: Mapping[str, Tuple[str, str]],
    tally: Dict[str, int],
) -> None:
    """One changed query's entered documents: the unjudged ones pooled, credited to ``system``."""
    qid = str(change.get("query"))
    seen: Set[str] = set()
    for e in change.get("entered") or []:
        did = str(e.get("doc"))
        if did in seen:
            continue
        seen.add(did)
        tally["candidates"] += 1
        if e.get("grade") is not None or did_judged(judged, qid, did):
            tally["judged"] += 1
            continue
        texts.setdefault(qid, str(change.get("text") or ""))
        pair = pairs.get((qid, did))
        if pair is None:
            title, text = documents.get(did, (str(e.get("title") or ""), ""))
            pair = pairs[(qid, did)] = PoolPair(qid, texts[qid], did, title, text)
        rank = int(e.get("rank") or 0)
        pair.pooled_by[system] = min(rank, pair.pooled_by.get(system, rank))


def _first_k(doc: Mapping[str, Any]) -> int:
    for suite in doc.get("suites") or []:
        section = suite.get("stability") if isinstance(suite, Mapping) else None
        if isinstance(section, Mapping) and isinstance(section.get("k"), int):
            return section["k"]
    return 10
