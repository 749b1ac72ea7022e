"""sentence-transformers embedder: the ``sentence-transformers`` package itself (optional extra)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional, Sequence

from pydantic import Field
from typing_extensions import Annotated

from ...errors import InfrastructureError
from ...numbers import NUMBER
from ..config_parsing import ModelConfig, PathStr
from ..digests import options_tag
from ..files import local_or_hub
from ..imports import require_sentence_transformers, sentence_transformers_class
from ..outputs import as_matrix
from .base import Embedder

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class SentenceTransformersEmbedder:
    """The ``sentence-transformers`` package (optional: ``pip install
    pytest-retrieval[sentence-transformers]``). The package is imported and the model
    loaded on first use; ``normalize``, ``batch_size``, ``device`` and the two prefixes
    behave as in :class:`~pytest_retrieval.models.embedders.OnnxEmbedder`. The ``id`` names
    the model, not its weights: pin a revision (or set ``id`` in the config) if the model can
    change under the same name."""

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
        require_sentence_transformers("embedder")
        self.model_name_or_path = str(model_name_or_path)
        self.normalize = bool(normalize)
        self.batch_size = int(batch_size)
        self.query_prefix = query_prefix or ""
        self.document_prefix = document_prefix or ""
        self.device = device
        tag = options_tag(
            normalize=self.normalize, query_prefix=self.query_prefix, document_prefix=self.document_prefix
        )
        self.id = id or f"sentence-transformers:{self.model_name_or_path}{tag}"
        self._model: Any = None

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if self._model is None:
            model_class = sentence_transformers_class("SentenceTransformer")
            try:
                self._model = model_class(self.model_name_or_path, device=self.device)
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
        return as_matrix(vectors, len(texts), f"model {self.model_name_or_path!r}")

    def embed_queries(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.query_prefix)

    def embed_documents(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.document_prefix)


class SentenceTransformersEmbedderConfig(ModelConfig):
    type: Literal["sentence-transformers"]
    aliases = ("sentence_transformers", "st")
    model: PathStr = Field(description="A model name on the Hugging Face hub, or a local folder.")
    normalize: bool = Field(True, description="L2-normalise the vectors.")
    batch_size: Annotated[int, NUMBER] = Field(32, description="Texts per batch.")
    query_prefix: str = Field("", description="Prepended to queries (E5, BGE...).")
    document_prefix: str = Field("", description="Prepended to documents.")
    device: Optional[str] = Field(None, description="cpu, cuda, mps... (default: the package's choice).")
    id: Optional[str] = Field(None, description="Version of the model (default: its name).")

    def build(self, base_dir: Path) -> Embedder:
        return SentenceTransformersEmbedder(local_or_hub(self.model, base_dir), **self.options("model"))
