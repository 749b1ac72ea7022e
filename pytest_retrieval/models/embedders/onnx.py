"""ONNX embedder: a sentence-transformers model exported to ONNX, run with onnxruntime."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Literal, Optional, Sequence

from pydantic import Field
from typing_extensions import Annotated

from ...errors import ConfigError
from ...numbers import NUMBER
from ..config_parsing import ModelConfig, PathStr
from ..files import PathLike, read_json, resolve
from ..onnx_runtime import OnnxModel
from ..outputs import normalize_rows
from ..tokenization import length_batches
from .base import Embedder

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class OnnxEmbeddingOptions(ModelConfig):
    """The options of an ONNX sentence-embedding model (the embedder's and the bi-encoder
    reranker's)."""

    type: str  # each kind's Literal
    model: PathStr = Field(description="Folder with model.onnx (or onnx/model.onnx) and tokenizer.json.")
    max_length: Optional[Annotated[int, Field(gt=0), NUMBER]] = Field(
        None, description="Tokens per text (default: the folder's max_seq_length, else 256)."
    )
    batch_size: Annotated[int, Field(gt=0), NUMBER] = Field(32, description="Texts per batch at most.")
    max_batch_tokens: Annotated[int, NUMBER] = Field(2048, description="Padded tokens per batch at most.")
    pooling: Optional[str] = Field(None, description="mean or cls (default: the folder's 1_Pooling).")
    query_prefix: str = Field("", description="Prepended to queries (E5, BGE...).")
    document_prefix: str = Field("", description="Prepended to documents.")
    threads: Optional[Annotated[int, NUMBER]] = Field(
        None, description="onnxruntime threads (default: the usable cores)."
    )


class OnnxEmbedder(OnnxModel):
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

    what = "ONNX embedder"

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
        self._find_files(model_dir, threads)
        st_config = read_json(self.model_dir / "sentence_bert_config.json")
        if max_length is None:
            max_length = int(st_config.get("max_seq_length") or 256)
        if pooling is None:
            pool_config = read_json(self.model_dir / "1_Pooling" / "config.json")
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
        self.query_prefix = query_prefix or ""
        self.document_prefix = document_prefix or ""
        self._id: Optional[str] = None

    @property
    def id(self) -> str:
        if self._id is None:
            self._id = self._model_id(
                "onnx",
                max_length=self.max_length,
                pooling=self.pooling,
                normalize=self.normalize,
                query_prefix=self.query_prefix,
                document_prefix=self.document_prefix,
            )
        return self._id

    def _pick_output(self, names: Sequence[str]) -> str:
        for name in ("last_hidden_state", "sentence_embedding"):
            if name in names:
                return name
        return names[0]

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        import numpy as np

        self._load()
        texts = [prefix + (t or "") for t in texts]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)  # truncated, not padded
        lengths = [len(e.ids) for e in encodings]
        out: Optional[np.ndarray] = None
        for batch, width in length_batches(lengths, self.batch_size, self.max_batch_tokens):
            vectors = self._run([encodings[i] for i in batch], width)
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[batch] = vectors
        assert out is not None
        return normalize_rows(out) if self.normalize else out

    def _run(self, encodings: List[Any], width: int) -> np.ndarray:
        import numpy as np

        hidden, mask = self._infer(encodings, width, "ONNX model")
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


class OnnxEmbedderConfig(OnnxEmbeddingOptions):
    type: Literal["onnx"]
    normalize: bool = Field(True, description="L2-normalise the vectors.")

    def build(self, base_dir: Path) -> Embedder:
        return OnnxEmbedder(resolve(base_dir, self.model), **self.options("model"))
