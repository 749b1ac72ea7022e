"""Quepid's book export ("Quepid judgements") and snapshot exports, in.

A book (``/api/export/books/:id``) holds ``query_doc_pairs``, each with the ``judgements`` of
several judges: ``rating`` (a float, or null), ``unrateable``, ``judge_later``, ``user_email``.
Each judge's grades are kept apart (``judges/<judge>.tsv``, for ``judge agree``) and merged
into one qrels under ``judge import``'s merge rules (``--policy``: ``keep-existing`` keeps the
first judge's grade in the file's order, ``prefer-new`` the last's, ``error`` refuses a
disagreement), each conflict listed. A judgement marked ``unrateable`` or ``judge_later``, or
with a null rating, is no grade: left out and counted.

A snapshot (``/api/export/snapshots``-style JSON, ``docs: {query_id: [{id}]}``; or the snapshot
CSV ``Query Text,Doc ID,Doc Position``) is the ranking Quepid showed: it becomes a run file, and
the JSON's ``ratings`` the qrels (the CSV: ``quepid.read_snapshot_csv``).
"""

from __future__ import annotations

from typing import Any, Dict, List

from .model import Builder, Judgments
from .shapes import items, need, obj

__all__ = ["read_book", "read_snapshot"]

ANONYMOUS = "anonymous"  # a judgement without user_email


def read_book(b: Builder, root: Dict[str, Any], policy: str) -> Judgments:
    skipped = {"unrateable": 0, "judge_later": 0, "null rating": 0}
    for i, pair in items(b, root, "query_doc_pairs"):
        where = f"query_doc_pairs[{i}]"
        qid = b.query(need(b, pair, "query_text", where), f"{where}.query_text")
        did = b.ident(need(b, pair, "doc_id", where), f"{where}.doc_id", "document id")
        for j, jd in items(b, pair, "judgements", where):
            at = f"{where}.judgements[{j}]"
            why = _no_grade(b, jd, at)
            if why:
                skipped[why] += 1
                continue
            judge = jd.get("user_email") or ANONYMOUS
            judge = b.text(judge, f"{at}.user_email", "user_email")
            b.judge(qid, did, b.grade(jd["rating"], f"{at}.rating"), at, judge=judge)
    _merge_judges(b, policy)
    left = ", ".join(f"{n} {why}" for why, n in skipped.items() if n)
    if left:
        b.note(f"judgements without a grade, left out: {left}")
    return b.done()


def _no_grade(b: Builder, jd: Dict[str, Any], at: str) -> str:
    for flag in ("unrateable", "judge_later"):
        value = jd.get(flag, False)
        if not isinstance(value, bool) and value is not None:
            raise b.error(f"expected true or false, got {value!r}", f"{at}.{flag}")
        if value:
            return flag
    return "null rating" if jd.get("rating") is None else ""


def _merge_judges(b: Builder, policy: str) -> None:
    from ..judge.merge import merge_qrels

    merged: Dict[str, Dict[str, int]] = {}
    for judge, grades in b.out.judges.items():
        m = merge_qrels(merged, grades, policy=policy)
        merged = m.qrels
        for c in m.conflicts[:20]:
            b.note(
                f"judges disagree on ({c.query_id}, {c.doc_id}): {c.existing} then {c.new} ({judge}); {policy}"
            )
        if len(m.conflicts) > 20:
            b.note(f"... and {len(m.conflicts) - 20} more disagreement(s) with {judge}")
    b.out.qrels = {q: d for q, d in merged.items() if d}


def read_snapshot(b: Builder, root: Dict[str, Any]) -> Judgments:
    docs = need(b, root, "docs", "the file", dict)
    for i, q in items(b, root, "queries"):
        where = f"queries[{i}]"
        qid = b.query(need(b, q, "query_text", where), f"{where}.query_text")
        ratings = need(b, q, "ratings", where, dict, default={})
        for doc, rating in ratings.items():
            at = f"{where}.ratings.{doc}"
            did = b.ident(doc, at, "document id")
            if rating is None:
                b.note(f"{at}: a null rating, left out")
                continue
            b.judge(qid, did, b.grade(rating, at), at)
        key = str(need(b, q, "query_id", where))
        ranked = need(b, docs, key, "docs", list, default=[])
        b.out.run[qid] = _ranked(b, ranked, f"docs.{key}")
    return b.done()


def _ranked(b: Builder, ranked: List[Any], where: str) -> List[str]:
    out: List[str] = []
    for j, d in enumerate(ranked):
        at = f"{where}[{j}]"
        did = b.ident(need(b, obj(b, d, at), "id", at), f"{at}.id", "document id")
        if did in out:
            raise b.error(f"document {did!r} ranked twice for one query", at)
        out.append(did)
    return out
