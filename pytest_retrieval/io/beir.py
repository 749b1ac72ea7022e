"""BEIR folders (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``) and BEIR's
``ignore_identical_ids`` (a hit whose doc id is its query id)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Optional, Tuple

from ..errors import ConfigError
from ..types import Ranking, Run
from .corpus import load_corpus
from .grades import GradeScale
from .judgment_set import JudgmentSet
from .qrels import load_qrels
from .queries import load_queries


def load_beir(
    folder: Path, split: str = "test", *, with_corpus: bool = True, grades: Optional[GradeScale] = None
) -> JudgmentSet:
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError("BEIR folder not found", file=str(folder))
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        have = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
        raise ConfigError(
            f"no qrels for split {split!r} (have: {', '.join(have) or 'none'})", file=str(qrels_path)
        )
    js = JudgmentSet(queries=load_queries(folder / "queries.jsonl"), qrels=load_qrels(qrels_path, grades))
    js.sources.update(queries=str(folder / "queries.jsonl"), qrels=str(qrels_path))
    if with_corpus:
        js.corpus = load_corpus(folder / "corpus.jsonl")
        js.sources["corpus"] = str(folder / "corpus.jsonl")
    return js


def without_self_hits(run: Mapping[str, Ranking], k: Optional[int] = None) -> Tuple[Run, int]:
    """``run`` without any hit whose doc id equals its query id (BEIR's
    ``ignore_identical_ids``), each ranking cut at ``k`` after the removal; and how many
    hits were removed."""
    out: Run = {}
    removed = 0
    for qid, ranking in run.items():
        if qid in ranking.doc_ids:
            keep = [(d, s) for d, s in zip(ranking.doc_ids, ranking.scores) if d != qid]
            removed += len(ranking.doc_ids) - len(keep)
            ranking = Ranking([d for d, _ in keep], [s for _, s in keep])
        out[qid] = ranking if k is None or len(ranking) <= k else ranking.top(k)
    return out, removed


def self_hit_share(run: Mapping[str, Ranking], qids: Iterable[str]) -> Tuple[int, int]:
    """(how many of ``qids`` have their own id as the rank-1 hit, how many ``qids``)."""
    qids = list(qids)
    top1 = sum(1 for q in qids if (r := run.get(q)) is not None and r.doc_ids and r.doc_ids[0] == q)
    return top1, len(qids)
