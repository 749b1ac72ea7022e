"""What ``judge synth`` writes: queries, qrels, tags and the provenance record (JSON: the
models, prompt versions and hashes, the seed and settings, the counts per drop reason, every
kept query with its source document and grades, and every dropped question with its reason)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Dict, Optional, TextIO, Union

from ...fileio import atomic_write
from .run import SynthResult

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["provenance", "write_synth"]


def provenance(result: SynthResult) -> Dict[str, Any]:
    dropped = result.dropped()
    return {
        "kind": "pytest-retrieval synthetic query set",
        "generator": result.generator,
        "checker": result.checker,
        "seed": result.spec.seed,
        "settings": dataclasses.asdict(result.spec),
        "documents": {
            "corpus": result.sample.corpus,
            "sampled": len(result.sample.docs),
            "too_short": result.sample.too_short,
            "left_out_by_budget": result.left_out_by_budget,
            "generation_failed": result.generation_failed,
            "strata": {k: {"available": a, "taken": t} for k, (a, t) in result.sample.strata.items()},
        },
        "counts": {
            "generated": result.generated,
            "kept": len(result.kept),
            "dropped": dropped,
            "extra_ignored": result.extra_ignored,
        },
        "queries": [
            {
                "id": c.qid,
                "text": c.text,
                "doc_id": c.doc.doc_id,
                "stratum": c.doc.stratum,
                "check_grade": c.check_grade,
            }
            for c in result.kept
        ],
        "dropped": [
            {"text": c.text, "doc_id": c.doc.doc_id, "reason": c.reason, "detail": c.detail}
            for c in result.candidates
            if c.reason is not None
        ],
    }


def write_synth(
    result: SynthResult,
    queries: PathLike,
    qrels: PathLike,
    tags: Optional[PathLike] = None,
    provenance_path: Optional[PathLike] = None,
) -> int:
    """Write the kept questions; returns how many."""
    from ..files import write_qrels, write_queries
    from ..sample import write_tags

    q, r, t = result.outputs()
    write_queries(q, queries)
    write_qrels(r, qrels)
    if tags is not None:
        write_tags(t, tags)
    if provenance_path is not None:
        record = provenance(result)

        def write(fh: TextIO) -> None:
            json.dump(record, fh, indent=2, ensure_ascii=False)
            fh.write("\n")

        atomic_write(Path(provenance_path), write)
    return len(q)
