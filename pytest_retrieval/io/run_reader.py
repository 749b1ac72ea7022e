"""A TREC run file read by pyarrow's CSV reader, block by block (the rules: ``io.runfiles``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, NoReturn, Optional

from ..errors import ConfigError
from .lines import check_data_file
from .trec import load_trec_run

BLOCK_BYTES = 16 << 20  # text per block read: ~450,000 lines of a typical run
PRECISE_ERRORS_UP_TO = 256 << 20  # re-read a bad file line by line (for the line number) up to this size
_COLUMNS = ["qid", "q0", "doc", "rank", "score", "tag"]
BOM = b"\xef\xbb\xbf"


class Irregular(Exception):
    """The run file does not have exactly one space between its six columns: read it again
    with ``collapsed=True`` (white space collapsed, columns after the sixth dropped)."""


@dataclass
class RunFileFacts:
    """What reading a run file found besides the columns."""

    first_qid: Optional[str] = None  # the first query of the file
    queries_in_qrels: int = 0  # queries of the run that the qrels name
    self_hits_removed: int = 0  # with ``ignore_identical_ids``


@dataclass
class ReadOptions:
    ties: str = "trec"
    block_bytes: int = BLOCK_BYTES
    collapsed: bool = False
    ignore_identical_ids: bool = False
    facts: RunFileFacts = field(default_factory=RunFileFacts)


def pyarrow_modules():
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pv

    return pa, pc, pv


_WS = re.compile(rb"[ \t\r\f\v]+")


# columns after the sixth (the tag) are dropped: trec_eval's get_trec_results.c skips the rest
# of the line (its own test/results.trunc has such lines)
_EXTRA = re.compile(rb"^((?:[^ \n]+ ){5}[^ \n]+) [^\n]*", re.M)


def _collapse(data: bytes) -> bytes:
    data = _WS.sub(b" ", data).replace(b"\n ", b"\n").replace(b" \n", b"\n")
    data = _EXTRA.sub(rb"\1", data)
    return data[1:] if data.startswith(b" ") else data


class _Collapsed:
    """A file object over the run with whitespace collapsed (whole lines at a time)."""

    def __init__(self, path: Path):
        self._fh: Any = open(path, "rb")
        if self._fh.read(3) != BOM:  # a UTF-8 byte order mark is dropped, as the line reader does
            self._fh.seek(0)
        self._rest = b""  # an incomplete last line
        self._out = b""  # collapsed bytes not handed out yet
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        while (n < 0 or len(self._out) < n) and self._fh is not None:
            chunk = self._fh.read(1 << 22)
            if not chunk:
                self._out += _collapse(self._rest)
                self._rest = b""
                self._fh.close()
                self._fh = None
                break
            data = self._rest + chunk
            cut = data.rfind(b"\n") + 1
            self._rest = data[cut:]
            self._out += _collapse(data[:cut])
        if n < 0:
            out, self._out = self._out, b""
        else:
            out, self._out = self._out[:n], self._out[n:]
        return out

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self.closed = True


def _reader(path: Path, block_bytes: int, collapsed: bool, with_rank: bool = True):
    pa, _pc, pv = pyarrow_modules()
    read = pv.ReadOptions(column_names=_COLUMNS, block_size=block_bytes, use_threads=True)
    parse = pv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, ignore_empty_lines=True)
    convert = pv.ConvertOptions(
        column_types={
            "qid": pa.binary(),
            "q0": pa.binary(),
            "doc": pa.binary(),
            "rank": pa.int64(),
            "score": pa.float64(),
            "tag": pa.binary(),
        },
        include_columns=["qid", "doc", "rank", "score"] if with_rank else ["qid", "doc", "score"],
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    source = _Collapsed(path) if collapsed else str(path)
    return pv.open_csv(source, read_options=read, parse_options=parse, convert_options=convert)


def read_batches(path: Path, opts: ReadOptions) -> Iterator:
    """Record batches of the run (self hits dropped with ``ignore_identical_ids``). A file
    the fast reader cannot parse raises :class:`Irregular` (read it again collapsed); one
    that the collapsing reader cannot parse either gets the line reader's precise message."""
    pa, _pc, _pv = pyarrow_modules()
    check_data_file(path)
    if not opts.collapsed and _starts_with_bom(path):
        raise Irregular()
    yielded = False
    try:
        for batch in _batches_with_rows(path, opts):
            if not yielded:
                opts.facts.first_qid = batch.column(0)[0].as_py().decode("utf-8", "replace")
            yielded = True
            if opts.ignore_identical_ids:
                batch = _without_self_hits(batch, opts.facts)
            if batch.num_rows:
                yield batch
    except pa.ArrowInvalid as exc:
        if not opts.collapsed:
            raise Irregular() from None
        precise_error(path, f"cannot read the run: {exc}")
    if not yielded:
        raise ConfigError("no lines in run file", file=str(path))


def _batches_with_rows(path: Path, opts: ReadOptions) -> Iterator:
    reader = _reader(path, opts.block_bytes, opts.collapsed, with_rank=opts.ties != "trec")
    return (batch for batch in reader if batch.num_rows)


def _starts_with_bom(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(3) == BOM


def _without_self_hits(batch, facts: RunFileFacts):
    """``batch`` without the lines whose doc id is their query id (counted in ``facts``)."""
    _pa, pc, _pv = pyarrow_modules()
    keep = pc.not_equal(batch.column("qid"), batch.column("doc"))
    kept = pc.sum(keep).as_py() or 0
    if kept == batch.num_rows:
        return batch
    facts.self_hits_removed += batch.num_rows - kept
    return batch.filter(keep)


def precise_error(path: Path, message: str) -> NoReturn:
    """Raise the line reader's error (file and line) for a file that is not too large."""
    if path.stat().st_size <= PRECISE_ERRORS_UP_TO:
        load_trec_run(path)  # raises ConfigError naming the line
    raise ConfigError(message, file=str(path))
