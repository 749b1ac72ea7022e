"""A qrels file read into the metric engine's columns, by pyarrow when its format allows."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

import numpy as np

from ..errors import ConfigError
from ..measures.columnar import QrelsColumns
from .grades import GradeScale
from .lines import check_data_file
from .qrels import QrelsFormat, load_qrels
from .run_reader import pyarrow_modules


def read_qrels_columns(path: Union[str, Path], grades: Optional[GradeScale] = None) -> QrelsColumns:
    """Qrels file -> columns (formats and rules: ``io.qrels.load_qrels``, ``grades``
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
    if path.suffix.lower() == ".jsonl":
        return None
    with open(path, "rb") as fh:
        first = fh.readline().rstrip(b"\r\n")
        if first.startswith(b"#") or _has_comment(fh):
            return None  # comment lines: the line reader skips them
    if first.startswith(b"\xef\xbb\xbf") or not first.strip():
        return None  # a BOM or a blank first line: the line reader's rules
    try:
        text = first.decode("utf-8")
        fmt = QrelsFormat.detect(text, path, 1)
    except (UnicodeDecodeError, ConfigError):
        return None
    delimiter = "\t" if fmt.tab else " "
    if len(text.split(delimiter)) != fmt.columns:
        return None  # runs of whitespace: the line reader splits them
    names = [f"c{i}" for i in range(fmt.columns)]
    names[fmt.qid], names[fmt.did], names[fmt.grade] = "qid", "doc", "grade"
    return delimiter, names, fmt.header


def _has_comment(fh) -> bool:
    """Whether a line of the rest of the file starts with ``#``."""
    tail = b""
    while True:
        chunk = fh.read(1 << 22)
        if not chunk:
            return False
        if b"\n#" in tail + chunk:
            return True
        tail = chunk[-1:]


def _fast_qrels(path: Path, grades: Optional[GradeScale]) -> Optional[QrelsColumns]:
    layout = _qrels_layout(path)
    if layout is None:
        return None
    delimiter, names, header = layout
    pa, pc, pv = pyarrow_modules()
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
    if _empty_or_padded(qid, delimiter) or _empty_or_padded(doc, delimiter):
        return None  # empty or padded ids: the Python reader's rules and messages
    g = _scaled_grades(table.column("grade").to_numpy().astype(np.int64), grades)
    if g is None:
        return None  # a grade off the scale: load_qrels names its line
    return _qrels_from_codes(qid.dictionary_encode(), doc.dictionary_encode(), g)


def _empty_or_padded(ids, delimiter: str) -> bool:
    """An empty id, or (tab-separated) one with spaces around it."""
    _pa, pc, _pv = pyarrow_modules()
    if pc.any(pc.equal(pc.binary_length(ids), 0)).as_py():
        return True
    return delimiter == "\t" and pc.any(pc.not_equal(pc.utf8_trim_whitespace(ids), ids)).as_py()


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
    pa, pc, _pv = pyarrow_modules()
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
    # every query is scored (measures.aggregate decides which are averaged)
    no_relevant = [x for x, p in zip(qids, positive.tolist()) if not p]
    docs = pc.cast(denc.dictionary, pa.binary())
    return QrelsColumns._build(dict.fromkeys(qids), list(qids), no_relevant, docs, None, q, d, g)
