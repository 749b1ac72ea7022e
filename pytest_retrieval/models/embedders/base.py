"""What an embedder is: :class:`Embedder`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """What the suite runner needs from an embedder.

    ``id`` must change whenever the vectors would change (model, pooling, prefixes...), and
    must not change otherwise: it keys the document-vector cache and baseline fingerprints.
    An embedder may set ``cacheable = False`` to skip the disk cache (precomputed vectors
    are already on disk)."""

    @property
    def id(self) -> str: ...

    def embed_queries(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray: ...

    def embed_documents(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray: ...
