"""A ``scipy.sparse.save_npz`` file checked before scipy builds a matrix on it.

``scipy.sparse.load_npz`` hands the stored arrays to the matrix constructor, which checks only
their lengths (``check_format(full_check=False)``): an index past the last column, a row pointer
that goes backwards or past the data, or a shape that disagrees with the arrays made a matrix
whose rows read other rows' weights, or an ``IndexError`` deep in scipy. Here the arrays are read
with ``numpy.load`` (``allow_pickle=False``: an object array is refused, never unpickled) and each
defect is one ``ConfigError`` line naming the file and the array. Covers the compressed formats
(``csr``, ``csc``) and ``coo``; other formats are left to scipy's own checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

from ...errors import ConfigError

__all__ = ["check_npz"]


def check_npz(path: Path) -> None:
    """One ``ConfigError`` for the first defect of the ``.npz`` matrix in ``path``."""
    import numpy as np

    where = str(path)
    try:
        with np.load(path, allow_pickle=False) as stored:
            arrays: Dict[str, Any] = {name: stored[name] for name in stored.files}
    except Exception as exc:  # noqa: BLE001 - zip, header and pickle errors alike: not an npz
        raise ConfigError(
            f"not a scipy sparse .npz matrix: {type(exc).__name__}: {exc}", file=where
        ) from None
    fmt = _format(arrays, where)
    shape = _shape(arrays, where)
    data = _array(arrays, "data", where)
    if data.dtype.kind not in "biuf":
        raise ConfigError(f"'data' holds {data.dtype} values, not numbers", file=where)
    if data.dtype.kind == "f" and not np.isfinite(data).all():
        bad = float(data[~np.isfinite(data)][0])
        raise ConfigError(f"'data' holds {bad!r}: every weight must be a finite number", file=where)
    if fmt in ("csr", "csc"):
        _compressed(arrays, fmt, shape, len(data), where)
    elif fmt == "coo":
        for name, bound in (("row", shape[0]), ("col", shape[1])):
            _indices(_array(arrays, name, where), name, bound, len(data), where)


def _format(arrays: Dict[str, Any], where: str) -> str:
    if "format" not in arrays:
        raise ConfigError("not a scipy sparse .npz matrix (no 'format' array)", file=where)
    raw = arrays["format"].item() if arrays["format"].shape == () else None
    fmt = raw.decode("ascii", "replace") if isinstance(raw, bytes) else str(raw)
    return fmt


def _shape(arrays: Dict[str, Any], where: str) -> Any:
    shape = _array(arrays, "shape", where)
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or (shape < 0).any():
        raise ConfigError(
            f"'shape' is {shape.tolist()!r}, not (rows, columns) of two integers >= 0", file=where
        )
    return [int(v) for v in shape]


def _array(arrays: Dict[str, Any], name: str, where: str) -> Any:
    if name not in arrays:
        raise ConfigError(f"not a scipy sparse .npz matrix (no {name!r} array)", file=where)
    value = arrays[name]
    if name != "shape" and value.ndim != 1:
        raise ConfigError(f"{name!r} has {value.ndim} dimensions, expected 1", file=where)
    return value


def _compressed(arrays: Dict[str, Any], fmt: str, shape: Any, nnz: int, where: str) -> None:
    """CSR (rows are the major axis) or CSC (columns are)."""
    import numpy as np

    major, minor = (shape[0], shape[1]) if fmt == "csr" else (shape[1], shape[0])
    axis = "rows" if fmt == "csr" else "columns"
    indptr = _array(arrays, "indptr", where)
    if indptr.dtype.kind not in "iu":
        raise ConfigError(f"'indptr' holds {indptr.dtype} values, not integers", file=where)
    if len(indptr) != major + 1:
        raise ConfigError(
            f"'indptr' has {len(indptr)} entries for {major} {axis} (shape {tuple(shape)}); expected {major + 1}",
            file=where,
        )
    if len(indptr) and int(indptr[0]) != 0:
        raise ConfigError(f"'indptr' starts at {int(indptr[0])}, not 0", file=where)
    steps = np.diff(indptr.astype(np.int64))
    if (steps < 0).any():
        at = int(np.flatnonzero(steps < 0)[0])
        raise ConfigError(
            f"'indptr' decreases at entry {at + 1} ({int(indptr[at])} -> {int(indptr[at + 1])}): "
            "it must be non-decreasing",
            file=where,
        )
    if len(indptr) and int(indptr[-1]) != nnz:
        raise ConfigError(f"'indptr' ends at {int(indptr[-1])} but 'data' holds {nnz} values", file=where)
    _indices(_array(arrays, "indices", where), "indices", minor, nnz, where)


def _indices(indices: Any, name: str, bound: int, nnz: int, where: str) -> None:
    if indices.dtype.kind not in "iu":
        raise ConfigError(f"{name!r} holds {indices.dtype} values, not integers", file=where)
    if len(indices) != nnz:
        raise ConfigError(f"{name!r} has {len(indices)} entries but 'data' holds {nnz} values", file=where)
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= bound):
        bad = int(indices.min()) if int(indices.min()) < 0 else int(indices.max())
        raise ConfigError(
            f"{name!r} holds {bad}, outside the matrix's 0..{bound - 1} (shape says {bound})", file=where
        )
