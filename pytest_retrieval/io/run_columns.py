"""A run file's blocks as the metric engine's columns, grouped by query: streamed when the
file is grouped, split into temporary parts by query when it is not."""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple, Union

import numpy as np

from ..errors import ConfigError
from ..measures.columnar import QrelsColumns, RunColumns
from .fingerprints import check_duplicates, fingerprints, judged_docs
from .run_reader import ReadOptions, precise_error, pyarrow_modules, read_batches

PART_BYTES = 256 << 20  # text per temporary part of a run that is not grouped by query


class NotGrouped(Exception):
    """The run file is not grouped by query (raised by :func:`stream_run_columns`)."""


def stream_run_columns(
    path: Union[str, Path], qrels: QrelsColumns, opts: Optional[ReadOptions] = None
) -> Iterator[RunColumns]:
    """Columns of a run file grouped by query, one block at a time. Raises
    :class:`NotGrouped` when a query shows up again after another one, :class:`Irregular`
    when the columns are not separated by one space (and ``opts.collapsed`` is False)."""
    pa, _pc, _pv = pyarrow_modules()
    opts = opts or ReadOptions()
    path = Path(path)
    seen = _Seen()
    carry = None  # the rows of the last query of the previous block (it may go on)
    # ties="trec" orders by score: the rank column is not even converted
    for batch in read_batches(path, opts):
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
    opts: Optional[ReadOptions] = None,
    *,
    part_bytes: int = PART_BYTES,
) -> Iterator[RunColumns]:
    """Columns of a run file whose lines are not grouped by query: split by query into
    temporary Arrow files of about ``part_bytes`` of text each, then one part at a time."""
    pa, pc, _pv = pyarrow_modules()
    import pyarrow.ipc as ipc

    opts = opts or ReadOptions()
    path = Path(path)
    k = max(2, math.ceil(path.stat().st_size / part_bytes))
    part_of: Dict[bytes, int] = {}
    with tempfile.TemporaryDirectory(prefix="pytest-retrieval-run-") as tmp:
        writers: List = [None] * k
        try:
            for batch in read_batches(path, opts):
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
        _pa, pc, _pv = pyarrow_modules()
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


def _columns(path: Path, block: _Block, qrels: QrelsColumns, opts: ReadOptions, seen: _Seen) -> RunColumns:
    """One block's query groups as columns: each group in rank order (by score with
    ``ties="trec"``, else by the rank column), duplicates refused, judged documents coded."""
    pa, _pc, _pv = pyarrow_modules()
    qids, unjudged = _block_queries(path, block, qrels, opts, seen)
    doc, score = _checked_columns(path, block.table)
    offsets = np.append(block.starts, block.n).astype(np.int64)
    seg_len = np.diff(offsets)
    trec = opts.ties == "trec"
    order = _rank_order(block, score, seg_len, trec)
    if order is not None:
        doc = doc.take(pa.array(order))
        score = score[order]

    fp = fingerprints(doc)
    check_duplicates(path, fp, None, seg_len, doc, qids)

    judged_rows, judged_codes = judged_docs(doc, fp, qrels)
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


def _block_queries(
    path: Path, block: _Block, qrels: QrelsColumns, opts: ReadOptions, seen: _Seen
) -> Tuple[List[str], List[str]]:
    """(the block's query ids, those the qrels do not judge and that were not reported yet).
    A query met again after another one raises :class:`NotGrouped`."""
    pa, _pc, _pv = pyarrow_modules()
    raw_qids = block.qid.take(pa.array(block.starts)).to_pylist()
    _mark_finished(raw_qids, seen)
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
    return qids, unjudged


def _mark_finished(raw_qids: List[bytes], seen: _Seen) -> None:
    """The block's queries are read; one read before means the file is not grouped."""
    for q in raw_qids:
        if q in seen.finished:
            raise NotGrouped()
        seen.finished.add(q)
    if len(set(raw_qids)) != len(raw_qids):  # pragma: no cover (adjacent groups differ)
        raise NotGrouped()


def _checked_columns(path: Path, table) -> Tuple[Any, np.ndarray]:
    """(doc ids, scores) of a block: ids UTF-8 text and no NaN score, as the line reader wants."""
    pa, _pc, _pv = pyarrow_modules()
    doc = table.column("doc").combine_chunks()
    try:  # ids are compared as bytes, but a file that is not UTF-8 is refused as the line reader does
        doc.cast(pa.string())
    except pa.ArrowInvalid:
        precise_error(path, "a document id is not UTF-8 text")
    score = table.column("score").to_numpy()
    if np.isnan(score).any():
        precise_error(path, "a score is NaN")
    return doc, score


def _rank_order(block: _Block, score: np.ndarray, seg_len: np.ndarray, trec: bool) -> Optional[np.ndarray]:
    """The rows in rank order within each query, or None when the file is already in it."""
    starts = block.starts
    boundary = np.zeros(max(block.n - 1, 0), dtype=bool)
    boundary[starts[1:] - 1] = True
    if trec:
        s32 = score.astype(np.float32)
        out_of_order = ((s32[1:] > s32[:-1]) & ~boundary).any()
        return np.lexsort((-s32, _seg_ids(seg_len))) if out_of_order else None
    rank = block.table.column("rank").to_numpy()
    out_of_order = ((rank[1:] < rank[:-1]) & ~boundary).any()
    return (
        np.lexsort((rank, _seg_ids(seg_len))) if out_of_order else None
    )  # stable: file order on equal ranks


def _seg_ids(seg_len: np.ndarray) -> np.ndarray:
    """The query (segment) of every row; only built when a block must be re-ordered."""
    return np.repeat(np.arange(len(seg_len), dtype=np.int64), seg_len)


class _ArrowDocs:
    def __init__(self, doc):
        self.doc = doc

    def between(self, seg: int, lo: int, hi: int) -> List[bytes]:
        return self.doc.slice(lo, hi - lo).to_pylist()
