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
  line reader of ``io.trec`` (file and line) when the file is under 256 MB, else
  by pyarrow's message.
* Grouped by query (every line of a query together, as trec_eval's output and every
  engine's run): streamed block by block, a query never split across two evaluated groups.
* Not grouped: detected on the way (a query shows up again after another one); the file is
  then split into temporary Arrow files by query (each ~256 MB of text), and each part is
  evaluated on its own: memory stays bounded, at the cost of writing the run once to the
  temporary directory.
* A document twice for one query is an error, as in trec_eval (``form_res_rels.c``,
  "duplicate docs") and ``io.trec.load_trec_run``. Found without hashing every id
  in Python: a 64-bit fingerprint of each id (its bytes read 8 at a time) sorted within the
  block, and equal fingerprints compared as bytes.
* With ``ties="trec"`` the rank column is not read (trec_eval's ``get_trec_results.c``
  keeps it as a string it never uses; the order is the scores'); it is 40% of the parse.
* Document ids are compared as bytes (trec_eval's ``strcmp``); the file must be UTF-8 text
  as for the line reader (checked per block at C speed), a leading byte order mark dropped.
* The file checks are the line reader's (``io.lines.check_data_file``): a regular
  file of at most ``MAX_DATA_BYTES``.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Iterable, Mapping, Optional, Union

import numpy as np

from ..errors import ConfigError, RetrievalError
from ..measures.columnar import QrelsColumns
from ..measures.metrics import Evaluation, Metric, evaluate
from ..types import Ranking, Run
from .fingerprints import check_duplicates, fingerprints
from .grades import GradeScale
from .qrels_columns import read_qrels_columns
from .run_columns import PART_BYTES, NotGrouped, partitioned_run_columns, stream_run_columns
from .run_reader import (
    BLOCK_BYTES,
    Irregular,
    ReadOptions,
    RunFileFacts,
    precise_error,
    pyarrow_modules,
    read_batches,
)
from .trec import load_trec_run

__all__ = ["evaluate_files", "read_run"]


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
    average_over: str = "relevant",
    depth: Optional[int] = None,
    gains: Optional[Mapping[int, float]] = None,
) -> Evaluation:
    """``evaluate`` on files, streaming the run (see the module docstring).

    ``grades``: how the qrels' grades are mapped and checked (``read_qrels_columns``).
    ``ignore_identical_ids`` drops every hit whose doc id is its query id (BEIR's
    ``ignore_identical_ids``). A run that shares no query id with the qrels is an error
    (every metric would be 0). ``facts``, when given, is filled in (see
    :class:`RunFileFacts`). ``average_over``, ``depth``, ``gains``: see
    :func:`~pytest_retrieval.measures.metrics.evaluate`."""
    qc = qrels if isinstance(qrels, QrelsColumns) else read_qrels_columns(qrels, grades)
    options = dict(gain=gain, ties=ties, relevance_threshold=relevance_threshold)
    options.update(average_over=average_over, depth=depth, gains=gains)
    grouped, collapsed = True, False
    while True:
        read = RunFileFacts()
        opts = ReadOptions(ties, block_bytes, collapsed, ignore_identical_ids, read)
        try:
            if grouped:
                source = stream_run_columns(run, qc, opts)
            else:
                source = partitioned_run_columns(run, qc, opts, part_bytes=part_bytes)
            ev = evaluate(qc, source, metrics, **options)  # type: ignore[arg-type]
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


def read_run(path: Union[str, Path]) -> Run:
    """A TREC run file as a ``Run``: what ``io.trec.load_trec_run`` returns (queries in
    order of first appearance, each ranking by the rank column then file order, a document
    twice for a query an error), parsed by pyarrow. A file the fast reader refuses is read by
    ``load_trec_run`` itself, so the result or the error (file and line) is always its own."""
    path = Path(path)
    try:
        return _read_run(path, ReadOptions(ties="engine"))
    except Irregular:
        pass
    try:
        return _read_run(path, ReadOptions(ties="engine", collapsed=True))
    except ConfigError:
        return load_trec_run(path)


def _read_run(path: Path, opts: ReadOptions) -> Run:
    pa, _pc, _pv = pyarrow_modules()
    table = pa.Table.from_batches(list(read_batches(path, opts))).combine_chunks()
    enc = table.column("qid").chunk(0).dictionary_encode()  # codes in order of first appearance
    codes = enc.indices.to_numpy().astype(np.int64)
    score = table.column("score").to_numpy()
    if np.isnan(score).any():
        precise_error(path, "a score is NaN")
    order = np.lexsort((table.column("rank").to_numpy(), codes))  # stable: file order on equal ranks
    seg_len = np.bincount(codes, minlength=len(enc.dictionary))
    try:
        qids = [q.decode("utf-8") for q in enc.dictionary.to_pylist()]
    except UnicodeDecodeError as exc:
        raise ConfigError(f"a query id is not UTF-8 text ({exc.reason})", file=str(path)) from None
    doc = table.column("doc").chunk(0).take(pa.array(order))
    check_duplicates(path, fingerprints(doc), codes[order], seg_len, doc, qids)
    try:
        docs = doc.cast(pa.string()).to_pylist()
    except pa.ArrowInvalid:
        precise_error(path, "a document id is not UTF-8 text")
    scores = score[order].tolist()
    ends = np.cumsum(seg_len).tolist()
    starts = [0] + ends[:-1]
    return {q: Ranking(docs[a:b], scores[a:b]) for q, a, b in zip(qids, starts, ends)}
