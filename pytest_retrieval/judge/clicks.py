"""Clicks to qrels: graded labels from a search click log.

A click log has one row per *impression*: a document shown for a query at a position,
whether it was clicked and, for a click, the dwell time in seconds. Columns are found by
name (CSV/TSV header, JSONL keys or Parquet columns; override with ``columns=``)::

    query_id | qid          the query's id          (query_id or query: at least one)
    query | query_text     the query's text
    doc_id | docid | doc   the document's id       (required)
    clicked | click        1/0, true/false, yes/no (required)
    dwell | dwell_seconds  seconds on the document after the click (blank = 0)
    position | rank        1-based position shown  (required for position-bias correction)

**Grades.** Every (query, doc) pair aggregates all of its impressions::

    impressions   n = number of rows of the pair
    clicks        c = rows with clicked = 1
    long clicks   l = clicks with dwell > long_dwell (30 s)
    examinations  E = n                                   (no correction)
                  E = sum over the rows of (1 / position) ** eta   (position-bias correction)
    click rate    c / E,   long-click rate   l / E   (both capped at 1)

    grade 2 (grade_long_click)  if l >= 1 and l / E >= long_click_rate
    grade 1 (grade_click)       elif c >= 1 and c / E >= click_rate
    grade 0 (grade_impression)  otherwise: shown, never (or too rarely) clicked

Without correction the rate thresholds default to 0, which is the plain rule: a pair with a
long click is 2, a pair with any click is 1, an impression only is 0.

**Position-bias correction** (``position_bias=eta``) uses the examination hypothesis with
the power-law propensity of Joachims et al. (2017): a user examines position ``p`` with
probability ``(1/p) ** eta`` and clicks an examined document with a probability that depends
on its relevance only. The pair's corrected click rate is clicks over expected examinations
(the "clicks over expected clicks" estimator), an estimate of P(click | examined). A click
at position 8 thus weighs 8x (eta = 1) a click at position 1, and a document shown only
deep in the list is not labelled non-relevant on the strength of impressions nobody looked
at: an unclicked pair with fewer than ``min_examinations`` (1.0) expected examinations is
left unjudged. With correction the thresholds default to ``click_rate = long_click_rate =
0.2``. eta = 1 is the usual starting point; estimate it from a result-randomisation
experiment if you can.

Pairs with fewer than ``min_impressions`` rows are left unjudged. Queries given by text
only get stable ids: ``q`` + the first 12 hex digits of SHA-1 of the text after Unicode
NFKC, case folding and whitespace collapsing (so ``"Solar  Panels"`` and ``"solar panels"``
are one query; the first spelling seen is kept as its text).
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union, cast

from ..errors import ConfigError
from ..io.ids import as_id
from ..io.qrels import Qrels
from ..progress import progress_bar
from .files import read_csv, read_jsonl, write_csv, write_qrels, write_queries

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "ClickGrading",
    "ClickJudgments",
    "PairStats",
    "grade_clicks",
    "read_click_log",
    "stable_query_id",
    "write_click_judgments",
]

COLUMN_ALIASES: Dict[str, Tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "query-id", "queryid", "search_id"),
    "query": ("query", "query_text", "querytext", "search_term", "q"),
    "doc_id": ("doc_id", "docid", "doc", "document_id", "document", "corpus_id", "item_id"),
    "clicked": ("clicked", "click", "is_click", "is_clicked", "clicks"),
    "dwell": ("dwell", "dwell_s", "dwell_sec", "dwell_seconds", "dwell_time", "dwelltime"),
    "position": ("position", "pos", "rank"),
}

_TRUE = {"1", "true", "t", "yes", "y"}
_FALSE = {"0", "false", "f", "no", "n"}


def stable_query_id(text: str) -> str:
    """A stable id for a query known only by its text (see the module docstring)."""
    return "q" + hashlib.sha1(_normalise(text).encode("utf-8")).hexdigest()[:12]


def _normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True)
class ClickGrading:
    """How impressions become grades (see the module docstring for the exact rule)."""

    long_dwell: float = 30.0  # seconds; a click with dwell strictly above is a long click
    grade_impression: int = 0
    grade_click: int = 1
    grade_long_click: int = 2
    position_bias: Optional[float] = None  # eta of (1/position)**eta; None = no correction
    click_rate: Optional[float] = None  # None: 0 without correction, 0.2 with
    long_click_rate: Optional[float] = None  # None: 0 without correction, 0.2 with
    min_impressions: int = 1
    min_examinations: float = 1.0  # with correction: unclicked pairs below this stay unjudged
    position_base: int = 1  # 0 if the log's positions start at 0

    def __post_init__(self) -> None:
        if self.long_dwell < 0:
            raise ValueError("long_dwell must be >= 0 seconds")
        if self.position_bias is not None and self.position_bias < 0:
            raise ValueError("position_bias (eta) must be >= 0")
        for name in ("click_rate", "long_click_rate"):
            v = getattr(self, name)
            if v is not None and not 0 <= v <= 1:
                raise ValueError(f"{name} must lie in [0, 1], got {v}")
        if self.min_impressions < 1:
            raise ValueError("min_impressions must be >= 1")
        if self.position_base not in (0, 1):
            raise ValueError("position_base must be 0 or 1")

    @property
    def corrected(self) -> bool:
        return self.position_bias is not None

    @property
    def click_threshold(self) -> float:
        if self.click_rate is not None:
            return self.click_rate
        return 0.2 if self.corrected else 0.0

    @property
    def long_click_threshold(self) -> float:
        if self.long_click_rate is not None:
            return self.long_click_rate
        return 0.2 if self.corrected else 0.0

    def propensity(self, position: int) -> float:
        return (1.0 / position) ** float(self.position_bias or 0.0)

    def describe(self) -> str:
        s = (
            f"long click = dwell > {self.long_dwell:g} s; grades {self.grade_impression}/"
            f"{self.grade_click}/{self.grade_long_click} (impression/click/long click)"
        )
        if self.corrected:
            s += (
                f"; position-bias correction (1/position)^{self.position_bias:g}, click rate "
                f">= {self.click_threshold:g}, long-click rate >= {self.long_click_threshold:g}"
                f", unclicked pairs need >= {self.min_examinations:g} expected examinations"
            )
        elif self.click_threshold or self.long_click_threshold:
            s += f"; click rate >= {self.click_threshold:g}, long-click rate >= {self.long_click_threshold:g}"
        return s


@dataclass
class Impression:
    line: int
    query_id: Optional[str]
    query: Optional[str]
    doc_id: str
    clicked: bool
    dwell: float
    position: Optional[int]


@dataclass
class PairStats:
    impressions: int = 0
    clicks: int = 0
    long_clicks: int = 0
    examinations: float = 0.0
    first_line: int = 0

    @property
    def click_rate(self) -> float:
        return min(1.0, self.clicks / self.examinations) if self.examinations > 0 else 0.0

    @property
    def long_click_rate(self) -> float:
        return min(1.0, self.long_clicks / self.examinations) if self.examinations > 0 else 0.0


@dataclass
class ClickJudgments:
    qrels: Qrels
    queries: Dict[str, str]
    stats: Dict[Tuple[str, str], PairStats]
    grading: ClickGrading
    rows: int = 0
    dropped: Dict[str, int] = field(default_factory=dict)  # reason -> pairs left unjudged
    generated_ids: int = 0  # queries that got a hash id
    text_conflicts: int = 0  # query ids seen with more than one text

    def histogram(self) -> Dict[int, int]:
        out: Dict[int, int] = {}
        for docs in self.qrels.values():
            for g in docs.values():
                out[g] = out.get(g, 0) + 1
        return dict(sorted(out.items()))

    def summary(self) -> str:
        labels = sum(len(d) for d in self.qrels.values())
        hist = ", ".join(f"grade {g}: {n}" for g, n in self.histogram().items()) or "none"
        lines = [
            f"{self.rows} impression(s) -> {len(self.stats)} (query, doc) pair(s) over "
            f"{len(self.queries)} queries; {labels} label(s) ({hist})",
            f"  rule: {self.grading.describe()}",
        ]
        for reason, n in self.dropped.items():
            if n:
                lines.append(f"  left unjudged: {n} pair(s) ({reason})")
        if self.generated_ids:
            lines.append(f"  {self.generated_ids} query id(s) generated from the query text")
        if self.text_conflicts:
            lines.append(f"  {self.text_conflicts} query id(s) appear with different texts (kept the first)")
        return "\n".join(lines)


# ---------------------------------------------------------------------- reading


def _records(path: Path) -> Iterator[Tuple[int, Dict[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        yield from read_jsonl(path)
    elif suffix == ".parquet":
        yield from _parquet_records(path)
    elif suffix in (".csv", ".tsv", ".txt"):
        yield from read_csv(path, delimiter=_log_delimiter(suffix), width_error=_wrong_width)
    else:
        raise ConfigError("click logs are .csv, .tsv, .jsonl or .parquet", file=str(path))


def _parquet_records(path: Path) -> Iterator[Tuple[int, Dict[str, Any]]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            "reading Parquet needs pyarrow (pip install pyarrow), or export the log as CSV/JSONL",
            file=str(path),
        ) from None
    if not path.is_file():
        raise ConfigError("file not found", file=str(path))
    table = pq.read_table(str(path))
    names = [c.strip().lower() for c in table.column_names]
    for batch in table.to_batches():
        cols = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
        for i in range(batch.num_rows):
            yield 0, {names[c]: cols[c][i] for c in range(len(names))}


def _log_delimiter(suffix: str) -> Callable[[str], str]:
    def delimiter(first: str) -> str:
        return "\t" if (suffix != ".csv" or "\t" in first and "," not in first) else ","

    return delimiter


def _wrong_width(fields: int, header: int) -> Optional[str]:
    return f"{fields} field(s), the header has {header}" if fields != header else None


def _resolve_columns(
    keys: List[str], columns: Optional[Mapping[str, str]], path: Path, line: int
) -> Dict[str, Optional[str]]:
    """role -> the column of the log that holds it (None: absent), given ``columns`` or
    found by :data:`COLUMN_ALIASES`; the required roles must be there."""
    given = _given_columns(columns)
    out = {role: _column_of(role, given, keys, path, line) for role in COLUMN_ALIASES}
    for role in ("doc_id", "clicked"):
        if out[role] is None:
            raise ConfigError(
                f"no {role} column (one of: {', '.join(COLUMN_ALIASES[role])}); columns: {', '.join(keys)}",
                file=str(path),
                line=line or None,
            )
    if out["query_id"] is None and out["query"] is None:
        raise ConfigError(
            f"no query column (query_id or query text); columns: {', '.join(keys)}",
            file=str(path),
            line=line or None,
        )
    return out


def _given_columns(columns: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """role -> column as the caller named them (lower case), every role a known one."""
    given = {k: v.strip().lower() for k, v in (columns or {}).items()}
    for role in given:
        if role not in COLUMN_ALIASES:
            raise ValueError(f"unknown click-log column role {role!r} (roles: {', '.join(COLUMN_ALIASES)})")
    return given


def _column_of(role: str, given: Mapping[str, str], keys: List[str], path: Path, line: int) -> Optional[str]:
    """The column of one role: the given one (which must exist), else the first alias found."""
    if role not in given:
        return next((a for a in COLUMN_ALIASES[role] if a in keys), None)
    if given[role] not in keys:
        raise ConfigError(
            f"column {given[role]!r} (given for {role}) not found; columns: {', '.join(keys)}",
            file=str(path),
            line=line or None,
        )
    return given[role]


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, str) and not v.strip()) or (isinstance(v, float) and v != v)


def read_click_log(
    path: PathLike, *, columns: Optional[Mapping[str, str]] = None, position_base: int = 1
) -> Iterator[Impression]:
    """Impressions of a click log (CSV, TSV, JSONL; Parquet with pyarrow), validated row by
    row; a bad value is a ``ConfigError`` naming the file and line (row, for Parquet)."""
    path = Path(path)
    resolved: Optional[Dict[str, Optional[str]]] = None
    row_no = 0
    for line, rec in _records(path):
        row_no += 1
        n = line or row_no
        if resolved is None or any(v is not None and v not in rec for v in resolved.values()):
            resolved = _resolve_columns(list(rec), columns, path, n)
        yield _impression(rec, resolved, position_base, _RowErrors(str(path), n))
    if row_no == 0:
        raise ConfigError("no rows in click log", file=str(path))


@dataclass(frozen=True)
class _RowErrors:
    """Makes the ConfigError of one row (file and line)."""

    file: str
    line: int

    def __call__(self, msg: str) -> ConfigError:
        return ConfigError(msg, file=self.file, line=self.line)


def _impression(
    rec: Mapping[str, Any], resolved: Mapping[str, Optional[str]], position_base: int, err: _RowErrors
) -> Impression:
    """One validated row of a click log (columns already resolved)."""
    qid, qtext = _query_of(rec, resolved, err)
    try:
        did = as_id(rec.get(cast(str, resolved["doc_id"])))
    except ValueError as exc:
        raise err(f"bad document id: {exc}") from None
    clicked = _bool(rec.get(cast(str, resolved["clicked"])), err)
    dwell = _value(rec, resolved["dwell"])
    position = _value(rec, resolved["position"])
    return Impression(
        err.line,
        qid,
        qtext,
        did,
        clicked,
        0.0 if dwell is None else _dwell(dwell, err),
        None if position is None else _position(position, position_base, err),
    )


def _value(rec: Mapping[str, Any], column: Optional[str]) -> Any:
    """The value of an optional column; None when the log has no such column or the cell
    is blank."""
    if column and not _blank(rec.get(column)):
        return rec[column]
    return None


def _query_of(
    rec: Mapping[str, Any], resolved: Mapping[str, Optional[str]], err: _RowErrors
) -> Tuple[Optional[str], Optional[str]]:
    """(query id, query text) of a row: at least one of them."""
    qid = qtext = None
    value = _value(rec, resolved["query_id"])
    if value is not None:
        try:
            qid = as_id(value)
        except ValueError as exc:
            raise err(f"bad query id: {exc}") from None
    value = _value(rec, resolved["query"])
    if value is not None:
        qtext = str(value).strip()
    if qid is None and qtext is None:
        raise err("row has neither a query id nor a query text")
    return qid, qtext


def _dwell(value: Any, err: _RowErrors) -> float:
    dwell = _number(value, "dwell", err)
    if dwell < 0:
        raise err(f"dwell {value!r} is negative")
    return dwell


def _position(value: Any, position_base: int, err: _RowErrors) -> int:
    p = _number(value, "position", err)
    if not float(p).is_integer():
        raise err(f"position {value!r} is not an integer")
    position = int(p) + (1 - position_base)
    if position < 1:
        hint = (
            " (positions start at 0? use position_base=0 / --positions-from-zero)"
            if position_base == 1 and int(p) == 0
            else ""
        )
        raise err(f"position {int(p)} is below {position_base}{hint}")
    return position


def _bool(v: Any, err) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v in (0, 1):
        return bool(v)
    s = str(v).strip().lower() if v is not None else ""
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise err(f"clicked value {v!r} is not 1/0, true/false or yes/no")


def _number(v: Any, what: str, err) -> float:
    if isinstance(v, bool):
        raise err(f"{what} {v!r} is not a number")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise err(f"{what} {v!r} is not a number") from None
    if f != f or f in (float("inf"), float("-inf")):
        raise err(f"{what} {v!r} is not a finite number")
    return f


# ---------------------------------------------------------------------- grading


def grade_clicks(
    path: PathLike,
    grading: Optional[ClickGrading] = None,
    *,
    columns: Optional[Mapping[str, str]] = None,
    query_texts: Optional[Mapping[str, str]] = None,
    progress: Optional[bool] = None,
) -> ClickJudgments:
    """Read a click log and grade every (query, doc) pair (rule in the module docstring).

    ``query_texts`` (qid -> text, e.g. ``load_queries(...)``) supplies texts for a log that
    has query ids only; an id missing from it is an error naming the line."""
    grading = grading or ClickGrading()
    path = Path(path)
    tally = _Tally(path, grading, query_texts)
    bar = progress_bar(None, f"reading {path.name}", unit="row", enabled=progress)
    try:
        for imp in read_click_log(path, columns=columns, position_base=grading.position_base):
            tally.rows += 1
            if tally.rows % 1000 == 0:
                bar.update(1000)
            tally.add(imp)
    finally:
        bar.close()
    return tally.judgments()


@dataclass
class _Tally:
    """The evidence of a click log, pair by pair, as its impressions are read."""

    path: Path
    grading: ClickGrading
    query_texts: Optional[Mapping[str, str]]
    stats: Dict[Tuple[str, str], PairStats] = field(default_factory=dict)
    queries: Dict[str, str] = field(default_factory=dict)
    generated: set = field(default_factory=set)
    conflicts: set = field(default_factory=set)
    rows: int = 0

    def add(self, imp: Impression) -> None:
        qid, text = self._query(imp)
        if qid in self.queries:
            if imp.query is not None and _normalise(self.queries[qid]) != _normalise(imp.query):
                self.conflicts.add(qid)
        else:
            self.queries[qid] = text
        examinations = 1.0
        if self.grading.corrected:
            if imp.position is None:
                raise ConfigError(
                    "position-bias correction needs a position for every row",
                    file=str(self.path),
                    line=imp.line,
                )
            examinations = self.grading.propensity(imp.position)
        st = self.stats.get((qid, imp.doc_id))
        if st is None:
            st = self.stats[(qid, imp.doc_id)] = PairStats(first_line=imp.line)
        st.impressions += 1
        st.examinations += examinations
        if imp.clicked:
            st.clicks += 1
            if imp.dwell > self.grading.long_dwell:
                st.long_clicks += 1

    def _query(self, imp: Impression) -> Tuple[str, str]:
        """The impression's query id and text (a hash id for a query known by text only)."""
        if imp.query_id is None:
            text = imp.query or ""
            qid = stable_query_id(text)
            self.generated.add(qid)
            return qid, text
        qid = imp.query_id
        if imp.query is not None:
            return qid, imp.query
        if self.query_texts is None or qid not in self.query_texts:
            where = (
                " nor in the given queries"
                if self.query_texts is not None
                else "; give the queries file (--query-texts FILE)"
            )
            raise ConfigError(
                f"query {qid!r} has no text in the log" + where, file=str(self.path), line=imp.line
            )
        return qid, self.query_texts[qid]

    def judgments(self) -> ClickJudgments:
        grading = self.grading
        qrels: Qrels = {}
        dropped = {
            f"fewer than {grading.min_impressions} impression(s)": 0,
            f"unclicked, fewer than {grading.min_examinations:g} expected examination(s)": 0,
        }
        keys = list(dropped)
        for (qid, did), st in self.stats.items():
            if st.impressions < grading.min_impressions:
                dropped[keys[0]] += 1
                continue
            g = _grade(st, grading)
            if g is None:
                dropped[keys[1]] += 1
                continue
            qrels.setdefault(qid, {})[did] = g
        return ClickJudgments(
            qrels=qrels,
            queries={q: self.queries[q] for q in self.queries if q in qrels},
            stats=self.stats,
            grading=grading,
            rows=self.rows,
            dropped=dropped,
            generated_ids=len(self.generated & set(qrels)),
            text_conflicts=len(self.conflicts),
        )


def _grade(st: PairStats, grading: ClickGrading) -> Optional[int]:
    if st.long_clicks >= 1 and st.long_click_rate >= grading.long_click_threshold:
        return grading.grade_long_click
    if st.clicks >= 1 and st.click_rate >= grading.click_threshold:
        return grading.grade_click
    if grading.corrected and st.clicks == 0 and st.examinations < grading.min_examinations:
        return None
    return grading.grade_impression


def write_click_judgments(
    result: ClickJudgments,
    qrels_path: PathLike,
    queries_path: Optional[PathLike] = None,
    stats_path: Optional[PathLike] = None,
) -> None:
    """Qrels (TREC unless ``.tsv``/``.jsonl``), queries (JSONL ``{"_id", "text"}``) and
    optionally the per-pair evidence as TSV (impressions, clicks, rates, grade)."""
    write_qrels(result.qrels, qrels_path)
    if queries_path is not None:
        write_queries(result.queries, queries_path)
    if stats_path is not None:  # evidence a person reads in a spreadsheet: cells escaped
        header = (
            "query_id doc_id impressions clicks long_clicks examinations click_rate long_click_rate grade"
        )
        rows = (
            [q, d, st.impressions, st.clicks, st.long_clicks]
            + [f"{st.examinations:.4f}", f"{st.click_rate:.4f}", f"{st.long_click_rate:.4f}"]
            + [result.qrels.get(q, {}).get(d, "")]
            for (q, d), st in result.stats.items()
        )
        write_csv(stats_path, header.split(), rows, delimiter="\t")
