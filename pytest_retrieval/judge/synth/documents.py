"""Which documents ``judge synth`` writes questions for: a seeded, stratified sample.

Strata (``stratify``): ``length`` (word-count terciles of the corpus: ``short``, ``medium``,
``long``), or any string field of the documents (``source``, ``category``, a ``tag``). The
``max_docs`` are split over the strata in proportion to their sizes (largest remainder, at
least one per stratum while the budget allows), and each stratum is sampled uniformly
without replacement by ``numpy.random.Generator(PCG64([seed, 1 + crc32(stratum)]))`` over its documents
sorted by id, so the sample depends on the seed and the corpus, never on the file order.
Documents shorter than ``min_words`` are left out first (too little to ask about).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..sample import stream_of

__all__ = ["DocSample", "SourceDoc", "sample_documents"]

LENGTH = "length"


@dataclass(frozen=True)
class SourceDoc:
    doc_id: str
    title: str
    text: str
    stratum: str = ""

    @property
    def words(self) -> int:
        return len(self.title.split()) + len(self.text.split())

    def as_text(self) -> str:
        return f"{self.title}\n{self.text}" if self.title and self.text else (self.title or self.text)


@dataclass
class DocSample:
    docs: List[SourceDoc]
    corpus: int
    too_short: int
    strata: Dict[str, Tuple[int, int]] = field(default_factory=dict)  # value -> (available, taken)

    def summary(self, by: Optional[str]) -> str:
        s = f"sampled {len(self.docs)} of {self.corpus} documents"
        if self.too_short:
            s += f" ({self.too_short} too short to ask about left out)"
        if by:
            parts = ", ".join(f"{v}: {t} of {a}" for v, (a, t) in self.strata.items())
            s += f"; by {by}: {parts}"
        return s


def _stratum(fields: Mapping[str, str], by: Optional[str], bounds: Tuple[int, int], words: int) -> str:
    if not by:
        return ""
    if by == LENGTH:
        return "short" if words <= bounds[0] else "medium" if words <= bounds[1] else "long"
    value = fields.get(by)
    return value.strip() if isinstance(value, str) and value.strip() else "(none)"


def _terciles(lengths: Sequence[int]) -> Tuple[int, int]:
    import numpy as np

    if not lengths:
        return (0, 0)
    lo, hi = np.quantile(np.asarray(lengths, dtype=float), [1 / 3, 2 / 3])
    return int(lo), int(hi)


def sample_documents(
    documents: Sequence[Any],
    *,
    max_docs: int,
    seed: int = 0,
    stratify: Optional[str] = None,
    min_words: int = 20,
) -> DocSample:
    """``documents`` are ``types.Document`` (``doc_id``, ``fields``); see the module docstring."""
    import numpy as np

    groups, too_short = _strata(documents, stratify, min_words)
    alloc = _allocate({k: len(v) for k, v in groups.items()}, max_docs)
    out = DocSample([], len(documents), too_short)
    for key in sorted(groups):
        members, n = groups[key], alloc[key]
        if n < len(members):
            rng = np.random.Generator(np.random.PCG64([seed, stream_of(key)]))
            idx = sorted(int(j) for j in rng.choice(len(members), size=n, replace=False))
            members = [members[j] for j in idx]
        out.docs.extend(members)
        if stratify:
            out.strata[key] = (len(groups[key]), len(members))
    return out


def _strata(
    documents: Sequence[Any], stratify: Optional[str], min_words: int
) -> Tuple[Dict[str, List[SourceDoc]], int]:
    """stratum -> its documents sorted by id (those of ``min_words`` or more), and how many
    were too short."""
    pool: List[Tuple[str, Mapping[str, str], int]] = []
    for d in documents:
        words = sum(len(v.split()) for k, v in d.fields.items() if k in ("title", "text"))
        if words >= min_words:
            pool.append((d.doc_id, d.fields, words))
    pool.sort(key=lambda t: t[0])
    bounds = _terciles([w for *_, w in pool]) if stratify == LENGTH else (0, 0)
    groups: Dict[str, List[SourceDoc]] = {}
    for did, fields, words in pool:
        s = _stratum(fields, stratify, bounds, words)
        groups.setdefault(s, []).append(SourceDoc(did, *_title_text(fields), s))
    return groups, len(documents) - len(pool)


def _title_text(fields: Mapping[str, str]) -> Tuple[str, str]:
    text = fields.get("text")
    if text is None:
        text = " ".join(v for k, v in fields.items() if k != "title")
    return fields.get("title", "") or "", text


def _allocate(sizes: Mapping[str, int], budget: int) -> Dict[str, int]:
    """``budget`` split in proportion to ``sizes`` (largest remainder), >= 1 each while it
    lasts, never more than a stratum has."""
    total = sum(sizes.values())
    if budget >= total:
        return dict(sizes)
    order = sorted(sizes, key=lambda k: (-sizes[k], k))
    alloc = {k: 1 if i < budget and sizes[k] else 0 for i, k in enumerate(order)}
    rest = budget - sum(alloc.values())
    exact = {k: rest * sizes[k] / total for k in order}
    for k in order:
        alloc[k] = min(sizes[k], alloc[k] + int(exact[k]))
    for k in sorted(order, key=lambda k: (-(exact[k] - int(exact[k])), k)):
        if sum(alloc.values()) >= budget:
            break
        if alloc[k] < sizes[k]:
            alloc[k] += 1
    return alloc
