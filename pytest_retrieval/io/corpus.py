"""Documents from a JSONL corpus: every string field other than the id is searchable."""

from __future__ import annotations

from pathlib import Path
from typing import List, Set

from ..errors import ConfigError
from ..types import Document
from .lines import parse_id, pick, read_jsonl


def load_corpus(path: Path) -> List[Document]:
    """Documents from JSONL: ``{"_id"|"id"|"doc_id", "title"?, "text", ...}``.

    Every string field other than the id becomes a searchable field.
    """
    path = Path(path)
    docs: List[Document] = []
    seen: Set[str] = set()
    for n, obj in read_jsonl(path):
        did = parse_id(
            pick(obj, ("_id", "id", "doc_id", "docid"), path, n, "document id"), path, n, "document id"
        )
        if did in seen:
            raise ConfigError(f"duplicate document id {did!r}", file=str(path), line=n)
        seen.add(did)
        fields = {
            k: v for k, v in obj.items() if isinstance(v, str) and k not in ("_id", "id", "doc_id", "docid")
        }
        if not fields:
            raise ConfigError("document has no text field", file=str(path), line=n)
        docs.append(Document(did, fields))
    if not docs:
        raise ConfigError("no documents in file", file=str(path))
    return docs
