"""Committed baselines: per-query metric values of an accepted run, and what they were made of.

``pytest --retrieval-baseline-update`` writes one JSON file per suite; a normal run compares
the current per-query values with it (:mod:`pytest_retrieval.stats.paired`).

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
``checksums`` (of the fingerprint and of each retriever's values) are written with it and
checked on reading, with the ranges and the coverage of its values (:mod:`.baseline_checks`).

The fingerprint stored with it, and how a mismatch is read: :mod:`.fingerprint`.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple, Union

from ..errors import ConfigError
from ..fileio import atomic_write
from .baseline_checks import checksums, verify_baseline
from .comparable import left_out_queries, left_out_summary
from .fingerprint import CANARY_HASHES, compare_fingerprints, fingerprint_from_result, text_hashes
from .judged import JUDGED, current_judged

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Baseline",
    "BaselineMissing",
    "RankingsMissing",
    "write_baseline",
    "read_baseline",
    "baseline_from_result",
    "default_baseline_path",
    "resolve_baseline_path",
    "baseline_path",
    "update_baseline",
    "load_comparable_baseline",
    "comparable",
]

FORMAT = "pytest-retrieval-baseline"
FORMAT_VERSION = 1

PathLike = Union[str, "os.PathLike[str]"]


class BaselineMissing(ConfigError):
    """No baseline file yet (first run, or never written): not an error by itself."""


class RankingsMissing(ConfigError):
    """The baseline (or stored run) keeps no rankings deep enough for a stability measure."""


_REWRITE_FOR_STABILITY = (
    "stability comparisons need a rewritten baseline (pytest --retrieval-baseline-update)"
)


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
    #: not written: the baseline's queries this run cannot compare (qid -> why), set by
    #: :func:`load_comparable_baseline`; and what reading it noted (an older file, ...)
    left_out: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)

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

    def top_depth(self, retriever: str) -> Optional[int]:
        """The depth its top lists were cut at (a shorter list: the retriever returned fewer
        documents), or None when the baseline predates ``top_depth`` (issue #33)."""
        depth = (self.retrievers.get(retriever) or {}).get("top_depth")
        return depth if isinstance(depth, int) and not isinstance(depth, bool) else None

    def stored_rankings(self, retriever: str, k: int) -> Dict[str, List[str]]:
        """Each query's top ``k`` doc ids of a retriever, for the stability measures (issue
        #33). :class:`RankingsMissing` (one line, naming what is missing) when the baseline has
        no rankings of that retriever, was written before their depth was recorded, or keeps
        them less than ``k`` deep: stability comparisons need a rewritten baseline."""
        entry = self.retrievers.get(retriever)
        if entry is None:
            raise RankingsMissing(f"the baseline has no retriever {retriever!r}: {_REWRITE_FOR_STABILITY}")
        depth = self.top_depth(retriever)
        if depth is None:
            raise RankingsMissing(
                f"the baseline's rankings of {retriever!r} have no recorded depth (written before the "
                f"stability measures, or without rankings): {_REWRITE_FOR_STABILITY}"
            )
        if depth < k:
            raise RankingsMissing(
                f"the baseline keeps the top {depth} of each ranking of {retriever!r}, a stability "
                f"measure needs the top {k}: {_REWRITE_FOR_STABILITY}"
            )
        return {q: list(docs[:k]) for q, docs in (entry.get("top") or {}).items()}

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
    if getattr(result, "canary", None):  # what tells a canary query's text changed (stability gates)
        fp[CANARY_HASHES] = text_hashes(result.canary)
    out = {
        name: _retriever_entry(result, rr, metrics)
        for name, rr in result.retrievers.items()
        if retrievers is None or name in retrievers
    }
    return Baseline(
        suite=result.suite.name,
        created=created or _utc_now(),
        plugin_version=plugin_version or __version__,
        fingerprint=fp,
        retrievers=out,
    )


def _retriever_entry(result: Any, rr: Any, metrics: Optional[Sequence[str]]) -> Dict[str, Any]:
    """One retriever's metrics (all, or ``metrics``) per query and aggregated, its latency
    summary and its top documents."""
    from .rankings import ranking_depth, top_ids

    ev = rr.evaluation
    keys = [m for m in ev.per_query if metrics is None or m in metrics]
    entry: Dict[str, Any] = {
        "per_query": {m: {str(q): float(v) for q, v in ev.per_query[m].items()} for m in keys},
        "aggregate": {m: float(ev.aggregate[m]) for m in keys},
        "queries": len(ev.evaluated),
    }
    if JUDGED not in entry["per_query"]:  # beside every later verdict (gates/judged.py)
        _add_judged(entry, result, rr.name)
    if rr.latency is not None:
        entry["latency_ms"] = rr.latency.as_dict()
    depth = ranking_depth(result.suite)  # the stability gates' k included (suite.stability_metrics)
    entry["top"] = top_ids(rr.run, ev.evaluated, depth)  # ranking diffs, stability measures
    entry["top_depth"] = depth
    if getattr(result, "canary", None):  # the canary queries' rankings (judgments.canary): stability gates
        entry["canary"] = top_ids(result.canary_runs.get(rr.name, {}), result.canary, depth)
    return entry


def _add_judged(entry: Dict[str, Any], result: Any, retriever: str) -> None:
    """The retriever's per-query judged@10 and its mean, in ``entry``."""
    judged = {str(q): float(v) for q, v in current_judged(result, retriever).items()}
    entry["per_query"][JUDGED] = judged
    entry["aggregate"][JUDGED] = math.fsum(judged.values()) / len(judged) if judged else math.nan


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
    from ..redaction import redact_data

    path = Path(path)
    data = redact_data(_jsonable(baseline.as_json(), "baseline"))  # no secret in a committed file
    data["checksums"] = checksums(data)  # over the values as written (baseline_checks.py)
    text = _diff_friendly_json(data)

    def write(fh: TextIO) -> None:
        fh.write(text)

    atomic_write(path, write)
    return path


def _diff_friendly_json(data: Dict[str, Any]) -> str:
    """``indent=1``, sorted keys, and each query's top k on one line: ``"qid": ["d1", ...]``.
    The rankings are put in place of placeholders that no query id can forge: a random token,
    matched only in the position of a value (after ``": "``), never of a key."""
    token = secrets.token_hex(8)
    rankings: List[str] = []
    for entry in data.get("retrievers", {}).values():
        for key in ("top", "canary"):
            if isinstance(entry, dict) and isinstance(entry.get(key), dict):
                for q, docs in entry[key].items():
                    rankings.append(json.dumps([str(d) for d in docs], ensure_ascii=False))
                    entry[key][q] = f"{token}:{len(rankings) - 1}"
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    if rankings:
        text = re.sub(f'": "{token}:(\\d+)"', lambda m: '": ' + rankings[int(m.group(1))], text)
    return text


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
    err = _Errors(str(path))
    data = _parse(_read_text(path, err), err)
    version = _check_header(data, err)
    retrievers = {name: _check_retriever(name, entry, err) for name, entry in data["retrievers"].items()}
    notes = verify_baseline(data, retrievers, err)
    return Baseline(
        suite=data["suite"],
        created=data["created"],
        plugin_version=data["plugin_version"],
        fingerprint=data["fingerprint"],
        retrievers=retrievers,
        version=version,
        notes=notes,
    )


class _Errors:
    """One-line ``ConfigError`` s naming the baseline file."""

    def __init__(self, where: str):
        self.where = where

    def __call__(self, message: str, key: Optional[str] = None, line: Optional[int] = None) -> ConfigError:
        return ConfigError(message, file=self.where, key=key, line=line)


def _read_text(path: Path, err: _Errors) -> str:
    from ..fileio import read_regular_file

    try:
        raw = read_regular_file(path)  # a folder, FIFO or device: one line, never a hang
    except FileNotFoundError:
        raise BaselineMissing(
            "no baseline file (write one with pytest --retrieval-baseline-update)", file=err.where
        ) from None
    except OSError as exc:
        raise err(f"cannot read the baseline: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise err(f"not UTF-8 text (byte {exc.start})") from None
    for i, line in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 in an id is no line end
        if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "<<<<<<<" or line == "=======":
            raise err(
                "unresolved merge conflict markers; re-create the baseline with --retrieval-baseline-update",
                line=i,
            )
    return text


def _parse(text: str, err: _Errors) -> Dict[str, Any]:
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        raise err(f"duplicate key {exc.args[0]!r} (a bad merge?)") from None
    except json.JSONDecodeError as exc:
        raise err(f"not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    if not isinstance(data, dict):
        raise err(f"a baseline is a JSON object, got {type(data).__name__}")
    return data


def _check_header(data: Dict[str, Any], err: _Errors) -> int:
    """The format version, once the format and the top-level keys are known to be right."""
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
    return version


def _check_retriever(name: str, entry: Any, err: _Errors) -> Dict[str, Any]:
    base = f"retrievers.{name}"
    if not isinstance(entry, dict):
        raise err("expected an object", key=base)
    per_query = entry.get("per_query")
    if not isinstance(per_query, dict):
        raise err("missing or not an object", key=f"{base}.per_query")
    checked = {
        metric: _check_column(values, f"{base}.per_query.{metric}", err)
        for metric, values in per_query.items()
    }
    agg = _check_aggregate(entry.get("aggregate", {}), f"{base}.aggregate", err)
    clean = dict(entry)
    clean["per_query"] = checked
    clean["aggregate"] = agg
    if "latency_ms" in clean and not isinstance(clean["latency_ms"], dict):
        raise err("expected an object", key=f"{base}.latency_ms")
    for key in ("top", "canary"):  # optional (older baselines): {qid: [doc ids]}
        if not _is_top_ids(clean.get(key, {})):
            raise err("expected an object {query id: [doc ids]}", key=f"{base}.{key}")
    _check_top_depth(clean, base, err)
    return clean


def _check_top_depth(entry: Mapping[str, Any], base: str, err: _Errors) -> None:
    """``top_depth`` (optional: older baselines): the depth the top lists were cut at, a positive
    integer no stored list is longer than, and no list holding a document twice."""
    if "top_depth" not in entry:
        return
    depth = entry["top_depth"]
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise err(f"expected a positive integer, got {depth!r}", key=f"{base}.top_depth")
    for qid, docs in (entry.get("top") or {}).items():
        if len(docs) > depth:
            raise err(f"{len(docs)} documents, more than top_depth {depth}", key=f"{base}.top.{qid}")
        if len(set(docs)) != len(docs):
            raise err("a document is twice in the ranking", key=f"{base}.top.{qid}")


def _check_aggregate(aggregate: Any, key: str, err: _Errors) -> Dict[str, float]:
    """A retriever's ``aggregate``: a number (or null: NaN) per metric."""
    if not isinstance(aggregate, dict):
        raise err("expected an object", key=key)
    agg: Dict[str, float] = {}
    for metric, v in aggregate.items():
        if v is None:
            agg[metric] = math.nan
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise err(f"expected a number, got {v!r}", key=f"{key}.{metric}")
        else:
            agg[metric] = float(v)
    return agg


def _is_top_ids(top: Any) -> bool:
    """``{query id: [doc ids]}``."""
    return isinstance(top, dict) and all(
        isinstance(v, list) and all(isinstance(d, str) for d in v) for v in top.values()
    )


def _check_column(values: Any, key: str, err: _Errors) -> Dict[str, float]:
    """One metric's ``{query id: value}``: every value a finite number."""
    if not isinstance(values, dict):
        raise err("expected an object {query id: value}", key=key)
    col: Dict[str, float] = {}
    for qid, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise err(f"per-query value must be a finite number, got {v!r}", key=f"{key}.{qid}")
        col[qid] = float(v)
    return col


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


# =========================================================================== a suite's baseline


def baseline_path(suite: Any) -> Path:
    """Where a loaded suite's baseline file is (``regression.baseline`` or the default)."""
    reg = suite.model.regression
    configured = (
        suite.resolve_path(("regression", "baseline"), reg.baseline)
        if reg is not None and reg.baseline
        else None
    )
    return resolve_baseline_path(suite.path, configured)


def update_baseline(suite: Any, result: Any) -> Path:
    """Write the suite's baseline from this run (``--retrieval-baseline-update``); not when a
    retriever of the run failed (a baseline without it would pass its gates' comparisons by
    leaving them out)."""
    failed = sorted(getattr(result, "failed", {}) or {})
    if failed:
        raise ConfigError(
            f"not written: retriever {failed[0]!r}"
            + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
            + " failed in this run; fix it and update the baseline again",
            file=str(baseline_path(suite)),
        )
    return write_baseline(baseline_path(suite), baseline_from_result(result))


def load_comparable_baseline(suite: Any, result: Any) -> Tuple[Optional[Baseline], str]:
    """(baseline, note) when the comparison is like with like, with ``baseline.left_out`` the
    queries whose text or judgments changed (:mod:`.comparable`); (None, why) to fall back to
    floors only. Raises ``ConfigError`` for a baseline that does not add up, and when the suite
    says a mismatch is an error."""
    path = baseline_path(suite)
    try:
        baseline = read_baseline(path)
    except BaselineMissing:
        return None, (
            f"no baseline at {path}: floors only. Write one with "
            f"`pytest --retrieval-baseline-update`, review the diff, commit it"
        )
    regression = suite.model.regression  # None in a suite of floors only (a failed floor reads it)
    error = regression is not None and regression.on_fingerprint_mismatch == "error"
    return comparable(
        baseline,
        result,
        what="the baseline",
        where=path.name,
        file=str(path),
        mismatch_is_error=error,
        hint=_UPDATE_HINT,
    )


_UPDATE_HINT = "update it with --retrieval-baseline-update"


def comparable(
    reference: Baseline,
    result: Any,
    *,
    what: str,
    where: str,
    file: str,
    mismatch_is_error: bool,
    hint: str,
    queries_of: str = "baseline",
) -> Tuple[Optional[Baseline], str]:
    """(reference, note) when ``reference`` (a baseline file, or a stored run of the history
    read into a :class:`Baseline`: gates/reference.py) is like with like with ``result``, its
    ``left_out`` set to the queries whose text or judgments changed (:mod:`.comparable`);
    (None, why) to fall back to floors only; ``ConfigError`` (naming ``file``) when
    ``mismatch_is_error``. ``what`` names the reference in a refusal, ``where`` in the note."""
    current = fingerprint_from_result(result)
    diff = compare_fingerprints(reference.fingerprint, current)
    if not diff.comparable:
        changed = "; ".join(diff.invalidating)
        if mismatch_is_error:
            raise ConfigError(f"the inputs changed since {what} ({changed}); {hint}", file=file)
        return None, f"the inputs changed since {what} ({changed}): floors only"
    old_hashes = reference.fingerprint.get("query_hashes") or {}
    reference.left_out = left_out_queries(old_hashes, current.get("query_hashes") or {})
    return reference, _comparison_note(where, reference, diff, len(old_hashes), queries_of)


def _comparison_note(where: str, baseline: Baseline, diff: Any, total: int, queries_of: str) -> str:
    """``compared with x.baseline.json (system changes: ...; compared on 95 of 100 ...)``."""
    parts = []
    if diff.system:
        parts.append("system changes, compared: " + "; ".join(diff.system))
    if diff.judgments:
        parts.append("; ".join(diff.judgments))
    if baseline.left_out:
        parts.append(left_out_summary(baseline.left_out, total, of=queries_of))
    parts += baseline.notes
    return f"compared with {where}" + (f" ({'; '.join(parts)})" if parts else "")
