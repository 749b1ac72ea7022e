"""Facts of the searched index that decide its numbers, for the fingerprint and reports:
shards and replicas (each shard scores BM25 with its own statistics unless the search is
``dfs_query_then_fetch``; copies of a shard may differ in deleted documents), and the HNSW
parameters of the vector field (``m``, ``ef_construction``, the engine and quantisation),
which decide what approximate kNN finds."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Mapping, Optional

from .http import EngineHTTP, EngineHTTPError
from .versions import field_mapping, vector_index_facts

__all__ = [
    "field_similarity",
    "hnsw_parameters",
    "index_definition",
    "index_facts",
    "read_vector_mapping",
    "searched_index_facts",
]

#: flat settings that name, date or place one physical copy of an index, not how it scores:
#: left out of its definition, so a blue/green reindex with the same analyzers hashes the same
_PHYSICAL_SETTINGS = (
    "index.creation_date",
    "index.uuid",
    "index.provided_name",
    "index.version.",
    "index.history.uuid",
    "index.routing",
    "index.number_of_replicas",
    "index.auto_expand_replicas",
    "index.blocks.",
    "index.resize.",
    "index.lifecycle.",
    "index.hidden",
    "index.replication.",
    "index.verified_before_close",
)


def hnsw_parameters(mapping: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The HNSW settings of a vector field mapping: Elasticsearch ``dense_vector``
    ``index_options`` or OpenSearch ``knn_vector`` ``method``; None for other fields."""
    kind = mapping.get("type")
    if kind == "dense_vector":
        options = dict(mapping.get("index_options") or {})
        out: Dict[str, Any] = {
            "type": options.pop("type", "default"),
            "similarity": mapping.get("similarity"),
        }
        out.update(options)  # m, ef_construction, confidence_interval (quantised types)
        return out
    if kind == "knn_vector":
        method = dict(mapping.get("method") or {})
        out = {
            "name": method.get("name"),
            "engine": method.get("engine"),
            "space_type": method.get("space_type"),
        }
        out.update(method.get("parameters") or {})  # m, ef_construction, encoder
        for key in ("mode", "compression_level", "data_type"):
            if key in mapping:
                out[key] = mapping[key]
        return out
    return None


def read_vector_mapping(http: EngineHTTP, index: str, vector_field: str) -> Optional[Dict[str, Any]]:
    """The mapping of ``vector_field`` in ``index`` (the first index of an alias that has it);
    None when it has none or the user may not read it (HTTP 401/403/404)."""
    found = http.request(
        "GET",
        f"/{index}/_mapping/field/{vector_field}",
        what=f"reading the mapping of {vector_field!r} in {index!r}",
        ok_status=(401, 403, 404),
    )
    if isinstance(found, EngineHTTPError):
        return None
    mapping = field_mapping(found, vector_field)
    return dict(mapping) if mapping else None


def index_facts(http: EngineHTTP, index: str, vector_mapping: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """{"shards", "replicas", "ef_search"?, "hnsw"?} of ``index`` (the first index of an alias),
    the HNSW parameters from ``vector_mapping`` (:func:`read_vector_mapping`); a setting the
    user may not read (HTTP 401/403) is left out."""
    facts: Dict[str, Any] = {}
    settings = http.request(
        "GET",
        f"/{index}/_settings/index.number_of_shards,index.number_of_replicas,index.knn.algo_param.ef_search",
        params={"flat_settings": "true"},
        what=f"reading the settings of {index!r}",
        ok_status=(401, 403),
    )
    if not isinstance(settings, EngineHTTPError) and settings:
        flat = (next(iter(sorted(settings.items())))[1] or {}).get("settings") or {}
        facts["shards"] = int(flat.get("index.number_of_shards", 0)) or None
        facts["replicas"] = int(flat.get("index.number_of_replicas", 0))
        ef_search = flat.get("index.knn.algo_param.ef_search")
        if ef_search is not None:
            facts["ef_search"] = int(ef_search)
    hnsw = hnsw_parameters(vector_mapping) if vector_mapping else None
    if hnsw is not None:
        facts["hnsw"] = hnsw
    return facts


def searched_index_facts(http: EngineHTTP, engine: str, index: str, field: str) -> Dict[str, Any]:
    """:func:`index_facts` of ``index`` and, when it has the vector ``field``, what its vector
    index is (``vector_index``: type, options, quantisation; ``versions.vector_index_facts``)."""
    mapping = read_vector_mapping(http, index, field)
    facts = index_facts(http, index, mapping)
    vector_index = vector_index_facts(engine, field, mapping) if mapping else None
    if vector_index:
        facts["vector_index"] = vector_index
    return facts


def index_definition(http: EngineHTTP, index: str) -> Dict[str, Any]:
    """An existing index's part of the baseline fingerprint (issue #28): ``index_target``, the
    concrete indexes ``index`` (an alias, or an index) points to, comma-separated, and
    ``index_definition_sha256``, the sha256 of their mappings and scoring settings (canonical
    JSON as ``gates.fingerprint.sha256_json``, without :data:`_PHYSICAL_SETTINGS`). {} when the
    user may not read them (HTTP 401/403)."""
    settings = http.request(
        "GET",
        f"/{index}/_settings",
        params={"flat_settings": "true"},
        what=f"reading the settings of {index!r}",
        ok_status=(401, 403),
    )
    if isinstance(settings, EngineHTTPError) or not settings:
        return {}
    mappings = http.request(
        "GET", f"/{index}/_mapping", what=f"reading the mapping of {index!r}", ok_status=(401, 403)
    )
    if isinstance(mappings, EngineHTTPError):
        return {}
    concrete = sorted(settings)
    definitions = [
        {
            "mapping": ((mappings or {}).get(name) or {}).get("mappings"),
            "settings": _scoring_settings((settings[name] or {}).get("settings") or {}),
        }
        for name in concrete
    ]
    text = json.dumps(definitions, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {
        "index_target": ",".join(concrete),
        "index_definition_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }


def _scoring_settings(flat: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in flat.items() if not k.startswith(_PHYSICAL_SETTINGS)}


def field_similarity(http: Any, index: str, field: str, known: Optional[Mapping[str, Any]] = None) -> str:
    """The vector similarity the index's mapping gives ``field`` (from ``known`` facts of the
    index when given, else read), in the adapter's terms."""
    if known is not None:
        facts = known.get("hnsw") or {}
    else:
        facts = hnsw_parameters(read_vector_mapping(http, index, field) or {}) or {}
    return str(facts.get("similarity") or facts.get("space_type") or "cosine")
