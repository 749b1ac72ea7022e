"""Committed baselines: per-query metric values of an accepted run, and what they were made of.

``pytest --retrieval-baseline-update`` writes one JSON file per suite; a normal run compares
the current per-query values with it (:mod:`pytest_retrieval.stats.significance`).

Where: next to the suite file, ``<suite file stem>.baseline.json``
(``retrieval_search.yaml`` -> ``retrieval_search.baseline.json``), unless the suite names
another path (relative to the suite file): :func:`resolve_baseline_path`.

The file (``indent=1``, keys sorted, one query per line, UTF-8, ``\\n``, trailing newline) is
meant to be committed and reviewed in a diff::

    {
     "created": "2025-01-31T12:00:00Z",
     "fingerprint": {"corpus": {"count": 5183, "sha256": "..."}, ...},
     "format": "pytest-retrieval-baseline",
     "plugin_version": "0.1.0",
     "retrievers": {
      "bm25": {
       "aggregate": {"ndcg@10": 0.6543...},
       "latency_ms": {"p50": 0.38, "p95": 0.55, ...},
       "per_query": {"ndcg@10": {"1": 1.0, "3": 0.6309297535714575, ...}},
       "queries": 300
      }
     },
     "suite": "scifact",
     "version": 1
    }

Floats are written with ``repr`` (shortest round-trip form) and read back bit-identical;
nothing is rounded. NaN aggregates / latencies are written as ``null`` (read back as NaN);
per-query values must be finite. Writes are atomic (temporary file + ``os.replace``).

Fingerprint (:func:`fingerprint`): sha256 hashes and plain facts of what produced the
numbers. :func:`compare_fingerprints` splits a mismatch in two:

* **invalidating** (:data:`INVALIDATING`): the evaluation inputs — queries, qrels, corpus
  documents (or an existing index's doc count) and the metric profile. Per-query values
  are no longer like with like: the caller falls back to floors only (or errors).
* **system**: what the gate is there to judge — retriever configs, embedder, engine
  name/version, index mapping, plugin version, tags. Reported, and the comparison goes on
  (a new embedder or engine version is exactly what a regression gate should compare).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ConfigError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "INVALIDATING",
    "Baseline",
    "BaselineMissing",
    "fingerprint",
    "fingerprint_from_result",
    "diff_fingerprints",
    "compare_fingerprints",
    "FingerprintDiff",
    "write_baseline",
    "read_baseline",
    "baseline_from_result",
    "default_baseline_path",
    "resolve_baseline_path",
    "canonical_json",
    "sha256_json",
]

FORMAT = "pytest-retrieval-baseline"
FORMAT_VERSION = 1

#: Fingerprint components whose change makes per-query values incomparable.
#: ``index.doc_count`` names the doc count inside the ``index`` component.
INVALIDATING: Tuple[str, ...] = ("queries", "qrels", "corpus", "index.doc_count", "metric_profile")

PathLike = Union[str, "os.PathLike[str]"]


class BaselineMissing(ConfigError):
    """No baseline file yet (first run, or never written): not an error by itself."""


# =========================================================================== hashing


def canonical_json(value: Any) -> str:
    """Key-sorted, compact, UTF-8 JSON: the same data always gives the same text."""
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_json_default,
    )


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


def sha256_json(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def _hash_lines(rows: Iterable[Any]) -> Tuple[str, int]:
    """sha256 over one canonical JSON line per row (streamed), and the row count."""
    h = hashlib.sha256()
    n = 0
    for row in rows:
        h.update(canonical_json(row).encode("utf-8"))
        h.update(b"\n")
        n += 1
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
    plugin_version: Optional[str] = None,
    metric_profile: Optional[Mapping[str, Any]] = None,
    retrievers: Optional[Mapping[str, Any]] = None,
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
    * ``embedder``, ``engine`` (name + version), ``plugin_version``, ``metric_profile``
      (e.g. ``{"profile", "ties", "relevance_threshold", "depth"}``) are kept as they are.
    """
    out: Dict[str, Any] = {}
    h, n = _hash_lines(sorted([str(q), str(t)] for q, t in queries.items()))
    out["queries"] = {"count": n, "sha256": h}
    triples = sorted([str(q), str(d), int(g)] for q, judged in qrels.items() for d, g in judged.items())
    h, n = _hash_lines(triples)
    out["qrels"] = {"count": n, "queries": len(qrels), "sha256": h}
    if corpus is not None:
        h, n = _hash_lines(_doc_row(d) for d in corpus)
        out["corpus"] = {"count": n, "sha256": h}
    if index is not None:
        idx = dict(index)
        entry: Dict[str, Any] = {"name": idx.get("name"), "doc_count": idx.get("doc_count")}
        if idx.get("mapping") is not None or idx.get("settings") is not None:
            entry["mapping_sha256"] = sha256_json(
                {"mapping": idx.get("mapping"), "settings": idx.get("settings")}
            )
        out["index"] = entry
    if tags:
        h, n = _hash_lines(sorted([str(q), sorted(str(t) for t in ts)] for q, ts in tags.items()))
        out["tags"] = {"count": n, "sha256": h}
    if embedder_id is not None:
        out["embedder"] = str(embedder_id)
    if engine is not None or engine_version is not None:
        out["engine"] = {"name": engine, "version": engine_version}
    if plugin_version is not None:
        out["plugin_version"] = str(plugin_version)
    if metric_profile is not None:
        out["metric_profile"] = json.loads(canonical_json(dict(metric_profile)))
    if retrievers is not None:
        out["retrievers"] = {str(k): sha256_json(v) for k, v in sorted(retrievers.items())}
    return out


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
    engine reports it) is hashed into the ``index`` component when given."""
    from .. import __version__

    suite = result.suite
    model = suite.model
    js = result.judgments
    info = dict(result.backend_info or {})
    evaluated = {q: t for q, t in js.queries.items() if q in js.qrels}
    index = None
    if model.backend.type != "embedded" and model.backend.index.name:
        index = {"name": model.backend.index.name, "doc_count": info.get("doc_count")}
        if index_mapping:
            index.update({"mapping": index_mapping.get("mapping"), "settings": index_mapping.get("settings")})
    engine = info.get("engine") or info.get("backend")
    retrievers = {n: r.model_dump(mode="json") for n, r in model.retrievers.items()}
    if model.backend.type != "embedded" and not model.backend.index.name:
        # a throwaway index: its mapping/settings from the suite are part of the system
        idx_cfg = model.backend.index.model_dump(mode="json")
        retrievers = {n: {"retriever": c, "index": idx_cfg} for n, c in retrievers.items()}
    return fingerprint(
        queries=evaluated,
        qrels=js.qrels,
        corpus=js.corpus if index is None else None,
        index=index,
        tags=js.tags or None,
        embedder_id=embedder_id if embedder_id is not None else info.get("embedder"),
        engine=engine,
        engine_version=info.get("version"),
        plugin_version=plugin_version or __version__,
        metric_profile={
            "profile": model.evaluation.profile,
            "ties": model.evaluation.ties,
            "relevance_threshold": model.judgments.relevance_threshold,
            "depth": model.evaluation.depth,
        },
        retrievers=retrievers,
    )


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
    system: List[str] = field(default_factory=list)  # the pipeline changed: compare anyway

    @property
    def comparable(self) -> bool:
        return not self.invalidating

    @property
    def lines(self) -> List[str]:
        return self.invalidating + self.system

    def __bool__(self) -> bool:
        return bool(self.invalidating or self.system)


def compare_fingerprints(
    old: Mapping[str, Any], new: Mapping[str, Any], *, invalidating: Iterable[str] = INVALIDATING
) -> FingerprintDiff:
    """What changed between the baseline's fingerprint (``old``) and this run's (``new``),
    in plain English, split into invalidating changes and system changes (see the module
    doc). ``invalidating`` names components (``"engine"``, ``"embedder"``, ...; use
    ``"index.doc_count"`` / ``"index.mapping"`` for the parts of ``index``) to treat as
    invalidating; the default is :data:`INVALIDATING`."""
    strict = set(invalidating)
    out = FingerprintDiff()

    def add(component: str, line: str) -> None:
        (out.invalidating if component in strict else out.system).append(line)

    for key in sorted(set(old) | set(new), key=_component_order):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key in ("queries", "qrels", "corpus", "tags"):
            label = "qrels" if key == "qrels" else key
            if a is None or b is None:
                add(key, f"{label}: {'not in the baseline' if a is None else 'not in this run'}")
                continue
            ca, cb = a.get("count"), b.get("count")
            what = _count_word(key)
            counts = (
                f"{_fmt(ca)} -> {_fmt(cb)} {what}"
                if ca != cb
                else f"same {_fmt(ca)} {what}, different content"
            )
            add(
                key,
                f"{label} changed: {counts} (sha256 {_short(a.get('sha256'))} -> {_short(b.get('sha256'))})",
            )
        elif key == "index":
            a, b = a or {}, b or {}
            if a.get("name") != b.get("name"):
                add("index.doc_count", f"index {_fmt(a.get('name'))} -> {_fmt(b.get('name'))}")
            if a.get("doc_count") != b.get("doc_count"):
                add(
                    "index.doc_count",
                    f"index doc count {_fmt(a.get('doc_count'))} -> {_fmt(b.get('doc_count'))}",
                )
            if a.get("mapping_sha256") != b.get("mapping_sha256"):
                add(
                    "index.mapping",
                    f"index mapping/settings changed (sha256 "
                    f"{_short(a.get('mapping_sha256'))} -> "
                    f"{_short(b.get('mapping_sha256'))})",
                )
        elif key == "engine":
            a, b = a or {}, b or {}
            if a.get("name") != b.get("name"):
                add(
                    key,
                    f"engine {_fmt(a.get('name'))} {_fmt(a.get('version'))} -> "
                    f"{_fmt(b.get('name'))} {_fmt(b.get('version'))}",
                )
            else:
                add(
                    key,
                    f"engine version {_fmt(a.get('version'))} -> {_fmt(b.get('version'))}"
                    f" ({_fmt(a.get('name'))})",
                )
        elif key == "embedder":
            add(key, f"embedder {_fmt(a)} -> {_fmt(b)}")
        elif key == "plugin_version":
            add(key, f"pytest-retrieval version {_fmt(a)} -> {_fmt(b)}")
        elif key == "metric_profile":
            a, b = a or {}, b or {}
            parts = [
                f"{k} {_fmt(a.get(k))} -> {_fmt(b.get(k))}"
                for k in sorted(set(a) | set(b))
                if a.get(k) != b.get(k)
            ]
            add(key, "metric settings changed: " + ", ".join(parts))
        elif key == "retrievers":
            a, b = a or {}, b or {}
            for name in sorted(set(a) | set(b)):
                if name not in a:
                    add(key, f"retriever {name!r} added (not in the baseline)")
                elif name not in b:
                    add(key, f"retriever {name!r} removed (only in the baseline)")
                elif a[name] != b[name]:
                    add(key, f"retriever {name!r} config changed")
        else:
            add(
                key,
                f"{key}: {_fmt(canonical_json(a) if a is not None else None)} -> "
                f"{_fmt(canonical_json(b) if b is not None else None)}",
            )
    return out


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
    "plugin_version",
)


def _component_order(key: str) -> Tuple[int, str]:
    return (_ORDER.index(key) if key in _ORDER else len(_ORDER), key)


def diff_fingerprints(old: Mapping[str, Any], new: Mapping[str, Any]) -> List[str]:
    """Every difference as one plain-English line (invalidating ones first); [] if equal."""
    return compare_fingerprints(old, new).lines


# =========================================================================== baseline


@dataclass
class Baseline:
    """A suite's accepted run. ``retrievers[name]`` holds ``per_query`` (``{metric: {qid:
    value}}``), ``aggregate`` (``{metric: value}``), ``latency_ms`` (the latency summary,
    informational: it was measured on another machine) and ``queries`` (count)."""

    suite: str
    created: str
    plugin_version: str
    fingerprint: Dict[str, Any]
    retrievers: Dict[str, Dict[str, Any]]
    version: int = FORMAT_VERSION

    def per_query(self, retriever: str, metric: str) -> Optional[Dict[str, float]]:
        """The baseline's per-query values, or None when it has no such retriever/metric
        (e.g. a retriever or a floor added since the baseline was written)."""
        r = self.retrievers.get(retriever)
        if r is None:
            return None
        return r.get("per_query", {}).get(metric)

    def top(self, retriever: str) -> Dict[str, List[str]]:
        """Each query's top-k doc ids of a retriever ({} when the baseline predates them)."""
        return dict((self.retrievers.get(retriever) or {}).get("top") or {})

    def as_json(self) -> Dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "suite": self.suite,
            "created": self.created,
            "plugin_version": self.plugin_version,
            "fingerprint": self.fingerprint,
            "retrievers": self.retrievers,
        }


def _utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def baseline_from_result(
    result: Any,
    *,
    fingerprint: Optional[Mapping[str, Any]] = None,
    metrics: Optional[Sequence[str]] = None,
    retrievers: Optional[Sequence[str]] = None,
    created: Optional[str] = None,
    plugin_version: Optional[str] = None,
) -> Baseline:
    """A :class:`Baseline` of a ``suite.SuiteResult``: every evaluated metric (or
    ``metrics``) of every retriever (or ``retrievers``), per query and aggregated, plus
    the latency summary without its raw samples."""
    from .. import __version__

    fp = dict(fingerprint) if fingerprint is not None else fingerprint_from_result(result)
    out: Dict[str, Dict[str, Any]] = {}
    for name, rr in result.retrievers.items():
        if retrievers is not None and name not in retrievers:
            continue
        ev = rr.evaluation
        keys = [m for m in ev.per_query if metrics is None or m in metrics]
        entry: Dict[str, Any] = {
            "per_query": {m: {str(q): float(v) for q, v in ev.per_query[m].items()} for m in keys},
            "aggregate": {m: float(ev.aggregate[m]) for m in keys},
            "queries": len(ev.evaluated),
        }
        if rr.latency is not None:
            entry["latency_ms"] = rr.latency.as_dict()
        from ..reports.rankings import ranking_depth, top_ids

        entry["top"] = top_ids(rr.run, ev.evaluated, ranking_depth(result.suite))  # for ranking diffs
        out[name] = entry
    return Baseline(
        suite=result.suite.name,
        created=created or _utc_now(),
        plugin_version=plugin_version or __version__,
        fingerprint=fp,
        retrievers=out,
    )


def _jsonable(value: Any, path: str, finite_only: bool = False) -> Any:
    """NaN -> None; +-inf and (with ``finite_only``) NaN raise; tuples -> lists."""
    if isinstance(value, float):
        if math.isnan(value):
            if finite_only:
                raise ValueError(f"{path}: per-query values must be finite, got NaN")
            return None
        if math.isinf(value):
            raise ValueError(f"{path}: infinite value {value!r} cannot be written")
        return value
    if isinstance(value, Mapping):
        return {
            str(k): _jsonable(v, f"{path}.{k}", finite_only or k == "per_query") for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{path}[{i}]", finite_only) for i, v in enumerate(value)]
    return value


def write_baseline(path: PathLike, baseline: Baseline) -> Path:
    """Write ``baseline`` to ``path`` atomically (temporary file in the same directory,
    fsync, ``os.replace``). Diff-friendly: ``indent=1``, sorted keys, ``repr`` floats."""
    path = Path(path)
    data = _jsonable(baseline.as_json(), "baseline")
    rankings: List[str] = []  # each query's top k on one line: "qid": ["d1", "d2", ...]
    for entry in data.get("retrievers", {}).values():
        if isinstance(entry, dict) and isinstance(entry.get("top"), dict):
            for q, docs in entry["top"].items():
                rankings.append(json.dumps([str(d) for d in docs], ensure_ascii=False))
                entry["top"][q] = f"\x00{len(rankings) - 1}\x00"
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    if rankings:
        text = re.sub(r'"\\u0000(\d+)\\u0000"', lambda m: rankings[int(m.group(1))], text)
    from ..fileio import atomic_write

    atomic_write(path, lambda fh: fh.write(text))
    return path


def _no_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


class _Duplicate(ValueError):
    pass


def read_baseline(path: PathLike) -> Baseline:
    """Read and check a baseline file. Every problem is one ``ConfigError`` line naming
    the file (and the line or key); a missing file raises :class:`BaselineMissing`."""
    path = Path(path)
    where = str(path)

    def err(message: str, key: Optional[str] = None, line: Optional[int] = None) -> ConfigError:
        return ConfigError(message, file=where, key=key, line=line)

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BaselineMissing(
            "no baseline file (write one with pytest --retrieval-baseline-update)", file=where
        ) from None
    except OSError as exc:
        raise err(f"cannot read the baseline: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise err(f"not UTF-8 text (byte {exc.start})") from None
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "<<<<<<<" or line == "=======":
            raise err(
                "unresolved merge conflict markers; re-create the baseline with --retrieval-baseline-update",
                line=i,
            )
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        raise err(f"duplicate key {exc.args[0]!r} (a bad merge?)") from None
    except json.JSONDecodeError as exc:
        raise err(f"not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    if not isinstance(data, dict):
        raise err(f"a baseline is a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise err(f'not a pytest-retrieval baseline (expected "format": "{FORMAT}")', key="format")
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise err(f"baseline format version must be an integer, got {version!r}", key="version")
    if version > FORMAT_VERSION:
        raise err(
            f"written by a newer pytest-retrieval (baseline format {version}; this "
            f"version reads {FORMAT_VERSION}): upgrade, or re-create it with "
            f"--retrieval-baseline-update",
            key="version",
        )
    if version != FORMAT_VERSION:
        raise err(
            f"unsupported baseline format version {version} (this version reads {FORMAT_VERSION})",
            key="version",
        )
    for key, kind in (
        ("suite", str),
        ("created", str),
        ("plugin_version", str),
        ("fingerprint", dict),
        ("retrievers", dict),
    ):
        if key not in data:
            raise err(f"missing key {key!r}")
        if not isinstance(data[key], kind):
            raise err(
                f"expected {'an object' if kind is dict else 'a string'}, got {type(data[key]).__name__}",
                key=key,
            )
    retrievers: Dict[str, Dict[str, Any]] = {}
    for name, entry in data["retrievers"].items():
        base = f"retrievers.{name}"
        if not isinstance(entry, dict):
            raise err("expected an object", key=base)
        per_query = entry.get("per_query")
        if not isinstance(per_query, dict):
            raise err("missing or not an object", key=f"{base}.per_query")
        checked: Dict[str, Dict[str, float]] = {}
        for metric, values in per_query.items():
            if not isinstance(values, dict):
                raise err("expected an object {query id: value}", key=f"{base}.per_query.{metric}")
            col: Dict[str, float] = {}
            for qid, v in values.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise err(
                        f"per-query value must be a finite number, got {v!r}",
                        key=f"{base}.per_query.{metric}.{qid}",
                    )
                col[qid] = float(v)
            checked[metric] = col
        aggregate = entry.get("aggregate", {})
        if not isinstance(aggregate, dict):
            raise err("expected an object", key=f"{base}.aggregate")
        agg: Dict[str, float] = {}
        for metric, v in aggregate.items():
            if v is None:
                agg[metric] = math.nan
            elif isinstance(v, bool) or not isinstance(v, (int, float)):
                raise err(f"expected a number, got {v!r}", key=f"{base}.aggregate.{metric}")
            else:
                agg[metric] = float(v)
        clean = dict(entry)
        clean["per_query"] = checked
        clean["aggregate"] = agg
        if "latency_ms" in clean and not isinstance(clean["latency_ms"], dict):
            raise err("expected an object", key=f"{base}.latency_ms")
        top = clean.get("top", {})  # optional (older baselines): {qid: [doc ids]}
        if not isinstance(top, dict) or not all(
            isinstance(v, list) and all(isinstance(d, str) for d in v) for v in top.values()
        ):
            raise err("expected an object {query id: [doc ids]}", key=f"{base}.top")
        retrievers[name] = clean
    return Baseline(
        suite=data["suite"],
        created=data["created"],
        plugin_version=data["plugin_version"],
        fingerprint=data["fingerprint"],
        retrievers=retrievers,
        version=version,
    )


# =========================================================================== where


def default_baseline_path(suite_path: PathLike) -> Path:
    """``dir/retrieval_search.yaml`` -> ``dir/retrieval_search.baseline.json``."""
    p = Path(suite_path)
    return p.with_name(f"{p.stem}.baseline.json")


def resolve_baseline_path(suite_path: PathLike, configured: Optional[PathLike] = None) -> Path:
    """The suite's baseline file: ``configured`` (relative to the suite file's directory,
    ``~`` expanded) or :func:`default_baseline_path`."""
    if configured is None or str(configured) == "":
        return default_baseline_path(suite_path)
    p = Path(configured).expanduser()
    return p if p.is_absolute() else Path(suite_path).parent / p
