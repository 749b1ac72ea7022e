"""Queries from JSONL (``{"_id"|"id"|"qid", "text"|"query"}``) or TSV (``qid<TAB>text``)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

from ..errors import ConfigError
from .lines import QID_KEYS, no_duplicate, parse_id, pick, read_jsonl, read_lines


def load_queries(path: Path) -> Dict[str, str]:
    """Queries from JSONL (``{"_id"|"id"|"qid", "text"|"query"}``) or TSV (``qid<TAB>text``)."""
    path = Path(path)
    out: Dict[str, str] = {}
    if path.suffix.lower() in (".tsv", ".txt"):
        for n, line in read_lines(path):
            parts = line.split("\t")
            if len(parts) < 2:
                raise ConfigError("expected 'query_id<TAB>text'", file=str(path), line=n)
            if n == 1 and parts[0].lower() in ("query-id", "query_id", "qid", "id"):
                continue
            qid = parse_id(parts[0], path, n, "query id")
            no_duplicate(out, qid, path, n, "query id")
            out[qid] = "\t".join(parts[1:])
    else:
        for n, obj in read_jsonl(path):
            qid = parse_id(pick(obj, QID_KEYS, path, n, "query id"), path, n, "query id")
            text = pick(obj, ("text", "query", "title"), path, n, "query text")
            if not isinstance(text, str):
                raise ConfigError("query text must be a string", file=str(path), line=n)
            no_duplicate(out, qid, path, n, "query id")
            out[qid] = text
    if not out:
        raise ConfigError("no queries in file", file=str(path))
    return out
