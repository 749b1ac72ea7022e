"""Per-query tags (strata) from TSV or JSONL."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Tuple

from ..errors import ConfigError
from .lines import QID_KEYS, parse_id, pick, read_jsonl, read_lines

SYNTHETIC_TAG = "synthetic"  # queries written by an LLM (``judge synth``); the summary counts them
HUMAN_TAG = "human"  # queries people typed (``judge sample`` from a query log)


def load_tags(path: Path) -> Dict[str, Tuple[str, ...]]:
    """Per-query tags (strata): TSV ``qid<TAB>tag1,tag2`` or JSONL ``{"id", "tags": [...]}``."""
    path = Path(path)
    return _jsonl_tags(path) if path.suffix.lower() == ".jsonl" else _tsv_tags(path)


def _jsonl_tags(path: Path) -> Dict[str, Tuple[str, ...]]:
    out: Dict[str, Tuple[str, ...]] = {}
    for n, obj in read_jsonl(path):
        qid = parse_id(pick(obj, QID_KEYS, path, n, "query id"), path, n, "query id")
        tags = pick(obj, ("tags", "tag"), path, n, "tags")
        if isinstance(tags, str):
            tags = [tags]
        if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
            raise ConfigError("tags must be a string or a list of strings", file=str(path), line=n)
        out[qid] = tuple(tags)
    return out


def _tsv_tags(path: Path) -> Dict[str, Tuple[str, ...]]:
    out: Dict[str, Tuple[str, ...]] = {}
    for n, line in read_lines(path):
        parts = line.split("\t")
        if len(parts) != 2:
            raise ConfigError("expected 'query_id<TAB>tag1,tag2'", file=str(path), line=n)
        if n == 1 and parts[0].lower() in ("query-id", "query_id", "qid", "id"):
            continue
        qid = parse_id(parts[0], path, n, "query id")
        out[qid] = tuple(t.strip() for t in parts[1].split(",") if t.strip())
    return out
