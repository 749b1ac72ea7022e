"""The ``index`` keys of a suite, declared once: the suite schema's ``backend.index`` and what
the Elasticsearch/OpenSearch backend accepts (``index.IndexPlan.parse``)."""

from __future__ import annotations

from typing import Any, Dict, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import Annotated

from ...numbers import NUMBER

__all__ = ["DEFAULT_REAP_AFTER_HOURS", "DEFAULT_VECTOR_FIELD", "INDEX_KEYS", "IndexConfig"]

DEFAULT_VECTOR_FIELD = "embedding"
DEFAULT_REAP_AFTER_HOURS = 24  # an int: the published JSON Schema says 24


# The one declaration of the ``index`` keys and their defaults: the suite schema's
# ``backend.index`` (no docstring: it would become the published JSON Schema's description).
class IndexConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: Optional[str] = Field(
        default=None,
        description="Existing index (read-only). Omit for a throwaway index built from the corpus.",
    )
    id_field: Optional[Annotated[str, Field(min_length=1)]] = Field(
        default=None,
        description="The document field that holds the judgments' ids (a SKU, a URL), read from each "
        "hit's fields or _source instead of the engine's _id (existing and throwaway indexes, and "
        "the embedded engine's corpus).",
    )
    mappings: Optional[Dict[str, Any]] = None
    settings: Optional[Dict[str, Any]] = None
    vector_field: str = DEFAULT_VECTOR_FIELD
    quantization: Optional[Literal["none", "int8", "int4", "bbq"]] = Field(
        default=None,
        description="Vector quantisation of a throwaway index (default none: float HNSW, pinned so "
        "that Elasticsearch 9's bbq_hnsw default does not apply). int8/int4/bbq = Elasticsearch "
        "int8_hnsw/int4_hnsw/bbq_hnsw; OpenSearch: int8 = Lucene sq 7 bits, bbq = sq 1 bit (3.6+).",
    )
    reap_after_hours: Annotated[float, Field(gt=0), NUMBER] = Field(
        default=DEFAULT_REAP_AFTER_HOURS,
        description="Throwaway indexes of crashed runs older than this are deleted.",
    )


# what the backend is handed: the suite's ``index`` keys, plus the suite's name, the first
# BM25 variant and vector similarity, and whether a sparse retriever will add document
# vectors (``sparse: true``: the throwaway index is built once, by prepare_sparse)
INDEX_KEYS = set(IndexConfig.model_fields) | {"suite", "bm25", "similarity", "sparse"}
