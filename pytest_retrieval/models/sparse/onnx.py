"""ONNX sparse encoder: a SPLADE-style masked-language-model export run with onnxruntime,
pooled by :func:`.splade.splade_max` (SPLADE-max). ``scripts/export_splade_onnx.py`` exports a
``transformers`` masked-language model (e.g. the one a ``transformers`` sparse encoder runs) to
the folder this encoder reads."""

from __future__ import annotations

from pathlib import Path
from typing import List, Literal, Optional, Sequence

from pydantic import Field
from typing_extensions import Annotated

from ...errors import ConfigError
from ...numbers import NUMBER
from ..config_parsing import ModelConfig, PathStr
from ..files import PathLike, resolve
from ..onnx_runtime import OnnxModel
from ..tokenization import length_batches
from .base import SparseEncoder, SparseVector
from .splade import as_vectors, splade_max, vocabulary_terms


class OnnxSparseEncoder(OnnxModel):
    """A SPLADE-style MLM exported to ONNX (``model.onnx`` + ``tokenizer.json``): its output
    ``logits`` (batch, tokens, vocabulary) becomes one ``{token: weight}`` per text. Texts are
    truncated at ``max_length`` tokens and batched longest first, at most ``batch_size`` texts
    and ``max_batch_tokens`` padded tokens per batch. A vocabulary size that differs from the
    tokenizer's is a :class:`ConfigError`."""

    cacheable = True
    what = "ONNX sparse encoder"

    def __init__(
        self,
        model_dir: PathLike,
        max_length: int = 256,
        batch_size: int = 32,
        max_batch_tokens: int = 512,
        threads: Optional[int] = None,
        query_prefix: str = "",
        document_prefix: str = "",
    ):
        self._find_files(model_dir, threads, "sparse encoder: ")
        if int(max_length) < 2:
            raise ConfigError("ONNX sparse encoder: max_length must be >= 2")
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.max_batch_tokens = max(1, int(max_batch_tokens))
        self.query_prefix = query_prefix or ""
        self.document_prefix = document_prefix or ""
        self._id: Optional[str] = None
        self._terms: Optional[List[str]] = None

    @property
    def id(self) -> str:
        if self._id is None:
            self._id = self._model_id(
                "onnx-sparse",
                max_length=self.max_length,
                query_prefix=self.query_prefix,
                document_prefix=self.document_prefix,
            )
        return self._id

    def _pick_output(self, names: Sequence[str]) -> str:
        return "logits" if "logits" in names else names[0]

    def _vocabulary(self) -> List[str]:
        """Vocabulary column -> token, from the tokenizer."""
        if self._terms is None:
            self._terms = vocabulary_terms(self._tokenizer.get_vocab(with_added_tokens=True))
        return self._terms

    def _encode(self, texts: Sequence[str], prefix: str) -> List[SparseVector]:
        self._load()
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch([prefix + (t or "") for t in texts])
        lengths = [len(e.ids) for e in encodings]
        out: List[SparseVector] = [{} for _ in texts]
        terms = self._vocabulary()
        for batch, width in length_batches(lengths, self.batch_size, self.max_batch_tokens):
            logits, mask = self._infer([encodings[i] for i in batch], width, "ONNX sparse encoder")
            weights = splade_max(logits, mask, len(terms), str(self.model_path))
            for i, vector in zip(batch, as_vectors(weights, terms)):
                out[i] = vector
        return out

    def encode_queries(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._encode(texts, self.query_prefix)

    def encode_documents(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._encode(texts, self.document_prefix)

    def __repr__(self) -> str:
        return f"OnnxSparseEncoder({str(self.model_dir)!r}, max_length={self.max_length})"


class OnnxSparseEncoderConfig(ModelConfig):
    type: Literal["onnx"]
    model: PathStr = Field(description="Folder with model.onnx (MLM logits output) and tokenizer.json.")
    max_length: Annotated[int, Field(ge=2), NUMBER] = Field(256, description="Tokens per text.")
    batch_size: Annotated[int, Field(gt=0), NUMBER] = Field(32, description="Texts per batch at most.")
    max_batch_tokens: Annotated[int, Field(gt=0), NUMBER] = Field(
        512, description="Padded tokens per batch at most (the logits hold tokens x vocabulary floats)."
    )
    threads: Optional[Annotated[int, Field(gt=0), NUMBER]] = Field(
        None, description="onnxruntime threads (default: the usable cores)."
    )
    query_prefix: str = Field("", description="Prepended to queries.")
    document_prefix: str = Field("", description="Prepended to documents.")

    def build(self, base_dir: Path) -> SparseEncoder:
        return OnnxSparseEncoder(resolve(base_dir, self.model), **self.options("model"))
