"""What the Elasticsearch and OpenSearch backends share.

Both engines speak the same REST dialect for everything this plugin needs (index life
cycle, ``_bulk``, ``_msearch``, ``_search``, ``_count``), so the work is done here through
one small adapter per engine (``backends/elasticsearch.py``, ``backends/opensearch.py``):

* :mod:`.http`: connection settings, the client, requests and their failures (redacted);
* :mod:`.index`: the throwaway index life cycle (mappings, bulk load, BM25 variants,
  deletion, reaping of crashed runs' leftovers);
* :mod:`.dsl`: the request bodies (BM25, kNN candidates, query templates);
* :mod:`.search`: the concurrent ``_msearch`` quality pass and the single-request latency
  pass, with every sub-response checked;
* :mod:`.versions`: what differs between engine versions (client/server majors, pinned
  vector index options, BM25 similarity type, RRF pipeline form, vector index facts);
* :mod:`.backend`: :class:`SearchEngineBackend`, which composes them.
"""

from __future__ import annotations

from .backend import SearchEngineBackend
from .http import ConnectionSettings, EngineBadAnswer, EngineHTTPError, EngineUnreachable, request_headers
from .index import INDEX_PREFIX, META_CREATOR

__all__ = [
    "INDEX_PREFIX",
    "META_CREATOR",
    "ConnectionSettings",
    "EngineBadAnswer",
    "EngineHTTPError",
    "EngineUnreachable",
    "SearchEngineBackend",
    "request_headers",
]
