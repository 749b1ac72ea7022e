"""What a learned sparse encoder is: :class:`SparseEncoder`."""

from __future__ import annotations

from typing import Dict, List, Protocol, Sequence, runtime_checkable

SparseVector = Dict[str, float]


@runtime_checkable
class SparseEncoder(Protocol):
    """What the suite runner needs from a sparse encoder: ``{term: weight}`` per text, raw
    (never IDF-weighted; the runner applies IDF query-side when the retriever asks for it).

    ``id`` must change whenever the vectors would change (model, files, options) and not
    otherwise: it keys the document-vector cache and names the vectors in reports. An encoder
    may set ``cacheable = False`` to skip the disk cache (precomputed vectors are on disk)."""

    @property
    def id(self) -> str: ...

    def encode_queries(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]: ...

    def encode_documents(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]: ...
