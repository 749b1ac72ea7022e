"""The annotation queue (``--retrieval-export-unjudged``): every (query, document) in a
retriever's top k that has no judgment, as JSONL for ``pytest-retrieval judge import``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Sequence

from ..fileio import atomic_write

__all__ = ["write_unjudged"]


def write_unjudged(path: Path, states: Sequence[Any], k: int = 10) -> int:
    """JSONL annotation queue: every (query, doc) in any retriever's top k with no judgment."""
    rows: Dict[tuple, Dict[str, Any]] = {}
    for state in states:
        result = state.result
        if result is None:
            continue
        texts = result.judgments.queries
        for name in result.retrievers:
            for qid, doc, rank in result.unjudged(name, k):
                row = rows.setdefault(
                    (result.suite.name, qid, doc),
                    {
                        "suite": result.suite.name,
                        "query_id": qid,
                        "query": texts.get(qid, ""),
                        "doc_id": doc,
                        "retrievers": {},
                    },
                )
                row["retrievers"][name] = rank
    atomic_write(path, lambda fh: fh.writelines(json.dumps(r) + "\n" for r in rows.values()), fsync=False)
    return len(rows)
