"""Embedders: turn query and document texts into vectors for kNN stages.

An :class:`Embedder` has a stable ``id`` (used in cache keys and baseline fingerprints) and
two methods, ``embed_queries(ids, texts)`` and ``embed_documents(ids, texts)``, each returning
a float32 array of shape ``(len(texts), dim)``. Four kinds ship with the plugin:

``precomputed``  vectors computed elsewhere, read from ``.npy`` + id list or from JSONL.
``onnx``         a sentence-transformers model exported to ONNX, run with onnxruntime.
``sentence-transformers``  the sentence-transformers package itself (optional extra).
``callable``     your own ``module:function`` taking a list of texts.

:func:`make_embedder` builds one from a suite's config dict; :func:`embed_corpus` embeds the
corpus once and caches the matrix on disk. Documents are embedded as
``title + " " + text`` (the BEIR convention), see :func:`document_text`.

numpy, onnxruntime, tokenizers and sentence-transformers are imported on first use.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Union,
    runtime_checkable,
)

from ..errors import ConfigError, InfrastructureError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..types import Document, DocVectors

__all__ = [
    "CACHE_ENV",
    "CallableEmbedder",
    "Embedder",
    "OnnxEmbedder",
    "PrecomputedEmbedder",
    "SentenceTransformersEmbedder",
    "default_cache_dir",
    "document_text",
    "embed_corpus",
    "make_embedder",
]

CACHE_ENV = "PYTEST_RETRIEVAL_CACHE_DIR"
PathLike = Union[str, "os.PathLike[str]"]


@runtime_checkable
class Embedder(Protocol):
    """What the suite runner needs from an embedder.

    ``id`` must change whenever the vectors would change (model, pooling, prefixes...), and
    must not change otherwise: it keys the document-vector cache and baseline fingerprints.
    An embedder may set ``cacheable = False`` to skip the disk cache (precomputed vectors
    are already on disk)."""

    id: str

    def embed_queries(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray: ...

    def embed_documents(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray: ...


# ---- helpers -----------------------------------------------------------------------------


def _as_matrix(value: Any, n: int, source: str) -> np.ndarray:
    """Check an embedder's output: numeric, finite, shape (n, dim); return float32 C-order."""
    import numpy as np

    try:
        matrix = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source} returned something that is not a numeric array ({exc})")
    if matrix.ndim != 2 or matrix.shape[0] != n:
        raise ConfigError(
            f"{source} returned an array of shape {tuple(matrix.shape)} for {n} texts; expected ({n}, dim)"
        )
    if not np.isfinite(matrix).all():
        raise ConfigError(f"{source} returned NaN or infinite values")
    return np.ascontiguousarray(matrix)


def _normalize_rows(matrix: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def _file_digest(*paths: Optional[Path]) -> str:
    """sha256 over the contents of the given files (None entries are skipped)."""
    digest = hashlib.sha256()
    for path in paths:
        if path is None:
            continue
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _options_tag(**options: Any) -> str:
    """A short, stable tag for options that change the vectors (omitted when default)."""
    parts = [f"{k}={v}" for k, v in sorted(options.items()) if v not in (None, "", False)]
    if not parts:
        return ""
    return ":" + hashlib.sha256(";".join(parts).encode()).hexdigest()[:10]


def _missing_ids_error(what: str, source: Any, missing: Sequence[str]) -> ConfigError:
    shown = ", ".join(repr(m) for m in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return ConfigError(f"no {what} vector for {len(missing)} id(s): {shown}{more}", file=str(source))


# ---- precomputed -------------------------------------------------------------------------


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
            raise ConfigError(f"cannot read {self.what} vectors: {exc}", file=str(self.vectors))
        if matrix.ndim != 2 or not np.issubdtype(matrix.dtype, np.number):
            raise ConfigError(
                f"expected a 2-D numeric array, found shape {matrix.shape} dtype {matrix.dtype}",
                file=str(self.vectors),
            )
        ids: List[str] = []
        with open(self.ids_path, encoding="utf-8") as fh:
            for line in fh:
                line = line.rstrip("\r\n")
                if line.strip():
                    ids.append(line.strip())
        if len(ids) != matrix.shape[0]:
            raise ConfigError(
                f"{len(ids)} ids for {matrix.shape[0]} vector rows in {self.vectors}",
                file=str(self.ids_path),
            )
        row: Dict[str, int] = {}
        for i, doc_id in enumerate(ids):
            if doc_id in row:
                raise ConfigError(f"duplicate id {doc_id!r}", file=str(self.ids_path), line=i + 1)
            row[doc_id] = i
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if not np.isfinite(matrix).all():
            raise ConfigError("vectors contain NaN or infinite values", file=str(self.vectors))
        return matrix, row

    def _load_jsonl(self) -> Tuple[np.ndarray, Dict[str, int]]:
        import numpy as np

        if not self.vectors.is_file():
            raise ConfigError(f"{self.what} vector file not found", file=str(self.vectors))
        rows: List[List[float]] = []
        row: Dict[str, int] = {}
        dim: Optional[int] = None
        where = str(self.vectors)
        with open(self.vectors, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"invalid JSON: {exc.msg}", file=where, line=lineno)
                if not isinstance(obj, dict) or "id" not in obj or "vector" not in obj:
                    raise ConfigError('expected {"id": ..., "vector": [...]}', file=where, line=lineno)
                vec = obj["vector"]
                if (
                    not isinstance(vec, list)
                    or not vec
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vec)
                ):
                    raise ConfigError('"vector" must be a non-empty list of numbers', file=where, line=lineno)
                if dim is None:
                    dim = len(vec)
                elif len(vec) != dim:
                    raise ConfigError(
                        f"vector has {len(vec)} dimensions, earlier ones have {dim}", file=where, line=lineno
                    )
                doc_id = str(obj["id"])
                if doc_id in row:
                    raise ConfigError(f"duplicate id {doc_id!r}", file=where, line=lineno)
                row[doc_id] = len(rows)
                rows.append(vec)
        if not rows:
            raise ConfigError(f"no {self.what} vectors in the file", file=where)
        matrix = np.asarray(rows, dtype=np.float32)
        if not np.isfinite(matrix).all():
            raise ConfigError("vectors contain NaN or infinite values", file=where)
        return matrix, row

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
            raise ConfigError("precomputed embedder: give 'queries' and/or 'documents' vectors")
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
            self._id = "precomputed:" + _file_digest(*files)[:16]
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


# ---- ONNX ----------------------------------------------------------------------------------


def _available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def load_onnx(
    model_path: Path,
    tokenizer_path: Path,
    max_length: int,
    threads: int,
    what: str,
    truncation: str = "longest_first",
) -> Tuple[Any, Any, int, Tuple[str, ...]]:
    """(tokenizer, onnxruntime session, pad id, input names) of a BERT-like ONNX model, shared
    by the ONNX embedder and the ONNX rerankers. The tokenizer truncates to ``max_length``
    and does not pad (callers pad each batch to its longest text); the session runs on CPU
    with ``threads`` intra-op threads. Every failure is one :class:`ConfigError` line."""
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError(
            f"the {what} needs onnxruntime and tokenizers ({exc}); pip install pytest-retrieval[onnx]"
        ) from None
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:
        raise ConfigError(f"cannot read the tokenizer: {exc}", file=str(tokenizer_path))
    tokenizer.enable_truncation(max_length=max_length, strategy=truncation)
    pad = tokenizer.padding or {}
    pad_id = pad.get("pad_id")
    if pad_id is None:
        pad_id = tokenizer.token_to_id(str(pad.get("pad_token", "[PAD]"))) or 0
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:
        raise ConfigError(f"cannot load the ONNX model: {exc}", file=str(model_path))
    inputs = tuple(i.name for i in session.get_inputs())
    if "input_ids" not in inputs:
        raise ConfigError(
            f"the {what} has no 'input_ids' input (it has {', '.join(inputs)})", file=str(model_path)
        )
    unknown = [n for n in inputs if n not in ("input_ids", "attention_mask", "token_type_ids")]
    if unknown:
        raise ConfigError(
            f"the {what} needs model inputs it cannot provide: {', '.join(unknown)}", file=str(model_path)
        )
    return tokenizer, session, int(pad_id), inputs


class OnnxEmbedder:
    """A sentence-transformers model exported to ONNX, run with onnxruntime + tokenizers.

    ``model_dir`` holds ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``.
    Texts are tokenised with truncation at ``max_length`` tokens (default: the folder's
    ``sentence_bert_config.json`` ``max_seq_length``, else 256) and padded per batch; the
    inputs the model declares among ``input_ids``/``attention_mask``/``token_type_ids`` are
    fed as int64. A batch holds at most ``batch_size`` texts and ``max_batch_tokens`` padded
    tokens. The sentence vector is the mean of ``last_hidden_state`` over the
    attention mask (or the ``[CLS]`` vector when ``pooling="cls"``, or when the folder's
    ``1_Pooling/config.json`` says so), L2-normalised when ``normalize``. Texts are sorted
    by length before batching, as sentence-transformers does. ``query_prefix`` /
    ``document_prefix`` are prepended to the texts (for models such as E5 or BGE).
    onnxruntime uses ``threads`` intra-op threads (default: the cores this process may use).
    """

    cacheable = True

    def __init__(
        self,
        model_dir: PathLike,
        max_length: Optional[int] = None,
        batch_size: int = 32,
        normalize: bool = True,
        pooling: Optional[str] = None,
        query_prefix: str = "",
        document_prefix: str = "",
        threads: Optional[int] = None,
        max_batch_tokens: int = 2048,
    ):
        self.model_dir = Path(model_dir)
        if not self.model_dir.is_dir():
            raise ConfigError("ONNX model folder not found", file=str(self.model_dir))
        candidates = [self.model_dir / "model.onnx", self.model_dir / "onnx" / "model.onnx"]
        model_path = next((p for p in candidates if p.is_file()), None)
        if model_path is None:
            found = sorted(self.model_dir.glob("*.onnx"))
            if len(found) != 1:
                raise ConfigError("no model.onnx in the ONNX model folder", file=str(self.model_dir))
            model_path = found[0]
        self.model_path = model_path
        self.tokenizer_path = self.model_dir / "tokenizer.json"
        if not self.tokenizer_path.is_file():
            raise ConfigError("no tokenizer.json in the ONNX model folder", file=str(self.model_dir))
        st_config = _read_json(self.model_dir / "sentence_bert_config.json")
        if max_length is None:
            max_length = int(st_config.get("max_seq_length") or 256)
        if pooling is None:
            pool_config = _read_json(self.model_dir / "1_Pooling" / "config.json")
            pooling = "cls" if pool_config.get("pooling_mode_cls_token") else "mean"
        if pooling not in ("mean", "cls"):
            raise ConfigError(f"ONNX embedder: pooling must be 'mean' or 'cls', not {pooling!r}")
        if int(max_length) < 2 or int(batch_size) < 1:
            raise ConfigError("ONNX embedder: max_length must be >= 2 and batch_size >= 1")
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.max_batch_tokens = max(1, int(max_batch_tokens))
        self.normalize = bool(normalize)
        self.pooling = pooling
        self._pad_id = 0
        self.query_prefix = query_prefix or ""
        self.document_prefix = document_prefix or ""
        self.threads = int(threads) if threads else _available_cores()
        self._id: Optional[str] = None
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: Tuple[str, ...] = ()
        self._output_name = ""

    @property
    def id(self) -> str:
        if self._id is None:
            digest = _file_digest(self.model_path, self.tokenizer_path)[:12]
            tag = _options_tag(
                max_length=self.max_length,
                pooling=self.pooling,
                normalize=self.normalize,
                query_prefix=self.query_prefix,
                document_prefix=self.document_prefix,
            )
            self._id = f"onnx:{self.model_dir.name}:{digest}{tag}"
        return self._id

    def _load(self) -> None:
        if self._session is not None:
            return
        tokenizer, session, self._pad_id, inputs = load_onnx(
            self.model_path, self.tokenizer_path, self.max_length, self.threads, "ONNX embedder"
        )
        outputs = {o.name: o for o in session.get_outputs()}
        if "last_hidden_state" in outputs:
            self._output_name = "last_hidden_state"
        elif "sentence_embedding" in outputs:
            self._output_name = "sentence_embedding"
        else:
            self._output_name = session.get_outputs()[0].name
        self._input_names = inputs
        self._tokenizer = tokenizer
        self._session = session

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        import numpy as np

        self._load()
        texts = [prefix + (t or "") for t in texts]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)  # truncated, not padded
        lengths = [len(e.ids) for e in encodings]
        # Longest first, and batches bounded by a token budget as well as by batch_size:
        # long documents go 8 at a time, short queries 32 at a time (on 2 CPU cores, 8 x 256
        # tokens ran 1.7x faster per document than 32 x 256).
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        out: Optional[np.ndarray] = None
        start = 0
        while start < len(order):
            width = max(1, lengths[order[start]])
            size = max(1, min(self.batch_size, self.max_batch_tokens // width))
            batch = order[start : start + size]
            start += size
            vectors = self._run([encodings[i] for i in batch], width)
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[batch] = vectors
        assert out is not None
        return _normalize_rows(out) if self.normalize else out

    def _run(self, encodings: List[Any], width: int) -> np.ndarray:
        import numpy as np

        n = len(encodings)
        ids = np.full((n, width), self._pad_id, dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            length = len(enc.ids)
            ids[row, :length] = enc.ids
            mask[row, :length] = 1
            types[row, :length] = enc.type_ids
        feed = {"input_ids": ids}
        if "attention_mask" in self._input_names:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = types
        try:
            (hidden,) = self._session.run([self._output_name], feed)
        except Exception as exc:
            raise InfrastructureError(f"ONNX model {self.model_path} failed: {exc}") from exc
        hidden = np.asarray(hidden, dtype=np.float32)
        if hidden.ndim == 2:  # the model pools itself
            return hidden
        if self.pooling == "cls":
            return hidden[:, 0, :]
        weights = mask.astype(np.float32)[:, :, None]
        summed = (hidden * weights).sum(axis=1)
        return summed / np.maximum(weights.sum(axis=1), 1e-9)

    def embed_queries(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.query_prefix)

    def embed_documents(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.document_prefix)

    def __repr__(self) -> str:
        return f"OnnxEmbedder({str(self.model_dir)!r}, max_length={self.max_length})"


def _read_json(path: Path) -> Dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read JSON: {exc}", file=str(path))
    return value if isinstance(value, dict) else {}


# ---- sentence-transformers -----------------------------------------------------------------


class SentenceTransformersEmbedder:
    """The ``sentence-transformers`` package (optional: ``pip install
    pytest-retrieval[sentence-transformers]``). The package is imported and the model
    loaded on first use; ``normalize``, ``batch_size``, ``device`` and the two prefixes
    behave as in :class:`OnnxEmbedder`. The ``id`` names the model, not its weights: pin a
    revision (or set ``id`` in the config) if the model can change under the same name."""

    cacheable = True

    def __init__(
        self,
        model_name_or_path: str,
        normalize: bool = True,
        batch_size: int = 32,
        query_prefix: str = "",
        document_prefix: str = "",
        device: Optional[str] = None,
        id: Optional[str] = None,
    ):
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ConfigError(
                "the sentence-transformers embedder needs the "
                "sentence-transformers package: "
                "pip install pytest-retrieval[sentence-transformers]"
            )
        self.model_name_or_path = str(model_name_or_path)
        self.normalize = bool(normalize)
        self.batch_size = int(batch_size)
        self.query_prefix = query_prefix or ""
        self.document_prefix = document_prefix or ""
        self.device = device
        tag = _options_tag(
            normalize=self.normalize, query_prefix=self.query_prefix, document_prefix=self.document_prefix
        )
        self.id = id or f"sentence-transformers:{self.model_name_or_path}{tag}"
        self._model: Any = None

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ConfigError(
                    f"cannot import sentence-transformers ({exc}); pip install "
                    f"pytest-retrieval[sentence-transformers]"
                ) from None
            try:
                self._model = SentenceTransformer(self.model_name_or_path, device=self.device)
            except Exception as exc:
                raise InfrastructureError(
                    f"cannot load sentence-transformers model {self.model_name_or_path!r}: {exc}"
                ) from exc
        texts = [prefix + (t or "") for t in texts]
        try:
            vectors = self._model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=self.normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as exc:
            raise InfrastructureError(f"sentence-transformers encode failed: {exc}") from exc
        return _as_matrix(vectors, len(texts), f"model {self.model_name_or_path!r}")

    def embed_queries(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.query_prefix)

    def embed_documents(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.document_prefix)


# ---- callable ------------------------------------------------------------------------------


def _import_function(
    spec: str, search_path: Optional[Path], what: str = "callable embedder"
) -> Callable[..., Any]:
    """``module:function`` (dotted attributes allowed) imported with ``search_path`` (the
    suite's folder) on ``sys.path``; every failure is one :class:`ConfigError` line."""
    module_name, sep, attr = str(spec).partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{what}: expected 'module:function', got {spec!r}")
    added = False
    if search_path is not None and str(search_path) not in sys.path:
        sys.path.insert(0, str(search_path))
        added = True
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(
            f"{what} {spec!r}: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        if added:
            try:
                sys.path.remove(str(search_path))
            except ValueError:  # pragma: no cover
                pass
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigError(f"{what} {spec!r}: {module_name!r} has no {attr!r}")
    if not callable(target):
        raise ConfigError(f"{what} {spec!r}: {attr!r} is not callable")
    return target


def _source_digest(fn: Callable[..., Any]) -> str:
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    source = getattr(module, "__file__", None)
    if source and os.path.isfile(source):
        return _file_digest(Path(source))[:10]
    return ""


class CallableEmbedder:
    """Your own function: ``function(texts: list[str]) -> array-like (len(texts), dim)``.

    ``function`` is ``"module:function"`` (``module:Class.method`` works too), imported with
    ``search_path`` (the suite folder) on ``sys.path``; ``query_function`` optionally embeds
    queries differently. Import problems and malformed outputs are :class:`ConfigError`,
    exceptions raised by the function are :class:`InfrastructureError`. The ``id`` includes a
    hash of the function's source file, so editing it invalidates cached vectors; pass
    ``id`` to version it yourself instead."""

    cacheable = True

    def __init__(
        self,
        function: str,
        query_function: Optional[str] = None,
        search_path: Optional[PathLike] = None,
        id: Optional[str] = None,
    ):
        path = Path(search_path) if search_path is not None else None
        self.function_name = function
        self.query_function_name = query_function
        self._function = _import_function(function, path)
        self._query_function = _import_function(query_function, path) if query_function else self._function
        if id:
            self.id = id
        else:
            digest = _source_digest(self._function)
            if query_function:
                digest += "+" + _source_digest(self._query_function)
            name = function + (f"|{query_function}" if query_function else "")
            self.id = f"callable:{name}" + (f":{digest}" if digest.strip("+") else "")

    def _call(self, fn: Callable[..., Any], name: str, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        try:
            value = fn(list(texts))
        except Exception as exc:
            raise InfrastructureError(
                f"callable embedder {name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return _as_matrix(value, len(texts), f"callable embedder {name!r}")

    def embed_queries(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._call(self._query_function, self.query_function_name or self.function_name, texts)

    def embed_documents(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._call(self._function, self.function_name, texts)


# ---- factory -------------------------------------------------------------------------------

_KEYS: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]] = {
    # type: (required keys, optional keys)
    "precomputed": ((), ("queries", "query_ids", "documents", "document_ids", "id")),
    "onnx": (
        ("model",),
        (
            "max_length",
            "batch_size",
            "max_batch_tokens",
            "normalize",
            "pooling",
            "query_prefix",
            "document_prefix",
            "threads",
        ),
    ),
    "sentence-transformers": (
        ("model",),
        ("normalize", "batch_size", "query_prefix", "document_prefix", "device", "id"),
    ),
    "callable": (("function",), ("query_function", "id")),
}
_ALIASES = {
    "sentence_transformers": "sentence-transformers",
    "st": "sentence-transformers",
    "python": "callable",
    "npy": "precomputed",
    "jsonl": "precomputed",
}


def make_embedder(config: Mapping[str, Any], base_dir: PathLike = ".") -> Embedder:
    """Build an embedder from a suite config dict; relative paths resolve against ``base_dir``.

    ``{"type": "precomputed", "queries": "vectors/queries.npy", "query_ids":
    "vectors/query_ids.txt", "documents": "vectors/corpus.npy", "document_ids":
    "vectors/corpus_ids.txt"}`` (``.jsonl`` files need no id list; either side may be
    left out; optional ``id``);
    ``{"type": "onnx", "model": "models/minilm"}`` plus optional ``max_length``,
    ``batch_size``, ``max_batch_tokens``, ``normalize``, ``pooling`` (``mean``/``cls``),
    ``query_prefix``, ``document_prefix``, ``threads``;
    ``{"type": "sentence-transformers", "model": "name or path"}`` plus optional
    ``normalize``, ``batch_size``, ``query_prefix``, ``document_prefix``, ``device``, ``id``;
    ``{"type": "callable", "function": "module:function"}`` plus optional
    ``query_function``, ``id`` (modules are imported with ``base_dir`` on ``sys.path``).
    Unknown keys and missing required keys are :class:`ConfigError`."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"embedder: expected a mapping, got {type(config).__name__}")
    raw_type = config.get("type")
    if not isinstance(raw_type, str) or not raw_type:
        raise ConfigError(
            "embedder: 'type' is required (precomputed, onnx, sentence-transformers or callable)"
        )
    kind = _ALIASES.get(raw_type.lower(), raw_type.lower())
    if kind not in _KEYS:
        raise ConfigError(f"embedder: unknown type {raw_type!r} (known: {', '.join(_KEYS)})")
    required, optional = _KEYS[kind]
    unknown = [k for k in config if k != "type" and k not in required and k not in optional]
    if unknown:
        raise ConfigError(
            f"embedder ({kind}): unknown key(s) {', '.join(map(repr, unknown))} "
            f"(allowed: {', '.join(required + optional)})"
        )
    missing = [k for k in required if config.get(k) in (None, "")]
    if missing:
        raise ConfigError(f"embedder ({kind}): missing {', '.join(map(repr, missing))}")
    base = Path(base_dir)

    def path(key: str) -> Optional[Path]:
        value = config.get(key)
        if value is None:
            return None
        if not isinstance(value, (str, os.PathLike)):
            raise ConfigError(f"embedder ({kind}): {key!r} must be a path")
        p = Path(os.path.expanduser(os.fspath(value)))
        return p if p.is_absolute() else base / p

    def opt(key: str, typ: type, default: Any = None) -> Any:
        value = config.get(key, default)
        if value is None:
            return default
        if typ is int and isinstance(value, bool) or not isinstance(value, typ):
            raise ConfigError(f"embedder ({kind}): {key!r} must be {typ.__name__}, got {value!r}")
        return value

    if kind == "precomputed":
        return PrecomputedEmbedder(
            queries=path("queries"),
            query_ids=path("query_ids"),
            documents=path("documents"),
            document_ids=path("document_ids"),
            id=opt("id", str),
        )
    if kind == "onnx":
        return OnnxEmbedder(
            path("model"),  # type: ignore[arg-type]
            max_length=opt("max_length", int),
            batch_size=opt("batch_size", int, 32),
            max_batch_tokens=opt("max_batch_tokens", int, 2048),
            normalize=opt("normalize", bool, True),
            pooling=opt("pooling", str),
            query_prefix=opt("query_prefix", str, ""),
            document_prefix=opt("document_prefix", str, ""),
            threads=opt("threads", int),
        )
    if kind == "sentence-transformers":
        model = str(config["model"])
        local = path("model")
        if local is not None and (model.startswith((".", "~")) or local.exists()):
            model = str(local)  # a local folder; a hub name is passed through
        return SentenceTransformersEmbedder(
            model,
            normalize=opt("normalize", bool, True),
            batch_size=opt("batch_size", int, 32),
            query_prefix=opt("query_prefix", str, ""),
            document_prefix=opt("document_prefix", str, ""),
            device=opt("device", str),
            id=opt("id", str),
        )
    return CallableEmbedder(
        opt("function", str), query_function=opt("query_function", str), search_path=base, id=opt("id", str)
    )


# ---- corpus embedding + disk cache ---------------------------------------------------------


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
    import numpy as np

    from ..types import DocVectors

    doc_ids = [str(d.doc_id) for d in documents]
    texts = [document_text(d) for d in documents]
    if not getattr(embedder, "cacheable", True):
        matrix = _as_matrix(
            embedder.embed_documents(doc_ids, texts), len(doc_ids), f"embedder {embedder.id!r}"
        )
        return DocVectors(doc_ids, matrix, embedder.id)

    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = corpus_cache_key(embedder.id, doc_ids, texts)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder.id)[:60].strip("_") or "embedder"
    path = directory / f"{slug}-{key[:24]}.npy"
    if path.is_file():
        try:
            cached = np.load(path, allow_pickle=False)
            if cached.ndim == 2 and cached.shape[0] == len(doc_ids) and cached.dtype == np.float32:
                return DocVectors(doc_ids, cached, embedder.id)
        except Exception:  # unreadable: recompute and overwrite below
            pass
    matrix = _as_matrix(embedder.embed_documents(doc_ids, texts), len(doc_ids), f"embedder {embedder.id!r}")
    _atomic_save(path, matrix)
    return DocVectors(doc_ids, matrix, embedder.id)


def _atomic_save(path: Path, matrix: np.ndarray) -> None:
    import numpy as np

    tmp_name = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, matrix, allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, path)
        tmp_name = None
    except OSError as exc:
        warnings.warn(
            f"pytest-retrieval: could not cache document vectors in {path.parent}: {exc}",
            RuntimeWarning,
            stacklevel=3,
        )
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
