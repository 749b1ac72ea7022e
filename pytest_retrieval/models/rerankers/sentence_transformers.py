"""sentence-transformers reranker: ``sentence_transformers.CrossEncoder`` (optional extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Sequence

from pydantic import Field
from typing_extensions import Annotated

from ...errors import InfrastructureError
from ...numbers import NUMBER
from ..config_parsing import ModelConfig, PathStr
from ..digests import options_tag
from ..files import local_or_hub
from ..imports import require_sentence_transformers, sentence_transformers_class
from .base import (
    Candidate,
    Reranker,
    apply_activation,
    check_activation,
    logits_to_scores,
)


class SentenceTransformersCrossEncoder:
    """``sentence_transformers.CrossEncoder`` (optional: ``pip install
    pytest-retrieval[sentence-transformers]``), imported and loaded on first use.
    Scores are ``CrossEncoder.predict`` on the (query, doc) pairs; a 2-column output becomes
    ``col1 - col0`` as for the ONNX cross-encoder. ``max_length``, ``device`` and
    ``batch_size`` are passed through. The ``id`` names the model, not its weights: pin a
    revision (or set ``id``) if the model can change under the same name."""

    def __init__(
        self,
        model: str,
        max_length: Optional[int] = None,
        batch_size: int = 32,
        device: Optional[str] = None,
        activation: Optional[str] = None,
        id: Optional[str] = None,
    ):
        require_sentence_transformers("reranker")
        self.model_name_or_path = str(model)
        self.max_length = int(max_length) if max_length else None
        self.batch_size = int(batch_size)
        self.device = device
        self.activation = check_activation(activation, "sentence-transformers reranker")
        tag = options_tag(
            max_length=self.max_length, activation=None if self.activation == "none" else self.activation
        )
        self.id = id or f"sentence-transformers-cross-encoder:{self.model_name_or_path}{tag}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            cross_encoder = sentence_transformers_class("CrossEncoder")
            kwargs: Dict[str, Any] = {}
            if self.max_length:
                kwargs["max_length"] = self.max_length
            if self.device:
                kwargs["device"] = self.device
            try:
                self._model = cross_encoder(self.model_name_or_path, **kwargs)
            except Exception as exc:
                raise InfrastructureError(
                    f"cannot load sentence-transformers cross-encoder {self.model_name_or_path!r}: {exc}"
                ) from exc
        return self._model

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        import numpy as np

        if not candidates:
            return []
        model = self._load()
        pairs = [(query_text or "", text or "") for _, text in candidates]
        try:
            raw = model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        except Exception as exc:
            raise InfrastructureError(
                f"sentence-transformers cross-encoder {self.model_name_or_path!r} failed: {exc}"
            ) from exc
        scores = logits_to_scores(
            np.asarray(raw, dtype=np.float64), f"cross-encoder {self.model_name_or_path!r}"
        )
        return apply_activation(scores, self.activation).tolist()


class SentenceTransformersRerankerConfig(ModelConfig):
    type: Literal["sentence-transformers"]
    aliases = ("sentence_transformers", "st")
    model: PathStr = Field(description="A cross-encoder on the Hugging Face hub, or a local folder.")
    max_length: Optional[Annotated[int, NUMBER]] = Field(
        None, description="Tokens per pair (default: the model's)."
    )
    batch_size: Annotated[int, NUMBER] = Field(32, description="Pairs per batch.")
    device: Optional[str] = Field(None, description="cpu, cuda, mps... (default: the package's choice).")
    activation: Optional[str] = Field(None, description="none (raw scores) or sigmoid.")
    id: Optional[str] = Field(None, description="Version of the model (default: its name).")

    def build(self, base_dir: Path) -> Reranker:
        return SentenceTransformersCrossEncoder(local_or_hub(self.model, base_dir), **self.options("model"))
