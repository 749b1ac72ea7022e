"""Import of filled annotation files: their grades merged with the labels you already have.

:func:`import_annotations` reads each file (:func:`~.annotations.load_labels`: an
annotation file or a qrels file) and merges it (:func:`merge_qrels`) with everything
before it, reporting conflicts under a policy: ``keep-existing``, ``prefer-new`` or
``error``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ConfigError
from ..io.qrels import Qrels
from .annotations import DEFAULT_GRADE_RANGE, PooledPairs, load_labels

PathLike = Union[str, "os.PathLike[str]"]

POLICIES = ("keep-existing", "prefer-new", "error")

__all__ = ["POLICIES", "Conflict", "ImportResult", "MergeResult", "import_annotations", "merge_qrels"]


@dataclass(frozen=True)
class Conflict:
    query_id: str
    doc_id: str
    existing: int
    new: int
    origin: str = ""  # "file:line" of the new label


@dataclass
class MergeResult:
    qrels: Qrels
    added: int
    unchanged: int
    conflicts: List[Conflict]
    policy: str

    def summary(self) -> str:
        s = f"{self.added} new label(s), {self.unchanged} identical to existing"
        if self.conflicts:
            verb = "kept existing" if self.policy == "keep-existing" else "took the new grade"
            s += f", {len(self.conflicts)} conflict(s) ({verb})"
        return s

    def add(self, qid: str, did: str, g: int, origins: Mapping[Tuple[str, str], str]) -> None:
        """Merge one new label under the policy."""
        old = self.qrels.get(qid, {}).get(did)
        if old is None:
            self.qrels.setdefault(qid, {})[did] = int(g)
            self.added += 1
        elif old == g:
            self.unchanged += 1
        else:
            self.conflicts.append(Conflict(qid, did, old, int(g), origins.get((qid, did), "")))
            if self.policy == "prefer-new":
                self.qrels[qid][did] = int(g)


def merge_qrels(
    existing: Mapping[str, Mapping[str, int]],
    new: Mapping[str, Mapping[str, int]],
    *,
    policy: str = "keep-existing",
    origins: Optional[Mapping[Tuple[str, str], str]] = None,
) -> MergeResult:
    """Merge ``new`` labels into ``existing``. A pair in both with different grades is a
    conflict: ``keep-existing`` keeps the old grade, ``prefer-new`` takes the new one,
    ``error`` raises a ``ConfigError`` naming where the first conflicting new label is."""
    if policy not in POLICIES:
        raise ValueError(f"policy {policy!r}: expected one of {', '.join(POLICIES)}")
    origins = origins or {}
    result = MergeResult({q: dict(d) for q, d in existing.items()}, 0, 0, [], policy)
    for qid, docs in new.items():
        for did, g in docs.items():
            result.add(qid, did, g, origins)
    if result.conflicts and policy == "error":
        raise _conflict_error(result.conflicts)
    return result


def _conflict_error(conflicts: List[Conflict]) -> ConfigError:
    """The first conflict, where its new label is, and how many others there are."""
    c = conflicts[0]
    file, _, line = c.origin.rpartition(":")
    more = f" (+{len(conflicts) - 1} more conflict(s))" if len(conflicts) > 1 else ""
    return ConfigError(
        f"({c.query_id!r}, {c.doc_id!r}) is graded {c.new} here but {c.existing} in the "
        f"existing qrels{more}; choose --policy keep-existing or prefer-new",
        file=file or None,
        line=int(line) if line.isdigit() else None,
    )


@dataclass
class ImportResult:
    merge: MergeResult
    sources: List[str]
    rows: int
    graded: int
    blank: List[Tuple[str, str, str]]  # (qid, doc, "file:line")

    @property
    def qrels(self) -> Qrels:
        return self.merge.qrels

    def summary(self) -> str:
        lines = [
            f"read {self.rows} row(s) from {', '.join(self.sources)}: {self.graded} graded, "
            f"{len(self.blank)} blank (skipped)",
            self.merge.summary(),
        ]
        for q, d, where in self.blank[:10]:
            lines.append(f"  blank: {where} ({q}, {d})")
        if len(self.blank) > 10:
            lines.append(f"  ... and {len(self.blank) - 10} more blank row(s)")
        for c in self.merge.conflicts[:20]:
            where = f"{c.origin}: " if c.origin else ""
            lines.append(f"  conflict: {where}({c.query_id}, {c.doc_id}) existing {c.existing}, new {c.new}")
        if len(self.merge.conflicts) > 20:
            lines.append(f"  ... and {len(self.merge.conflicts) - 20} more conflict(s)")
        return "\n".join(lines)


def import_annotations(
    paths: Union[PathLike, Sequence[PathLike]],
    existing: Optional[Mapping[str, Mapping[str, int]]] = None,
    *,
    policy: str = "keep-existing",
    grade_range: Tuple[int, int] = DEFAULT_GRADE_RANGE,
    pooled: Optional[PooledPairs] = None,
) -> ImportResult:
    """Filled annotation files (or qrels files) -> merged qrels, with a report.

    Files are merged in order, each under ``policy`` against everything before it.
    ``pooled``: the pairs ``judge pool`` exported (:func:`~.annotations.read_pooled_pairs`); without it a
    formula-shaped id in a CSV/TSV file is refused."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    merged: Qrels = {q: dict(d) for q, d in (existing or {}).items()}
    added = unchanged = rows = graded = 0
    conflicts: List[Conflict] = []
    blank: List[Tuple[str, str, str]] = []
    for p in paths:
        ann = load_labels(p, grade_range=grade_range, pooled=pooled, check_formulas=True)
        rows += ann.rows
        graded += sum(len(d) for d in ann.grades.values())
        blank.extend((q, d, f"{ann.path}:{n}") for q, d, n in ann.blank)
        origins = {k: f"{ann.path}:{n}" for k, n in ann.origins.items()}
        m = merge_qrels(merged, ann.grades, policy=policy, origins=origins)
        merged = m.qrels
        added += m.added
        unchanged += m.unchanged
        conflicts.extend(m.conflicts)
    return ImportResult(
        MergeResult(merged, added, unchanged, conflicts, policy), [str(p) for p in paths], rows, graded, blank
    )
