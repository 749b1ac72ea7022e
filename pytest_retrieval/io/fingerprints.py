"""64-bit fingerprints of the document ids of a run block: duplicates found and qrels
documents looked up without hashing every id in Python (see ``io.runfiles``)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Sequence

import numpy as np

from ..measures.columnar import QrelsColumns
from .run_reader import precise_error, pyarrow_modules

_MIX = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)
SEED = np.uint64(0x9E3779B97F4A7C15)
_BYTE_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def fingerprints(arr) -> np.ndarray:
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
        h = length.astype(np.uint64) * SEED
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


def check_duplicates(path: Path, fp, seg_id, seg_len, doc, qids: Sequence[str]) -> None:
    """A document twice in one query's lines is an error (see the module docstring).
    ``seg_id`` (the query of each row) may be None: derived from ``seg_len`` if needed."""
    n = len(fp)
    if n < 2:
        return
    length = int(seg_len[0])
    if (seg_len == length).all():  # every query the same length: sort each one (in cache)
        key = fp  # a row of the reshape is one query: no need to mix the query in
        ordered = np.sort(key.reshape(-1, length), axis=1)
        same = ordered[:, 1:] == ordered[:, :-1]
        if not same.any():
            return
        suspects = ordered[:, 1:][same]
    else:
        if seg_id is None:
            seg_id = np.repeat(np.arange(len(seg_len), dtype=np.int64), seg_len)
        with np.errstate(over="ignore"):
            key = fp ^ (seg_id.astype(np.uint64) * SEED)
        ordered = np.sort(key)
        same = ordered[1:] == ordered[:-1]
        if not same.any():
            return
        suspects = ordered[1:][same]
    if seg_id is None:
        seg_id = np.repeat(np.arange(len(seg_len), dtype=np.int64), seg_len)
    rows = np.flatnonzero(np.isin(key, suspects))
    seen: Dict[tuple, int] = {}
    for r in rows.tolist():
        k = (int(seg_id[r]), doc[r].as_py())
        if k in seen:
            did = k[1].decode("utf-8", "replace")
            precise_error(path, f"document {did!r} appears twice for query {qids[k[0]]!r}")
        seen[k] = r


def judged_docs(doc, fp: np.ndarray, qrels: QrelsColumns):
    """Rows of ``doc`` whose id is a qrels document, and its code. A bit table of the qrels'
    fingerprints lets the few candidates through; their fingerprint is found among the
    qrels' (sorted, searched once per block: no hash table rebuilt per block), and the ids
    are then compared as bytes, so the answer is exact."""
    pa, pc, _pv = pyarrow_modules()
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
        pa, _pc, _pv = pyarrow_modules()
        if isinstance(qrels.docs, pa.Array):
            qdocs = qrels.docs
        else:
            qdocs = pa.array([d.encode("utf-8") for d in qrels.docs], type=pa.binary())
        size = 1 << max(20, min(26, (16 * max(len(qrels.docs), 1) - 1).bit_length()))
        bits = np.zeros(size, dtype=bool)
        mask = np.uint64(size - 1)
        qfp = fingerprints(qdocs)
        bits[(qfp & mask).astype(np.intp)] = True
        order = np.argsort(qfp, kind="stable")
        qfp = qfp[order]
        unique_fp = not (qfp[1:] == qfp[:-1]).any()
        qrels.cache["arrow_docs"] = (qdocs, bits, mask, qfp, order.astype(np.int64), unique_fp)
    return qrels.cache["arrow_docs"]
