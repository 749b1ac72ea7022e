"""Rerankers: re-score a retriever's top ``window`` candidates for one query.

A :class:`Reranker` has a stable ``id`` (it changes whenever the scores would change) and one
method, ``rerank(query_text, candidates) -> scores``, where ``candidates`` is a sequence of
``(doc_id, doc_text)`` and the scores come back in the same order (higher = more relevant).
:func:`rerank_ranking` applies one to a :class:`~pytest_retrieval.types.Ranking`, and
:func:`rerank_run` to every query of a :class:`~pytest_retrieval.types.Run` (``apply``).

Kinds (built from their config by :func:`make_reranker`, ``factory``), one module each, with
its config model beside it:

``onnx-cross-encoder``     a cross-encoder exported to ONNX (query/document pairs -> logits),
                           run with onnxruntime + tokenizers.
``onnx-bi-encoder``        cosine between query and document embeddings of an ONNX
                           sentence-embedding model (:class:`~pytest_retrieval.models.embedders.OnnxEmbedder`).
``sentence-transformers``  ``sentence_transformers.CrossEncoder`` (optional extra).
``cohere``                 Cohere's hosted ``/v2/rerank``, through the official ``cohere`` SDK.
``callable``               your own ``module:function(query, docs: list[str]) -> scores``.

Errors. Bad configuration (unknown keys, missing model files, missing packages, a document
without text, a callable returning the wrong shape) is :class:`ConfigError`; a model or
service that cannot answer (onnxruntime failure, HTTP errors after retries, malformed
responses) is :class:`InfrastructureError`. API keys never appear in a message or ``repr``.

numpy, onnxruntime, tokenizers and sentence-transformers are imported on first use.
"""

from .apply import MAX_SENSIBLE_WINDOW, rerank_ranking, rerank_run, rerank_warnings
from .base import Candidate, Reranker
from .callables import CallableReranker, CallableRerankerConfig
from .cohere import CohereReranker, CohereRerankerConfig
from .factory import RERANKER_CONFIGS, RerankerConfig, make_reranker
from .onnx_bi_encoder import EmbedderReranker, OnnxBiEncoderReranker, OnnxBiEncoderRerankerConfig
from .onnx_cross_encoder import OnnxCrossEncoderReranker, OnnxCrossEncoderRerankerConfig
from .sentence_transformers import SentenceTransformersCrossEncoder, SentenceTransformersRerankerConfig

# fmt: off
__all__ = [
    "MAX_SENSIBLE_WINDOW", "RERANKER_CONFIGS", "CallableReranker", "CallableRerankerConfig",
    "Candidate", "CohereReranker", "CohereRerankerConfig", "EmbedderReranker", "OnnxBiEncoderReranker",
    "OnnxBiEncoderRerankerConfig", "OnnxCrossEncoderReranker", "OnnxCrossEncoderRerankerConfig",
    "Reranker", "RerankerConfig", "SentenceTransformersCrossEncoder",
    "SentenceTransformersRerankerConfig", "make_reranker", "rerank_ranking", "rerank_run",
    "rerank_warnings",
]
# fmt: on
