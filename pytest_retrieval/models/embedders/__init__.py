"""Embedders: turn query and document texts into vectors for kNN stages.

An :class:`Embedder` has a stable ``id`` (used in cache keys and baseline fingerprints) and
two methods, ``embed_queries(ids, texts)`` and ``embed_documents(ids, texts)``, each returning
a float32 array of shape ``(len(texts), dim)``. Four kinds ship with the plugin, one module
each, with its config model beside it:

``precomputed``  vectors computed elsewhere, read from ``.npy`` + id list or from JSONL.
``onnx``         a sentence-transformers model exported to ONNX, run with onnxruntime.
``sentence-transformers``  the sentence-transformers package itself (optional extra).
``callable``     your own ``module:function`` taking a list of texts.

:func:`make_embedder` (``factory``) builds one from its config; :func:`embed_corpus`
(``cache``) embeds the corpus once and caches the matrix on disk. Documents are embedded as
``title + " " + text`` (the BEIR convention), see :func:`document_text`.

numpy, onnxruntime, tokenizers and sentence-transformers are imported on first use.
"""

from .base import Embedder
from .cache import CACHE_ENV, corpus_cache_key, default_cache_dir, document_text, embed_corpus
from .callables import CallableEmbedder, CallableEmbedderConfig
from .factory import EMBEDDER_CONFIGS, EmbedderConfig, make_embedder
from .onnx import OnnxEmbedder, OnnxEmbedderConfig
from .precomputed import PrecomputedEmbedder, PrecomputedEmbedderConfig
from .sentence_transformers import SentenceTransformersEmbedder, SentenceTransformersEmbedderConfig

# fmt: off
__all__ = [
    "CACHE_ENV", "EMBEDDER_CONFIGS", "CallableEmbedder", "CallableEmbedderConfig", "Embedder",
    "EmbedderConfig", "OnnxEmbedder", "OnnxEmbedderConfig", "PrecomputedEmbedder",
    "PrecomputedEmbedderConfig", "SentenceTransformersEmbedder", "SentenceTransformersEmbedderConfig",
    "corpus_cache_key", "default_cache_dir", "document_text", "embed_corpus", "make_embedder",
]
# fmt: on
