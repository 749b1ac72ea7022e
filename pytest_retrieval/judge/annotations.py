"""Annotation files: the pooled pairs out to people (CSV, TSV or JSONL with an empty
``grade`` column) and their grades back.

:func:`write_annotation_file` exports the pairs of a :class:`~.pool.Pool`;
:func:`read_annotations` reads a filled file back and validates every grade;
:func:`read_pairs` reads the pairs with their texts (for an LLM judge);
:func:`load_labels` reads labels from an annotation file or a qrels file. The rows come
from the one CSV/JSONL reader of :mod:`.files`; merging the grades with existing labels is
:mod:`.merge`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

from ..errors import ConfigError
from ..fileio import atomic_write
from ..io.qrels import Qrels, load_qrels
from .files import is_formula_shaped, read_csv, read_jsonl, write_csv
from .pool import Pool, PoolPair

PathLike = Union[str, "os.PathLike[str]"]

ANNOTATION_COLUMNS = ("query_id", "query", "doc_id", "title", "text", "grade")
DEFAULT_GRADE_RANGE = (0, 3)

__all__ = [
    "ANNOTATION_COLUMNS",
    "DEFAULT_GRADE_RANGE",
    "Annotations",
    "PooledPairs",
    "load_labels",
    "parse_grade_range",
    "read_annotations",
    "read_pairs",
    "read_pooled_pairs",
    "write_annotation_file",
]


# ------------------------------------------------------------------- grade values


def parse_grade_range(text: str) -> Tuple[int, int]:
    """``"0-3"``, ``"0..3"`` or ``"0:3"`` -> (0, 3)."""
    for sep in ("..", ":", "-"):
        lo, s, hi = str(text).strip().partition(sep)
        if s and lo.strip() and hi.strip():
            try:
                a, b = int(lo), int(hi)
            except ValueError:
                break
            if a > b:
                break
            return a, b
    raise ValueError(f"grade range {text!r}: expected MIN-MAX such as 0-3")


def _check_grade(value: Any, grade_range: Tuple[int, int], file: str, line: int) -> Optional[int]:
    """A filled grade -> int; blank -> None; anything else a ConfigError (file:line)."""
    lo, hi = grade_range
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError(f"grade {value!r} is not an integer in {lo}..{hi}", file=file, line=line)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
    else:
        text = value
    try:
        f = float(text)
    except (TypeError, ValueError):
        raise ConfigError(f"grade {value!r} is not an integer in {lo}..{hi}", file=file, line=line) from None
    if f != f or not f.is_integer():
        raise ConfigError(f"grade {value!r} is not an integer in {lo}..{hi}", file=file, line=line)
    g = int(f)
    if not lo <= g <= hi:
        raise ConfigError(f"grade {g} is outside the allowed range {lo}..{hi}", file=file, line=line)
    return g


# ------------------------------------------------------------ annotation files


def write_annotation_file(pairs: Union[Pool, Iterable[PoolPair]], path: PathLike) -> int:
    """CSV (``.csv``; ``.tsv`` tab-separated) or JSONL (``.jsonl``) with the columns
    ``query_id, query, doc_id, title, text, grade``; ``grade`` is empty for a person to fill."""
    path = Path(path)
    items = list(pairs.pairs if isinstance(pairs, Pool) else pairs)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl"):
        raise ConfigError("annotation files are .csv, .tsv or .jsonl", file=str(path))

    if suffix in (".csv", ".tsv"):  # opened in spreadsheets: formula cells escaped
        rows = ([p.query_id, p.query, p.doc_id, p.title, p.text, ""] for p in items)
        return write_csv(path, ANNOTATION_COLUMNS, rows, delimiter="\t" if suffix == ".tsv" else ",")

    def write(fh) -> None:
        for p in items:
            record: Dict[str, Any] = {"query_id": p.query_id, "query": p.query, "doc_id": p.doc_id}
            record.update(title=p.title, text=p.text, grade=None)
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    atomic_write(path, write)
    return len(items)


_COLUMN_ALIASES = {
    "query_id": ("query_id", "qid", "query-id", "queryid", "topic"),
    "query": ("query", "query_text", "question"),
    "doc_id": ("doc_id", "docid", "corpus_id", "corpus-id", "document_id"),
    "title": ("title", "doc_title"),
    "text": ("text", "doc_text", "document", "passage", "body"),
    "grade": ("grade", "label", "relevance", "score", "rel"),
}


@dataclass
class _Row:
    line: int
    values: Dict[str, Any]


def _rows(path: Path) -> Iterator[_Row]:
    """Rows of an annotation file with the line each starts on (CSV/TSV or JSONL)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        records: Iterator[Tuple[int, Dict[str, Any]]] = read_jsonl(path)
    elif suffix in (".csv", ".tsv"):
        records = read_csv(path, delimiter=_annotation_delimiter(suffix), width_error=_too_wide)
    else:
        raise ConfigError("annotation files are .csv, .tsv or .jsonl", file=str(path))
    for n, values in records:
        yield _Row(n, values)


def _annotation_delimiter(suffix: str) -> Callable[[str], str]:
    def delimiter(first: str) -> str:
        if suffix == ".tsv":
            return "\t"
        # spreadsheets in some locales save ';'-separated "CSV"
        return ";" if first.count(";") > first.count(",") else ","

    return delimiter


def _too_wide(fields: int, header: int) -> Optional[str]:
    if fields > header:
        return f"{fields} fields but the header has {header} (an unquoted separator in a text?)"
    return None


def _column(values: Dict[str, Any], role: str) -> Tuple[bool, Any]:
    for name in _COLUMN_ALIASES[role]:
        if name in values:
            return True, values[name]
    return False, None


def _req_id(values: Dict[str, Any], role: str, path: Path, line: int) -> str:
    from ..io.ids import as_id

    found, value = _column(values, role)
    what = "query id" if role == "query_id" else "document id"
    if not found:
        raise ConfigError(
            f"missing {what} column (one of: {', '.join(_COLUMN_ALIASES[role])})", file=str(path), line=line
        )
    try:
        return as_id(value)
    except ValueError as exc:
        raise ConfigError(f"bad {what}: {exc}", file=str(path), line=line) from None


@dataclass
class Annotations:
    """A filled annotation file: grades, the blanks that were skipped, where each came from."""

    path: str
    grades: Qrels
    origins: Dict[Tuple[str, str], int]  # (qid, doc) -> line
    blank: List[Tuple[str, str, int]]  # (qid, doc, line) rows without a grade
    rows: int


PooledPairs = Set[Tuple[str, str]]


def read_pooled_pairs(paths: Union[PathLike, Sequence[PathLike]]) -> PooledPairs:
    """The (query id, document id) pairs of annotation files as ``judge pool`` wrote them
    (texts not needed): the pooled set ``judge import --pool`` checks ids against."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    pooled: PooledPairs = set()
    for p in paths:
        path = Path(p)
        for row in _rows(path):
            pooled.add(
                (
                    _req_id(row.values, "query_id", path, row.line),
                    _req_id(row.values, "doc_id", path, row.line),
                )
            )
    return pooled


def _check_formula_ids(qid: str, did: str, pooled: Optional[PooledPairs], path: Path, line: int) -> None:
    """An id in a spreadsheet file that a spreadsheet would run as a formula (issue #11
    item 5) is accepted only when ``judge pool`` pooled that very pair: anything else was
    typed, pasted or rewritten by the spreadsheet, and must not become a label."""
    for what, value in (("query id", qid), ("document id", did)):
        if not is_formula_shaped(value) or (pooled is not None and (qid, did) in pooled):
            continue
        where = (
            "is not among the pooled pairs (--pool)"
            if pooled is not None
            else "and no pooled set was given: pass --pool with the file `judge pool` wrote (or its .jsonl twin)"
        )
        raise ConfigError(
            f"{what} {value!r} starts with {value[0]!r} like a spreadsheet formula {where}",
            file=str(path),
            line=line,
        )


def read_annotations(
    path: PathLike,
    *,
    grade_range: Tuple[int, int] = DEFAULT_GRADE_RANGE,
    pooled: Optional[PooledPairs] = None,
    check_formulas: bool = False,
) -> Annotations:
    """Read a filled annotation file. Blank grades are skipped and listed; a grade that is
    not an integer in ``grade_range``, a row without ids and a pair graded twice with
    different grades are ``ConfigError``s naming the file and line (the first bad line,
    with the count and lines of any others). In a CSV/TSV file, an id shaped like a
    spreadsheet formula must be a pair of ``pooled`` when ``pooled`` is given or
    ``check_formulas`` is set, as ``judge import`` does (see :func:`_check_formula_ids`)."""
    path = Path(path)
    spreadsheet = path.suffix.lower() in (".csv", ".tsv") and (check_formulas or pooled is not None)
    graded = _Graded(str(path), grade_range)
    saw_grade_column = False
    for row in _rows(path):
        graded.rows += 1
        qid = _req_id(row.values, "query_id", path, row.line)
        did = _req_id(row.values, "doc_id", path, row.line)
        if spreadsheet:
            _check_formula_ids(qid, did, pooled, path, row.line)
        found, value = _column(row.values, "grade")
        saw_grade_column = saw_grade_column or found
        graded.add(qid, did, value, row.line)
    if graded.rows and not saw_grade_column:
        raise ConfigError("no 'grade' column: is this a filled annotation file?", file=str(path), line=1)
    if graded.errors:
        raise _first_of(graded.errors)
    return Annotations(str(path), graded.grades, graded.origins, graded.blank, graded.rows)


@dataclass
class _Graded:
    """The grades of an annotation file as its rows are read, and the bad rows."""

    file: str
    grade_range: Tuple[int, int]
    grades: Qrels = field(default_factory=dict)
    origins: Dict[Tuple[str, str], int] = field(default_factory=dict)  # (qid, doc) -> line
    blank: List[Tuple[str, str, int]] = field(default_factory=list)
    errors: List[ConfigError] = field(default_factory=list)
    rows: int = 0

    def add(self, qid: str, did: str, value: Any, line: int) -> None:
        try:
            g = _check_grade(value, self.grade_range, self.file, line)
        except ConfigError as exc:
            self.errors.append(exc)
            return
        if g is None:
            self.blank.append((qid, did, line))
            return
        prev = self.grades.get(qid, {}).get(did)
        if prev is not None and prev != g:
            self.errors.append(
                ConfigError(
                    f"({qid!r}, {did!r}) graded {g} here and {prev} on line {self.origins[(qid, did)]}",
                    file=self.file,
                    line=line,
                )
            )
            return
        self.grades.setdefault(qid, {})[did] = g
        self.origins.setdefault((qid, did), line)


def _first_of(errors: List[ConfigError]) -> ConfigError:
    """The first error, with the count and lines of the others."""
    first = errors[0]
    if len(errors) > 1:
        more = ", ".join(str(e.line) for e in errors[1:6]) + (", ..." if len(errors) > 6 else "")
        first = ConfigError(
            f"{first.detail} (+{len(errors) - 1} more bad line(s): {more})",
            file=first.file,
            line=first.line,
        )
    return first


def read_pairs(path: PathLike) -> List[PoolPair]:
    """The (query, document) pairs of an annotation file, with their texts (for a judge)."""
    path = Path(path)
    out: List[PoolPair] = []
    seen: Set[Tuple[str, str]] = set()
    for row in _rows(path):
        qid = _req_id(row.values, "query_id", path, row.line)
        did = _req_id(row.values, "doc_id", path, row.line)
        query, title, text = _pair_texts(row, path)
        if (qid, did) in seen:
            continue
        seen.add((qid, did))
        out.append(PoolPair(qid, query, did, title, text))
    if not out:
        raise ConfigError("no pairs in file", file=str(path))
    return out


def _pair_texts(row: _Row, path: Path) -> Tuple[str, str, str]:
    """(query, title, text) of a row; the query and a title or a text are required."""
    found_q, query = _column(row.values, "query")
    if not found_q or not isinstance(query, str) or not query.strip():
        raise ConfigError("missing query text ('query' column)", file=str(path), line=row.line)
    _, title = _column(row.values, "title")
    _, text = _column(row.values, "text")
    title = title if isinstance(title, str) else ""
    text = text if isinstance(text, str) else ""
    if not (title.strip() or text.strip()):
        raise ConfigError("missing document text ('title'/'text' columns)", file=str(path), line=row.line)
    return query, title, text


def _is_annotation_file(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".jsonl"):
        return True
    if suffix == ".tsv":
        try:
            with open(path, encoding="utf-8-sig") as fh:
                header = [c.strip().lower() for c in fh.readline().rstrip("\r\n").split("\t")]
        except OSError:
            return False
        return "grade" in header or "doc_id" in header
    return False


def load_labels(
    path: PathLike,
    *,
    grade_range: Tuple[int, int] = DEFAULT_GRADE_RANGE,
    pooled: Optional[PooledPairs] = None,
    check_formulas: bool = False,
) -> Annotations:
    """Labels from a filled annotation file (``.csv``, ``.jsonl``, ``.tsv`` with our header)
    or from a qrels file (TREC, BEIR TSV), e.g. the output of ``judge llm`` or ``judge clicks``."""
    path = Path(path)
    if _is_annotation_file(path):
        return read_annotations(path, grade_range=grade_range, pooled=pooled, check_formulas=check_formulas)
    qrels = load_qrels(path)
    lo, hi = grade_range
    rows = 0
    for q, docs in qrels.items():
        for d, g in docs.items():
            rows += 1
            if not lo <= g <= hi:
                raise ConfigError(
                    f"grade {g} of ({q!r}, {d!r}) is outside the allowed range {lo}..{hi}", file=str(path)
                )
    return Annotations(str(path), qrels, {}, [], rows)
