"""What the Elasticsearch and OpenSearch backends share.

Both engines speak the same REST dialect for everything this plugin needs (index
life cycle, ``_bulk``, ``_msearch``, ``_search``, ``_count``), so this module does the
work through one small adapter per engine (``_raw_request``, ``_make_client``,
``_helpers``) and the few places where the query DSL differs (``_knn_body``,
``_vector_mapping``, extra index settings).

Guarantees kept here, for both engines:

* every failure is an ``InfrastructureError`` (or ``ConfigError`` for bad input), never an
  empty ranking; every sub-response of an ``_msearch`` is checked and a failed one names
  the query id and the engine's reason;
* credentials (password, API key, ``user:pass@`` in URLs, basic-auth tokens) never appear
  in an exception message, a ``repr`` or a log line;
* an existing index (``index.name``) is only read; throwaway indices carry a ``_meta``
  stamp, are deleted by ``close()``, and stale ones of crashed runs are reaped at
  ``prepare`` (indices without the stamp are never touched).
"""

from __future__ import annotations

import base64
import concurrent.futures
import copy
import json
import logging
import os
import re
import secrets
import socket
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple
from urllib.parse import urlsplit, urlunsplit

from ...errors import ConfigError, InfrastructureError
from ...types import Document, DocVectors, Query, Ranking, Run
from ..base import Backend, BM25Spec, KnnSpec, SearchResult, TemplateSpec

log = logging.getLogger("pytest_retrieval.backends")

INDEX_PREFIX = "pytest-retrieval-"
META_CREATOR = "pytest-retrieval"
DEFAULT_TEXT_ANALYZER = "pytest_retrieval_text"
DEFAULT_VECTOR_FIELD = "embedding"
DEFAULT_REAP_AFTER_HOURS = 24.0

CONNECTION_KEYS = {
    "hosts",
    "api_key",
    "username",
    "password",
    "ca_certs",
    "verify_certs",
    "request_timeout",
    "max_retries",
    "retry_on_timeout",
    # tuning of the quality pass (not credentials, not required)
    "batch_size",
    "concurrency",
}
INDEX_KEYS = {
    "name",
    "suite",
    "mappings",
    "settings",
    "vector_field",
    "similarity",
    "bm25",
    "reap_after_hours",
}

# OpenSearch's hybrid query marks sub-query boundaries with these magic scores; seeing them
# in a ranking means the hybrid query ran without a normalization/score-ranker pipeline.
_HYBRID_MAGIC_SCORE = -4.0e9

_PLACEHOLDER_RE = {
    "query_vector": re.compile(r"\{\{\s*query_vector\s*\}\}"),
    "query_text": re.compile(r"\{\{\s*query_text\s*\}\}"),
    "k": re.compile(r"\{\{\s*k\s*\}\}"),
}


# --------------------------------------------------------------------------- helpers


class _HTTPError(Exception):
    """The engine answered with an HTTP error status (adapter -> shared code)."""

    def __init__(self, status: int, body: Any):
        super().__init__(status)
        self.status = status
        self.body = body


class _Unreachable(Exception):
    """No answer from the engine: connection refused, TLS, timeout (adapter -> shared code)."""


def slugify(text: str, max_len: int = 40) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
    return (slug[:max_len].strip("-")) or "suite"


def error_reason(err: Any) -> str:
    """One readable line from an engine error object (``{"type", "reason", "root_cause", ...}``)."""
    if err is None:
        return "unknown error"
    if isinstance(err, str):
        return err
    if not isinstance(err, Mapping):
        return str(err)
    inner = err.get("error", err)
    if isinstance(inner, str):
        return inner
    if not isinstance(inner, Mapping):
        return str(inner)
    roots = inner.get("root_cause") or []
    first = roots[0] if roots and isinstance(roots[0], Mapping) else inner
    text = f"{first.get('type', 'error')}: {first.get('reason', '')}".strip()
    # the deepest caused_by (often the actual cause of a search_phase_execution_exception)
    deepest = None
    node: Any = inner
    for shard in inner.get("failed_shards") or []:
        node = shard.get("reason") or node
        break
    while isinstance(node, Mapping) and isinstance(node.get("caused_by"), Mapping):
        node = node["caused_by"]
        deepest = node
    if deepest is not None:
        extra = f"{deepest.get('type', 'error')}: {deepest.get('reason', '')}"
        if extra not in text:
            text = f"{text} (caused by {extra})"
    return text


def _flatten_settings(settings: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """{"index": {"knn": true}, "number_of_shards": 1} -> {"index.knn": true, "index.number_of_shards": 1}."""
    out: Dict[str, Any] = {}

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, Mapping) and node:
            for key, value in node.items():
                walk(f"{prefix}.{key}" if prefix else str(key), value)
        else:
            out[prefix] = node

    walk("", settings or {})
    return {(k if k.startswith("index.") else f"index.{k}"): v for k, v in out.items()}


def _deep_merge(base: Dict[str, Any], over: Mapping[str, Any]) -> Dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key == "properties" and isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            props = dict(out[key])
            props.update(copy.deepcopy(dict(value)))  # a user's field definition replaces ours
            out[key] = props
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def stopwords_setting(stopwords: Any) -> Any:
    """BM25Spec.stopwords -> the standard analyzer's ``stopwords`` value."""
    if stopwords is None or stopwords in ("", "none", "_none_"):
        return "_none_"
    if isinstance(stopwords, (list, tuple)):
        return list(stopwords)
    s = str(stopwords).strip().lower()
    if s in ("en", "english"):
        return "_english_"
    return s if s.startswith("_") else f"_{s}_"


def vector_to_list(vector: Any) -> List[float]:
    if hasattr(vector, "tolist"):
        vector = vector.tolist()
    return [float(x) for x in vector]


def render_template(body: Any, query: Query, k: int) -> Dict[str, Any]:
    """Fill a TemplateSpec body: ``"{{query_vector}}"`` (a whole JSON string) -> the vector list,
    ``{{query_text}}`` inside strings -> the query text (JSON-escaped), ``{{k}}`` -> the int.

    ``body`` is a JSON-able dict (or a JSON string with the same placeholders)."""

    def vector() -> List[float]:
        if query.vector is None:
            raise ConfigError(
                f"the query template uses {{{{query_vector}}}} but query {query.qid!r} "
                "has no vector (no query embedder configured?)"
            )
        return vector_to_list(query.vector)

    if isinstance(body, (str, bytes)):
        text = body.decode() if isinstance(body, bytes) else body
        if _PLACEHOLDER_RE["query_vector"].search(text):
            text = re.sub(r'"\s*\{\{\s*query_vector\s*\}\}\s*"', lambda _m: json.dumps(vector()), text)
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

    def walk(node: Any) -> Any:
        if isinstance(node, Mapping):
            return {str(key): walk(value) for key, value in node.items()}
        if isinstance(node, (list, tuple)):
            return [walk(v) for v in node]
        if isinstance(node, str):
            if _PLACEHOLDER_RE["query_vector"].fullmatch(node.strip()):
                return vector()
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

    if not isinstance(body, Mapping):
        raise ConfigError("the query template must be a JSON object (a search request body)")
    return walk(body)


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


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, ValueError, OverflowError):
        return False
    return True


class _Redactor:
    """Knows the secrets of one connection and removes them from any text."""

    _USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
    _AUTH_HEADER = re.compile(
        r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(basic|apikey|bearer)\s+[A-Za-z0-9+/=._-]+"
    )

    def __init__(self) -> None:
        self._secrets: List[str] = []

    def add(self, *values: Any) -> None:
        for value in values:
            if value is None:
                continue
            if isinstance(value, (tuple, list)):
                self.add(*value)
                continue
            text = str(value)
            if len(text) >= 3:
                self._secrets.append(text)
        self._secrets.sort(key=len, reverse=True)

    def __call__(self, text: Any) -> str:
        out = str(text)
        for secret in self._secrets:
            out = out.replace(secret, "***")
        out = self._USERINFO.sub(lambda m: m.group("scheme") + "***@", out)
        return self._AUTH_HEADER.sub(lambda m: m.group(1) + m.group(2) + " ***", out)


class ConnectionSettings:
    """Validated connection keys. Holds the secrets; its repr does not show them."""

    def __init__(self, connection: Optional[Mapping[str, Any]], default_port: int = 9200):
        connection = dict(connection or {})
        unknown = sorted(set(connection) - CONNECTION_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown connection key(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(CONNECTION_KEYS))}",
                key="connection",
            )
        self.redact = _Redactor()
        hosts = connection.get("hosts") or [f"http://127.0.0.1:{default_port}"]
        if isinstance(hosts, str):
            hosts = [hosts]
        self.username: Optional[str] = connection.get("username")
        self.password: Optional[str] = connection.get("password")
        clean: List[str] = []
        for host in hosts:
            host = str(host)
            if "://" not in host:
                host = "http://" + host
            parts = urlsplit(host)
            if parts.username is not None:  # credentials inside the URL: take them out
                if self.username is None:
                    self.username = parts.username
                    self.password = parts.password
                self.redact.add(parts.password)
                netloc = parts.hostname or ""
                if parts.port:
                    netloc += f":{parts.port}"
                host = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
            clean.append(host.rstrip("/"))
        self.hosts = clean
        self.api_key = connection.get("api_key")
        self.ca_certs = connection.get("ca_certs")
        self.verify_certs = bool(connection.get("verify_certs", True))
        self.request_timeout = float(connection.get("request_timeout", 60.0))
        self.max_retries = int(connection.get("max_retries", 3))
        self.retry_on_timeout = bool(connection.get("retry_on_timeout", True))
        self.batch_size = int(connection.get("batch_size", 100))
        self.concurrency = int(connection.get("concurrency", 3))
        if self.batch_size < 1 or self.concurrency < 1:
            raise ConfigError("batch_size and concurrency must be >= 1", key="connection")
        self.redact.add(self.password, self.api_key)
        if self.username and self.password:
            token = f"{self.username}:{self.password}".encode()
            self.redact.add(base64.b64encode(token).decode())
        if isinstance(self.api_key, (tuple, list)) and len(self.api_key) == 2:
            token = f"{self.api_key[0]}:{self.api_key[1]}".encode()
            self.redact.add(base64.b64encode(token).decode())

    def __repr__(self) -> str:
        auth = "api_key" if self.api_key else ("basic" if self.username else "none")
        return f"ConnectionSettings(hosts={self.hosts!r}, auth={auth})"


# --------------------------------------------------------------------------- the backend


class SearchEngineBackend(Backend):
    """Elasticsearch/OpenSearch backend logic; subclasses supply the engine adapter."""

    name = "search-engine"
    default_port = 9200

    def __init__(
        self,
        connection: Optional[Mapping[str, Any]],
        index: Optional[Mapping[str, Any]],
        *,
        suite: Optional[str] = None,
    ):
        self._conn = ConnectionSettings(connection, self.default_port)
        index = dict(index or {})
        unknown = sorted(set(index) - INDEX_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown index key(s) {', '.join(unknown)}; known: {', '.join(sorted(INDEX_KEYS))}",
                key="index",
            )
        self._index_cfg = index
        self._existing: Optional[str] = index.get("name")
        if self._existing is not None and (not isinstance(self._existing, str) or not self._existing):
            raise ConfigError("index.name must be a non-empty string", key="index.name")
        if self._existing and (index.get("mappings") or index.get("settings")):
            raise ConfigError(
                "index.mappings/settings apply to a throwaway index only; "
                "an existing index (index.name) is never changed",
                key="index",
            )
        self._suite_slug = slugify(suite or index.get("suite") or "suite")
        self._vector_field = str(index.get("vector_field") or DEFAULT_VECTOR_FIELD)
        bm25 = dict(index.get("bm25") or {})
        self._variant: Dict[str, Any] = {
            "k1": float(bm25.get("k1", BM25Spec.k1)),
            "b": float(bm25.get("b", BM25Spec.b)),
            "stopwords": bm25.get("stopwords"),
            "similarity": str(index.get("similarity") or "cosine"),
        }
        self._reap_after_s = float(index.get("reap_after_hours", DEFAULT_REAP_AFTER_HOURS)) * 3600.0
        self._throwaway: Optional[str] = None
        self._documents: Optional[Sequence[Document]] = None
        self._doc_vectors: Optional[DocVectors] = None
        self._doc_count: Optional[int] = None
        self._engine_info: Optional[Tuple[str, str]] = None
        self._lock = threading.RLock()
        self._closed = False
        self._checked_fields: set = set()
        try:
            self._client = self._make_client(self._conn)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - a client that refuses its arguments
            raise ConfigError(f"{self.name} connection: {self._conn.redact(exc)}", key="connection") from None

    # ---- engine adapter (subclasses) -------------------------------------------------

    def _make_client(self, conn: ConnectionSettings) -> Any:
        raise NotImplementedError

    def _raw_request(
        self, method: str, path: str, params: Optional[Mapping[str, Any]], body: Any, ndjson: bool
    ) -> Any:
        """Send one request; return the decoded JSON body; raise _HTTPError / _Unreachable."""
        raise NotImplementedError

    def _helpers(self) -> Any:
        """The client's ``helpers`` module (``streaming_bulk``)."""
        raise NotImplementedError

    def _vector_mapping(self, dims: int, similarity: str) -> Dict[str, Any]:
        raise NotImplementedError

    vector_field_types: Tuple[str, ...] = ()

    def _extra_index_settings(self) -> Dict[str, Any]:
        return {}

    def _knn_body(self, spec: KnnSpec, vector: List[float], k: int) -> Dict[str, Any]:
        raise NotImplementedError

    def _search_params(self, spec: Any) -> Dict[str, Any]:
        """Extra URL parameters of a search for this spec (OpenSearch: search_pipeline)."""
        if isinstance(spec, TemplateSpec) and spec.pipeline:
            raise ConfigError(
                f"{self.name} has no search pipelines; TemplateSpec.pipeline "
                f"({spec.pipeline!r}) is for OpenSearch"
            )
        return {}

    # ---- plumbing ---------------------------------------------------------------------

    def __repr__(self) -> str:
        where = self._existing or self._throwaway or f"{INDEX_PREFIX}{self._suite_slug}-*"
        return f"<{type(self).__name__} hosts={self._conn.hosts!r} index={where!r}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def index_name(self) -> Optional[str]:
        """The index searched: the existing one, or the throwaway one once prepared."""
        return self._existing or self._throwaway

    def _fail(self, what: str, detail: Any) -> InfrastructureError:
        return InfrastructureError(self._conn.redact(f"{self.name} {what}: {detail}"))

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        ndjson: bool = False,
        what: Optional[str] = None,
        ok_status: Iterable[int] = (),
    ) -> Any:
        """One request; every failure becomes an InfrastructureError with redacted text.
        Statuses in ``ok_status`` are returned as ``_HTTPError`` objects instead of raised."""
        what = what or f"{method} {path}"
        try:
            return self._raw_request(method, path, params, body, ndjson)
        except _HTTPError as exc:
            if exc.status in tuple(ok_status):
                return exc
            raise self._fail(f"{what} failed (HTTP {exc.status})", error_reason(exc.body)) from None
        except _Unreachable as exc:
            raise self._fail(f"at {', '.join(self._conn.hosts)} cannot be reached ({what})", exc) from None
        except (ConfigError, InfrastructureError):
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the client raised
            raise self._fail(f"{what} failed", f"{type(exc).__name__}: {exc}") from None

    def _assert_owned(self, index: str) -> None:
        """Guard of every write: only the throwaway index this backend created."""
        if self._existing is not None or index != self._throwaway or not index.startswith(INDEX_PREFIX):
            raise RuntimeError(f"refusing to modify index {index!r}: not a throwaway index of this backend")

    # ---- engine facts -------------------------------------------------------------------

    def engine_info(self) -> Tuple[str, str]:
        """(distribution, version) of the engine."""
        if self._engine_info is None:
            root = self._request("GET", "/", what="version check", ok_status=(401, 403, 404, 405))
            if isinstance(root, _HTTPError):
                # Elasticsearch without the rest-root module (integ-test distribution) has no
                # GET /; a user without the monitor privilege may see neither.
                nodes = self._request(
                    "GET",
                    "/_nodes/_local",
                    params={"filter_path": "nodes.*.version"},
                    what="version check",
                    ok_status=(401, 403),
                )
                if isinstance(nodes, _HTTPError):
                    log.warning(
                        "%s: cannot read the engine version (HTTP %s); reported as unknown",
                        self.name,
                        nodes.status,
                    )
                    self._engine_info = (self.name, "unknown")
                else:
                    version = next(iter(nodes["nodes"].values()))["version"]
                    self._engine_info = ("elasticsearch", str(version))
            else:
                ver = root.get("version", {})
                self._engine_info = (ver.get("distribution", "elasticsearch"), str(ver.get("number", "?")))
        return self._engine_info

    def describe(self) -> Dict[str, Any]:
        engine, version = self.engine_info()
        return {
            "backend": self.name,
            "engine": engine,
            "version": version,
            "index": self.index_name,
            "doc_count": self._doc_count,
            "index_mode": "existing" if self._existing else "throwaway",
        }

    # ---- prepare ------------------------------------------------------------------------

    def prepare(self, documents: Optional[Sequence[Document]], doc_vectors: Optional[DocVectors]) -> None:
        if self._closed:
            raise InfrastructureError(f"{self.name} backend is closed")
        engine, version = self.engine_info()
        self._check_engine(engine, version)
        if self._existing is not None:
            self._doc_count = self._count(self._existing, missing_hint=True)
            log.info(
                "%s: using existing index %s (%d docs, read-only)", self.name, self._existing, self._doc_count
            )
            return
        if self._throwaway is not None:
            raise InfrastructureError(f"{self.name} backend already prepared ({self._throwaway})")
        self.reap_leftovers()
        if not documents and doc_vectors is None:
            raise ConfigError("a throwaway index needs documents (or document vectors) to index")
        self._documents = documents
        self._doc_vectors = doc_vectors
        self._build_throwaway()

    def existing_ids(self, doc_ids: Sequence[str], batch: int = 1000) -> Optional[Set[str]]:
        """Which of ``doc_ids`` the index (or alias) holds: batched read-only ``ids`` queries
        (an ``ids`` query, unlike ``_mget``, also answers on an alias over several indexes)."""
        index = self._target()
        unique = list(dict.fromkeys(doc_ids))
        found: Set[str] = set()
        for i in range(0, len(unique), batch):
            part = unique[i : i + batch]
            resp = self._request(
                "POST",
                f"/{index}/_search",
                params={"filter_path": "hits.hits._id"},
                body={"query": {"ids": {"values": part}}, "size": len(part), "_source": False},
                what="document id check",
            )
            found.update(str(h["_id"]) for h in (resp.get("hits") or {}).get("hits", []))
        return found

    def _check_engine(self, engine: str, version: str) -> None:
        """Subclasses refuse the wrong engine (e.g. the Elasticsearch backend on OpenSearch)."""

    def _count(self, index: str, missing_hint: bool = False) -> int:
        resp = self._request("GET", f"/{index}/_count", what=f"count of index {index!r}", ok_status=(404,))
        if isinstance(resp, _HTTPError):
            raise self._fail(
                f"index {index!r} does not exist",
                error_reason(resp.body)
                + (" (index.name must name an existing index or alias)" if missing_hint else ""),
            )
        return int(resp["count"])

    def _meta(self) -> Dict[str, Any]:
        from ... import __version__

        return {
            "created_by": META_CREATOR,
            "plugin_version": __version__,
            "suite": self._suite_slug,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "created_at": time.time(),
        }

    def _index_body(self, dims: Optional[int]) -> Dict[str, Any]:
        v = self._variant
        settings: Dict[str, Any] = {
            "index.number_of_shards": 1,
            "index.number_of_replicas": 0,
            # no periodic refresh while bulk loading: one refresh + a merge to one segment
            # afterwards, so every run searches the same segment layout (repeatable answers)
            "index.refresh_interval": "-1",
            "index.similarity.default.type": "BM25",
            "index.similarity.default.k1": v["k1"],
            "index.similarity.default.b": v["b"],
            f"index.analysis.analyzer.{DEFAULT_TEXT_ANALYZER}.type": "standard",
            f"index.analysis.analyzer.{DEFAULT_TEXT_ANALYZER}.stopwords": stopwords_setting(v["stopwords"]),
        }
        settings.update(_flatten_settings(self._extra_index_settings()))
        settings.update(_flatten_settings(self._index_cfg.get("settings")))
        props: Dict[str, Any] = {
            "title": {"type": "text", "analyzer": DEFAULT_TEXT_ANALYZER},
            "text": {"type": "text", "analyzer": DEFAULT_TEXT_ANALYZER},
        }
        if dims:
            props[self._vector_field] = self._vector_mapping(dims, v["similarity"])
        mappings: Dict[str, Any] = {"properties": props}
        user_mappings = self._index_cfg.get("mappings") or {}
        if user_mappings:
            mappings = _deep_merge(mappings, user_mappings)
        mappings["_meta"] = dict(mappings.get("_meta") or {}, **self._meta())
        return {"settings": settings, "mappings": mappings}

    def _build_throwaway(self) -> None:
        documents, vectors = self._documents, self._doc_vectors
        dims = None
        if vectors is not None:
            shape = getattr(vectors.matrix, "shape", None)
            dims = int(shape[1]) if shape is not None and len(shape) == 2 else len(vectors.matrix[0])
            if len(vectors.doc_ids) != (shape[0] if shape is not None else len(vectors.matrix)):
                raise ConfigError("DocVectors.doc_ids and the rows of DocVectors.matrix differ in number")
        name = f"{INDEX_PREFIX}{self._suite_slug}-{secrets.token_hex(4)}"
        body = self._index_body(dims)
        self._throwaway = name
        self._request("PUT", f"/{name}", body=body, what=f"creating index {name!r}")
        log.info("%s: created throwaway index %s", self.name, name)
        try:
            expected = self._bulk_index(name, documents or (), vectors)
            self._request("POST", f"/{name}/_refresh", what=f"refreshing index {name!r}")
            self._request(
                "POST",
                f"/{name}/_forcemerge",
                params={"max_num_segments": 1},
                what=f"merging index {name!r} to one segment",
            )
            self._doc_count = self._count(name)
        except BaseException:
            self._delete_throwaway()
            raise
        if self._doc_count != expected:
            self._delete_throwaway()
            raise InfrastructureError(
                f"{self.name}: index {name!r} holds {self._doc_count} documents after indexing {expected}"
            )

    def _bulk_index(self, name: str, documents: Sequence[Document], vectors: Optional[DocVectors]) -> int:
        self._assert_owned(name)
        rows: Dict[str, int] = {}
        if vectors is not None:
            rows = {str(d): i for i, d in enumerate(vectors.doc_ids)}
        field = self._vector_field
        seen: set = set()

        def actions():
            for doc in documents:
                doc_id = str(doc.doc_id)
                source = {str(k): v for k, v in dict(doc.fields).items()}
                row = rows.get(doc_id)
                if row is not None:
                    source[field] = vector_to_list(vectors.matrix[row])
                seen.add(doc_id)
                yield {"_op_type": "index", "_index": name, "_id": doc_id, "_source": source}
            for doc_id, row in rows.items():  # vectors of documents without fields
                if doc_id not in seen:
                    seen.add(doc_id)
                    yield {
                        "_op_type": "index",
                        "_index": name,
                        "_id": doc_id,
                        "_source": {field: vector_to_list(vectors.matrix[row])},
                    }

        total = len(set(str(d.doc_id) for d in documents) | set(rows))
        progress = _progress_bar(total, f"indexing into {name}")
        failures: List[str] = []
        try:
            for ok, item in self._helpers().streaming_bulk(
                self._client,
                actions(),
                chunk_size=500,
                max_chunk_bytes=20 * 1024 * 1024,
                raise_on_error=False,
                raise_on_exception=True,
                max_retries=3,
            ):
                if not ok and len(failures) < 3:
                    info = next(iter(item.values()), {}) if isinstance(item, Mapping) else item
                    failures.append(f"doc {info.get('_id')!r}: {error_reason(info.get('error'))}")
                if progress is not None:
                    progress.update(1)
        except (ConfigError, InfrastructureError):
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._fail(f"bulk indexing into {name!r} failed", f"{type(exc).__name__}: {exc}") from None
        finally:
            if progress is not None:
                progress.close()
        if failures:
            raise self._fail(f"bulk indexing into {name!r} failed", "; ".join(failures))
        return len(seen)

    # ---- variants of a throwaway index (BM25 k1/b, stop words, vector similarity) --------

    def _ensure_variant(self, spec: Any) -> None:
        """Make the throwaway index match the spec's k1/b/stop words/vector similarity.

        k1/b change in place (close, update the default similarity, reopen); stop words and
        vector similarity are fixed at indexing time, so the index is rebuilt. An existing
        index is used as it is (its own analyzers and similarity apply)."""
        if self._existing is not None or self._throwaway is None:
            return
        with self._lock:
            v = self._variant
            if isinstance(spec, BM25Spec):
                if stopwords_setting(spec.stopwords) != stopwords_setting(v["stopwords"]):
                    v["stopwords"] = spec.stopwords
                    v["k1"], v["b"] = float(spec.k1), float(spec.b)
                    self._rebuild("stop words changed")
                elif (float(spec.k1), float(spec.b)) != (v["k1"], v["b"]):
                    self._set_bm25(float(spec.k1), float(spec.b))
            elif (
                isinstance(spec, KnnSpec)
                and spec.field == self._vector_field
                and self._doc_vectors is not None
                and spec.similarity != v["similarity"]
            ):
                v["similarity"] = spec.similarity
                self._rebuild("vector similarity changed")

    def _set_bm25(self, k1: float, b: float) -> None:
        name = self._throwaway
        assert name is not None
        self._assert_owned(name)
        log.info("%s: setting BM25 k1=%s b=%s on %s", self.name, k1, b, name)
        self._request("POST", f"/{name}/_close", what=f"closing index {name!r}")
        try:
            self._request(
                "PUT",
                f"/{name}/_settings",
                body={
                    "index.similarity.default.type": "BM25",
                    "index.similarity.default.k1": k1,
                    "index.similarity.default.b": b,
                },
                what=f"setting BM25 parameters of {name!r}",
            )
        finally:
            self._request("POST", f"/{name}/_open", what=f"reopening index {name!r}")
            self._request(
                "GET",
                f"/_cluster/health/{name}",
                params={"wait_for_status": "green"},
                what=f"waiting for index {name!r}",
            )
        self._variant["k1"], self._variant["b"] = k1, b

    def _rebuild(self, why: str) -> None:
        log.info("%s: rebuilding throwaway index (%s)", self.name, why)
        self._delete_throwaway()
        self._build_throwaway()

    # ---- clean-up ----------------------------------------------------------------------

    def _delete_throwaway(self) -> None:
        name = self._throwaway
        if name is None:
            return
        self._assert_owned(name)
        resp = self._request("DELETE", f"/{name}", what=f"deleting index {name!r}", ok_status=(404,))
        self._throwaway = None
        if not isinstance(resp, _HTTPError):
            log.info("%s: deleted throwaway index %s", self.name, name)

    def _is_stale(self, meta: Mapping[str, Any], now: float) -> Optional[str]:
        if not isinstance(meta, Mapping) or meta.get("created_by") != META_CREATOR:
            return None
        try:
            created = float(meta.get("created_at"))
        except (TypeError, ValueError):
            return None
        if now - created > self._reap_after_s:
            return f"created {(now - created) / 3600:.1f} h ago"
        try:
            pid = int(meta.get("pid"))
        except (TypeError, ValueError):
            return None
        if meta.get("host") == socket.gethostname() and pid != os.getpid() and not pid_alive(pid):
            return f"its creator (pid {pid} on this host) is gone"
        return None

    def reap_leftovers(self) -> List[str]:
        """Delete throwaway indices of crashed runs; returns the names deleted.

        Only ``pytest-retrieval-*`` indices whose ``_meta.created_by`` is this plugin's, and
        only when they are older than ``reap_after_hours`` or their creator process (on this
        host) is dead. Anything else, e.g. an index of the same prefix without the stamp, is
        left alone."""
        found = self._request(
            "GET",
            f"/{INDEX_PREFIX}*/_mapping",
            params={"expand_wildcards": "open,closed", "allow_no_indices": "true"},
            what="listing leftover throwaway indices",
            ok_status=(401, 403),
        )
        if isinstance(found, _HTTPError):  # not allowed to look: nothing to reap, not an error
            log.warning(
                "%s: cannot list %s* indices to reap leftovers (HTTP %s)",
                self.name,
                INDEX_PREFIX,
                found.status,
            )
            return []
        now = time.time()
        reaped: List[str] = []
        for name, info in sorted((found or {}).items()):
            if name == self._throwaway or not name.startswith(INDEX_PREFIX):
                continue
            meta = ((info or {}).get("mappings") or {}).get("_meta") or {}
            why = self._is_stale(meta, now)
            if why is None:
                continue
            resp = self._request("DELETE", f"/{name}", what=f"reaping index {name!r}", ok_status=(404,))
            if not isinstance(resp, _HTTPError):
                log.warning("%s: deleted leftover index %s (%s)", self.name, name, why)
                reaped.append(name)
        return reaped

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._close_extras()
            self._delete_throwaway()
        finally:
            self._closed = True
            try:
                self._client.close()
            except Exception:  # noqa: BLE001 - closing a pool never matters
                pass

    def _close_extras(self) -> None:
        """Subclasses delete what else they created (OpenSearch: search pipelines)."""

    # ---- searching -----------------------------------------------------------------------

    def _target(self) -> str:
        name = self.index_name
        if name is None:
            raise InfrastructureError(f"{self.name} backend used before prepare()")
        if self._closed:
            raise InfrastructureError(f"{self.name} backend is closed")
        return name

    def _check_fields(self, spec: Any) -> None:
        """The engines answer a query on an unmapped field with no hits (Elasticsearch even
        for kNN), which would read as a retriever that finds nothing: check the fields of
        BM25/kNN specs against the index mapping once, and fail loudly instead."""
        if isinstance(spec, KnnSpec):
            wanted = [(spec.field, True)]
        elif isinstance(spec, BM25Spec):
            wanted = [(name, False) for name, _boost in spec.fields if "*" not in name]
        else:
            return
        index = self._target()
        todo = [(f, vec) for f, vec in wanted if (index, f, vec) not in self._checked_fields]
        if not todo:
            return
        fields = ",".join(f for f, _ in todo)
        found = self._request(
            "GET", f"/{index}/_mapping/field/{fields}", what=f"reading the mapping of {fields!r} in {index!r}"
        )
        for field, vector in todo:
            types = set()
            for idx_info in (found or {}).values():
                entry = ((idx_info or {}).get("mappings") or {}).get(field)
                if entry:
                    leaf = field.rsplit(".", 1)[-1]
                    mapping = (entry.get("mapping") or {}).get(leaf) or {}
                    types.add(mapping.get("type", "object"))
            if not types:
                raise self._fail(
                    f"index {index!r} has no field {field!r}", "a search on it would find nothing"
                )
            if vector and not types <= set(self.vector_field_types):
                raise self._fail(
                    f"field {field!r} of index {index!r} is {'/'.join(sorted(types))}",
                    f"a kNN retriever needs a {' or '.join(self.vector_field_types)} field",
                )
            self._checked_fields.add((index, field, vector))

    def build_body(self, spec: Any, query: Query, k: int) -> Dict[str, Any]:
        """The search body for one query (what search_one sends)."""
        if isinstance(spec, BM25Spec):
            body = {"query": bm25_query(spec, query.text)}
        elif isinstance(spec, KnnSpec):
            if query.vector is None:
                raise ConfigError(
                    f"query {query.qid!r} has no vector: a kNN retriever needs query "
                    "embeddings (configure an embedder or give vectors)"
                )
            body = self._knn_body(spec, vector_to_list(query.vector), k)
        elif isinstance(spec, TemplateSpec):
            if spec.body is None:
                raise ConfigError("a template retriever needs a body")
            body = render_template(spec.body, query, k)
        else:
            raise ConfigError(f"{self.name} backend cannot run a {type(spec).__name__}")
        body.setdefault("size", k)
        body.setdefault("_source", False)
        return body

    def _ranking(self, resp: Any, qid: str, k: int) -> Tuple[Ranking, Optional[float]]:
        """Check one search response (an _msearch item or a _search answer) and read its hits."""
        if not isinstance(resp, Mapping):
            raise self._fail(f"search for query {qid!r} failed", f"unexpected answer {str(resp)[:200]}")
        if "error" in resp:
            raise self._fail(f"search for query {qid!r} failed", error_reason(resp["error"]))
        status = resp.get("status")
        if isinstance(status, int) and status >= 300:
            raise self._fail(f"search for query {qid!r} failed", f"HTTP {status}")
        if resp.get("timed_out"):
            raise self._fail(f"search for query {qid!r} failed", "the search timed out (partial results)")
        shards = resp.get("_shards") or {}
        if shards.get("failed"):
            failures = shards.get("failures") or [{}]
            raise self._fail(
                f"search for query {qid!r} failed",
                f"{shards['failed']} of {shards.get('total')} shards failed: "
                f"{error_reason(failures[0].get('reason'))}",
            )
        hits = (resp.get("hits") or {}).get("hits")
        if hits is None:
            raise self._fail(f"search for query {qid!r} failed", "the answer has no hits")
        pairs = []
        for hit in hits[:k]:
            score = hit.get("_score")
            if score is None:
                raise self._fail(
                    f"search for query {qid!r} returned hits without _score",
                    'a template that sorts needs "track_scores": true',
                )
            if score <= _HYBRID_MAGIC_SCORE:
                raise self._fail(
                    f"search for query {qid!r} returned hybrid sub-query markers",
                    "a hybrid query needs a search pipeline with a "
                    "normalization-processor or score-ranker-processor",
                )
            pairs.append((str(hit["_id"]), float(score)))
        took = resp.get("took")
        return Ranking.from_pairs(pairs), (float(took) if took is not None else None)

    def _check_k(self, k: int) -> int:
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ConfigError(f"k must be a positive int, not {k!r}")
        if k > 10000:
            raise ConfigError(f"k={k} is above the engines' result window (10000)")
        return k

    def search_batch(self, spec: Any, queries: Sequence[Query], k: int) -> Run:
        self._check_k(k)
        self._target()
        self._ensure_variant(spec)  # may rebuild the throwaway index under a new name
        self._check_fields(spec)
        index = self._target()
        params = self._search_params(spec)
        bodies = [(q.qid, self.build_body(spec, q, k)) for q in queries]
        if params:  # _msearch takes no search pipeline: one _search per query, concurrently
            return self._search_each(index, bodies, params, k)
        return self._msearch_all(index, bodies, k)

    def _msearch_all(self, index: str, bodies: List[Tuple[str, Dict[str, Any]]], k: int) -> Run:
        size = self._conn.batch_size
        batches = [bodies[i : i + size] for i in range(0, len(bodies), size)]

        def run_batch(batch: List[Tuple[str, Dict[str, Any]]]) -> List[Tuple[str, Ranking]]:
            lines = []
            for _qid, body in batch:
                lines.append("{}")
                lines.append(json.dumps(body, separators=(",", ":")))
            payload = "\n".join(lines) + "\n"
            resp = self._request(
                "POST",
                f"/{index}/_msearch",
                body=payload,
                ndjson=True,
                what=f"_msearch of {len(batch)} queries (first {batch[0][0]!r})",
            )
            responses = (resp or {}).get("responses")
            if not isinstance(responses, list) or len(responses) != len(batch):
                raise self._fail(
                    "_msearch failed",
                    f"expected {len(batch)} responses, got "
                    f"{len(responses) if isinstance(responses, list) else 'none'}",
                )
            out: List[Tuple[str, Ranking]] = []
            failed: List[InfrastructureError] = []
            for (qid, _body), r in zip(batch, responses):
                try:
                    out.append((qid, self._ranking(r, qid, k)[0]))
                except InfrastructureError as exc:
                    failed.append(exc)
            if failed:
                more = (
                    f" (and {len(failed) - 1} more of this batch of {len(batch)})" if len(failed) > 1 else ""
                )
                raise InfrastructureError(f"{failed[0]}{more}")
            return out

        return self._run_concurrently(run_batch, batches)

    def _search_each(
        self, index: str, bodies: List[Tuple[str, Dict[str, Any]]], params: Mapping[str, Any], k: int
    ) -> Run:
        def run_one(item: Tuple[str, Dict[str, Any]]) -> List[Tuple[str, Ranking]]:
            qid, body = item
            resp = self._request(
                "POST", f"/{index}/_search", params=params, body=body, what=f"search for query {qid!r}"
            )
            return [(qid, self._ranking(resp, qid, k)[0])]

        return self._run_concurrently(run_one, bodies)

    def _run_concurrently(self, fn: Callable[[Any], List[Tuple[str, Ranking]]], items: Sequence[Any]) -> Run:
        results: List[Optional[List[Tuple[str, Ranking]]]] = [None] * len(items)
        if len(items) <= 1 or self._conn.concurrency == 1:
            for i, item in enumerate(items):
                results[i] = fn(item)
        else:
            workers = min(self._conn.concurrency, len(items))
            with concurrent.futures.ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix=f"{self.name}-search"
            ) as pool:
                futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
                try:
                    for fut in concurrent.futures.as_completed(futures):
                        results[futures[fut]] = fut.result()
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
        run: Run = {}
        for chunk in results:
            for qid, ranking in chunk or ():
                run[qid] = ranking
        return run

    def search_one(self, spec: Any, query: Query, k: int) -> SearchResult:
        self._check_k(k)
        self._target()
        self._ensure_variant(spec)  # may rebuild the throwaway index under a new name
        self._check_fields(spec)
        index = self._target()
        params = dict(self._search_params(spec))
        params["request_cache"] = "false"
        body = self.build_body(spec, query, k)
        resp = self._request(
            "POST", f"/{index}/_search", params=params, body=body, what=f"search for query {query.qid!r}"
        )
        ranking, took = self._ranking(resp, query.qid, k)
        return SearchResult(ranking=ranking, server_took_ms=took)


def _progress_bar(total: int, desc: str):
    """A tqdm bar on stderr when tqdm is installed and stderr is a terminal; else None."""
    if total < 1000 or not getattr(sys.stderr, "isatty", lambda: False)():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit="doc", file=sys.stderr, leave=False)
