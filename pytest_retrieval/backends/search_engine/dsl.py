"""The query DSL both engines share: BM25 ``match``/``multi_match`` clauses, the kNN
candidate count, the team's own query templates, and the search body of a spec.

The few places where the engines differ (the kNN clause) come from the engine adapter.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Dict, List, Mapping, Optional

from ...errors import ConfigError
from ...types import Query
from ..base import BM25Spec, KnnSpec, SparseSpec, TemplateSpec

__all__ = [
    "bm25_query",
    "check_k",
    "default_num_candidates",
    "render_template",
    "search_body",
    "vector_to_list",
]

_PLACEHOLDER_RE = {
    "query_vector": re.compile(r"\{\{\s*query_vector\s*\}\}"),
    "query_text": re.compile(r"\{\{\s*query_text\s*\}\}"),
    "k": re.compile(r"\{\{\s*k\s*\}\}"),
}

# (spec, query vector, k) -> the engine's kNN search body
KnnBody = Callable[[KnnSpec, List[float], int], Dict[str, Any]]


def vector_to_list(vector: Any) -> List[float]:
    if hasattr(vector, "tolist"):
        vector = vector.tolist()
    return [float(x) for x in vector]


def check_k(k: int) -> int:
    """``k`` is a positive int within the engines' result window."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ConfigError(f"k must be a positive int, not {k!r}")
    if k > 10000:
        raise ConfigError(f"k={k} is above the engines' result window (10000)")
    return k


def search_body(
    spec: Any,
    query: Query,
    k: int,
    knn_body: KnnBody,
    engine: str,
    sparse_body: Optional[Callable[[Any, Query, int], Dict[str, Any]]] = None,
) -> Dict[str, Any]:
    """The search body for one query: BM25, kNN (the engine's clause), learned sparse (the
    engine's, ``sparse.SparseSearch``) or a template."""
    body: Dict[str, Any]
    if isinstance(spec, SparseSpec) and sparse_body is not None:
        body = sparse_body(spec, query, k)
    elif isinstance(spec, BM25Spec):
        body = {"query": bm25_query(spec, query.text)}
    elif isinstance(spec, KnnSpec):
        if query.vector is None:
            raise ConfigError(
                f"query {query.qid!r} has no vector: a kNN retriever needs query "
                "embeddings (configure an embedder or give vectors)"
            )
        vector = vector_to_list(query.vector)
        if not all(math.isfinite(x) for x in vector):
            raise ConfigError(f"query {query.qid!r}: the vector has NaN or infinite values")
        if getattr(spec, "similarity", None) == "cosine" and not any(vector):
            raise ConfigError(
                f"query {query.qid!r}: the vector is all zeros and has no cosine similarity "
                f"({engine} refuses it; an empty text embedded?)"
            )
        body = knn_body(spec, vector, k)
    elif isinstance(spec, TemplateSpec):
        if spec.body is None:
            raise ConfigError("a template retriever needs a body")
        body = render_template(spec.body, query, k)
    else:
        raise ConfigError(f"{engine} backend cannot run a {type(spec).__name__}")
    body.setdefault("size", k)
    body.setdefault("_source", False)
    return body


def render_template(body: Any, query: Query, k: int) -> Dict[str, Any]:
    """Fill a TemplateSpec body: ``"{{query_vector}}"`` (a whole JSON string) -> the vector list,
    ``{{query_text}}`` inside strings -> the query text (JSON-escaped), ``{{k}}`` -> the int.

    ``body`` is a JSON-able dict (or a JSON string with the same placeholders)."""
    if isinstance(body, (str, bytes)):
        return _render_text(body.decode() if isinstance(body, bytes) else body, query, k)
    if not isinstance(body, Mapping):
        raise ConfigError("the query template must be a JSON object (a search request body)")
    return _render_node(body, query, k)


def _template_vector(query: Query) -> List[float]:
    if query.vector is None:
        raise ConfigError(
            f"the query template uses {{{{query_vector}}}} but query {query.qid!r} "
            "has no vector (no query embedder configured?)"
        )
    return vector_to_list(query.vector)


def _render_text(text: str, query: Query, k: int) -> Dict[str, Any]:
    """A template given as JSON text: placeholders filled in the text, then parsed."""
    if _PLACEHOLDER_RE["query_vector"].search(text):
        text = re.sub(
            r'"\s*\{\{\s*query_vector\s*\}\}\s*"', lambda _m: json.dumps(_template_vector(query)), text
        )
    text = re.sub(r'"\s*\{\{\s*k\s*\}\}\s*"', str(int(k)), text)
    text = _PLACEHOLDER_RE["k"].sub(str(int(k)), text)
    escaped = json.dumps(query.text)[1:-1]
    text = _PLACEHOLDER_RE["query_text"].sub(lambda _m: escaped, text)
    try:
        rendered = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"the query template is not valid JSON once rendered: {exc}") from None
    if not isinstance(rendered, dict):
        raise ConfigError("the query template must be a JSON object (a search request body)")
    return rendered


def _render_node(node: Any, query: Query, k: int) -> Any:
    """A template given as JSON-able data: placeholders filled value by value."""
    if isinstance(node, Mapping):
        return {str(key): _render_node(value, query, k) for key, value in node.items()}
    if isinstance(node, (list, tuple)):
        return [_render_node(v, query, k) for v in node]
    if isinstance(node, str):
        if _PLACEHOLDER_RE["query_vector"].fullmatch(node.strip()):
            return _template_vector(query)
        if _PLACEHOLDER_RE["k"].fullmatch(node.strip()):
            return int(k)
        if _PLACEHOLDER_RE["query_vector"].search(node):
            raise ConfigError(
                "{{query_vector}} must be a whole JSON string value "
                '(write "{{query_vector}}", not text around it)'
            )
        node = _PLACEHOLDER_RE["k"].sub(str(int(k)), node)
        return _PLACEHOLDER_RE["query_text"].sub(lambda _m: query.text, node)
    return node


def bm25_query(spec: BM25Spec, text: str) -> Dict[str, Any]:
    """BM25Spec -> ``match`` (one field) or ``multi_match`` (several, ``field^boost``)."""
    fields = list(spec.fields)
    if not fields:
        raise ConfigError("a BM25 retriever needs at least one field")
    if len(fields) == 1:
        name, boost = fields[0]
        clause: Dict[str, Any] = {"query": text}
        if float(boost) != 1.0:
            clause["boost"] = float(boost)
        return {"match": {name: clause}}
    if spec.multi_match_type not in ("best_fields", "most_fields"):
        raise ConfigError(
            f"multi_match_type must be best_fields or most_fields, not {spec.multi_match_type!r}"
        )
    mm: Dict[str, Any] = {
        "query": text,
        "type": spec.multi_match_type,
        "fields": [name if float(boost) == 1.0 else f"{name}^{float(boost):g}" for name, boost in fields],
    }
    if spec.multi_match_type == "best_fields" and spec.tie_breaker:
        mm["tie_breaker"] = float(spec.tie_breaker)
    return {"multi_match": mm}


def default_num_candidates(spec: KnnSpec, k: int) -> int:
    if spec.num_candidates is not None:
        if int(spec.num_candidates) < k:
            raise ConfigError(f"num_candidates ({spec.num_candidates}) must be >= k ({k})")
        return int(spec.num_candidates)
    return min(10000, max(k * 2, 100, k))
