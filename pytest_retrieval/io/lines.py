"""Line readers shared by every judgments, corpus, tags and run file: size limits, UTF-8
lines, JSONL objects, and the field helpers whose errors name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Mapping, Tuple

from ..errors import ConfigError
from .grades import grade_of
from .ids import as_id

MAX_DATA_BYTES = 8 * 1024**3  # a judgments, corpus, run or tags file
MAX_LINE_CHARS = 64 * 1024**2  # one line of such a file


def check_data_file(path: Path) -> int:
    """The size of ``path``, a regular file of at most ``MAX_DATA_BYTES``; a missing file, a
    directory, a device, FIFO or socket, or a larger file is one ``ConfigError`` naming it."""
    import os
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ConfigError("file not found", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    except ValueError:  # os.stat refuses a path holding a NUL byte (no file system has one)
        raise ConfigError("cannot read: a path cannot hold a NUL byte", file=str(path)) from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError("is a directory, expected a file", file=str(path))
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError("not a regular file (a device, FIFO or socket), expected a file", file=str(path))
    if st.st_size > MAX_DATA_BYTES:
        raise ConfigError(
            f"file is {st.st_size:,} bytes, over the limit of {MAX_DATA_BYTES:,} bytes", file=str(path)
        )
    return st.st_size


def read_lines(path: Path) -> Iterator[Tuple[int, str]]:
    """The non-blank lines of a regular UTF-8 text file (a leading BOM stripped), numbered.
    A device, FIFO or directory, a file over ``MAX_DATA_BYTES`` or a line over
    ``MAX_LINE_CHARS`` is one ``ConfigError`` naming the file (and line)."""
    check_data_file(path)
    n = 0
    try:
        with open(path, encoding="utf-8-sig", newline=None) as fh:
            while True:
                line = fh.readline(MAX_LINE_CHARS + 1)
                if not line:
                    break
                n += 1
                if len(line) > MAX_LINE_CHARS:
                    raise ConfigError(
                        f"line longer than {MAX_LINE_CHARS:,} characters", file=str(path), line=n
                    )
                line = line.rstrip("\n").rstrip("\r")
                if line.strip():
                    yield n, line
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None


def read_jsonl(path: Path) -> Iterator[Tuple[int, dict]]:
    for n, line in read_lines(path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON ({exc.msg})", file=str(path), line=n) from None
        if not isinstance(obj, dict):
            raise ConfigError("each line must be a JSON object", file=str(path), line=n)
        yield n, obj


QID_KEYS = ("_id", "id", "qid", "query_id", "query-id")
DOCID_KEYS = ("doc_id", "docid", "corpus_id", "corpus-id", "_id", "id")


def pick(obj: dict, names: Tuple[str, ...], path: Path, n: int, what: str):
    for name in names:
        if name in obj:
            return obj[name]
    raise ConfigError(f"missing {what} (one of: {', '.join(names)})", file=str(path), line=n)


def parse_id(value: object, path: Path, n: int, what: str) -> str:
    try:
        return as_id(value)
    except ValueError as exc:
        raise ConfigError(f"bad {what}: {exc}", file=str(path), line=n) from None


def parse_grade(value: Any, path: Path, n: int) -> int:
    """``grades.grade_of`` (trec_eval's reading), its ``ValueError`` one line naming the line."""
    try:
        return grade_of(value)
    except ValueError as exc:
        raise ConfigError(str(exc), file=str(path), line=n) from None


def no_duplicate(seen: Mapping[str, object], key: str, path: Path, n: int, what: str) -> None:
    if key in seen:
        raise ConfigError(f"duplicate {what} {key!r}", file=str(path), line=n)
