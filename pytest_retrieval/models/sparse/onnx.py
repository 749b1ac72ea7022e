"""ONNX sparse encoder: a SPLADE-style masked-language-model export run with onnxruntime.

Per text, the weight of vocabulary entry ``j`` is ``max over tokens i of log(1 + relu(logits[i, j]))``
over the tokens the attention mask keeps (SPLADE v2/++ "max pooling": Formal et al. 2021,
"SPLADE v2", eq. 2; naver/splade ``models/transformer_rep.py``); its term is the tokenizer's
token ``j``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Sequence

from pydantic import Field
from typing_extensions import Annotated

from ...errors import ConfigError
from ..config_parsing import ModelConfig, PathStr
from ..files import PathLike, resolve
from ..onnx_runtime import OnnxModel
from ..tokenization import length_batches
from .base import SparseEncoder, SparseVector

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


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
            vocab: Dict[str, int] = self._tokenizer.get_vocab(with_added_tokens=True)
            terms = [""] * (max(vocab.values(), default=-1) + 1)
            for token, column in vocab.items():
                terms[column] = token
            self._terms = terms
        return self._terms

    def _encode(self, texts: Sequence[str], prefix: str) -> List[SparseVector]:
        self._load()
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch([prefix + (t or "") for t in texts])
        lengths = [len(e.ids) for e in encodings]
        out: List[SparseVector] = [{} for _ in texts]
        for batch, width in length_batches(lengths, self.batch_size, self.max_batch_tokens):
            weights = self._run([encodings[i] for i in batch], width)
            for row, i in enumerate(batch):
                out[i] = self._as_vector(weights[row])
        return out

    def _run(self, encodings: List[Any], width: int) -> np.ndarray:
        """(texts, vocabulary) weights: max over unmasked tokens of log(1 + relu(logits))."""
        import numpy as np

        logits, mask = self._infer(encodings, width, "ONNX sparse encoder")
        logits = np.asarray(logits, dtype=np.float32)
        terms = self._vocabulary()
        if logits.ndim != 3 or logits.shape[2] != len(terms):
            raise ConfigError(
                f"vocabulary mismatch: the model's output has shape {tuple(logits.shape)}, expected "
                f"(texts, tokens, {len(terms)}) for the tokenizer's {len(terms)} tokens",
                file=str(self.model_path),
            )
        if np.isnan(logits[np.asarray(mask, dtype=bool)]).any():  # max(NaN, 0) would drop the term silently
            raise ConfigError("the model returned NaN logits", file=str(self.model_path))
        weights = np.log1p(np.maximum(logits, 0.0)) * mask[:, :, None].astype(np.float32)
        return np.asarray(weights.max(axis=1))

    def _as_vector(self, row: np.ndarray) -> SparseVector:
        import numpy as np

        terms = self._vocabulary()
        nz = np.flatnonzero(row > 0)
        return {terms[j]: float(row[j]) for j in nz}

    def encode_queries(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._encode(texts, self.query_prefix)

    def encode_documents(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._encode(texts, self.document_prefix)

    def __repr__(self) -> str:
        return f"OnnxSparseEncoder({str(self.model_dir)!r}, max_length={self.max_length})"


class OnnxSparseEncoderConfig(ModelConfig):
    type: Literal["onnx"]
    model: PathStr = Field(description="Folder with model.onnx (MLM logits output) and tokenizer.json.")
    max_length: Annotated[int, Field(ge=2)] = Field(256, description="Tokens per text.")
    batch_size: Annotated[int, Field(gt=0)] = Field(32, description="Texts per batch at most.")
    max_batch_tokens: Annotated[int, Field(gt=0)] = Field(
        512, description="Padded tokens per batch at most (the logits hold tokens x vocabulary floats)."
    )
    threads: Optional[Annotated[int, Field(gt=0)]] = Field(
        None, description="onnxruntime threads (default: the usable cores)."
    )
    query_prefix: str = Field("", description="Prepended to queries.")
    document_prefix: str = Field("", description="Prepended to documents.")

    def build(self, base_dir: Path) -> SparseEncoder:
        return OnnxSparseEncoder(resolve(base_dir, self.model), **self.options("model"))
