"""ONNX cross-encoder reranker: query/document pairs -> logits, run with onnxruntime."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Literal, Optional, Sequence

from pydantic import Field
from typing_extensions import Annotated

from ...errors import ConfigError, InfrastructureError
from ...numbers import NUMBER
from ..config_parsing import ModelConfig, PathStr
from ..files import PathLike, read_json, resolve
from ..onnx_runtime import OnnxModel
from ..tokenization import length_batches
from .base import (
    Candidate,
    Reranker,
    apply_activation,
    check_activation,
    logits_to_scores,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class OnnxCrossEncoderReranker(OnnxModel):
    """A cross-encoder exported to ONNX (e.g. ``cross-encoder/ms-marco-MiniLM-L-6-v2`` through
    ``optimum-cli export onnx --task text-classification``), run with onnxruntime + tokenizers.

    ``model_dir`` holds ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``. Each
    candidate becomes the pair ``tokenizer.encode(query, doc)`` (the tokenizer's own pair
    template, e.g. ``[CLS] q [SEP] d [SEP]`` with token types 0/1), truncated to
    ``max_length`` tokens with the ``longest_first`` strategy (what Hugging Face tokenizers do
    with ``truncation=True``; default length: ``tokenizer_config.json`` ``model_max_length``
    when <= 8192, else 512). Pairs are sorted by length and batched (``batch_size`` pairs,
    ``max_batch_tokens`` padded tokens). The model's declared inputs among ``input_ids``,
    ``attention_mask`` and ``token_type_ids`` are fed as int64; the output named ``logits``
    (else the first output) gives the score: one logit as is, two logits as
    ``logit[1] - logit[0]``. ``activation="sigmoid"`` maps scores to (0, 1) (same order).
    """

    what = "ONNX cross-encoder"

    def __init__(
        self,
        model_dir: PathLike,
        max_length: Optional[int] = None,
        batch_size: int = 32,
        max_batch_tokens: int = 8192,
        activation: Optional[str] = None,
        threads: Optional[int] = None,
    ):
        self._find_files(model_dir, threads, "onnx cross-encoder: ")
        if max_length is None:
            configured = read_json(self.model_dir / "tokenizer_config.json").get("model_max_length")
            max_length = (
                int(configured) if isinstance(configured, (int, float)) and 2 <= configured <= 8192 else 512
            )
        if int(max_length) < 2 or int(batch_size) < 1 or int(max_batch_tokens) < 1:
            raise ConfigError(
                "onnx cross-encoder: max_length must be >= 2, batch_size and max_batch_tokens >= 1"
            )
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.max_batch_tokens = int(max_batch_tokens)
        self.activation = check_activation(activation, "onnx cross-encoder")
        self._id: Optional[str] = None

    @property
    def id(self) -> str:
        if self._id is None:
            activation = None if self.activation == "none" else self.activation
            self._id = self._model_id("onnx-cross-encoder", max_length=self.max_length, activation=activation)
        return self._id

    def _pick_output(self, names: Sequence[str]) -> str:
        return "logits" if "logits" in names else names[0]

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        import numpy as np

        if not candidates:
            return []
        self._load()
        pairs = [(query_text or "", text or "") for _, text in candidates]
        try:
            encodings = self._tokenizer.encode_batch(pairs)
        except Exception as exc:
            raise InfrastructureError(
                f"onnx cross-encoder {self.model_dir.name}: tokenizing failed: {exc}"
            ) from exc
        lengths = [len(e.ids) for e in encodings]
        scores = np.empty(len(pairs), dtype=np.float64)
        for batch, width in length_batches(lengths, self.batch_size, self.max_batch_tokens):
            scores[batch] = self._run([encodings[i] for i in batch], width)
        return apply_activation(scores, self.activation).tolist()

    def _run(self, encodings: List[Any], width: int) -> np.ndarray:
        n = len(encodings)
        logits, _ = self._infer(encodings, width, "ONNX cross-encoder")
        scores = logits_to_scores(logits, f"ONNX cross-encoder {self.model_path}")
        if scores.shape[0] != n:
            raise InfrastructureError(
                f"ONNX cross-encoder {self.model_path} returned {scores.shape[0]} scores for {n} pairs"
            )
        return scores

    def __repr__(self) -> str:
        return f"OnnxCrossEncoderReranker({str(self.model_dir)!r}, max_length={self.max_length})"


class OnnxCrossEncoderRerankerConfig(ModelConfig):
    type: Literal["onnx-cross-encoder"]
    aliases = ("cross-encoder", "onnx_cross_encoder")
    model: PathStr = Field(description="Folder with model.onnx (or onnx/model.onnx) and tokenizer.json.")
    max_length: Optional[Annotated[int, NUMBER]] = Field(
        None, description="Tokens per pair (default: the tokenizer's model_max_length, else 512)."
    )
    batch_size: Annotated[int, NUMBER] = Field(32, description="Pairs per batch at most.")
    max_batch_tokens: Annotated[int, NUMBER] = Field(8192, description="Padded tokens per batch at most.")
    activation: Optional[str] = Field(None, description="none (raw logits) or sigmoid.")
    threads: Optional[Annotated[int, NUMBER]] = Field(
        None, description="onnxruntime threads (default: the usable cores)."
    )

    def build(self, base_dir: Path) -> Reranker:
        return OnnxCrossEncoderReranker(resolve(base_dir, self.model), **self.options("model"))
