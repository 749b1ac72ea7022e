"""Encoding a corpus once: the documents' sparse vectors, cached on disk like the dense
embedders' (``models.embedders.cache``: same folder, same key over the encoder id and every
(id, text) pair, atomic writes), as an ``.npz`` of CSR arrays and the terms."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any, List, Optional, Sequence

from ...fileio import atomic_write
from ...types import DocSparseVectors, Document
from ..embedders.cache import corpus_cache_key, default_cache_dir, document_text
from ..files import PathLike
from .base import SparseEncoder, SparseVector


def encode_corpus(
    encoder: SparseEncoder, documents: Sequence[Document], cache_dir: Optional[PathLike] = None
) -> DocSparseVectors:
    """Every document's raw sparse vector (text: :func:`document_text`), reusing the disk
    cache ``<cache_dir>/<encoder>-<key>.sparse.npz``; precomputed vectors bypass it. A cache
    file that cannot be read is recomputed; one that cannot be written only warns."""
    doc_ids = [str(d.doc_id) for d in documents]
    texts = [document_text(d) for d in documents]
    if not getattr(encoder, "cacheable", True):
        return DocSparseVectors(doc_ids, encoder.encode_documents(doc_ids, texts), encoder.id)
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = corpus_cache_key("sparse:" + encoder.id, doc_ids, texts)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", encoder.id)[:60].strip("_") or "encoder"
    path = directory / f"{slug}-{key[:24]}.sparse.npz"
    cached = _cached(path, len(doc_ids))
    if cached is not None:
        return DocSparseVectors(doc_ids, cached, encoder.id)
    vectors = encoder.encode_documents(doc_ids, texts)
    if len(vectors) == len(doc_ids) and all(isinstance(v, dict) for v in vectors):
        _save(path, vectors)  # malformed output is refused by the runner's checks, not cached
    return DocSparseVectors(doc_ids, vectors, encoder.id)


def _cached(path: Path, rows: int) -> Optional[List[SparseVector]]:
    import numpy as np

    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            terms, indptr, indices, data = z["terms"], z["indptr"], z["indices"], z["data"]
        if len(indptr) != rows + 1:
            return None
        names = [str(t) for t in terms]
        return [
            {names[c]: float(w) for c, w in zip(indices[a:b], data[a:b])}
            for a, b in zip(indptr[:-1].tolist(), indptr[1:].tolist())
        ]
    except Exception:  # unreadable: recompute and overwrite
        return None


def _save(path: Path, vectors: Sequence[Any]) -> None:
    import numpy as np

    vocab: dict = {}
    indptr = [0]
    indices: List[int] = []
    data: List[float] = []
    for vector in vectors:
        for term, weight in vector.items():
            indices.append(vocab.setdefault(str(term), len(vocab)))
            data.append(float(weight))
        indptr.append(len(indices))
    arrays = {
        "terms": np.array(list(vocab), dtype=str),
        "indptr": np.asarray(indptr, dtype=np.int64),
        "indices": np.asarray(indices, dtype=np.int64),
        "data": np.asarray(data, dtype=np.float64),
    }
    try:
        atomic_write(path, lambda fh: np.savez(fh, **arrays), binary=True)  # type: ignore[arg-type]
    except (OSError, TypeError, ValueError) as exc:
        warnings.warn(
            f"pytest-retrieval: could not cache sparse vectors in {path.parent}: {exc}",
            RuntimeWarning,
            stacklevel=3,
        )
