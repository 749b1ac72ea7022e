"""Learned sparse retrieval (SPLADE-style, #25) on Elasticsearch and OpenSearch: the
documents' vectors checked and added to a throwaway index, the query body, the check of an
existing index's field, and the precision the engine scores at.

score(q, d) = sum over shared terms of q_weight x d_weight. Both engines keep a document's
weights as Lucene ``FeatureField`` term frequencies (Elasticsearch ``sparse_vector``,
OpenSearch ``rank_features``): ``FeatureField`` stores ``Float.floatToIntBits(w) >>> 15``
(lucene/core/src/java/org/apache/lucene/document/FeatureField.java, ``encodeFeatureValue``),
i.e. the sign, the exponent and the first 8 of 23 mantissa bits: 9 significant bits, the
rest truncated, so a stored weight is up to 2^-8 (0.39 %) below the one sent. Query weights
are the clauses' float32 weights (``FeatureField.newLinearQuery``: weight x stored value),
summed by a disjunction. The engines' scores are therefore exact dot products of the query
with the truncated document weights (``tests/engines/test_sparse_engines.py`` checks that to
1e-5 and measures what the truncation does to rankings against exact scores).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Set, Tuple

from ...errors import ConfigError, InfrastructureError
from ...types import DocSparseVectors, Query
from ..base import SparseSpec
from .http import EngineHTTP

__all__ = [
    "PRECISION",
    "SPARSE_FIELD",
    "SparseFields",
    "SparseSearch",
    "SparseQuery",
    "check_doc_vectors",
    "check_sparse_field",
    "feature_value",
    "query_weights",
    "sparse_facts",
    "sparse_query_body",
]

PRECISION_BITS = 9
PRECISION = (
    f"Lucene feature precision ({PRECISION_BITS} bits): document weights truncated to "
    f"{PRECISION_BITS} significant bits (relative error < 2^-8), query weights float32"
)
SPARSE_FIELD = "sparse_embedding"  # a throwaway index's (first) learned sparse field
_FLOAT32_MAX = 3.4028234663852886e38
_FLOAT32_MIN_NORMAL = 1.1754943508222875e-38  # FeatureField refuses subnormal weights

# why a server may lack the field type a throwaway index maps
_MISSING_TYPE = {
    "rank_features": "this OpenSearch lacks the mapper-extras module that defines rank_features (every "
    "distribution has it but the integ-test one: add the module, as scripts/engines does)",
    "sparse_vector": "sparse_vector needs Elasticsearch >= 8.11",
}

# (field, {term: weight}) -> the engine's query clause
SparseQuery = Callable[[str, Dict[str, float]], Dict[str, Any]]


def mapping_of(field_type: str) -> Dict[str, Any]:
    """A throwaway index's sparse field: Elasticsearch ``sparse_vector``, OpenSearch
    ``rank_features`` (mapper-extras module, in every distribution); no options: Elasticsearch
    9.1+ index_options (pruning) act on the query, which turns them off (``prune: false``)."""
    return {"type": field_type}


def feature_value(weight: float) -> float:
    """The weight a ``FeatureField`` keeps: float32, mantissa truncated to its first 8 bits
    (``FeatureField.encodeFeatureValue`` / ``decodeFeatureValue``)."""
    import struct

    bits = struct.unpack("<I", struct.pack("<f", weight))[0]
    return float(struct.unpack("<f", struct.pack("<I", (bits >> 15) << 15))[0])


def _checked_weight(weight: Any, where: str) -> Optional[float]:
    """A weight the engine can store (float32, positive, normal); None for a zero weight
    (it adds nothing to any score); a ConfigError naming ``where`` otherwise."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)):
        try:
            weight = float(weight)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: the weight {weight!r} is not a number") from None
    w = float(weight)
    if not math.isfinite(w) or w < 0:
        raise ConfigError(f"{where}: the weight {w!r} is negative or not finite")
    if w == 0:
        return None
    if w > _FLOAT32_MAX or w < _FLOAT32_MIN_NORMAL:
        raise ConfigError(
            f"{where}: the weight {w!r} is outside the float32 range the engines store "
            f"({_FLOAT32_MIN_NORMAL:.3g} .. {_FLOAT32_MAX:.3g})"
        )
    return w


def _checked_vector(vector: Any, where: str) -> Dict[str, float]:
    if not isinstance(vector, Mapping):
        raise ConfigError(
            f"{where}: a sparse vector must be a {{term: weight}} mapping, not {type(vector).__name__}"
        )
    out: Dict[str, float] = {}
    for term, weight in vector.items():
        if not isinstance(term, str) or not term:
            raise ConfigError(f"{where}: the term {term!r} is not a non-empty string")
        w = _checked_weight(weight, f"{where}, term {term!r}")
        if w is not None:
            out[term] = w
    return out


def check_doc_vectors(doc_sparse: DocSparseVectors) -> Dict[str, Dict[str, float]]:
    """document id -> its vector (zero weights left out: they add nothing); one ConfigError
    naming the first document and term an engine could not store."""
    ids, vectors = list(doc_sparse.doc_ids), list(doc_sparse.vectors)
    if len(ids) != len(vectors):
        raise ConfigError(
            f"DocSparseVectors: {len(ids)} document ids but {len(vectors)} vectors (encoder "
            f"{doc_sparse.encoder_id!r})"
        )
    out: Dict[str, Dict[str, float]] = {}
    for doc_id, vector in zip(ids, vectors):
        key = str(doc_id)
        if key in out:
            raise ConfigError(f"DocSparseVectors: document {key!r} has two sparse vectors")
        out[key] = _checked_vector(vector, f"sparse vector of document {key!r}")
    return out


def query_weights(query: Query) -> Dict[str, float]:
    """The query's {term: weight} (IDF applied by the caller), zero weights left out."""
    if query.sparse is None:
        raise ConfigError(
            f"query {query.qid!r} has no sparse vector: a sparse retriever needs query vectors "
            "(configure its sparse_encoder)"
        )
    return _checked_vector(query.sparse, f"sparse vector of query {query.qid!r}")


def sparse_query_body(field: str, query: Query, k: int, clause: SparseQuery) -> Dict[str, Any]:
    """The search body of one sparse query: the engine's clause, or ``match_none`` for a
    query without a positive weight (a zero-hit query, as in the embedded engine)."""
    weights = query_weights(query)
    if not weights:
        return {"query": {"match_none": {}}, "size": k, "_source": False}
    return {"query": clause(field, weights), "size": k, "_source": False}


def _field_type(found: Any, field: str) -> Set[str]:
    types: Set[str] = set()
    for info in (found or {}).values():
        entry = ((info or {}).get("mappings") or {}).get(field) if isinstance(info, Mapping) else None
        if isinstance(entry, Mapping):
            leaf = field.rsplit(".", 1)[-1]
            types.add(str(((entry.get("mapping") or {}).get(leaf) or {}).get("type", "object")))
    return types


def check_sparse_field(http: EngineHTTP, index: str, field: str, types: Sequence[str]) -> str:
    """The type of ``field`` in ``index`` (an existing index: only read); a ConfigError when it
    is missing or not one of ``types``."""
    found = http.request(
        "GET", f"/{index}/_mapping/field/{field}", what=f"reading the mapping of {field!r} in {index!r}"
    )
    kinds = _field_type(found, field)
    wanted = " or ".join(types)
    if not kinds:
        raise ConfigError(
            f"{http.name} index {index!r} has no field {field!r}: a sparse retriever needs a {wanted} "
            "field holding the documents' vectors (set the retriever's field, or index them)",
            key="retrievers",
        )
    if not kinds <= set(types):
        raise ConfigError(
            f"field {field!r} of {http.name} index {index!r} is {'/'.join(sorted(kinds))}: a sparse "
            f"retriever needs a {wanted} field",
            key="retrievers",
        )
    return sorted(kinds)[0]


def mapped_sparse_fields(http: EngineHTTP, index: str, types: Sequence[str]) -> Dict[str, str]:
    """An existing index's fields of one of ``types`` (dotted paths) -> their type, read from
    its mapping (an alias: every index it points to); {} when the user may not read it."""
    found = http.request(
        "GET", f"/{index}/_mapping", what=f"reading the mapping of {index!r}", ok_status=(401, 403)
    )
    fields: Dict[str, str] = {}

    def walk(props: Any, prefix: str) -> None:
        for name, spec in (props or {}).items() if isinstance(props, dict) else ():
            if isinstance(spec, dict):
                if spec.get("type") in types:
                    fields[prefix + name] = str(spec["type"])
                walk(spec.get("properties"), f"{prefix}{name}.")

    for body in found.values() if isinstance(found, dict) else ():
        walk(((body or {}).get("mappings") or {}).get("properties"), "")
    return fields


def sparse_facts(fields: Mapping[str, str]) -> Dict[str, Any]:
    """``sparse``: per field its type and the precision its scores have (reports, fingerprint)."""
    if not fields:
        return {}
    return {
        "sparse": {
            field: {"type": kind, "score_precision": PRECISION, "precision_bits": PRECISION_BITS}
            for field, kind in sorted(fields.items())
        }
    }


class SparseFields:
    """The learned sparse fields of the searched index. A throwaway index gets one field per
    encoder (``sparse_embedding``, then ``sparse_embedding-2``...), mapped and filled by
    :meth:`add`, which a SparseSpec of that ``encoder_id`` searches; an existing index is
    never written, and its ``SparseSpec.field`` must be one of the engine's sparse types."""

    def __init__(
        self,
        http: EngineHTTP,
        throwaway: Any,  # index.ThrowawayIndex
        plan: Any,  # index.IndexPlan
        types: Sequence[str],
    ):
        self._http, self._throwaway, self._existing = http, throwaway, plan.existing
        self._announced = plan.sparse  # the suite has a sparse retriever (execution.plan)
        self._types = tuple(types)
        self._by_encoder: Dict[str, str] = {}  # a throwaway index's encoder id -> its field
        self._checked: Dict[Tuple[str, str], str] = {}  # (index, field) -> its type
        self._filled: Dict[str, str] = {}  # the throwaway index's sparse fields -> their type
        self._mapping_read: Dict[str, Dict[str, str]] = {}  # an existing index -> its sparse fields

    def add(self, doc_sparse: DocSparseVectors) -> None:
        """Map the encoder's field in the throwaway index and add the vectors to it."""
        if self._existing is not None:
            return  # the existing index's field is checked when a sparse retriever searches
        if self._throwaway.name is None and not self._throwaway.deferred:
            raise InfrastructureError(f"{self._http.name} backend used before prepare() (or closed)")
        vectors = check_doc_vectors(doc_sparse)
        unknown = sorted(set(vectors) - self._throwaway.known_ids())
        if unknown:
            raise ConfigError(
                f"{len(unknown)} document(s) with a sparse vector are not in the corpus "
                f"(first {unknown[0]!r}; encoder {doc_sparse.encoder_id!r})"
            )
        fields = self._by_encoder
        field = fields.get(doc_sparse.encoder_id) or SPARSE_FIELD + (f"-{len(fields) + 1}" if fields else "")
        mapping = mapping_of(self._types[0])
        try:
            self._throwaway.add_sparse(field, mapping, vectors)
        except InfrastructureError as exc:
            if "No handler for type" not in str(exc):
                raise
            raise InfrastructureError(f"{exc}: {_MISSING_TYPE.get(mapping['type'], '')}") from None
        fields[doc_sparse.encoder_id] = field
        self._filled[field] = str(mapping["type"])  # (not .name: that would build a deferred index)

    def field(self, spec: SparseSpec) -> str:
        """The field ``spec`` searches (an existing index: ``spec.field``)."""
        if self._existing is not None:
            return spec.field
        fields = self._by_encoder
        if spec.encoder_id in fields:
            return fields[spec.encoder_id]
        if not spec.encoder_id and len(fields) == 1:
            return next(iter(fields.values()))
        raise ConfigError(
            f"{self._http.name}: no sparse document vectors of encoder {spec.encoder_id!r} were added to "
            f"the throwaway index (prepare_sparse; it holds {sorted(fields) or 'none'})"
        )

    def check(self, index: str, spec: Any) -> None:
        """Read, once per (index, field), that a SparseSpec's field is there and sparse."""
        if not isinstance(spec, SparseSpec):
            return
        field = self.field(spec)
        if (index, field) not in self._checked and field not in self._filled_of(index):
            self._checked[(index, field)] = check_sparse_field(self._http, index, field, self._types)

    def body(self, spec: SparseSpec, query: Query, k: int, clause: SparseQuery) -> Dict[str, Any]:
        """The search body of ``spec`` for one query (:func:`sparse_query_body`)."""
        return sparse_query_body(self.field(spec), query, k, clause)

    def facts(self, index: Optional[str]) -> Dict[str, Any]:
        """:func:`sparse_facts` of the fields of ``index`` searched or filled so far."""
        if self._announced and self._existing is not None and index and index not in self._mapping_read:
            # an existing index: its sparse fields from its mapping, read once (so the reports
            # say the precision before any search)
            self._mapping_read[index] = mapped_sparse_fields(self._http, index, self._types)
        fields = {**self._filled_of(index), **self._mapping_read.get(index or "", {})}
        return sparse_facts({**fields, **{f: t for (i, f), t in self._checked.items() if i == index}})

    def _filled_of(self, index: Optional[str]) -> Dict[str, str]:
        """The fields :meth:`add` filled, when ``index`` is the throwaway index (every build of
        it, variants included, holds them)."""
        return self._filled if self._existing is None and index is not None else {}


class SparseSearch:
    """The learned sparse part of the engine backends: the adapter's field type, mapping and
    query clause, and ``Backend.prepare_sparse``."""

    # the field types a sparse retriever searches (an existing index's field must be one)
    sparse_field_types: Tuple[str, ...] = ()
    _sparse: SparseFields

    def _sparse_clause(self, field: str, weights: Dict[str, float]) -> Dict[str, Any]:
        """The query clause scoring sum of weights[t] x the document's weight of t."""
        raise NotImplementedError

    def _sparse_body(self, spec: SparseSpec, query: Query, k: int) -> Dict[str, Any]:
        return self._sparse.body(spec, query, k, self._sparse_clause)

    def prepare_sparse(self, doc_sparse: DocSparseVectors) -> None:
        """A throwaway index: a sparse field for the vectors' encoder, filled with them; an
        existing index is never written (:class:`SparseFields`)."""
        self._sparse.add(doc_sparse)
