"""Embedding a corpus once: the text embedded per document and the document-vector disk cache."""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from ...fileio import atomic_write
from ..files import PathLike
from ..outputs import as_matrix
from .base import Embedder

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ...types import Document, DocVectors

CACHE_ENV = "PYTEST_RETRIEVAL_CACHE_DIR"


def document_text(doc: Document) -> str:
    """The text embedded for a document: BEIR's ``(title + " " + text).strip()`` when the
    document has a ``title``; else its ``text``; else all its fields joined by spaces."""
    fields = doc.fields
    if "title" in fields:
        return (f"{fields.get('title') or ''} {fields.get('text') or ''}").strip()
    if "text" in fields:
        return str(fields.get("text") or "").strip()
    return " ".join(str(v) for v in fields.values() if v).strip()


def default_cache_dir() -> Path:
    """``$PYTEST_RETRIEVAL_CACHE_DIR/vectors`` if set, else ``~/.cache/pytest-retrieval/vectors``
    (``$XDG_CACHE_HOME`` replaces ``~/.cache`` when set)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(os.path.expanduser(root)) / "vectors"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "pytest-retrieval" / "vectors"


def corpus_cache_key(embedder_id: str, doc_ids: Sequence[str], texts: Sequence[str]) -> str:
    """sha256 over the embedder id and every (id, text) pair, in order."""
    digest = hashlib.sha256()
    digest.update(b"pytest-retrieval vectors v1\0")
    digest.update(embedder_id.encode("utf-8") + b"\0")
    for doc_id, text in zip(doc_ids, texts):
        digest.update(doc_id.encode("utf-8", "surrogatepass") + b"\x1f")
        digest.update(text.encode("utf-8", "surrogatepass") + b"\x1e")
    return digest.hexdigest()


def embed_corpus(
    embedder: Embedder, documents: Sequence[Document], cache_dir: Optional[PathLike] = None
) -> DocVectors:
    """Embed every document (text from :func:`document_text`), reusing a disk cache.

    The cache file is ``<cache_dir>/<embedder>-<sha256(embedder id, ids, texts)>.npy`` (rows
    in corpus order), written atomically (temp file + rename), so a changed corpus, text or
    embedder never reuses stale vectors and concurrent runs never see half a file. An
    unreadable or mismatched cache file is recomputed; an unwritable cache directory only
    warns. Embedders with ``cacheable = False`` (precomputed vectors) bypass the cache."""
    from ...types import DocVectors

    doc_ids = [str(d.doc_id) for d in documents]
    texts = [document_text(d) for d in documents]
    if not getattr(embedder, "cacheable", True):
        matrix = as_matrix(
            embedder.embed_documents(doc_ids, texts), len(doc_ids), f"embedder {embedder.id!r}"
        )
        return DocVectors(doc_ids, matrix, embedder.id)

    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = corpus_cache_key(embedder.id, doc_ids, texts)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder.id)[:60].strip("_") or "embedder"
    path = directory / f"{slug}-{key[:24]}.npy"
    cached = _cached_matrix(path, len(doc_ids))
    if cached is not None:
        return DocVectors(doc_ids, cached, embedder.id)
    matrix = as_matrix(embedder.embed_documents(doc_ids, texts), len(doc_ids), f"embedder {embedder.id!r}")
    _atomic_save(path, matrix)
    return DocVectors(doc_ids, matrix, embedder.id)


def _cached_matrix(path: Path, rows: int) -> Optional[np.ndarray]:
    """The cached float32 matrix of ``rows`` rows at ``path``; None when absent, unreadable
    or mismatched (the caller recomputes and overwrites it)."""
    import numpy as np

    if not path.is_file():
        return None
    try:
        cached = np.load(path, allow_pickle=False)
        if cached.ndim == 2 and cached.shape[0] == rows and cached.dtype == np.float32:
            return cached
    except Exception:  # unreadable: recompute and overwrite
        pass
    return None


def _atomic_save(path: Path, matrix: np.ndarray) -> None:
    """The matrix as ``.npy`` through :func:`~pytest_retrieval.fileio.atomic_write`; a cache
    that cannot be written only warns."""
    import numpy as np

    try:
        atomic_write(path, lambda fh: np.save(fh, matrix, allow_pickle=False), binary=True)
    except OSError as exc:
        warnings.warn(
            f"pytest-retrieval: could not cache document vectors in {path.parent}: {exc}",
            RuntimeWarning,
            stacklevel=3,
        )
