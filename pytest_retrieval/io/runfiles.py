"""TREC run files read at C speed, straight into the metric engine's columns.

``evaluate_files(qrels, run, metrics)`` is what ``pytest-retrieval evaluate`` runs: the run
file is parsed by pyarrow's CSV reader block by block and evaluated query group by query
group (:mod:`~pytest_retrieval.measures.columnar`), so memory is O(qrels + one block), not
O(run).

Why pyarrow (a dependency for this): on a 10,000-query x 1,000-hit run (344 MB, 10M lines)
on the 2-core machine, under the same load, pyarrow.csv parsed it in 7.2 s (0.5 GiB peak)
against 27.6 s for pandas' C engine with ``sep=" "`` (37.2 s with ``sep=r"\\s+"``; 1.3 GiB
peak) and 30 s for pytrec_eval's ``parse_run``; its compute kernels (``index_in``,
comparisons of adjacent ids) do the rest of the string work.

How a file is read:

* Fast path: one space between columns (what every TREC tool writes). Anything else (tabs,
  runs of spaces, ``\\r``) is re-read with the whitespace collapsed first, as Python's
  ``str.split`` (and trec_eval) read it. A line that is still malformed (not 6 columns, a
  rank that is not an integer, a score that is not a number or is NaN) is reported by the
  line reader of ``suite.judgments`` (file and line) when the file is under 256 MB, else
  by pyarrow's message.
* Grouped by query (every line of a query together, as trec_eval's output and every
  engine's run): streamed block by block, a query never split across two evaluated groups.
* Not grouped: detected on the way (a query shows up again after another one); the file is
  then split into temporary Arrow files by query (each ~256 MB of text), and each part is
  evaluated on its own: memory stays bounded, at the cost of writing the run once to the
  temporary directory.
* A document twice for one query is an error, as in trec_eval (``form_res_rels.c``,
  "duplicate docs") and ``suite.judgments.load_trec_run``. Found without hashing every id
  in Python: a 64-bit fingerprint of each id (its bytes read 8 at a time) sorted within the
  block, and equal fingerprints compared as bytes.
* With ``ties="trec"`` the rank column is not read (trec_eval's ``get_trec_results.c``
  keeps it as a string it never uses; the order is the scores'); it is 40% of the parse.
* Document ids are compared as bytes (trec_eval's ``strcmp``); the file must be UTF-8 text
  as for the line reader (checked per block at C speed), a leading byte order mark dropped.
* The file checks are the line reader's (``suite.judgments.check_data_file``): a regular
  file of at most ``MAX_DATA_BYTES``.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, NoReturn, Optional, Sequence, Set, Union

import numpy as np

from ..errors import ConfigError, RetrievalError
from ..measures.columnar import QrelsColumns, RunColumns
from ..measures.metrics import Evaluation, Metric, evaluate
from ..types import Ranking, Run
from .judgments import GradeScale, check_data_file, load_qrels, load_trec_run

__all__ = [
    "evaluate_files",
    "read_run",
    "read_qrels_columns",
    "stream_run_columns",
    "RunFileFacts",
    "NotGrouped",
]

BLOCK_BYTES = 16 << 20  # text per block read: ~450,000 lines of a typical run
PART_BYTES = 256 << 20  # text per temporary part of a run that is not grouped by query
PRECISE_ERRORS_UP_TO = 256 << 20  # re-read a bad file line by line (for the line number) up to this size

_COLUMNS = ["qid", "q0", "doc", "rank", "score", "tag"]
_BOM = b"\xef\xbb\xbf"


class NotGrouped(Exception):
    """The run file is not grouped by query (raised by :func:`stream_run_columns`)."""


class Irregular(Exception):
    """The run file does not have exactly one space between columns: read it again with
    ``collapsed=True``."""


# --------------------------------------------------------------------------- evaluate


def read_qrels_columns(path: Union[str, Path], grades: Optional[GradeScale] = None) -> QrelsColumns:
    """Qrels file -> columns (formats and rules: ``suite.judgments.load_qrels``, ``grades``
    mapped and range-checked as there). TREC qrels and BEIR TSV with one space or one tab
    between columns are read by pyarrow; anything else, or a file with an error (for its
    message, naming the line), by ``load_qrels``."""
    path = Path(path)
    check_data_file(path)
    fast = _fast_qrels(path, grades)
    return fast if fast is not None else QrelsColumns.from_qrels(load_qrels(path, grades))


def _qrels_layout(path: Path):
    """(delimiter, column names, header?) of a qrels text file the fast reader can take, or
    None. The format is ``load_qrels``' own, detected from the first line."""
    from .judgments import _QrelsFormat

    if path.suffix.lower() == ".jsonl":
        return None
    with open(path, "rb") as fh:
        first = fh.readline().rstrip(b"\r\n")
    if first.startswith(b"\xef\xbb\xbf") or not first.strip():
        return None  # a BOM or a blank first line: the line reader's rules
    try:
        text = first.decode("utf-8")
        fmt = _QrelsFormat.detect(text, path, 1)
    except (UnicodeDecodeError, ConfigError):
        return None
    delimiter = "\t" if fmt.tab else " "
    if len(text.split(delimiter)) != fmt.columns:
        return None  # runs of whitespace: the line reader splits them
    names = [f"c{i}" for i in range(fmt.columns)]
    names[fmt.qid], names[fmt.did], names[fmt.grade] = "qid", "doc", "grade"
    return delimiter, names, fmt.header


def _fast_qrels(path: Path, grades: Optional[GradeScale]) -> Optional[QrelsColumns]:
    layout = _qrels_layout(path)
    if layout is None:
        return None
    delimiter, names, header = layout
    pa, pc, pv = _pyarrow()
    try:
        table = pv.read_csv(
            str(path),
            read_options=pv.ReadOptions(column_names=names, skip_rows=1 if header else 0),
            parse_options=pv.ParseOptions(delimiter=delimiter, quote_char=False, ignore_empty_lines=True),
            convert_options=pv.ConvertOptions(
                column_types={n: pa.binary() for n in names if n.startswith("c")}
                | {"qid": pa.string(), "doc": pa.string(), "grade": pa.int64()},
                include_columns=["qid", "doc", "grade"],
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        ).combine_chunks()
    except (pa.ArrowInvalid, OSError):
        return None
    if table.num_rows == 0:
        return None
    qid, doc = table.column("qid").chunk(0), table.column("doc").chunk(0)
    for ids in (qid, doc):
        if pc.any(pc.equal(pc.binary_length(ids), 0)).as_py() or (
            delimiter == "\t" and pc.any(pc.not_equal(pc.utf8_trim_whitespace(ids), ids)).as_py()
        ):
            return None  # empty or padded ids: the Python reader's rules and messages
    g = _scaled_grades(table.column("grade").to_numpy().astype(np.int64), grades)
    if g is None:
        return None  # a grade off the scale: load_qrels names its line
    return _qrels_from_codes(qid.dictionary_encode(), doc.dictionary_encode(), g)


def _scaled_grades(g: np.ndarray, grades: Optional[GradeScale]) -> Optional[np.ndarray]:
    """``g`` mapped by ``grades`` (``GradeScale.apply``, vectorised); None when one is off
    the scale."""
    if grades is None:
        return g
    if grades.mapping:
        values, inverse = np.unique(g, return_inverse=True)
        g = np.asarray([grades.mapping.get(v, v) for v in values.tolist()], dtype=np.int64)[inverse]
    return g if len(g) == 0 or (g.min() >= grades.low and g.max() <= grades.high) else None


def _qrels_from_codes(qenc, denc, g: np.ndarray) -> Optional[QrelsColumns]:
    """Columns of dictionary-encoded qrels (repeated judgments with one grade kept once)."""
    pa, pc, _pv = _pyarrow()
    q = qenc.indices.to_numpy().astype(np.int64)
    d = denc.indices.to_numpy().astype(np.int64)
    n_docs = len(denc.dictionary)
    key = q * n_docs + d
    order = np.argsort(key, kind="stable")
    key_sorted, g_sorted = key[order], g[order]
    repeat = key_sorted[1:] == key_sorted[:-1]
    if repeat.any():
        if (g_sorted[1:][repeat] != g_sorted[:-1][repeat]).any():
            return None  # conflicting grades: load_qrels names the line
        keep = np.ones(len(key), dtype=bool)
        keep[order[1:][repeat]] = False
        q, d, g = q[keep], d[keep], g[keep]
    qids = qenc.dictionary.to_pylist()
    positive = np.bincount(q[g > 0], minlength=len(qids)) > 0
    eval_of = np.full(len(qids), -1, dtype=np.int64)
    eval_of[positive] = np.arange(int(positive.sum()))
    rows = positive[q]
    evaluated = [x for x, p in zip(qids, positive.tolist()) if p]
    no_relevant = [x for x, p in zip(qids, positive.tolist()) if not p]
    docs = pc.cast(denc.dictionary, pa.binary())
    return QrelsColumns._build(
        dict.fromkeys(qids), evaluated, no_relevant, docs, None, eval_of[q[rows]], d[rows], g[rows]
    )


@dataclass
class RunFileFacts:
    """What reading a run file found besides the columns."""

    first_qid: Optional[str] = None  # the first query of the file
    queries_in_qrels: int = 0  # queries of the run that the qrels name
    self_hits_removed: int = 0  # with ``ignore_identical_ids``


def evaluate_files(
    qrels: Union[str, Path, QrelsColumns],
    run: Union[str, Path],
    metrics: Union[str, Metric, Iterable[Union[str, Metric]]],
    *,
    gain: str = "exp",
    ties: str = "trec",
    relevance_threshold: int = 1,
    grades: Optional[GradeScale] = None,
    ignore_identical_ids: bool = False,
    facts: Optional[RunFileFacts] = None,
    block_bytes: int = BLOCK_BYTES,
    part_bytes: int = PART_BYTES,
) -> Evaluation:
    """``evaluate`` on files, streaming the run (see the module docstring).

    ``grades``: how the qrels' grades are mapped and checked (``read_qrels_columns``).
    ``ignore_identical_ids`` drops every hit whose doc id is its query id (BEIR's
    ``ignore_identical_ids``). A run that shares no query id with the qrels is an error
    (every metric would be 0). ``facts``, when given, is filled in (see
    :class:`RunFileFacts`)."""
    qc = qrels if isinstance(qrels, QrelsColumns) else read_qrels_columns(qrels, grades)
    grouped, collapsed = True, False
    while True:
        read = RunFileFacts()
        opts = _ReadOptions(ties, block_bytes, collapsed, ignore_identical_ids, read)
        try:
            if grouped:
                source = stream_run_columns(run, qc, opts)
            else:
                source = partitioned_run_columns(run, qc, opts, part_bytes=part_bytes)
            ev = evaluate(qc, source, metrics, gain=gain, ties=ties, relevance_threshold=relevance_threshold)
            break
        except NotGrouped:
            grouped = False
        except Irregular:
            collapsed = True
    if facts is not None:
        for f in fields(RunFileFacts):
            setattr(facts, f.name, getattr(read, f.name))
    if not read.queries_in_qrels:
        named = "the qrels" if isinstance(qrels, QrelsColumns) else str(qrels)
        raise RetrievalError(
            f"{run} and {named} share no query id (run: e.g. {read.first_qid!r}, "
            f"qrels: e.g. {next(iter(qc.qids), None)!r}): every metric would be 0"
        )
    return ev


@dataclass
class _ReadOptions:
    ties: str = "trec"
    block_bytes: int = BLOCK_BYTES
    collapsed: bool = False
    ignore_identical_ids: bool = False
    facts: RunFileFacts = field(default_factory=RunFileFacts)


# --------------------------------------------------------------------------- a whole run


def read_run(path: Union[str, Path]) -> Run:
    """A TREC run file as a ``Run``: what ``suite.judgments.load_trec_run`` returns (queries in
    order of first appearance, each ranking by the rank column then file order, a document
    twice for a query an error), parsed by pyarrow. A file the fast reader refuses is read by
    ``load_trec_run`` itself, so the result or the error (file and line) is always its own."""
    path = Path(path)
    try:
        return _read_run(path, _ReadOptions(ties="engine"))
    except Irregular:
        pass
    try:
        return _read_run(path, _ReadOptions(ties="engine", collapsed=True))
    except ConfigError:
        return load_trec_run(path)


def _read_run(path: Path, opts: _ReadOptions) -> Run:
    pa, _pc, _pv = _pyarrow()
    table = pa.Table.from_batches(list(_batches(path, opts))).combine_chunks()
    enc = table.column("qid").chunk(0).dictionary_encode()  # codes in order of first appearance
    codes = enc.indices.to_numpy().astype(np.int64)
    score = table.column("score").to_numpy()
    if np.isnan(score).any():
        _precise_error(path, "a score is NaN")
    order = np.lexsort((table.column("rank").to_numpy(), codes))  # stable: file order on equal ranks
    seg_len = np.bincount(codes, minlength=len(enc.dictionary))
    try:
        qids = [q.decode("utf-8") for q in enc.dictionary.to_pylist()]
    except UnicodeDecodeError as exc:
        raise ConfigError(f"a query id is not UTF-8 text ({exc.reason})", file=str(path)) from None
    doc = table.column("doc").chunk(0).take(pa.array(order))
    _check_duplicates(path, _fingerprints(doc), codes[order], seg_len, doc, qids)
    try:
        docs = doc.cast(pa.string()).to_pylist()
    except pa.ArrowInvalid:
        _precise_error(path, "a document id is not UTF-8 text")
    scores = score[order].tolist()
    ends = np.cumsum(seg_len).tolist()
    starts = [0] + ends[:-1]
    return {q: Ranking(docs[a:b], scores[a:b]) for q, a, b in zip(qids, starts, ends)}


# --------------------------------------------------------------------------- reading


def _pyarrow():
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pv

    return pa, pc, pv


_WS = re.compile(rb"[ \t\r\f\v]+")


def _collapse(data: bytes) -> bytes:
    data = _WS.sub(b" ", data).replace(b"\n ", b"\n").replace(b" \n", b"\n")
    return data[1:] if data.startswith(b" ") else data


class _Collapsed:
    """A file object over the run with whitespace collapsed (whole lines at a time)."""

    def __init__(self, path: Path):
        self._fh: Any = open(path, "rb")
        if self._fh.read(3) != _BOM:  # a UTF-8 byte order mark is dropped, as the line reader does
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
    pa, _pc, pv = _pyarrow()
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


def _batches(path: Path, opts: _ReadOptions) -> Iterator:
    """Record batches of the run (self hits dropped with ``ignore_identical_ids``). A file
    the fast reader cannot parse raises :class:`Irregular` (read it again collapsed); one
    that the collapsing reader cannot parse either gets the line reader's precise message."""
    pa, pc, _pv = _pyarrow()
    check_data_file(path)
    if not opts.collapsed:
        with open(path, "rb") as fh:
            if fh.read(3) == _BOM:
                raise Irregular()
    yielded = False
    try:
        for batch in _reader(path, opts.block_bytes, opts.collapsed, with_rank=opts.ties != "trec"):
            if not batch.num_rows:
                continue
            if not yielded:
                opts.facts.first_qid = batch.column(0)[0].as_py().decode("utf-8", "replace")
            yielded = True
            if opts.ignore_identical_ids:
                keep = pc.not_equal(batch.column("qid"), batch.column("doc"))
                kept = pc.sum(keep).as_py() or 0
                if kept < batch.num_rows:
                    opts.facts.self_hits_removed += batch.num_rows - kept
                    batch = batch.filter(keep)
                    if not batch.num_rows:
                        continue
            yield batch
    except pa.ArrowInvalid as exc:
        if not opts.collapsed:
            raise Irregular() from None
        _precise_error(path, f"cannot read the run: {exc}")
    if not yielded:
        raise ConfigError("no lines in run file", file=str(path))


def _precise_error(path: Path, message: str) -> NoReturn:
    """Raise the line reader's error (file and line) for a file that is not too large."""
    if path.stat().st_size <= PRECISE_ERRORS_UP_TO:
        load_trec_run(path)  # raises ConfigError naming the line
    raise ConfigError(message, file=str(path))


# --------------------------------------------------------------------------- columns


def stream_run_columns(
    path: Union[str, Path], qrels: QrelsColumns, opts: Optional[_ReadOptions] = None
) -> Iterator[RunColumns]:
    """Columns of a run file grouped by query, one block at a time. Raises
    :class:`NotGrouped` when a query shows up again after another one, :class:`Irregular`
    when the columns are not separated by one space (and ``opts.collapsed`` is False)."""
    pa, _pc, _pv = _pyarrow()
    opts = opts or _ReadOptions()
    path = Path(path)
    seen = _Seen()
    carry = None  # the rows of the last query of the previous block (it may go on)
    # ties="trec" orders by score: the rank column is not even converted
    for batch in _batches(path, opts):
        table = pa.Table.from_batches([batch])
        if carry is not None:
            table = pa.concat_tables([carry, table])
        table = table.combine_chunks()
        block = _Block(table)
        if block.n_segments > 1:
            cut = int(block.starts[-1])
            carry = table.slice(cut)
            yield _columns(path, _Block(table.slice(0, cut), block.starts[:-1]), qrels, opts, seen)
        else:
            carry = table
    if carry is not None:
        yield _columns(path, _Block(carry), qrels, opts, seen)


def partitioned_run_columns(
    path: Union[str, Path],
    qrels: QrelsColumns,
    opts: Optional[_ReadOptions] = None,
    *,
    part_bytes: int = PART_BYTES,
) -> Iterator[RunColumns]:
    """Columns of a run file whose lines are not grouped by query: split by query into
    temporary Arrow files of about ``part_bytes`` of text each, then one part at a time."""
    pa, pc, _pv = _pyarrow()
    import pyarrow.ipc as ipc

    opts = opts or _ReadOptions()
    path = Path(path)
    k = max(2, math.ceil(path.stat().st_size / part_bytes))
    part_of: Dict[bytes, int] = {}
    with tempfile.TemporaryDirectory(prefix="pytest-retrieval-run-") as tmp:
        writers: List = [None] * k
        try:
            for batch in _batches(path, opts):
                enc = batch.column(0).dictionary_encode()
                parts = np.fromiter(
                    (part_of.setdefault(q, len(part_of) % k) for q in enc.dictionary.to_pylist()),
                    dtype=np.int64,
                )[enc.indices.to_numpy(zero_copy_only=False)]
                for j in np.unique(parts).tolist():
                    if writers[j] is None:
                        writers[j] = ipc.new_file(os.path.join(tmp, f"{j}.arrow"), batch.schema)
                    writers[j].write_batch(batch.take(pa.array(np.flatnonzero(parts == j))))
        finally:
            for w in writers:
                if w is not None:
                    w.close()
        seen = _Seen()
        for j in range(k):
            if writers[j] is None:
                continue
            with pa.memory_map(os.path.join(tmp, f"{j}.arrow")) as source:
                table = ipc.open_file(source).read_all().combine_chunks()
            # group the part's lines by query, keeping each query's lines in file order
            codes = (
                pc.dictionary_encode(table.column(0)).combine_chunks().indices.to_numpy(zero_copy_only=False)
            )
            table = table.take(pa.array(np.argsort(codes, kind="stable"))).combine_chunks()
            yield _columns(path, _Block(table), qrels, opts, seen)
            del table


@dataclass
class _Seen:
    """Queries already read (a query met again means the file is not grouped) and the
    unjudged ones already reported."""

    finished: Set[bytes] = field(default_factory=set)
    unjudged: Set[str] = field(default_factory=set)


class _Block:
    """One block of run lines as numpy/Arrow columns, with its query groups."""

    def __init__(self, table, starts: Optional[np.ndarray] = None):
        _pa, pc, _pv = _pyarrow()
        self.table = table
        self.qid = table.column(0).combine_chunks()
        n = len(self.qid)
        self.n = n
        if starts is not None:
            self.starts = starts
            return
        ends = pc.run_end_encode(self.qid).run_ends.to_numpy().astype(np.int64)
        self.starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)

    @property
    def n_segments(self) -> int:
        return len(self.starts)


def _columns(path: Path, block: _Block, qrels: QrelsColumns, opts: _ReadOptions, seen: _Seen) -> RunColumns:
    pa, pc, _pv = _pyarrow()
    n = block.n
    starts = block.starts
    offsets = np.append(starts, n).astype(np.int64)
    raw_qids = block.qid.take(pa.array(starts)).to_pylist()
    for q in raw_qids:
        if q in seen.finished:
            raise NotGrouped()
        seen.finished.add(q)
    if len(set(raw_qids)) != len(raw_qids):  # pragma: no cover (adjacent groups differ)
        raise NotGrouped()
    try:
        qids = [q.decode("utf-8") for q in raw_qids]
    except UnicodeDecodeError as exc:
        raise ConfigError(f"a query id is not UTF-8 text ({exc.reason})", file=str(path)) from None
    judged_queries = sum(1 for q in qids if q in qrels.qids)
    opts.facts.queries_in_qrels += judged_queries
    unjudged = (
        [q for q in qids if q not in qrels.qids and q not in seen.unjudged]
        if judged_queries < len(qids)
        else []
    )
    seen.unjudged.update(unjudged)

    table = block.table
    doc = table.column("doc").combine_chunks()
    try:  # ids are compared as bytes, but a file that is not UTF-8 is refused as the line reader does
        doc.cast(pa.string())
    except pa.ArrowInvalid:
        _precise_error(path, "a document id is not UTF-8 text")
    score = table.column("score").to_numpy()
    if np.isnan(score).any():
        _precise_error(path, "a score is NaN")
    seg_len = np.diff(offsets)
    seg_id = np.repeat(np.arange(len(starts), dtype=np.int64), seg_len)
    trec = opts.ties == "trec"
    boundary = np.zeros(max(n - 1, 0), dtype=bool)
    boundary[starts[1:] - 1] = True
    if trec:
        s32 = score.astype(np.float32)
        out_of_order = ((s32[1:] > s32[:-1]) & ~boundary).any()
        order = np.lexsort((-s32, seg_id)) if out_of_order else None
    else:
        rank = table.column("rank").to_numpy()
        out_of_order = ((rank[1:] < rank[:-1]) & ~boundary).any()
        order = np.lexsort((rank, seg_id)) if out_of_order else None  # stable: file order on equal ranks
    if order is not None:
        doc = doc.take(pa.array(order))
        score = score[order]

    fp = _fingerprints(doc)
    _check_duplicates(path, fp, seg_id, seg_len, doc, qids)

    judged_rows, judged_codes = _judged_docs(doc, fp, qrels)
    return RunColumns(
        qids=qids,
        offsets=offsets,
        judged_rows=judged_rows.astype(np.int64),
        judged_codes=judged_codes,
        scores=score if trec else None,
        docs=_ArrowDocs(doc),
        trec_sorted=trec,
        unjudged=unjudged,
    )


class _ArrowDocs:
    def __init__(self, doc):
        self.doc = doc

    def between(self, seg: int, lo: int, hi: int) -> List[bytes]:
        return self.doc.slice(lo, hi - lo).to_pylist()


# --------------------------------------------------------------------------- fingerprints

_MIX = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_SEED = np.uint64(0x9E3779B97F4A7C15)
_BYTE_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _fingerprints(arr) -> np.ndarray:
    """A 64-bit fingerprint of every id of a binary Arrow array (no nulls): its bytes read
    8 at a time (one numpy gather per 8 bytes of the longest id), mixed with its length.
    Equal ids have equal fingerprints; unequal ones almost never (callers compare bytes)."""
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    _validity, offsets_buf, data_buf = arr.buffers()
    off = np.frombuffer(offsets_buf, dtype=np.int32, count=n + 1, offset=arr.offset * 4).astype(np.int64)
    first, last = int(off[0]), int(off[-1])
    start = off[:-1] - first
    length = np.diff(off)
    longest = int(length.max())
    # zero padding: a word read past the last id stays inside the array
    data = np.zeros(last - first + longest + 8, dtype=np.uint8)
    if data_buf is not None and last > first:
        data[: last - first] = np.frombuffer(data_buf, dtype=np.uint8, count=last - first, offset=first)
    # every byte offset as the start of an (unaligned, little-endian) 8-byte word
    words = np.lib.stride_tricks.as_strided(data, shape=(len(data) - 7, 8), strides=(1, 1)).view("<u8")[:, 0]
    with np.errstate(over="ignore"):
        h = length.astype(np.uint64) * _SEED
        for k in range(0, longest, 8):
            w = words[start + k if k else start]
            left = length - k
            if (left < 8).any():
                w &= _BYTE_MASKS[np.clip(left, 0, 8)]  # zero the bytes past the id's end
            mixed = (h ^ w) * _MIX
            mixed ^= mixed >> np.uint64(29)
            # ids shorter than k bytes are done: a fingerprint must not depend on the others
            h = mixed if k == 0 or (left > 0).all() else np.where(left > 0, mixed, h)
        # murmur3's fmix64: every output bit depends on every input bit (the low bits index
        # the bit table; without it ids of one shape, "D1234567", crowd the same slots)
        h ^= h >> np.uint64(33)
        h *= _MIX
        h ^= h >> np.uint64(33)
        h *= _MIX2
        h ^= h >> np.uint64(33)
    return h


def _check_duplicates(path: Path, fp, seg_id, seg_len, doc, qids: Sequence[str]) -> None:
    """A document twice in one query's lines is an error (see the module docstring)."""
    n = len(fp)
    if n < 2:
        return
    with np.errstate(over="ignore"):
        key = fp ^ (seg_id.astype(np.uint64) * _SEED)
    length = int(seg_len[0])
    if (seg_len == length).all():  # every query the same length: sort each one (in cache)
        ordered = np.sort(key.reshape(-1, length), axis=1)
        same = ordered[:, 1:] == ordered[:, :-1]
        if not same.any():
            return
        suspects = ordered[:, 1:][same]
    else:
        ordered = np.sort(key)
        same = ordered[1:] == ordered[:-1]
        if not same.any():
            return
        suspects = ordered[1:][same]
    rows = np.flatnonzero(np.isin(key, suspects))
    seen: Dict[tuple, int] = {}
    for r in rows.tolist():
        k = (int(seg_id[r]), doc[r].as_py())
        if k in seen:
            did = k[1].decode("utf-8", "replace")
            _precise_error(path, f"document {did!r} appears twice for query {qids[k[0]]!r}")
        seen[k] = r


def _judged_docs(doc, fp: np.ndarray, qrels: QrelsColumns):
    """Rows of ``doc`` whose id is a qrels document, and its code. A bit table of the qrels'
    fingerprints lets the few candidates through; their fingerprint is found among the
    qrels' (sorted, searched once per block: no hash table rebuilt per block), and the ids
    are then compared as bytes, so the answer is exact."""
    pa, pc, _pv = _pyarrow()
    qdocs, bits, mask, qfp, qcode, unique_fp = _qrels_lookup(qrels)
    empty = np.zeros(0, dtype=np.int64)
    rows = np.flatnonzero(bits[(fp & mask).astype(np.intp)])
    if not len(rows):
        return empty, empty
    if not unique_fp:  # two qrels ids share a fingerprint (never seen): hash the candidates
        codes = pc.fill_null(pc.index_in(doc.take(pa.array(rows)), value_set=qdocs), -1)
        codes = codes.to_numpy(zero_copy_only=False).astype(np.int64)
        return rows[codes >= 0], codes[codes >= 0]
    at = np.searchsorted(qfp, fp[rows])
    np.minimum(at, len(qfp) - 1, out=at)
    hit = qfp[at] == fp[rows]
    rows, codes = rows[hit], qcode[at[hit]]
    if not len(rows):
        return empty, empty
    same = pc.equal(doc.take(pa.array(rows)), qdocs.take(pa.array(codes))).to_numpy(zero_copy_only=False)
    return rows[same], codes[same]


def _qrels_lookup(qrels: QrelsColumns):
    """The qrels' documents as an Arrow array, a bit table of their fingerprints, and the
    fingerprints sorted with the documents' codes."""
    if "arrow_docs" not in qrels.cache:
        pa, _pc, _pv = _pyarrow()
        if isinstance(qrels.docs, pa.Array):
            qdocs = qrels.docs
        else:
            qdocs = pa.array([d.encode("utf-8") for d in qrels.docs], type=pa.binary())
        size = 1 << max(20, min(26, (16 * max(len(qrels.docs), 1) - 1).bit_length()))
        bits = np.zeros(size, dtype=bool)
        mask = np.uint64(size - 1)
        qfp = _fingerprints(qdocs)
        bits[(qfp & mask).astype(np.intp)] = True
        order = np.argsort(qfp, kind="stable")
        qfp = qfp[order]
        unique_fp = not (qfp[1:] == qfp[:-1]).any()
        qrels.cache["arrow_docs"] = (qdocs, bits, mask, qfp, order.astype(np.int64), unique_fp)
    return qrels.cache["arrow_docs"]
