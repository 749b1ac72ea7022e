"""The one check of a command's output paths, before any work or paid request (issue #32).

Every command (``judge sample/synth/llm/pool/import/clicks``, ``report``, ``compare``) and the
pytest ``--retrieval-*`` outputs name their outputs and inputs here. Refused, in one line naming
the options and the path:

* an output that is one of the inputs (``judge sample log.csv --out log.csv`` overwrote the log
  it read): compared by resolved path, and by ``os.path.samefile`` for files that exist (a hard
  link or another spelling through a symbolic link is the same file);
* two outputs that are one file (``--out x --tags-out x``: the second write replaced the first);
* an extension that names another format than the one written (``--out q.csv`` got JSON lines).
  An extension the table does not know (``.qrels``, ``.out``, none) claims no format: accepted.

Pure but for ``os.stat``: it reads no file and writes none (the folders are made by
``check_output_file`` and the writers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Optional, Sequence, Tuple

__all__ = ["FORMATS", "Output", "OutputPathError", "check_outputs"]


class OutputPathError(ValueError):
    """An output path that would overwrite an input or another output, or whose extension names
    another format than the one written. Its message is one line."""


#: what each kind of output writes -> the extensions that name it. The first is the one advised.
FORMATS: Dict[str, Tuple[str, ...]] = {
    "queries": (".jsonl", ".tsv", ".txt"),  # judge/files.write_queries: .tsv/.txt TSV, else JSONL
    "tags": (".tsv", ".jsonl", ".txt"),  # judge/sample.write_tags: .jsonl JSONL, else TSV
    "qrels": (".txt", ".jsonl", ".tsv", ".trec", ".qrels"),  # judge/files.write_qrels: else TREC
    "annotations": (".csv", ".tsv", ".jsonl"),  # judge pool
    "jsonl": (".jsonl", ".ndjson"),
    "json": (".json",),
    "tsv": (".tsv", ".txt"),
    "markdown": (".md", ".markdown", ".txt"),
    "html": (".html", ".htm"),
    "openmetrics": (".txt", ".prom", ".openmetrics"),
}
#: the extensions that claim a format: one not among an output's own is refused
_CLAIMED = {ext for exts in FORMATS.values() for ext in exts} | {
    ".json",
    ".csv",
    ".xml",
    ".yaml",
    ".yml",
    ".run",
    ".gz",
    ".bz2",
    ".xz",
    ".zst",
    ".zip",
    ".parquet",
    ".pdf",
    ".png",
    ".svg",
}
_WHAT = {
    "queries": "queries (JSON lines, or TSV)",
    "tags": "tags (TSV, or JSON lines)",
    "qrels": "qrels (TREC, BEIR TSV or JSON lines)",
    "annotations": "an annotation file (CSV, TSV or JSON lines)",
    "jsonl": "JSON lines",
    "json": "JSON",
    "tsv": "TSV",
    "markdown": "Markdown",
    "html": "HTML",
    "openmetrics": "OpenMetrics text",
}


@dataclass(frozen=True)
class Output:
    """One output of a command: the option that names it, its path (None: not given) and the
    kind of what is written there (a key of :data:`FORMATS`; None: any extension)."""

    option: str
    path: Optional[str]
    kind: Optional[str] = None


Input = Tuple[str, Optional[str]]  # (what names it: "--qrels", "the log"; its path)


def check_outputs(outputs: Sequence[Output], inputs: Iterable[Input] = ()) -> None:
    """Raise :class:`OutputPathError` (one line) when an output is an input, two outputs are
    one file, or an output's extension names another format (checked in that order)."""
    given = [o for o in outputs if o.path]
    read = [(option, str(path)) for option, path in inputs if path]
    for out in given:
        for option, path in read:
            if _same_file(str(out.path), path):
                raise OutputPathError(
                    f"{out.option} {out.path}: the same file as {option} {path}, which is read: "
                    "writing it would overwrite the input; write to another file"
                )
    for i, a in enumerate(given):
        for b in given[i + 1 :]:
            if _same_file(str(a.path), str(b.path)):
                raise OutputPathError(
                    f"{a.option} {a.path} and {b.option} {b.path}: one file for two outputs "
                    "(the second would replace the first); give each its own file"
                )
    for out in given:
        _check_extension(out)


def _check_extension(out: Output) -> None:
    if out.kind is None:
        return
    allowed = FORMATS[out.kind]
    suffix = _suffix(str(out.path))
    if suffix in _CLAIMED and suffix not in allowed:
        raise OutputPathError(
            f"{out.option} {out.path}: {out.option} writes {_WHAT[out.kind]}, not what {suffix} names; "
            f"use a {' or '.join(allowed)} file name"
        )


def _suffix(path: str) -> str:
    return Path(path).suffix.lower()


def _same_file(a: str, b: str) -> bool:
    """Same path once resolved, or (both existing) the same file: a hard link, a symbolic link."""
    if _resolved(a) == _resolved(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one does not exist (yet): no file to share
        return False


def _resolved(path: str) -> str:
    try:
        return os.path.normcase(str(Path(path).expanduser().resolve(strict=False)))
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte
        return os.path.normcase(os.path.abspath(path))
