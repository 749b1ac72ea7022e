"""The files the ``judge`` commands read and write: one CSV/JSONL row reader for annotation
files and click logs, and the qrels and queries writers (every write atomic).

Reading: :func:`read_csv` yields each row of a CSV/TSV file as ``{column: value}`` with
the line it starts on (header names stripped and lower-cased, blank rows skipped, a UTF-8
BOM ignored); :func:`read_jsonl` does the same for JSON lines. Every problem is a
``ConfigError`` naming the file (and the line where there is one): a missing file, text
that is not UTF-8, malformed CSV, a row whose width the caller refuses.

Writing: :func:`write_csv` for every CSV/TSV a person may open in a spreadsheet (the
annotation files of ``judge pool``, the click evidence), :func:`write_qrels` (TREC, BEIR TSV
or JSONL by extension) and :func:`write_queries` (JSONL or TSV), all through
``pytest_retrieval.fileio.atomic_write``.

Spreadsheet cells (issue #11 item 5): a cell that starts with ``=``, ``+``, ``-``, ``@``, a
tab or a carriage return runs as a formula when a person opens the file (CSV injection).
:func:`write_csv` prefixes such a cell with a single quote, OWASP's rule
(https://owasp.org/www-community/attacks/CSV_Injection), and :func:`read_csv` takes the
quote off again. So that the rule is exactly reversible, a cell that already starts with
quotes followed by one of those characters gets one more quote on the way out and loses
one on the way in: ``-1`` -> ``'-1`` -> ``-1``; ``'=x`` -> ``''=x`` -> ``'=x``. Qrels and
queries files are machine formats (BEIR, trec_eval) and are written verbatim.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    TextIO,
    Tuple,
    Union,
)

from ..errors import ConfigError
from ..fileio import atomic_write

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "FORMULA_CHARACTERS",
    "from_spreadsheet_cell",
    "is_formula_shaped",
    "read_csv",
    "read_jsonl",
    "to_spreadsheet_cell",
    "write_csv",
    "write_qrels",
    "write_queries",
]


# ---------------------------------------------------------------- spreadsheet cells

FORMULA_CHARACTERS = "=+-@\t\r"
_ESCAPED = re.compile("^'*[=+\\-@\t\r]")  # quotes (maybe none) then a formula character
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def to_spreadsheet_cell(value: str) -> str:
    """The cell as written: one more leading quote when it would start a formula."""
    return "'" + value if _ESCAPED.match(value) else value


def from_spreadsheet_cell(value: str) -> str:
    """The inverse of :func:`to_spreadsheet_cell`: one leading quote taken off a cell that
    starts with quotes followed by a formula character."""
    return value[1:] if value.startswith("'") and _ESCAPED.match(value) else value


def is_formula_shaped(value: str) -> bool:
    """A value a spreadsheet would run as a formula: it starts with a formula character and
    is not a plain number (``-1`` and ``+3.5`` are numbers to a spreadsheet, ``-1+2`` is not)."""
    return bool(value) and value[0] in FORMULA_CHARACTERS and not _PLAIN_NUMBER.fullmatch(value)


# -------------------------------------------------------------------------- reading


def read_jsonl(path: Path) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """(line, object) of a JSON-lines file, keys stripped and lower-cased."""
    from ..io import lines

    for n, obj in lines.read_jsonl(path):
        yield n, {str(k).strip().lower(): v for k, v in obj.items()}


def read_csv(
    path: Path,
    *,
    delimiter: Callable[[str], str],
    width_error: Callable[[int, int], Optional[str]],
) -> Iterator[Tuple[int, Dict[str, str]]]:
    """(line, {column: value}) of a CSV/TSV file with a header row.

    ``delimiter(first_line)`` picks the separator; ``width_error(fields, header_fields)``
    returns the message for a row of the wrong width (None: the row is fine, a short row
    then lacks the last columns)."""
    from ..io.lines import check_data_file

    check_data_file(path)  # not a FIFO, a device or a directory
    try:
        fh = open(path, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    with fh:
        try:
            yield from _csv_rows(fh, path, delimiter, width_error)
        except UnicodeDecodeError as exc:
            raise ConfigError(f"not UTF-8 text ({exc.reason})", file=str(path)) from None


def _csv_rows(
    fh: TextIO,
    path: Path,
    delimiter: Callable[[str], str],
    width_error: Callable[[int, int], Optional[str]],
) -> Iterator[Tuple[int, Dict[str, str]]]:
    first = fh.readline()
    fh.seek(0)
    # strict: a quote not closed, or text after a closing quote (``"solar" panels``), is an
    # error naming the line; the default reader folded it silently into the cell (issue #32)
    reader = csv.reader(fh, delimiter=delimiter(first), strict=True)
    header: Optional[List[str]] = None
    for start, row in _csv_records(reader, path):
        if header is None:
            header = [c.strip().lower() for c in row]
            _check_header(header, path, start)
            continue
        problem = width_error(len(row), len(header))
        if problem is not None:
            raise ConfigError(problem, file=str(path), line=start)
        yield start, dict(zip(header, (from_spreadsheet_cell(c) for c in row)))


def _check_header(header: List[str], path: Path, line: int) -> None:
    """No column named twice (the second silently replaced the first's values)."""
    seen: Set[str] = set()
    for name in header:
        if name and name in seen:
            raise ConfigError(f"the header names the column {name!r} twice", file=str(path), line=line)
        seen.add(name)


def _csv_records(reader: Any, path: Path) -> Iterator[Tuple[int, List[str]]]:
    """(line the record starts on, cells) of every record that is not blank; a malformed
    record or a NUL character is a ConfigError naming the line."""
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ConfigError(
                f"malformed CSV quoting ({exc}): a quoted cell must be closed, and followed by the "
                "delimiter or the line's end (a quote inside a quoted cell is written twice)",
                file=str(path),
                line=start,
            ) from None
        if not row or all(not c.strip() for c in row):
            continue
        if any("\x00" in c for c in row):
            raise ConfigError("a NUL character: a binary or UTF-16 file?", file=str(path), line=start)
        yield start, row


# -------------------------------------------------------------------------- writing


def write_csv(
    path: PathLike, header: Sequence[str], rows: Iterable[Sequence[Any]], *, delimiter: str = ","
) -> int:
    """A CSV/TSV file a person may open in a spreadsheet: every text cell goes through
    :func:`to_spreadsheet_cell` (numbers are written as they are). Returns the row count."""
    count = 0

    def write(fh: TextIO) -> None:
        nonlocal count
        # RFC 4180 line ends: the csv module quotes a cell holding any character of the
        # line terminator, so with "\n" alone a carriage return in a text would split the row
        w = csv.writer(fh, delimiter=delimiter, lineterminator="\r\n")
        w.writerow(header)
        for row in rows:
            w.writerow([to_spreadsheet_cell(c) if isinstance(c, str) else c for c in row])
            count += 1

    atomic_write(Path(path), write, newline="")
    return count


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: PathLike) -> int:
    """Write qrels; the format follows the extension: ``.jsonl`` (``{"query_id", "doc_id",
    "grade"}``), ``.tsv`` (BEIR, with its header), anything else TREC (``qid 0 docid grade``).
    Every format is read back by ``load_qrels``. Returns the number of labels written."""
    path = Path(path)
    suffix = path.suffix.lower()
    rows = [(q, d, int(g)) for q, docs in qrels.items() for d, g in docs.items()]
    _check_qrels_ids(rows, path, suffix)

    def write(fh: TextIO) -> None:
        if suffix == ".jsonl":
            for q, d, g in rows:
                fh.write(json.dumps({"query_id": q, "doc_id": d, "grade": g}, ensure_ascii=False) + "\n")
        elif suffix == ".tsv":
            fh.write("query-id\tcorpus-id\tscore\n")
            for q, d, g in rows:
                fh.write(f"{q}\t{d}\t{g}\n")
        else:
            for q, d, g in rows:
                fh.write(f"{q} 0 {d} {g}\n")

    atomic_write(path, write)
    return len(rows)


def _check_qrels_ids(rows: List[Tuple[str, str, int]], path: Path, suffix: str) -> None:
    """Ids the chosen qrels format cannot hold: whitespace (TREC), tabs or newlines (TSV)."""
    if suffix == ".tsv":
        for q, d, _ in rows:
            if "\t" in q or "\t" in d or "\n" in q or "\n" in d:
                raise ConfigError(f"id {q!r}/{d!r} contains a tab or newline; write .jsonl", file=str(path))
    elif suffix != ".jsonl":
        for q, d, _ in rows:
            _check_trec_id("query id", q, path)
            _check_trec_id("document id", d, path)


def _check_trec_id(what: str, value: str, path: Path) -> None:
    if not value or any(c.isspace() for c in value):
        raise ConfigError(
            f"{what} {value!r} contains whitespace and cannot be written "
            f"as TREC qrels; write a .tsv or .jsonl file instead",
            file=str(path),
        )


def write_queries(queries: Mapping[str, str], path: PathLike) -> int:
    """Queries as JSONL ``{"_id", "text"}`` (``.tsv``/``.txt``: ``qid<TAB>text``)."""
    path = Path(path)
    tsv = path.suffix.lower() in (".tsv", ".txt")

    def write(fh: TextIO) -> None:
        for qid, text in queries.items():
            if tsv:
                fh.write(f"{qid}\t{' '.join(text.split())}\n")
            else:
                fh.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")

    atomic_write(path, write)
    return len(queries)
