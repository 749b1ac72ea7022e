"""The judge's answers on disk: an append-only JSONL file, one line per answer.

Keyed by sha256 of (judge id, prompt version, sha256 of the query text, sha256 of the
document text as sent). A line holds a ``grade`` (``judge llm``) or, for other questions
asked through the same loop (``judge synth``'s generated questions), a ``value``. Each answer is appended and flushed (and fsynced) as it arrives,
so a crash or Ctrl-C loses at most the requests in flight, and a rerun asks only what is
not cached. A torn last line (crash mid-write) is skipped with a warning. Failures are
appended too (``grade: null``, for the audit trail) but are not cache hits: a rerun asks
them again. One process writes a cache file at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, TextIO, Union

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["JudgeCache"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _answered(rec: Dict[str, Any]) -> bool:
    """A cache hit: a grade 0-3, or another answer read by the caller's parser (``value``)."""
    g = rec.get("grade")
    if isinstance(g, int) and not isinstance(g, bool):
        return 0 <= g <= 3
    return g is None and rec.get("value") is not None and not rec.get("error")


class JudgeCache:
    """Append-only JSONL cache of judge answers (see the module docstring)."""

    def __init__(self, path: PathLike, *, fsync: bool = True):
        self.path = Path(path)
        self.fsync = fsync
        self._grades: Dict[str, Dict[str, Any]] = {}
        self.skipped_lines: List[int] = []
        self._lock = threading.Lock()
        self._fh: Optional[TextIO] = None
        self._load()

    @staticmethod
    def key(judge_id: str, prompt_version: str, query: str, document: str) -> str:
        return _sha("\0".join([judge_id, prompt_version, _sha(query), _sha(document)]))

    def _load(self) -> None:
        if not self.path.exists():
            return
        from ...io.lines import check_data_file

        check_data_file(self.path)  # a folder, FIFO or device (/dev/zero): one line, never read
        with open(self.path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    rec = json.loads(raw)
                    key = rec["key"]
                except (ValueError, KeyError, TypeError):
                    self.skipped_lines.append(n)
                    continue
                if _answered(rec):
                    self._grades[key] = rec
        if self.skipped_lines:
            warnings.warn(
                f"{self.path}: skipped {len(self.skipped_lines)} unreadable line(s) "
                f"(e.g. line {self.skipped_lines[0]}; a crash mid-write?); those pairs "
                f"will be asked again",
                stacklevel=2,
            )

    def __len__(self) -> int:
        return len(self._grades)

    def get(self, key: str) -> Optional[Dict[str, Any]]:
        return self._grades.get(key)

    def put(self, record: Dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            fh = self._fh if self._fh is not None else self._open()
            fh.write(line)
            fh.flush()
            if self.fsync:
                os.fsync(fh.fileno())
            if _answered(record):
                self._grades[record["key"]] = record

    def _open(self) -> TextIO:
        """Open the file for appending, after a newline if its last line is torn."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                torn = fh.read(1) != b"\n"
        self._fh = open(self.path, "a", encoding="utf-8")
        if torn:  # never glue a new record onto a torn last line
            self._fh.write("\n")
        return self._fh

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
