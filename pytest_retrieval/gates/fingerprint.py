"""Fingerprints of a suite run: sha256 hashes and plain facts of what produced the numbers, and
what changed between two of them, in plain English (pure, no I/O).

:func:`compare_fingerprints` splits a mismatch in two:

* **invalidating** (:data:`INVALIDATING`): the metric profile. Per-query values are no
  longer like with like: the caller falls back to floors only (or errors).
* **judgments** (:data:`PER_QUERY`): the queries' texts and their judgments. Resolved query
  by query (``query_hashes``, :mod:`.comparable`): the queries whose text or judgments
  changed are left out of the comparison, the others are compared. A baseline written
  before per-query hashes cannot say which changed: invalidating then.
* **system**: what the gate is there to judge — the corpus and the index (its name, the
  indexes an alias points to, its doc count, mapping and settings; issue #28: they are part
  of the system under test), retriever configs, embedder, engine name/version, engine
  client, plugin version, tags. Reported, and the comparison goes on (a reindex that
  truncates documents is exactly what a regression gate should compare).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "INVALIDATING",
    "PER_QUERY",
    "query_hashes",
    "text_hashes",
    "CANARY_HASHES",
    "fingerprint",
    "fingerprint_from_result",
    "diff_fingerprints",
    "compare_fingerprints",
    "FingerprintDiff",
    "canonical_json",
    "sha256_json",
]

#: Fingerprint components whose change makes every per-query value incomparable.
#: ``index.doc_count`` / ``index.mapping`` name the parts of the ``index`` component.
INVALIDATING: Tuple[str, ...] = ("metric_profile",)

#: Components whose change is resolved query by query (``query_hashes``): only the queries
#: whose text or judgments changed are left out of a comparison.
PER_QUERY: Tuple[str, ...] = ("queries", "qrels")

#: the baseline's hashes of its canary queries' texts (issue #33): read by the stability gates
#: alone, never a change of the inputs of a relevance comparison
CANARY_HASHES = "canary_hashes"

#: hex digits kept of each per-query hash (48 bits: a change is what is looked for, not an attack)
_QUERY_HASH_DIGITS = 12


# =========================================================================== hashing


def canonical_json(value: Any) -> str:
    """Key-sorted, compact, UTF-8 JSON: the same data always gives the same text."""
    return _CANONICAL.encode(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, tuple):
        return list(value)
    if hasattr(value, "model_dump"):  # pydantic
        return value.model_dump(mode="json")
    if hasattr(value, "get_secret_value"):  # never hash or write secrets in clear
        return "**********"
    if isinstance(value, Path):
        return str(value)
    return str(value)


# one encoder for every call (``json.dumps`` with options builds a new one each time: a
# fingerprint encodes a line per query, judgment and document)
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_json_default
)

#: rows hashed per update of :func:`_hash_lines` (the text of a batch, not of the whole corpus)
_BATCH = 4096


def sha256_json(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def _hash_lines(rows: Iterable[Any]) -> Tuple[str, int]:
    """sha256 over one canonical JSON line per row (streamed), and the row count."""
    h = hashlib.sha256()
    n = 0
    encode = _CANONICAL.encode
    batch: List[str] = []
    for row in rows:
        batch.append(encode(row))
        n += 1
        if len(batch) == _BATCH:
            h.update(("\n".join(batch) + "\n").encode("utf-8"))
            batch.clear()
    if batch:
        h.update(("\n".join(batch) + "\n").encode("utf-8"))
    return h.hexdigest(), n


def _doc_row(doc: Any) -> List[Any]:
    if hasattr(doc, "doc_id") and hasattr(doc, "fields"):
        return [str(doc.doc_id), dict(doc.fields)]
    if isinstance(doc, Mapping):
        d = dict(doc)
        doc_id = d.pop("_id", d.pop("id", None))
        return [str(doc_id), d]
    raise TypeError(f"corpus entries must be Documents or mappings, got {type(doc).__name__}")


# =========================================================================== fingerprint


def fingerprint(
    *,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    corpus: Optional[Iterable[Any]] = None,
    index: Optional[Mapping[str, Any]] = None,
    tags: Optional[Mapping[str, Sequence[str]]] = None,
    embedder_id: Optional[str] = None,
    engine: Optional[str] = None,
    engine_version: Optional[str] = None,
    client: Optional[str] = None,
    plugin_version: Optional[str] = None,
    metric_profile: Optional[Mapping[str, Any]] = None,
    retrievers: Optional[Mapping[str, Any]] = None,
    search: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """The inputs of a suite run as a JSON-able dict of hashes and plain facts.

    * ``queries``: sha256 of the sorted ``[qid, text]`` pairs (pass only the evaluated
      queries, so that an unjudged query added to the file changes nothing).
    * ``qrels``: sha256 of the sorted ``[qid, doc_id, grade]`` triples; count = judgments.
    * ``corpus``: sha256 of ``[doc_id, {field: text}]`` rows **in corpus order** (the
      embedded engine breaks score ties by corpus position, so order matters).
    * ``index``: an existing index: ``{"name", "doc_count", "mapping", "settings"}`` ->
      name, doc count and the sha256 of mapping + settings.
    * ``tags``: sha256 of the sorted ``[qid, sorted tags]``.
    * ``retrievers``: ``{name: config}`` -> one sha256 of the canonical JSON per retriever.
    * ``embedder``, ``engine`` (name + version), ``client`` (the engine's Python client and
      its version), ``plugin_version``, ``metric_profile``
      (e.g. ``{"profile", "ties", "relevance_threshold", "depth"}``) are kept as they are.
    * ``search``: how an engine searched, kept as it is: shards, replicas, the search
      settings every search carried (preference, search_type) and the HNSW parameters.
    """
    out = _data_components(queries, qrels, corpus, index, tags)
    facts = _system_facts(embedder_id, engine, engine_version, client, plugin_version)
    facts.update(
        {
            "metric_profile": None
            if metric_profile is None
            else json.loads(canonical_json(dict(metric_profile))),
            "retrievers": None if retrievers is None else _retriever_hashes(retrievers),
            "search": json.loads(canonical_json(dict(search))) if search else None,
        }
    )
    out.update({k: v for k, v in facts.items() if v is not None})
    return out


def _system_facts(
    embedder_id: Optional[str],
    engine: Optional[str],
    engine_version: Optional[str],
    client: Optional[str],
    plugin_version: Optional[str],
) -> Dict[str, Any]:
    """embedder, engine, client and plugin version as they are (None: not recorded)."""
    has_engine = engine is not None or engine_version is not None
    return {
        "embedder": None if embedder_id is None else str(embedder_id),
        "engine": {"name": engine, "version": engine_version} if has_engine else None,
        "client": None if client is None else str(client),
        "plugin_version": None if plugin_version is None else str(plugin_version),
    }


def _data_components(
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    corpus: Optional[Iterable[Any]],
    index: Optional[Mapping[str, Any]],
    tags: Optional[Mapping[str, Sequence[str]]],
) -> Dict[str, Any]:
    """The hashed components: queries, qrels, corpus or index, tags (see :func:`fingerprint`)."""
    out: Dict[str, Any] = {}
    h, n = _hash_lines(sorted([str(q), str(t)] for q, t in queries.items()))
    out["queries"] = {"count": n, "sha256": h}
    triples = sorted([str(q), str(d), int(g)] for q, judged in qrels.items() for d, g in judged.items())
    h, n = _hash_lines(triples)
    out["qrels"] = {"count": n, "queries": len(qrels), "sha256": h}
    out["query_hashes"] = query_hashes(queries, qrels)
    if corpus is not None:
        h, n = _hash_lines(_doc_row(d) for d in corpus)
        out["corpus"] = {"count": n, "sha256": h}
    if index is not None:
        out["index"] = _index_entry(index)
    if tags:
        h, n = _hash_lines(sorted([str(q), sorted(str(t) for t in ts)] for q, ts in tags.items()))
        out["tags"] = {"count": n, "sha256": h}
    return out


def query_hashes(queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]]) -> Dict[str, str]:
    """``{qid: "<text hash>:<judgments hash>"}`` of every judged query (text or not): what
    tells, query by query, whether a baseline's value is still like with like (the first
    :data:`_QUERY_HASH_DIGITS` hex digits of the sha256 of each)."""
    out: Dict[str, str] = {}
    for q, judged in qrels.items():
        text = queries.get(q)  # a judged query without a text scores 0: hashed as such
        t = sha256_json(None if text is None else str(text))[:_QUERY_HASH_DIGITS]
        j = sha256_json(sorted([str(d), int(g)] for d, g in judged.items()))[:_QUERY_HASH_DIGITS]
        out[str(q)] = f"{t}:{j}"
    return dict(sorted(out.items()))


def text_hashes(queries: Mapping[str, str]) -> Dict[str, str]:
    """``{qid: text hash}``: the text part of :func:`query_hashes`, of queries without judgments
    (canary queries)."""
    return {str(q): sha256_json(str(t))[:_QUERY_HASH_DIGITS] for q, t in sorted(queries.items())}


def _index_entry(index: Mapping[str, Any]) -> Dict[str, Any]:
    """name, the concrete indexes it points to (``target``, an alias's), doc count, and the
    sha256 of the mapping + settings (given as ``mapping``/``settings``, or already hashed by
    the backend as ``definition_sha256``: ``backends/search_engine/facts.py``)."""
    idx = dict(index)
    entry: Dict[str, Any] = {"name": idx.get("name"), "doc_count": idx.get("doc_count")}
    if idx.get("target") is not None:
        entry["target"] = idx["target"]
    if idx.get("mapping") is not None or idx.get("settings") is not None:
        entry["mapping_sha256"] = sha256_json(
            {"mapping": idx.get("mapping"), "settings": idx.get("settings")}
        )
    elif idx.get("definition_sha256") is not None:
        entry["mapping_sha256"] = idx["definition_sha256"]
    return entry


def _retriever_hashes(retrievers: Mapping[str, Any]) -> Dict[str, str]:
    return {str(k): sha256_json(v) for k, v in sorted(retrievers.items())}


def fingerprint_from_result(
    result: Any,
    *,
    plugin_version: Optional[str] = None,
    embedder_id: Optional[str] = None,
    index_mapping: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """:func:`fingerprint` of a ``suite.SuiteResult``.

    ``embedder_id`` defaults to ``backend_info["embedder"]`` (the embedded backend sets
    it); ``index_mapping`` (``{"mapping", "settings"}`` of an existing index, as the
    engine reports it) is hashed into the ``index`` component when given.

    Taken once per result and these arguments (the baseline gate, the report and a baseline
    update all ask for it: hashing every query, judgment and document each time): kept on the
    result with what it was taken of, and a copy is returned."""
    key = (
        plugin_version,
        embedder_id,
        canonical_json(index_mapping),
        canonical_json(dict(result.backend_info or {})),
    )
    inputs = (result.suite.model, result.judgments)  # the very objects (held: an id may be reused)
    cached = getattr(result, "_fingerprint_cache", None)
    if cached is None or cached[0] != key or any(a is not b for a, b in zip(cached[1], inputs)):
        cached = (key, inputs, _fingerprint_of(result, plugin_version, embedder_id, index_mapping))
        try:
            result._fingerprint_cache = cached
        except AttributeError:  # pragma: no cover - a result that takes no attributes
            pass
    return copy.deepcopy(cached[2])


def _fingerprint_of(
    result: Any,
    plugin_version: Optional[str],
    embedder_id: Optional[str],
    index_mapping: Optional[Mapping[str, Any]],
) -> Dict[str, Any]:
    from .. import __version__
    from ..redaction import templated

    model = result.suite.model
    js = result.judgments
    # the templates, never the values of ${VAR}s (issue #32): a rotated token is the same
    # system, and a committed hash cannot be tried against guessed tokens
    info = templated(dict(result.backend_info or {}))
    evaluated = {q: t for q, t in js.queries.items() if q in js.qrels}
    index = templated(_existing_index(model, info, index_mapping))
    return fingerprint(
        queries=evaluated,
        qrels=js.qrels,
        corpus=js.corpus if index is None else None,
        index=index,
        tags=js.tags or None,
        embedder_id=embedder_id if embedder_id is not None else info.get("embedder"),
        engine=info.get("engine") or info.get("backend"),
        engine_version=info.get("version"),
        client=info.get("client"),
        plugin_version=plugin_version or __version__,
        metric_profile=_metric_profile(model),
        retrievers=templated(_retriever_configs(model, info.get("sparse_encoders") or {})),
        search=_search_facts(info),
    )


def _metric_profile(model: Any) -> Dict[str, Any]:
    """What the per-query values and means depend on. ``average_over`` only when it is not
    ``relevant`` (what every baseline before it was averaged over: those stay comparable)."""
    from ..measures.aggregate import average_over_of

    out: Dict[str, Any] = {
        "profile": model.evaluation.profile,
        "ties": model.evaluation.ties,
        "relevance_threshold": model.judgments.relevance_threshold,
        "depth": model.evaluation.depth,
    }
    mode = average_over_of(model.evaluation)
    if mode != "relevant":
        out["average_over"] = mode
    return out


def _existing_index(
    model: Any, info: Dict[str, Any], index_mapping: Optional[Mapping[str, Any]]
) -> Optional[Dict[str, Any]]:
    """The ``index`` input of an existing index on an engine (None for a corpus)."""
    if model.backend.type == "embedded" or not model.backend.index.name:
        return None
    index = {
        "name": model.backend.index.name,
        "doc_count": info.get("doc_count"),
        "target": info.get("index_target"),
        "definition_sha256": info.get("index_definition_sha256"),
    }
    if index_mapping:
        index.update({"mapping": index_mapping.get("mapping"), "settings": index_mapping.get("settings")})
    return index


def _search_facts(info: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    return {k: info[k] for k in SEARCH_FACTS if info.get(k) is not None} or None


def _retriever_configs(model: Any, sparse_encoders: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """Each retriever's configuration; on a throwaway engine index, with the index's; a sparse
    retriever's with its encoder's id (a hash of its vector files or model: new vectors under
    the same file names are another system)."""
    retrievers = {n: r.model_dump(mode="json") for n, r in model.retrievers.items()}
    for n, encoder_id in (sparse_encoders or {}).items():
        if n in retrievers:
            retrievers[n]["encoder_id"] = encoder_id
    if model.backend.type != "embedded" and not model.backend.index.name:
        # a throwaway index: its mapping/settings from the suite are part of the system
        idx_cfg = model.backend.index.model_dump(mode="json")
        if idx_cfg.get("quantization") is None:  # unset: the hash of older baselines stays
            idx_cfg.pop("quantization", None)
        retrievers = {n: {"retriever": c, "index": idx_cfg} for n, c in retrievers.items()}
    return retrievers


#: backend_info keys recorded in the ``search`` component (search_engine/facts.py)
SEARCH_FACTS = ("shards", "replicas", "search", "hnsw", "ef_search")


def _short(h: Any) -> str:
    return f"{str(h)[:8]}…" if h else "none"


def _count_word(component: str) -> str:
    return {"queries": "queries", "qrels": "judgments", "corpus": "documents", "tags": "tagged queries"}.get(
        component, "items"
    )


def _fmt(v: Any) -> str:
    return "none" if v is None else (f"{v:,}" if isinstance(v, int) else str(v))


@dataclass
class FingerprintDiff:
    invalidating: List[str] = field(default_factory=list)  # comparison is not like with like
    judgments: List[str] = field(default_factory=list)  # queries/qrels: resolved query by query
    system: List[str] = field(default_factory=list)  # the pipeline changed: compare anyway

    @property
    def comparable(self) -> bool:
        return not self.invalidating

    @property
    def lines(self) -> List[str]:
        return self.invalidating + self.judgments + self.system

    def __bool__(self) -> bool:
        return bool(self.invalidating or self.judgments or self.system)


#: why a queries/qrels change of a baseline without per-query hashes invalidates it
NO_QUERY_HASHES = (
    "the baseline predates per-query hashes, so the unchanged queries cannot be told apart: "
    "re-create it with --retrieval-baseline-update"
)


def compare_fingerprints(
    old: Mapping[str, Any], new: Mapping[str, Any], *, invalidating: Iterable[str] = INVALIDATING
) -> FingerprintDiff:
    """What changed between the baseline's fingerprint (``old``) and this run's (``new``),
    in plain English, split into invalidating changes and system changes (see the module
    doc). ``invalidating`` names components (``"engine"``, ``"embedder"``, ...; use
    ``"index.doc_count"`` / ``"index.mapping"`` for the parts of ``index``) to treat as
    invalidating; the default is :data:`INVALIDATING`."""
    strict = set(invalidating)
    resolvable = "query_hashes" in old and "query_hashes" in new
    out = FingerprintDiff()

    def add(component: str, line: str) -> None:
        if component in strict:
            out.invalidating.append(line)
        elif component in PER_QUERY:
            (out.judgments if resolvable else out.invalidating).append(line)
        else:
            out.system.append(line)

    for key in sorted(set(old) | set(new), key=_component_order):
        a, b = old.get(key), new.get(key)
        if a != b and key not in ("query_hashes", CANARY_HASHES):  # summed up by queries/qrels
            _diff_component(key, a, b, add)
    if out.invalidating and not resolvable and any(old.get(k) != new.get(k) for k in PER_QUERY):
        out.invalidating.append(NO_QUERY_HASHES)
    return out


_Add = Callable[[str, str], None]

#: components compared as one plain value: how a change of each reads
_RENAMED = {"embedder": "embedder", "client": "engine client", "plugin_version": "pytest-retrieval version"}


def _diff_component(key: str, a: Any, b: Any, add: _Add) -> None:
    """One component that differs, in plain English."""
    if key in ("queries", "qrels", "corpus", "tags"):
        _diff_counted(key, a, b, add)
    elif key in _DESCRIBE:
        _DESCRIBE[key](key, a or {}, b or {}, add)
    elif key == "client" and a is None:
        pass  # baselines written before clients were recorded: not a change
    elif key in _RENAMED:
        add(key, f"{_RENAMED[key]} {_fmt(a)} -> {_fmt(b)}")
    else:
        add(
            key,
            f"{key}: {_fmt(canonical_json(a) if a is not None else None)} -> "
            f"{_fmt(canonical_json(b) if b is not None else None)}",
        )


def _diff_counted(key: str, a: Any, b: Any, add: _Add) -> None:
    """queries, qrels, corpus, tags: counts and hashes."""
    label = "qrels" if key == "qrels" else key
    if a is None or b is None:
        add(key, f"{label}: {'not in the baseline' if a is None else 'not in this run'}")
        return
    ca, cb = a.get("count"), b.get("count")
    what = _count_word(key)
    same = "different content or order" if key == "corpus" else "different content"
    counts = f"{_fmt(ca)} -> {_fmt(cb)} {what}" if ca != cb else f"same {_fmt(ca)} {what}, {same}"
    add(key, f"{label} changed: {counts} (sha256 {_short(a.get('sha256'))} -> {_short(b.get('sha256'))})")


def _diff_index(key: str, a: Dict[str, Any], b: Dict[str, Any], add: _Add) -> None:
    if a.get("name") != b.get("name"):
        add("index.name", f"index {_fmt(a.get('name'))} -> {_fmt(b.get('name'))}")
    if a.get("target") != b.get("target") and a.get("target") is not None:
        add(
            "index.target",
            f"index {_fmt(b.get('name'))} now points to {_fmt(b.get('target'))} (was {_fmt(a.get('target'))})",
        )
    if a.get("doc_count") != b.get("doc_count"):
        add("index.doc_count", f"index doc count {_fmt(a.get('doc_count'))} -> {_fmt(b.get('doc_count'))}")
    if a.get("mapping_sha256") != b.get("mapping_sha256"):
        add(
            "index.mapping",
            f"index mapping/settings changed (sha256 "
            f"{_short(a.get('mapping_sha256'))} -> "
            f"{_short(b.get('mapping_sha256'))})",
        )


def _diff_engine(key: str, a: Dict[str, Any], b: Dict[str, Any], add: _Add) -> None:
    if a.get("name") != b.get("name"):
        add(
            key,
            f"engine {_fmt(a.get('name'))} {_fmt(a.get('version'))} -> "
            f"{_fmt(b.get('name'))} {_fmt(b.get('version'))}",
        )
    else:
        add(
            key,
            f"engine version {_fmt(a.get('version'))} -> {_fmt(b.get('version'))} ({_fmt(a.get('name'))})",
        )


def _diff_search(key: str, a: Dict[str, Any], b: Dict[str, Any], add: _Add) -> None:
    parts = [
        f"{k} {_fmt(canonical_json(a.get(k)) if isinstance(a.get(k), dict) else a.get(k))} -> "
        f"{_fmt(canonical_json(b.get(k)) if isinstance(b.get(k), dict) else b.get(k))}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]
    add(key, "search settings changed: " + ", ".join(parts))


def _diff_metric_profile(key: str, a: Dict[str, Any], b: Dict[str, Any], add: _Add) -> None:
    parts = [
        f"{k} {_fmt(a.get(k))} -> {_fmt(b.get(k))}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)
    ]
    add(key, "metric settings changed: " + ", ".join(parts))


def _diff_retrievers(key: str, a: Dict[str, Any], b: Dict[str, Any], add: _Add) -> None:
    for name in sorted(set(a) | set(b)):
        if name not in a:
            add(key, f"retriever {name!r} added (not in the baseline)")
        elif name not in b:
            add(key, f"retriever {name!r} removed (only in the baseline)")
        elif a[name] != b[name]:
            add(key, f"retriever {name!r} config changed")


_DESCRIBE: Dict[str, Callable[[str, Dict[str, Any], Dict[str, Any], _Add], None]] = {
    "index": _diff_index,
    "engine": _diff_engine,
    "metric_profile": _diff_metric_profile,
    "retrievers": _diff_retrievers,
    "search": _diff_search,
}


_ORDER = (
    "queries",
    "qrels",
    "corpus",
    "index",
    "metric_profile",
    "tags",
    "retrievers",
    "embedder",
    "engine",
    "client",
    "plugin_version",
)


def _component_order(key: str) -> Tuple[int, str]:
    return (_ORDER.index(key) if key in _ORDER else len(_ORDER), key)


def diff_fingerprints(old: Mapping[str, Any], new: Mapping[str, Any]) -> List[str]:
    """Every difference as one plain-English line (invalidating ones first); [] if equal."""
    return compare_fingerprints(old, new).lines
