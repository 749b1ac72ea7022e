"""The index a run searches: an existing one (only read), or a throwaway one this backend
creates, bulk-loads, re-tunes and deletes.

Throwaway indices are named ``pytest-retrieval-<suite>-<random>`` and carry a ``_meta``
stamp (creator, host, pid, time); ``close()`` deletes them, and :func:`reap_indices` deletes
the stale ones of crashed runs (older than ``reap_after_hours``, or whose creator process
on this host is gone). Indices without the stamp are never touched.

BM25 k1/b change in place (close, update the default similarity, reopen); stop words and
vector similarity are fixed at indexing time, so a spec that changes them rebuilds the
index (:meth:`ThrowawayIndex.ensure_variant`), as does adding a learned sparse field
(:meth:`ThrowawayIndex.add_sparse`: a new build is 4-5x faster than partial updates).
"""

from __future__ import annotations

import copy
import json
import logging
import re
import secrets
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from ...errors import ConfigError, InfrastructureError, cleanup_after_failure
from ...progress import progress_bar
from ...redaction import clip
from ...types import Document, DocVectors
from ..base import BM25Spec, KnnSpec
from .dsl import vector_to_list
from .http import EngineHTTP, EngineHTTPError, error_reason, snippet
from .index_config import DEFAULT_REAP_AFTER_HOURS, DEFAULT_VECTOR_FIELD, INDEX_KEYS
from .reap import INDEX_PREFIX, META_CREATOR, creation_meta, is_stale, pid_alive, reap_indices
from .versions import QUANTIZATIONS

log = logging.getLogger("pytest_retrieval.backends")

__all__ = [
    "DEFAULT_TEXT_ANALYZER",
    "INDEX_PREFIX",
    "META_CREATOR",
    "IndexPlan",
    "ThrowawayIndex",
    "count_docs",
    "creation_meta",
    "is_stale",
    "pid_alive",
    "reap_indices",
    "slugify",
    "stopwords_setting",
]

DEFAULT_TEXT_ANALYZER = "pytest_retrieval_text"


# streaming_bulk(actions, **options) -> (ok, item) per document
Bulk = Callable[..., Iterable[Tuple[bool, Any]]]


# --------------------------------------------------------------------------- helpers


def slugify(text: str, max_len: int = 40) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
    return (slug[:max_len].strip("-")) or "suite"


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


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class IndexPlan:
    """The validated ``index`` keys of a suite: the index a run searches, and how."""

    existing: Optional[str]  # index.name: an existing index or alias, only read
    suite_slug: str
    vector_field: str
    mappings: Mapping[str, Any]
    settings: Optional[Mapping[str, Any]]
    variant: Mapping[str, Any]  # the first throwaway index's k1, b, stopwords, similarity
    reap_after_s: float
    quantization: str = "none"  # of a throwaway index's vector field (versions.QUANTIZATIONS)
    # a sparse retriever will add document vectors (``prepare_sparse``): the throwaway index is
    # built once, with them, instead of built and built again
    sparse: bool = False
    id_field: Optional[str] = None  # the judgments' ids are this field of each document

    @classmethod
    def parse(cls, index: Optional[Mapping[str, Any]], suite: Optional[str]) -> IndexPlan:
        index = dict(index or {})
        unknown = sorted(set(index) - INDEX_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown index key(s) {', '.join(unknown)}; known: {', '.join(sorted(INDEX_KEYS))}",
                key="index",
            )
        existing = _existing_name(index)
        quantization = _quantization(index, existing)
        _check_default_analyzer(index)
        return cls(
            existing=existing,
            suite_slug=slugify(suite or index.get("suite") or "suite"),
            vector_field=str(index.get("vector_field") or DEFAULT_VECTOR_FIELD),
            mappings=index.get("mappings") or {},
            settings=index.get("settings"),
            variant=_first_variant(index),
            reap_after_s=float(index.get("reap_after_hours", DEFAULT_REAP_AFTER_HOURS)) * 3600.0,
            quantization=str(quantization),
            sparse=bool(index.get("sparse")),
            id_field=_id_field(index),
        )


def _id_field(index: Mapping[str, Any]) -> Optional[str]:
    """``index.id_field`` (None: the judgments' ids are the engine's ``_id``)."""
    value = index.get("id_field")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise ConfigError(f"index.id_field must be a field name, not {value!r}", key="index.id_field")
    return value


def _check_default_analyzer(index: Mapping[str, Any]) -> None:
    """A ``default`` analyzer in ``index.settings`` would change nothing: a throwaway index maps
    title and text with its own analyzer (``DEFAULT_TEXT_ANALYZER``, ``ThrowawayIndex.body``), so
    the setting is refused by name rather than ignored (the regression zoo found it a silent no-op)."""
    settings = _flatten_settings(index.get("settings"))
    names = ("index.analysis.analyzer.default.", "index.analysis.analyzer.default_search.")
    if not any(k.startswith(names) for k in settings):
        return
    props = (index.get("mappings") or {}).get("properties") or {}
    if all(isinstance(props.get(f), Mapping) and props[f].get("analyzer") for f in ("title", "text")):
        return  # the suite maps title and text itself
    raise ConfigError(
        "index.settings sets analysis.analyzer.default, which this index never uses: title and text are "
        f"mapped with the analyzer {DEFAULT_TEXT_ANALYZER!r}; define analysis.analyzer.{DEFAULT_TEXT_ANALYZER} "
        "instead, or map title and text with your analyzer in index.mappings",
        key="index.settings",
    )


def _existing_name(index: Mapping[str, Any]) -> Optional[str]:
    """``index.name``: an existing index or alias (None for a throwaway index)."""
    existing = index.get("name")
    if existing is not None and (not isinstance(existing, str) or not existing):
        raise ConfigError("index.name must be a non-empty string", key="index.name")
    return existing


def _quantization(index: Mapping[str, Any], existing: Optional[str]) -> str:
    """``index.quantization`` (default ``none``); it, mappings and settings are for a
    throwaway index only."""
    quantization = index.get("quantization") or "none"
    if quantization not in QUANTIZATIONS:
        raise ConfigError(
            f"index.quantization must be one of {', '.join(QUANTIZATIONS)}, not {quantization!r}",
            key="index.quantization",
        )
    if existing and (index.get("mappings") or index.get("settings") or quantization != "none"):
        raise ConfigError(
            "index.mappings/settings/quantization apply to a throwaway index only; "
            "an existing index (index.name) is never changed",
            key="index",
        )
    return quantization


def _first_variant(index: Mapping[str, Any]) -> Dict[str, Any]:
    """The first throwaway index's k1, b, stop words and vector similarity."""
    bm25 = dict(index.get("bm25") or {})
    return {
        "k1": float(bm25.get("k1", BM25Spec.k1)),
        "b": float(bm25.get("b", BM25Spec.b)),
        "stopwords": bm25.get("stopwords"),
        # (field, built-in analyzer name) of the fields not on "standard", sorted
        "analyzer": tuple(sorted((f, a) for f, a in bm25.get("analyzer") or () if a != "standard")),
        "similarity": str(index.get("similarity") or "cosine"),
    }


def _named_analyzers(spec: BM25Spec) -> Tuple[Tuple[str, str], ...]:
    """The fields a spec maps with a built-in analyzer other than ``standard``, sorted."""
    return tuple(sorted((f, a) for f, a in spec.analyzer if a != "standard"))


def count_docs(http: EngineHTTP, index: str, missing_hint: bool = False) -> int:
    """Documents in ``index``; a missing index is an InfrastructureError."""
    resp = http.request("GET", f"/{index}/_count", what=f"count of index {index!r}", ok_status=(404,))
    if isinstance(resp, EngineHTTPError):
        raise http.fail(
            f"index {index!r} does not exist",
            error_reason(resp.body)
            + (" (index.name must name an existing index or alias)" if missing_hint else ""),
        )
    count = resp.get("count") if isinstance(resp, Mapping) else None
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:  # never a guess: 1.7, "12", true
        raise http.fail(
            f"count of index {index!r} failed",
            f"no document count in the answer: {snippet(json.dumps(resp, default=str))!r}",
        )
    return count


# --------------------------------------------------------------------------- the throwaway index


def _bulk_item_failure(item: Any) -> str:
    """``doc 'id': reason`` of a document the ``_bulk`` answer refused."""
    info = next(iter(item.values()), {}) if isinstance(item, Mapping) else item
    return f"doc {info.get('_id')!r}: {error_reason(info.get('error'))}"


def _bulk_exception_detail(exc: Exception) -> str:
    """What the bulk helper raised, on one line of at most 300 characters (a proxy's page can
    be long); a TypeError/AttributeError/KeyError means it read an answer that was not JSON."""
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())
    detail = clip(detail, 300)  # redacted, then cut
    if isinstance(exc, (TypeError, AttributeError, KeyError)):
        detail = (
            f"the answer to _bulk was not the engine's JSON (a proxy or login page in front of it?): {detail}"
        )
    return detail


class ThrowawayIndex:
    """The index one run creates from its documents (and vectors), searches, re-tunes
    (:meth:`ensure_variant`) and deletes. Engine specifics come from the adapter: the
    vector field mapping, extra index settings, the BM25 similarity type of the server
    (``versions.bm25_similarity_type``) and the client's ``streaming_bulk``."""

    def __init__(
        self,
        http: EngineHTTP,
        config: IndexPlan,
        *,
        vector_mapping: Callable[[int, str], Dict[str, Any]],
        extra_settings: Callable[[], Dict[str, Any]],
        bm25_type: Callable[[], str],
        bulk: Bulk,
    ):
        self._http = http
        self._config = config
        self._vector_mapping = vector_mapping
        self._extra_settings = extra_settings
        self._bm25_type = bm25_type
        self._bulk = bulk
        self.name: Optional[str] = None
        self.doc_count: Optional[int] = None
        self.variant: Dict[str, Any] = dict(config.variant)
        self._deferred = False  # create() waits for add_sparse (IndexPlan.sparse)
        self._documents: Optional[Sequence[Document]] = None
        self._vectors: Optional[DocVectors] = None
        # learned sparse fields: field -> (its mapping, document id -> {term: weight}); a
        # rebuild indexes them with the documents
        self.sparse: Dict[str, Tuple[Dict[str, Any], Mapping[str, Dict[str, float]]]] = {}
        self._lock = threading.RLock()

    def create(self, documents: Optional[Sequence[Document]], vectors: Optional[DocVectors]) -> None:
        """Create and load the index (kept for rebuilds of another variant)."""
        if not documents and vectors is None:
            raise ConfigError("a throwaway index needs documents (or document vectors) to index")
        self._documents = documents
        self._vectors = vectors
        self._deferred = self._config.sparse  # built by add_sparse, or at first use
        if not self._deferred:
            self._build()

    @property
    def deferred(self) -> bool:
        """Whether the build waits for sparse vectors (``IndexPlan.sparse``)."""
        return self._deferred

    def built_name(self) -> Optional[str]:
        """The index's name, building it first if its build still waits for sparse vectors."""
        with self._lock:
            if self._deferred:
                self._deferred = False
                self._build()
        return self.name

    @property
    def vectors(self) -> Optional[DocVectors]:
        """The document vectors the index holds (None for an index without vectors)."""
        return self._vectors

    def assert_owned(self, index: str) -> None:
        """Guard of every write: only the throwaway index this backend created."""
        if self._config.existing is not None or index != self.name or not index.startswith(INDEX_PREFIX):
            raise RuntimeError(f"refusing to modify index {index!r}: not a throwaway index of this backend")

    def body(self, dims: Optional[int]) -> Dict[str, Any]:
        """Settings and mappings of a new index (``dims``: the vector field's, if any)."""
        v = self.variant
        settings: Dict[str, Any] = {
            "index.number_of_shards": 1,
            "index.number_of_replicas": 0,
            # no periodic refresh while bulk loading: one refresh + a merge to one segment
            # afterwards, so every run searches the same segment layout (repeatable answers)
            "index.refresh_interval": "-1",
            "index.similarity.default.type": self._bm25_type(),
            "index.similarity.default.k1": v["k1"],
            "index.similarity.default.b": v["b"],
            f"index.analysis.analyzer.{DEFAULT_TEXT_ANALYZER}.type": "standard",
            f"index.analysis.analyzer.{DEFAULT_TEXT_ANALYZER}.stopwords": stopwords_setting(v["stopwords"]),
        }
        settings.update(_flatten_settings(self._extra_settings()))
        settings.update(_flatten_settings(self._config.settings))
        props: Dict[str, Any] = {
            "title": {"type": "text", "analyzer": DEFAULT_TEXT_ANALYZER},
            "text": {"type": "text", "analyzer": DEFAULT_TEXT_ANALYZER},
        }
        for field, analyzer in v.get("analyzer") or ():  # a built-in analyzer named by the suite
            if analyzer != "standard":
                props[field] = {"type": "text", "analyzer": analyzer}
        if dims:
            props[self._config.vector_field] = self._vector_mapping(dims, v["similarity"])
        props.update({field: dict(mapping) for field, (mapping, _rows) in self.sparse.items()})
        if self._config.id_field:  # an id is matched whole (the missing-documents check's terms query)
            props.update(_keyword_at(self._config.id_field))
        mappings: Dict[str, Any] = {"properties": props}
        if self._config.mappings:
            mappings = _deep_merge(mappings, self._config.mappings)
        mappings["_meta"] = dict(mappings.get("_meta") or {}, **creation_meta(self._config.suite_slug))
        return {"settings": settings, "mappings": mappings}

    def _dims(self) -> Optional[int]:
        vectors = self._vectors
        if vectors is None:
            return None
        shape = getattr(vectors.matrix, "shape", None)
        dims = int(shape[1]) if shape is not None and len(shape) == 2 else len(vectors.matrix[0])
        if len(vectors.doc_ids) != (shape[0] if shape is not None else len(vectors.matrix)):
            raise ConfigError("DocVectors.doc_ids and the rows of DocVectors.matrix differ in number")
        return dims

    def _build(self) -> None:
        http = self._http
        dims = self._dims()
        name = f"{INDEX_PREFIX}{self._config.suite_slug}-{secrets.token_hex(4)}"
        body = self.body(dims)
        self.name = name
        http.request("PUT", f"/{name}", body=body, what=f"creating index {name!r}")
        log.info("%s: created throwaway index %s", http.name, name)
        try:
            expected = self._load(name)
            http.request("POST", f"/{name}/_refresh", what=f"refreshing index {name!r}")
            http.request(
                "POST",
                f"/{name}/_forcemerge",
                params={"max_num_segments": 1},
                what=f"merging index {name!r} to one segment",
            )
            self.doc_count = count_docs(http, name)
        except BaseException as exc:
            cleanup_after_failure(self.delete, exc)
            raise
        if self.doc_count != expected:
            wrong = InfrastructureError(
                f"{http.name}: index {name!r} holds {self.doc_count} documents after indexing {expected}"
            )
            cleanup_after_failure(self.delete, wrong)
            raise wrong

    def _source(self, doc: Document, row: Optional[int]) -> Dict[str, Any]:
        """A document's fields, its dense vector (if any) and its sparse vectors (if any)."""
        doc_id = str(doc.doc_id)
        source: Dict[str, Any] = {str(k): v for k, v in dict(doc.fields).items()}
        if row is not None and self._vectors is not None:
            source[self._config.vector_field] = vector_to_list(self._vectors.matrix[row])
        source.update({f: vecs[doc_id] for f, (_m, vecs) in self.sparse.items() if vecs.get(doc_id)})
        return source

    def _actions(self, name: str, rows: Dict[str, int], seen: set) -> Iterator[Dict[str, Any]]:
        """Bulk actions: every document (with its vector, if any), then the vectors of
        documents without fields."""
        vectors = self._vectors
        for doc in self._documents or ():
            doc_id = str(doc.doc_id)
            source = self._source(doc, rows.get(doc_id))
            seen.add(doc_id)
            yield {"_op_type": "index", "_index": name, "_id": doc_id, "_source": source}
        for doc_id, row in rows.items():
            if doc_id not in seen and vectors is not None:
                seen.add(doc_id)
                source = self._source(Document(doc_id, {}), row)
                yield {"_op_type": "index", "_index": name, "_id": doc_id, "_source": source}

    def _load(self, name: str) -> int:
        """Bulk-load the documents; returns how many distinct ids were sent."""
        self.assert_owned(name)
        rows: Dict[str, int] = {}
        if self._vectors is not None:
            rows = {str(d): i for i, d in enumerate(self._vectors.doc_ids)}
        seen: set = set()
        total = len(set(str(d.doc_id) for d in self._documents or ()) | set(rows))
        bar = progress_bar(
            total, f"indexing into {name}", unit="doc", enabled=None if total >= 1000 else False
        )
        try:
            failures = self._bulk_load(self._actions(name, rows, seen), bar)
        except (ConfigError, InfrastructureError):
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._http.fail(
                f"bulk indexing into {name!r} failed", _bulk_exception_detail(exc)
            ) from None
        finally:
            bar.close()
        if failures:
            raise self._http.fail(f"bulk indexing into {name!r} failed", "; ".join(failures))
        return len(seen)

    def _bulk_load(self, actions: Iterable[Dict[str, Any]], bar: Any) -> List[str]:
        """Send the actions through the client's bulk helper; the first three refusals."""
        failures: List[str] = []
        for ok, item in self._bulk(
            actions,
            chunk_size=500,
            max_chunk_bytes=20 * 1024 * 1024,
            raise_on_error=False,
            raise_on_exception=True,
            max_retries=3,
        ):
            if not ok and len(failures) < 3:
                failures.append(_bulk_item_failure(item))
            bar.update(1)
        return failures

    def add_sparse(
        self, field: str, mapping: Dict[str, Any], vectors: Mapping[str, Dict[str, float]]
    ) -> None:
        """Add a learned sparse field: the index is built again with the vectors in every
        document (and kept for later rebuilds); an announced build (``IndexPlan.sparse``) waits
        for its first use, so two encoders' fields cost one build. Measured on OpenSearch 2.19, SciFact: adding
        them to the built index by bulk partial updates took 18-26 s, a new build 5 s."""
        with self._lock:
            if self._deferred:  # announced (IndexPlan.sparse): the one build, at first use
                self.sparse[field] = (dict(mapping), vectors)  # (built_name), holds every encoder's
                return
            name = self.name
            assert name is not None
            self.assert_owned(name)
            # the engine must know the field type: asked on the built index first, which is
            # left as it was when it does not (a rebuild would have deleted it)
            what = f"mapping the learned sparse field {field!r} ({mapping.get('type')})"
            self._http.request("PUT", f"/{name}/_mapping", body={"properties": {field: mapping}}, what=what)
            self.sparse[field] = (dict(mapping), vectors)
            self._rebuild(f"learned sparse field {field!r} added")

    def known_ids(self) -> set:
        """The ids of the documents (and dense vectors) this index was built from."""
        ids = {str(d.doc_id) for d in self._documents or ()}
        return ids | {str(d) for d in (self._vectors.doc_ids if self._vectors is not None else ())}

    # ---- variants (BM25 k1/b, stop words, vector similarity) --------------------------

    def ensure_variant(self, spec: Any) -> None:
        """Make the index match the spec's k1/b/stop words/vector similarity (see the
        module docstring). An existing index is used as it is."""
        if self._config.existing is not None or self.name is None:
            return
        with self._lock:
            v = self.variant
            if isinstance(spec, BM25Spec):
                analyzers = _named_analyzers(spec)
                if stopwords_setting(spec.stopwords) != stopwords_setting(v["stopwords"]) or analyzers != (
                    v.get("analyzer") or ()
                ):
                    v["stopwords"], v["analyzer"] = spec.stopwords, analyzers
                    v["k1"], v["b"] = float(spec.k1), float(spec.b)
                    self._rebuild("stop words or analyzers changed")
                elif (float(spec.k1), float(spec.b)) != (v["k1"], v["b"]):
                    self._set_bm25(float(spec.k1), float(spec.b))
            elif (
                isinstance(spec, KnnSpec)
                and spec.field == self._config.vector_field
                and self._vectors is not None
                and spec.similarity != v["similarity"]
            ):
                v["similarity"] = spec.similarity
                self._rebuild("vector similarity changed")

    def _set_bm25(self, k1: float, b: float) -> None:
        http, name = self._http, self.name
        assert name is not None
        self.assert_owned(name)
        log.info("%s: setting BM25 k1=%s b=%s on %s", http.name, k1, b, name)
        http.request("POST", f"/{name}/_close", what=f"closing index {name!r}")
        try:
            http.request(
                "PUT",
                f"/{name}/_settings",
                body={
                    "index.similarity.default.type": self._bm25_type(),
                    "index.similarity.default.k1": k1,
                    "index.similarity.default.b": b,
                },
                what=f"setting BM25 parameters of {name!r}",
            )
        finally:
            http.request("POST", f"/{name}/_open", what=f"reopening index {name!r}")
            http.request(
                "GET",
                f"/_cluster/health/{name}",
                params={"wait_for_status": "green"},
                what=f"waiting for index {name!r}",
            )
        self.variant["k1"], self.variant["b"] = k1, b

    def _rebuild(self, why: str) -> None:
        log.info("%s: rebuilding throwaway index (%s)", self._http.name, why)
        self.delete()
        self._build()

    def delete(self) -> None:
        self._deferred = False  # (closed before its build: nothing to build or delete)
        name = self.name
        if name is None:
            return
        self.assert_owned(name)
        resp = self._http.request("DELETE", f"/{name}", what=f"deleting index {name!r}", ok_status=(404,))
        self.name = None
        if not isinstance(resp, EngineHTTPError):
            log.info("%s: deleted throwaway index %s", self._http.name, name)


def _keyword_at(path: str) -> Dict[str, Any]:
    """``properties`` mapping the dotted ``path`` as a keyword field (objects on the way)."""
    head, dot, rest = path.partition(".")
    if not dot:
        return {head: {"type": "keyword"}}
    return {head: {"properties": _keyword_at(rest)}}
