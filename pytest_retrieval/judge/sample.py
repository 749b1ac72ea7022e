"""Query sets from a query log: ``judge sample``.

A query log has one row per search (or per query with a ``count``). Columns are found by
name (CSV/TSV header or JSONL keys; override with ``columns=``)::

    query | query_text | q | search_term   the query text            (required)
    count | freq | frequency | n           searches of this row      (blank = 1)
    timestamp | time | ts | date           ISO 8601 date or time     (for since/until)
    user | user_id                         who searched              (weight="users")
    session | session_id                   which session              (weight="sessions")

**Population.** Rows are grouped by the normalised text (:mod:`.querytext`: NFKC, case,
punctuation, white space), so near-identical spellings are one query; its text is the
spelling searched most often (ties: the first in code point order, so the row order of
the log never matters). Its *size* (weight) is the number of
searches (the sum of ``count``), or the number of distinct users or sessions
(``weight="users"``), which keeps one user or a bot hammering a query from making it "head".
The PII guard runs on every query (drop the query, or mask the spans), counted per kind.

**Methods**, seeded (``numpy.random.Generator(PCG64([seed, stream]))``, one stream per
stratum: 1 + CRC-32 of its value) and independent of the order of
the log's rows (the population is sorted by its normalised text first):

* ``random``: uniform, without replacement (every distinct query equally likely);
* ``top-n``: the ``n`` heaviest queries (ties: normalised text), no randomness;
* ``pps``: probability proportional to size without replacement, by Efraimidis and Spirakis
  (2006, "Weighted random sampling with a reservoir", IPL 97(5)): each query draws
  ``u ~ U(0, 1)`` and the ``n`` largest keys ``u ** (1 / w)`` (computed as ``log(u) / w``)
  are taken. Frequent queries are more likely, the tail is still represented.

**Strata.** ``stratify="locale"`` gives each query the value of that column it was searched
with most (by weight; ties: the smallest value) and samples each stratum apart: with
``quotas`` ({value: n}) exactly those, else ``size`` split in proportion to the strata's
weights (largest remainder; at least one per stratum while the size allows). A stratum with
fewer queries than its quota gives all it has, and the shortfall is reported.

**Output.** A queries file (``io/queries.py`` formats, ids from
:func:`~.clicks.stable_query_id`, so ``judge clicks`` on the same log gives the same ids) and
a tags file (``io/tags.py`` formats): every sampled query is tagged ``human`` (a person typed
it; ``judge synth`` tags its queries ``synthetic``) and ``<column>:<value>`` of its stratum.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

from ..errors import ConfigError
from ..io.tags import HUMAN_TAG
from .querytext import PII_KINDS, Normalisation, find_pii, mask_pii

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["LogQuery", "QuerySample", "SampleSpec", "read_query_log", "sample_queries", "write_sample"]

METHODS = ("random", "top-n", "pps")
WEIGHTS = ("count", "users", "sessions")
PII_ACTIONS = ("drop", "mask", "keep")

COLUMN_ALIASES: Dict[str, Tuple[str, ...]] = {
    "query": ("query", "query_text", "querytext", "q", "search_term", "text"),
    "count": ("count", "freq", "frequency", "n", "searches"),
    "timestamp": ("timestamp", "time", "ts", "date", "datetime"),
    "user": ("user", "user_id", "userid", "uid"),
    "session": ("session", "session_id", "sessionid", "sid"),
}


@dataclass(frozen=True)
class SampleSpec:
    """How to sample (see the module docstring)."""

    size: int = 200
    method: str = "pps"
    seed: int = 0
    weight: str = "count"
    pii: str = "drop"
    min_digits: int = 7
    stratify: Optional[str] = None
    quotas: Optional[Mapping[str, int]] = None
    min_count: int = 1
    since: Optional[datetime] = None
    until: Optional[datetime] = None
    normalisation: Normalisation = Normalisation()

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method {self.method!r}: expected one of {', '.join(METHODS)}")
        if self.weight not in WEIGHTS:
            raise ValueError(f"weight {self.weight!r}: expected one of {', '.join(WEIGHTS)}")
        if self.pii not in PII_ACTIONS:
            raise ValueError(f"pii {self.pii!r}: expected one of {', '.join(PII_ACTIONS)}")
        if self.size < 1 and not self.quotas:
            raise ValueError("sample size must be >= 1")
        if self.quotas is not None and not self.stratify:
            raise ValueError("quotas need a stratify column")
        if self.quotas is not None and any(int(v) < 0 for v in self.quotas.values()):
            raise ValueError("quotas must be >= 0")


@dataclass
class LogQuery:
    """One distinct (normalised) query of the log."""

    key: str
    text: str
    weight: float = 0.0
    rows: int = 0
    stratum: Optional[str] = None
    pii: Tuple[str, ...] = ()
    _spellings: Dict[str, float] = field(default_factory=dict, repr=False)
    _strata: Dict[str, float] = field(default_factory=dict, repr=False)
    _who: Set[str] = field(default_factory=set, repr=False)


@dataclass
class QuerySample:
    queries: Dict[str, str]  # qid -> text, in sample order
    tags: Dict[str, Tuple[str, ...]]
    weights: Dict[str, float]
    spec: SampleSpec
    rows: int = 0
    rows_out_of_window: int = 0
    rows_empty: int = 0  # rows whose text folds to nothing (blank, or punctuation only)
    rows_zero_count: int = 0  # rows whose count is 0
    distinct: int = 0
    merged_spellings: int = 0  # spellings folded into another by normalisation
    below_min_count: int = 0
    pii_queries: Dict[str, int] = field(default_factory=dict)  # kind -> queries with it
    pii_dropped: int = 0
    pii_masked: int = 0
    strata: Dict[str, Tuple[int, int, int]] = field(
        default_factory=dict
    )  # value -> (available, quota, taken)

    def summary(self) -> str:
        s = self.spec
        lines = [
            f"{self.rows} log row(s) -> {self.distinct} distinct queries "
            f"({self.merged_spellings} spelling(s) merged by normalisation); sampled {len(self.queries)} "
            f"by {s.method} (seed {s.seed}, weight {s.weight})"
        ]
        if self.rows_out_of_window:
            lines.append(f"  {self.rows_out_of_window} row(s) outside --since/--until left out")
        if self.rows_empty:
            lines.append(
                f"  {self.rows_empty} row(s) left out: their query text is empty once folded "
                "(blank, or punctuation only)"
            )
        if self.rows_zero_count:
            lines.append(f"  {self.rows_zero_count} row(s) with count 0 left out")
        if self.below_min_count:
            lines.append(f"  {self.below_min_count} queries below --min-count left out")
        found = ", ".join(f"{k}: {self.pii_queries.get(k, 0)}" for k in PII_KINDS)
        action = {"drop": f"{self.pii_dropped} dropped", "mask": f"{self.pii_masked} masked"}.get(
            s.pii, "kept as they are (--pii keep)"
        )
        lines.append(f"  PII: queries with {found}; {action}")
        for value, (available, quota, taken) in self.strata.items():
            short = f", {quota - taken} short" if taken < quota else ""
            lines.append(
                f"  stratum {s.stratify}={value}: {taken} of quota {quota} ({available} available{short})"
            )
        return "\n".join(lines)


# ---------------------------------------------------------------------- reading


def _records(path: Path) -> Iterator[Tuple[int, Dict[str, Any]]]:
    from ..io.lines import check_data_file
    from .files import read_csv, read_jsonl

    check_data_file(path)  # a missing file, a folder, a FIFO or a device first
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        yield from read_jsonl(path)
    elif suffix in (".csv", ".tsv", ".txt"):

        def delimiter(first: str) -> str:
            return "\t" if (suffix != ".csv" or "\t" in first and "," not in first) else ","

        def width(fields: int, header: int) -> Optional[str]:
            return f"{fields} field(s), the header has {header}" if fields > header else None

        yield from read_csv(path, delimiter=delimiter, width_error=width)
    else:
        raise ConfigError("query logs are .csv, .tsv or .jsonl", file=str(path))


def _resolve(
    keys: Sequence[str], columns: Mapping[str, str], path: Path, line: int
) -> Dict[str, Optional[str]]:
    """role -> column of the log (None: absent); the given names must exist."""
    out: Dict[str, Optional[str]] = {}
    for role, aliases in COLUMN_ALIASES.items():
        name = columns.get(role)
        if name is not None:
            name = name.strip().lower()
            if name not in keys:
                raise ConfigError(
                    f"column {name!r} (given for {role}) not found; columns: {', '.join(keys)}",
                    file=str(path),
                    line=line,
                )
            out[role] = name
        else:
            out[role] = next((a for a in aliases if a in keys), None)
    if out["query"] is None:
        raise ConfigError(
            f"no query column (one of: {', '.join(COLUMN_ALIASES['query'])}); columns: {', '.join(keys)}",
            file=str(path),
            line=line,
        )
    return out


def read_query_log(
    path: PathLike,
    *,
    columns: Optional[Mapping[str, str]] = None,
    stratify: Optional[str] = None,
    who: str = "user",
) -> Iterator[Tuple[int, str, float, Optional[str], Optional[str], Optional[str]]]:
    """(line, text, count, timestamp, who, stratum) of every row: ``who`` is the ``user``
    or ``session`` column, ``stratum`` the ``stratify`` column's value."""
    path = Path(path)
    given = dict(columns or {})
    unknown = set(given) - set(COLUMN_ALIASES)
    if unknown:
        raise ValueError(
            f"unknown query-log column role(s) {sorted(unknown)} (roles: {', '.join(COLUMN_ALIASES)})"
        )
    strat = stratify
    who_role = who
    resolved: Optional[Dict[str, Optional[str]]] = None
    rows = 0
    for line, rec in _records(path):
        rows += 1
        if resolved is None:
            resolved = _resolve(list(rec), given, path, line)
            if strat is not None and strat.strip().lower() not in rec:
                raise ConfigError(
                    f"no column {strat!r} to stratify by; columns: {', '.join(rec)}",
                    file=str(path),
                    line=line,
                )
        yield _row(rec, resolved, strat, who_role, path, line)
    if rows == 0:
        raise ConfigError("no rows in query log", file=str(path))


def _row(
    rec: Mapping[str, Any],
    resolved: Mapping[str, Optional[str]],
    strat: Optional[str],
    who_role: str,
    path: Path,
    line: int,
) -> Tuple[int, str, float, Optional[str], Optional[str], Optional[str]]:
    text = rec.get(resolved["query"] or "")
    if not isinstance(text, str):
        raise ConfigError(f"query text {text!r} is not a string", file=str(path), line=line)
    count = _count(rec.get(resolved["count"]) if resolved["count"] else None, path, line)
    ts = _cell(rec, resolved["timestamp"])
    who = _cell(rec, resolved.get(who_role))
    extra = _cell(rec, strat.strip().lower()) if strat else None
    return line, text, count, ts, who, extra


def _cell(rec: Mapping[str, Any], column: Optional[str]) -> Optional[str]:
    if not column:
        return None
    v = rec.get(column)
    if v is None or isinstance(v, str) and not v.strip():
        return None
    return str(v).strip()


def _count(v: Any, path: Path, line: int) -> float:
    """A row's count: a whole number >= 0, written as digits (``1e3``, ``1.5``, ``-1``,
    ``true`` are errors naming the line, as grades are)."""
    if isinstance(v, str):
        t = v.strip()
        if not t:
            return 1.0
        if t.isascii() and t.isdigit():
            return float(int(t))
    elif v is None:
        return 1.0
    elif isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() and v >= 0:
        return float(v)
    raise ConfigError(f"count {v!r} is not a whole number >= 0", file=str(path), line=line)


def parse_time(value: str) -> datetime:
    """An ISO 8601 date or date-time (UTC when no zone is given)."""
    v = value.strip()
    if v.endswith(("Z", "z")):
        v = v[:-1] + "+00:00"
    t = datetime.fromisoformat(v)
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


# ---------------------------------------------------------------------- the population


@dataclass
class _Population:
    spec: SampleSpec
    path: Path
    queries: Dict[str, LogQuery] = field(default_factory=dict)
    rows: int = 0
    out_of_window: int = 0
    empty: int = 0
    zero_count: int = 0
    spellings: int = 0
    keys: Dict[str, str] = field(default_factory=dict)  # spelling -> normalised (logs repeat)

    def add(
        self, line: int, text: str, count: float, ts: Optional[str], who: Optional[str], extra: Optional[str]
    ) -> None:
        self.rows += 1
        if (self.spec.since or self.spec.until) and not self._in_window(ts, line):
            self.out_of_window += 1
            return
        text = text.strip()
        key = self.keys.get(text)
        if key is None:
            key = self.keys[text] = self.spec.normalisation(text)
        if not key or count == 0:  # left out, and counted
            self.empty += not key
            self.zero_count += bool(key) and count == 0
            return
        q = self.queries.get(key)
        if q is None:
            q = self.queries[key] = LogQuery(key, text)
        q.rows += 1
        q.weight += count
        if text not in q._spellings:
            self.spellings += 1
        q._spellings[text] = q._spellings.get(text, 0.0) + count
        if who is not None:
            q._who.add(who)
        if extra is not None:
            q._strata[extra] = q._strata.get(extra, 0.0) + count

    def _in_window(self, ts: Optional[str], line: int) -> bool:
        if ts is None:
            raise ConfigError("--since/--until need a timestamp on every row", file=str(self.path), line=line)
        try:
            t = parse_time(ts)
        except ValueError:
            raise ConfigError(f"timestamp {ts!r} is not ISO 8601", file=str(self.path), line=line) from None
        return not (self.spec.since and t < self.spec.since or self.spec.until and t >= self.spec.until)

    def finish(self) -> List[LogQuery]:
        """The distinct queries, sorted by normalised text, with text, weight and stratum."""
        out = []
        for key in sorted(self.queries):
            q = self.queries[key]
            q.text = min(q._spellings.items(), key=lambda kv: (-kv[1], kv[0]))[0]
            if self.spec.weight != "count":
                if not q._who:
                    col = self.spec.weight[:-1]
                    raise ConfigError(
                        f"weight by {self.spec.weight} needs a {col} column", file=str(self.path)
                    )
                q.weight = float(len(q._who))
            if q._strata:
                q.stratum = min(q._strata.items(), key=lambda kv: (-kv[1], kv[0]))[0]
            out.append(q)
        return out


# ---------------------------------------------------------------------- sampling


def sample_queries(
    path: PathLike, spec: SampleSpec, *, columns: Optional[Mapping[str, str]] = None
) -> QuerySample:
    """Read the log and draw the sample (see the module docstring)."""
    pop = _Population(spec, Path(path))
    who = spec.weight[:-1] if spec.weight != "count" else "user"
    for row in read_query_log(path, columns=columns, stratify=spec.stratify, who=who):
        pop.add(*row)
    found = pop.finish()
    result = QuerySample({}, {}, {}, spec, rows=pop.rows, rows_out_of_window=pop.out_of_window)
    result.rows_empty, result.rows_zero_count = pop.empty, pop.zero_count
    result.distinct = len(found)
    result.merged_spellings = pop.spellings - len(found)
    eligible = _guard(found, spec, result)
    kept = [q for q in eligible if q.weight >= spec.min_count]
    result.below_min_count = len(eligible) - len(kept)
    chosen = _stratified(kept, spec, result) if spec.stratify else _draw(kept, spec.size, spec, 0)
    _emit(chosen, spec, result)
    return result


def _guard(found: List[LogQuery], spec: SampleSpec, result: QuerySample) -> List[LogQuery]:
    """The PII guard: count the kinds, then drop or mask (or keep) those queries; masked
    queries that become one text (``call [phone]``) are merged."""
    out: List[LogQuery] = []
    masked: Dict[str, LogQuery] = {}
    for q in found:
        kinds = tuple(sorted({k for k, _, _ in find_pii(q.text, min_digits=spec.min_digits)}))
        if not kinds:
            out.append(q)
            continue
        for k in kinds:
            result.pii_queries[k] = result.pii_queries.get(k, 0) + 1
        q.pii = kinds
        if spec.pii == "drop":
            result.pii_dropped += 1
            continue
        if spec.pii == "mask":
            q.text = mask_pii(q.text, min_digits=spec.min_digits)[0]
            result.pii_masked += 1
            same = masked.get(spec.normalisation(q.text))
            if same is not None:
                same.weight += q.weight
                same.rows += q.rows
                continue
            masked[spec.normalisation(q.text)] = q
        out.append(q)
    return out


def _draw(pop: List[LogQuery], n: int, spec: SampleSpec, stream: int) -> List[LogQuery]:
    """``n`` queries of ``pop`` (sorted by key) by the spec's method; ``stream`` separates the
    random streams of the strata."""
    import numpy as np

    if n >= len(pop):
        chosen = list(pop)
    elif spec.method == "top-n":
        chosen = sorted(pop, key=lambda q: (-q.weight, q.key))[:n]
    else:
        rng = np.random.Generator(np.random.PCG64([spec.seed, stream]))
        if spec.method == "random":
            idx = rng.choice(len(pop), size=n, replace=False)
        else:
            w = np.fromiter((q.weight for q in pop), dtype=float, count=len(pop))
            u = rng.random(len(pop))
            with np.errstate(divide="ignore"):
                keys = np.log(u) / w  # log of u ** (1/w): same order, no underflow
            idx = np.argsort(-keys, kind="stable")[:n]
        chosen = [pop[int(i)] for i in idx]
    return sorted(chosen, key=lambda q: (-q.weight, q.key))


def _stratified(pop: List[LogQuery], spec: SampleSpec, result: QuerySample) -> List[LogQuery]:
    groups: Dict[str, List[LogQuery]] = {}
    for q in pop:
        groups.setdefault(q.stratum if q.stratum is not None else "", []).append(q)
    quotas = dict(spec.quotas) if spec.quotas is not None else _proportional(groups, spec.size)
    chosen: List[LogQuery] = []
    for value in sorted(set(groups) | set(quotas)):
        members = groups.get(value, [])
        quota = int(quotas.get(value, 0))
        taken = _draw(members, quota, spec, stream_of(value)) if quota else []
        result.strata[value or "(blank)"] = (len(members), quota, len(taken))
        chosen.extend(taken)
    return chosen


def stream_of(value: str) -> int:
    """A stratum's random stream: CRC-32 of its value, so a new stratum in the log does not
    change the sample of the others."""
    import zlib

    return 1 + zlib.crc32(value.encode("utf-8"))


def _proportional(groups: Mapping[str, List[LogQuery]], size: int) -> Dict[str, int]:
    """``size`` split over the strata in proportion to their weight (largest remainder),
    at least one each while the size allows."""
    weights = {v: sum(q.weight for q in qs) for v, qs in groups.items()}
    total = sum(weights.values()) or 1.0
    order = sorted(weights, key=lambda v: (-weights[v], v))
    base = {v: 1 if i < size else 0 for i, v in enumerate(order)}
    rest = size - sum(base.values())
    exact = {v: rest * weights[v] / total for v in order}
    alloc = {v: base[v] + int(exact[v]) for v in order}
    left = size - sum(alloc.values())
    for v in sorted(order, key=lambda v: (-(exact[v] - int(exact[v])), v))[:left]:
        alloc[v] += 1
    return alloc


def _emit(chosen: List[LogQuery], spec: SampleSpec, result: QuerySample) -> None:
    from .clicks import stable_query_id

    for q in chosen:
        qid = stable_query_id(q.text)
        result.queries[qid] = q.text
        result.weights[qid] = q.weight
        tags = [HUMAN_TAG]
        if spec.stratify and q.stratum is not None:
            tags.append(stratum_tag(spec.stratify, q.stratum))
        result.tags[qid] = tuple(tags)


def stratum_tag(column: str, value: str) -> str:
    """``column:value`` as a tag: no comma, tab or white space (the tags file splits on them)."""
    raw = f"{column.strip().lower()}:{value}"
    return "".join("_" if c.isspace() or c in ",[]" else c for c in raw)


def write_sample(sample: QuerySample, queries_path: PathLike, tags_path: Optional[PathLike] = None) -> None:
    """The queries file (JSONL ``{"_id", "text"}``, or TSV by extension) and the tags file."""
    from .files import write_queries

    write_queries(sample.queries, queries_path)
    if tags_path is not None:
        write_tags(sample.tags, tags_path)


def write_tags(tags: Mapping[str, Sequence[str]], path: PathLike) -> int:
    """Tags as ``io/tags.py`` reads them: JSONL ``{"id", "tags"}`` or TSV ``qid<TAB>a,b``."""
    import json

    from ..fileio import atomic_write

    path = Path(path)
    jsonl = path.suffix.lower() == ".jsonl"

    def write(fh: Any) -> None:
        for qid, ts in tags.items():
            if jsonl:
                fh.write(json.dumps({"id": qid, "tags": list(ts)}, ensure_ascii=False) + "\n")
            else:
                fh.write(f"{qid}\t{','.join(ts)}\n")

    atomic_write(path, write)
    return len(tags)
