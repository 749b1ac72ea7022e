"""Precomputed embedder: vectors computed elsewhere, read from ``.npy`` + id list or JSONL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Sequence, Tuple

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from ...errors import ConfigError
from ...io.numeric import external_float
from ..config_parsing import ModelConfig, PathStr
from ..digests import file_digest
from ..files import PathLike, resolve
from .base import Embedder

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


_FLOAT32_MAX = 3.4028234663852886e38  # numpy.finfo(numpy.float32).max
NO_SIDE = "precomputed embedder: give 'queries' and/or 'documents' vectors"


def _missing_ids_error(what: str, source: Any, missing: Sequence[str]) -> ConfigError:
    shown = ", ".join(repr(m) for m in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return ConfigError(f"no {what} vector for {len(missing)} id(s): {shown}{more}", file=str(source))


def _read_ids(path: Path, rows: int, vectors: Path) -> Dict[str, int]:
    """id -> row of an id list (one id per non-empty line, ``rows`` of them)."""
    ids: List[str] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\r\n")
            if line.strip():
                ids.append(line.strip())
    if len(ids) != rows:
        raise ConfigError(f"{len(ids)} ids for {rows} vector rows in {vectors}", file=str(path))
    row: Dict[str, int] = {}
    for i, doc_id in enumerate(ids):
        if doc_id in row:
            raise ConfigError(f"duplicate id {doc_id!r}", file=str(path), line=i + 1)
        row[doc_id] = i
    return row


def _is_number_list(vec: Any) -> bool:
    """A non-empty list of numbers (``true``/``false`` are not numbers)."""
    return (
        isinstance(vec, list)
        and bool(vec)
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vec)
    )


def _finite(x: Any) -> bool:
    """A finite number (``io.numeric``: NaN, infinities, integers too large for a float are not)."""
    try:
        external_float(x)
    except ValueError:
        return False
    return True


def _vector_of(obj: Any, dim: Optional[int], where: str, lineno: int) -> List[float]:
    """The vector of one JSONL line, checked (same ``dim`` as the lines before)."""
    if not isinstance(obj, dict) or "id" not in obj or "vector" not in obj:
        raise ConfigError('expected {"id": ..., "vector": [...]}', file=where, line=lineno)
    vec = obj["vector"]
    if not _is_number_list(vec):
        raise ConfigError('"vector" must be a non-empty list of numbers', file=where, line=lineno)
    if not all(_finite(x) and abs(x) <= _FLOAT32_MAX for x in vec):
        raise ConfigError(
            '"vector" has NaN, infinite or values beyond float32\'s range', file=where, line=lineno
        )
    if dim is not None and len(vec) != dim:
        raise ConfigError(
            f"vector has {len(vec)} dimensions, earlier ones have {dim}", file=where, line=lineno
        )
    return vec


def _as_float32(matrix: Any, where: str) -> np.ndarray:
    """The vectors as float32 (what the engines store), refusing NaN, infinities and values
    beyond float32's range (they would become infinities), with the first bad row."""
    import numpy as np

    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise ConfigError(
            f"vector row {int(np.flatnonzero(bad)[0])} contains NaN or infinite values", file=where
        )
    limit = float(np.finfo(np.float32).max)
    wide = np.abs(matrix).max(axis=1) > limit if matrix.size else bad
    if wide.any():
        raise ConfigError(
            f"vector row {int(np.flatnonzero(wide)[0])} has values beyond float32's range (+-{limit:.3g})",
            file=where,
        )
    return np.ascontiguousarray(matrix, dtype=np.float32)


class _VectorFile:
    """One side (queries or documents) of a precomputed embedder, loaded on first use."""

    def __init__(self, what: str, vectors: Path, ids: Optional[Path]):
        self.what = what
        self.vectors = vectors
        self.ids_path = ids
        self._matrix: Any = None
        self._row: Dict[str, int] = {}

    @property
    def source(self) -> str:
        return str(self.vectors)

    def load(self) -> Tuple[np.ndarray, Dict[str, int]]:
        if self._matrix is None:
            if self.vectors.suffix.lower() in (".jsonl", ".ndjson"):
                self._matrix, self._row = self._load_jsonl()
            else:
                self._matrix, self._row = self._load_npy()
        return self._matrix, self._row

    def _load_npy(self) -> Tuple[np.ndarray, Dict[str, int]]:
        import numpy as np

        if self.ids_path is None:
            raise ConfigError(
                f"{self.what} vectors in .npy need an id list file (one id per line, row i = line i)",
                file=str(self.vectors),
            )
        if not self.vectors.is_file():
            raise ConfigError(f"{self.what} vector file not found", file=str(self.vectors))
        if not self.ids_path.is_file():
            raise ConfigError(f"{self.what} id list not found", file=str(self.ids_path))
        try:
            matrix = np.load(self.vectors, allow_pickle=False)
        except Exception as exc:
            raise ConfigError(f"cannot read {self.what} vectors: {exc}", file=str(self.vectors)) from None
        if matrix.ndim != 2 or not np.issubdtype(matrix.dtype, np.number):
            raise ConfigError(
                f"expected a 2-D numeric array, found shape {matrix.shape} dtype {matrix.dtype}",
                file=str(self.vectors),
            )
        row = _read_ids(self.ids_path, matrix.shape[0], self.vectors)
        return _as_float32(matrix, str(self.vectors)), row

    def _load_jsonl(self) -> Tuple[np.ndarray, Dict[str, int]]:
        import numpy as np

        if not self.vectors.is_file():
            raise ConfigError(f"{self.what} vector file not found", file=str(self.vectors))
        rows: List[List[float]] = []
        row: Dict[str, int] = {}
        where = str(self.vectors)
        with open(self.vectors, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"invalid JSON: {exc.msg}", file=where, line=lineno) from None
                vec = _vector_of(obj, len(rows[0]) if rows else None, where, lineno)
                doc_id = str(obj["id"])
                if doc_id in row:
                    raise ConfigError(f"duplicate id {doc_id!r}", file=where, line=lineno)
                row[doc_id] = len(rows)
                rows.append(vec)
        if not rows:
            raise ConfigError(f"no {self.what} vectors in the file", file=where)
        return _as_float32(np.asarray(rows, dtype=np.float64), where), row

    def lookup(self, ids: Sequence[str]) -> np.ndarray:
        import numpy as np

        matrix, row = self.load()
        missing = [str(i) for i in ids if str(i) not in row]
        if missing:
            raise _missing_ids_error(self.what, self.ids_path or self.vectors, missing)
        index = np.fromiter((row[str(i)] for i in ids), dtype=np.int64, count=len(ids))
        return matrix[index]


class PrecomputedEmbedder:
    """Vectors computed outside the test run.

    Each side is either ``.npy`` (2-D array) + an id list file (one id per line, row ``i`` is
    line ``i``), or a ``.jsonl`` file of ``{"id": ..., "vector": [...]}`` lines. Lookups by
    id; an id without a vector is a :class:`ConfigError` naming the file and the first
    missing ids. The two sides must have the same dimension. Not cached again on disk."""

    cacheable = False

    def __init__(
        self,
        queries: Optional[PathLike] = None,
        query_ids: Optional[PathLike] = None,
        documents: Optional[PathLike] = None,
        document_ids: Optional[PathLike] = None,
        id: Optional[str] = None,
    ):
        if queries is None and documents is None:
            raise ConfigError(NO_SIDE)
        self._queries = (
            _VectorFile("query", Path(queries), _opt_path(query_ids)) if queries is not None else None
        )
        self._documents = (
            _VectorFile("document", Path(documents), _opt_path(document_ids))
            if documents is not None
            else None
        )
        self._id = id

    @property
    def id(self) -> str:
        if self._id is None:
            files: List[Optional[Path]] = []
            for side in (self._documents, self._queries):
                if side is not None:
                    for path in (side.vectors, side.ids_path):
                        if path is not None and not path.is_file():
                            raise ConfigError("precomputed vector file not found", file=str(path))
                        files.append(path)
            self._id = "precomputed:" + file_digest(*files)[:16]
        return self._id

    def _side(self, which: str) -> _VectorFile:
        side = self._queries if which == "query" else self._documents
        if side is None:
            key = "queries" if which == "query" else "documents"
            raise ConfigError(f"precomputed embedder has no {which} vectors (set '{key}')")
        return side

    def _check_dims(self) -> None:
        if self._queries is not None and self._documents is not None:
            q, _ = self._queries.load()
            d, _ = self._documents.load()
            if q.shape[1] != d.shape[1]:
                raise ConfigError(
                    f"query vectors have {q.shape[1]} dimensions ({self._queries.source}) but "
                    f"document vectors have {d.shape[1]} ({self._documents.source})"
                )

    def embed_queries(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        side = self._side("query")
        self._check_dims()
        return side.lookup(ids)

    def embed_documents(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        side = self._side("document")
        self._check_dims()
        return side.lookup(ids)

    def __repr__(self) -> str:
        return (
            f"PrecomputedEmbedder(queries={self._queries and self._queries.source!r}, "
            f"documents={self._documents and self._documents.source!r})"
        )


def _opt_path(value: Optional[PathLike]) -> Optional[Path]:
    return Path(value) if value is not None else None


class PrecomputedEmbedderConfig(ModelConfig):
    type: Literal["precomputed"]
    aliases = ("npy", "jsonl")
    queries: Optional[PathStr] = Field(None, description="Query vectors: .npy (with query_ids) or .jsonl.")
    query_ids: Optional[PathStr] = Field(None, description="Query ids of the .npy rows, one per line.")
    documents: Optional[PathStr] = Field(
        None, description="Document vectors: .npy (with document_ids) or .jsonl."
    )
    document_ids: Optional[PathStr] = Field(None, description="Document ids of the .npy rows, one per line.")
    id: Optional[str] = Field(None, description="Version of the vectors (default: a hash of the files).")

    @model_validator(mode="after")
    def _one_side(self) -> PrecomputedEmbedderConfig:
        if self.queries is None and self.documents is None:
            raise PydanticCustomError("precomputed_side", NO_SIDE)
        return self

    def build(self, base_dir: Path) -> Embedder:
        def path(value: Optional[str]) -> Optional[Path]:
            return None if value is None else resolve(base_dir, value)

        return PrecomputedEmbedder(
            queries=path(self.queries),
            query_ids=path(self.query_ids),
            documents=path(self.documents),
            document_ids=path(self.document_ids),
            id=self.id,
        )
