"""What differs between the engine versions the backends support, kept in one place.

Tested (``scripts/engines``, ``tests/engines``): Elasticsearch 8.19 and 9.5, OpenSearch 2.19
and 3.6. This module holds every per-version fact the backends act on:

* **Clients.** The ``elasticsearch`` client N.x sends ``compatible-with=N`` media types on
  every request; an 8.x server refuses ``compatible-with=9`` (HTTP 400
  ``media_type_header_exception``), while a 9.x server answers an 8.x client in REST
  compatibility mode (elasticsearch-py README, "Compatibility": clients are forward
  compatible with the next major). So a 9.x client on an 8.x server is an error naming the
  client to install, and an 8.x client on a 9.x server runs with a warning. ``opensearch-py``
  2.x and 3.x send plain JSON and work with both OpenSearch majors.
* **Vector index pins** of a throwaway index. Defaults changed between majors:
  Elasticsearch indexes a float ``dense_vector`` as ``int8_hnsw`` since 8.14 and, since 9.1,
  as ``bbq_hnsw`` (1-bit, rescored x3) when it has >= 384 dimensions; OpenSearch 3.0 refuses
  new ``nmslib`` fields, and an unpinned ``knn_vector`` takes the plugin's default engine and
  space type. So a throwaway index always writes the HNSW method, its graph parameters, the
  similarity and the quantisation (none unless the suite asks for one), and the same suite
  ranks alike on both majors of an engine (``tests/engines/test_versions.py``).
* **Facts of an existing index's vector field** (``vector_index_facts``), read from its
  mapping, so a report shows e.g. that Elasticsearch 9 built it as ``bbq_hnsw``.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

from ...errors import ConfigError, InfrastructureError

#: What ``index.quantization`` may ask for. ``none`` (the default) pins float HNSW.
QUANTIZATIONS = ("none", "int8", "int4", "bbq")

#: HNSW graph parameters pinned on both engines (both engines' documented defaults today).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 100

#: pip requirement of the elasticsearch client for each server major.
ES_CLIENT_REQUIREMENT = {8: "elasticsearch>=8.12,<9", 9: "elasticsearch>=9,<10"}

_ES_INDEX_OPTIONS = {"none": "hnsw", "int8": "int8_hnsw", "int4": "int4_hnsw", "bbq": "bbq_hnsw"}


def major(version: Optional[str]) -> Optional[int]:
    try:
        return int(str(version).split(".")[0])
    except (TypeError, ValueError):
        return None


def version_tuple(version: Optional[str]) -> tuple:
    out = []
    for part in str(version or "").split("-")[0].split("."):
        try:
            out.append(int(part))
        except ValueError:
            break
    return tuple(out)


def older_than(version: str, minimum: Tuple[int, ...]) -> bool:
    """Whether ``version``'s first ``len(minimum)`` numbers are below ``minimum`` (an
    unparsable version is not)."""
    try:
        found = tuple(int(x) for x in version.split(".")[: len(minimum)])
    except ValueError:
        return False
    return found < minimum


def client_version(engine: str) -> Optional[str]:
    """The installed client of an engine as ``"<package> <version>"``, or None."""
    try:
        if engine == "elasticsearch":
            import elasticsearch

            return f"elasticsearch-py {elasticsearch.__versionstr__}"
        if engine == "opensearch":
            import opensearchpy

            return f"opensearch-py {'.'.join(str(x) for x in opensearchpy.__version__)}"
    except (ImportError, AttributeError):
        pass
    return None


# --------------------------------------------------------------------------- clients


def check_elasticsearch_client(server_version: str, client: Optional[str] = None) -> Optional[str]:
    """Raise InfrastructureError if the installed elasticsearch client cannot talk to this
    server; return a one-line warning if it can only through REST compatibility; else None."""
    client = client or client_version("elasticsearch")
    server_major = major(server_version)
    client_major = major((client or "").rsplit(" ", 1)[-1])
    if server_major is None or client_major is None or server_major == client_major:
        return None
    want = ES_CLIENT_REQUIREMENT.get(server_major, f"elasticsearch>={server_major},<{server_major + 1}")
    if client_major > server_major:
        raise InfrastructureError(
            f"elasticsearch backend: the server is Elasticsearch {server_version} and the installed "
            f"client is {client}, which only talks to Elasticsearch {client_major}: "
            f"pip install '{want}'"
        )
    return (
        f"{client} talks to Elasticsearch {server_version} through REST compatibility mode "
        f"(not the tested pair): pip install '{want}'"
    )


# --------------------------------------------------------------------------- vector pins


def es_vector_mapping(dims: int, similarity: str, quant: str, server_version: str) -> Dict[str, Any]:
    """A ``dense_vector`` field with every setting whose default moved between 8.x and 9.x
    written out: HNSW graph parameters and the index type (``hnsw`` = float vectors, no
    quantisation, unless ``quant`` asks for ``int8_hnsw`` / ``int4_hnsw`` / ``bbq_hnsw``).

    Without the pin Elasticsearch 9.1+ builds ``bbq_hnsw`` for >= 384 dimensions and 8.14+
    ``int8_hnsw`` (measured on 9.5.0 and 8.19.21: ``GET _mapping`` of an unpinned 384-d field).
    ``rescore_vector`` (the oversampling of quantised indexes, 9.x default 3 for ``bbq_hnsw``)
    is left to the server, so a suite that asks for BBQ measures what BBQ costs there."""
    return {
        "type": "dense_vector",
        "element_type": "float",
        "dims": dims,
        "index": True,
        "similarity": similarity,
        "index_options": {
            "type": _ES_INDEX_OPTIONS[quant],
            "m": HNSW_M,
            "ef_construction": HNSW_EF_CONSTRUCTION,
        },
    }


def os_vector_mapping(dims: int, space_type: str, quant: str, server_version: str) -> Dict[str, Any]:
    """A ``knn_vector`` field on the Lucene HNSW engine, engine/space type/graph parameters
    written out (OpenSearch 3.0 refuses new nmslib fields; an unpinned field takes the
    plugin's default engine, faiss since 2.18, and ``l2``).

    Quantisation through the Lucene engine's ``sq`` encoder, whose ``bits`` parameter
    changed in 3.6.0 (k-NN ``LuceneSQEncoder#validate``): required on indexes created by
    3.6.0+, where 7 (int8-like, the only width before 3.6) and 1 (binary, Lucene's BBQ
    format) are accepted; 4 bits is refused by 3.6."""
    v = version_tuple(server_version)
    params: Dict[str, Any] = {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION}
    if quant == "int8":
        params["encoder"] = {"name": "sq", "parameters": {"bits": 7}}
    elif quant == "bbq":
        if v and v < (3, 6):
            raise ConfigError(
                f"index.quantization bbq needs OpenSearch >= 3.6 (Lucene 1-bit quantisation); "
                f"the server is {server_version}: use int8 or none"
            )
        params["encoder"] = {"name": "sq", "parameters": {"bits": 1}}
    elif quant == "int4":
        raise ConfigError(
            f"index.quantization int4 is Elasticsearch only (OpenSearch {server_version}'s Lucene "
            "engine quantises to 7 or 1 bits): use int8, bbq or none"
        )
    return {
        "type": "knn_vector",
        "dimension": dims,
        "method": {"name": "hnsw", "engine": "lucene", "space_type": space_type, "parameters": params},
    }


# --------------------------------------------------------------------------- BM25 and pipelines


def os_knn_search_parameters(candidates: int, server_version: str) -> Dict[str, Any]:
    """What makes an OpenSearch ``knn`` query search ``candidates`` HNSW candidates, as
    Elasticsearch's ``num_candidates`` does. On 2.x the Lucene engine's candidate list is the
    query's ``k``; on 3.x it is at least the index's ``ef_search`` (default 100), so ``k`` alone
    no longer lowers it (measured on SciFact: 10 candidates found 0.996 of the exact top 10 on
    3.6, 0.896 on 2.19): the query's ``method_parameters.ef_search`` sets it explicitly."""
    if (major(server_version) or 0) >= 3:
        return {"method_parameters": {"ef_search": candidates}}
    return {}


def bm25_similarity_type(engine: str, server_version: str) -> str:
    """The similarity type that scores BM25 as Elasticsearch, OpenSearch 2 and the embedded
    engine do: ``idf * tf * (k1 + 1) / (tf + k1 * norm)``. OpenSearch 3.0 made ``BM25`` the
    Lucene ``BM25Similarity``, without the constant ``k1 + 1`` factor (OpenSearch#17315, PR
    #17306: scores / 2.2 at k1 = 1.2, same rankings), and kept the old scoring as
    ``LegacyBM25``, which a throwaway index pins so that scores (score thresholds,
    unnormalised fusion) do not move with the major."""
    if engine == "opensearch" and (major(server_version) or 0) >= 3:
        return "LegacyBM25"
    return "BM25"


def os_search_pipeline(body: Mapping[str, Any], server_version: str) -> Dict[str, Any]:
    """``body`` with the RRF ``rank_constant`` of a ``score-ranker-processor`` where this
    OpenSearch's neural-search reads it.

    Up to 3.0 ``RRFProcessorFactory`` passes ``combination.parameters`` to the RRF
    normalisation (the rank constant) and ignores a ``rank_constant`` written directly in
    ``combination`` (measured on 2.19.6: hits score 1 / (60 + rank)). neural-search #1322
    (3.1.0, "custom weights params in RRF") reads ``combination.rank_constant`` and passes
    ``parameters`` to the combination, which accepts only ``weights`` (3.6.0 refuses
    ``parameters.rank_constant`` with HTTP 400). ``tests/engines/test_parity_scifact.py``
    checks rank constants 60 and 5 on 2.19 and 3.6."""
    import copy

    out = copy.deepcopy(dict(body))
    direct = version_tuple(server_version) >= (3, 1)
    for proc in out.get("phase_results_processors") or []:
        comb = (proc.get("score-ranker-processor") or {}).get("combination")
        if isinstance(comb, dict):
            _place_rank_constant(comb, direct)
    return out


def _place_rank_constant(comb: Dict[str, Any], direct: bool) -> None:
    """Move an RRF combination's ``rank_constant`` into it (``direct``, 3.1+) or into its
    ``parameters`` (before 3.1)."""
    params = comb.get("parameters")
    if direct and isinstance(params, dict) and "rank_constant" in params:
        comb["rank_constant"] = params.pop("rank_constant")
        if not params:
            comb.pop("parameters")
    elif not direct and "rank_constant" in comb:
        comb.setdefault("parameters", {})["rank_constant"] = comb.pop("rank_constant")


# --------------------------------------------------------------------------- existing indexes


def vector_index_facts(engine: str, field: str, mapping: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """What an index's vector field is, from its mapping (``GET <index>/_mapping/field/<f>``):
    ``{"field", "type", "quantization"}`` plus the engine's own terms (Elasticsearch
    ``index_options.type``; OpenSearch engine/space type/encoder/mode/compression)."""
    m = dict(mapping or {})
    facts: Dict[str, Any] = {"field": field}
    if not m:
        facts["type"] = "absent"
        return facts
    facts["type"] = m.get("type")
    facts.update(_es_vector_facts(m) if engine == "elasticsearch" else _os_vector_facts(m))
    return facts


def _es_vector_facts(m: Mapping[str, Any]) -> Dict[str, Any]:
    """An Elasticsearch ``dense_vector`` mapping's index options, similarity, quantization."""
    opts = m.get("index_options") or {}
    kind = opts.get("type") or ("none (not indexed)" if m.get("index") is False else "server default")
    facts: Dict[str, Any] = {
        "index_options": kind,
        "similarity": m.get("similarity"),
        "quantization": _es_quantization(kind),
    }
    if opts.get("rescore_vector"):
        facts["rescore_vector"] = opts["rescore_vector"]
    return facts


def _os_vector_facts(m: Mapping[str, Any]) -> Dict[str, Any]:
    """An OpenSearch ``knn_vector`` mapping's engine, space type, mode, compression, encoder,
    quantization."""
    method = m.get("method") or {}
    encoder = (method.get("parameters") or {}).get("encoder") or {}
    facts: Dict[str, Any] = {
        "engine": method.get("engine") or "server default",
        "space_type": method.get("space_type") or m.get("space_type") or "server default",
    }
    if m.get("mode"):
        facts["mode"] = m["mode"]
    if m.get("compression_level"):
        facts["compression_level"] = m["compression_level"]
    if encoder:
        facts["encoder"] = encoder
    facts["quantization"] = _os_quantization(encoder, m.get("compression_level"), m.get("mode"))
    return facts


def _es_quantization(kind: str) -> str:
    for q, t in _ES_INDEX_OPTIONS.items():
        if kind in (t, t.replace("_hnsw", "_flat")):
            return q
    if kind in ("flat",):
        return "none"
    return str(kind)


def _os_quantization(encoder: Mapping[str, Any], compression: Optional[str], mode: Optional[str]) -> str:
    name = encoder.get("name")
    bits = (encoder.get("parameters") or {}).get("bits")
    if name == "sq":
        return {1: "bbq", 7: "int8", None: "int8"}.get(bits, f"sq {bits} bits")
    if name:
        return str(name)
    if compression and compression not in ("1x", ""):
        return f"compression {compression}"
    if mode == "on_disk":
        return "on_disk"
    return "none"


def field_mapping(found: Any, field: str) -> Optional[Mapping[str, Any]]:
    """The mapping of ``field`` in a ``GET <index>/_mapping/field/<field>`` answer (an alias may
    name several indexes: the first that has it), or None."""
    if not isinstance(found, Mapping):
        return None
    for idx_info in found.values():
        entry = ((idx_info or {}).get("mappings") or {}).get(field) or {}
        mapping = (entry.get("mapping") or {}).get(field.rsplit(".", 1)[-1])
        if mapping:
            return dict(mapping)
    return None
