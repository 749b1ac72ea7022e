"""The regression zoo's data: one folder per (dataset, engine, change), holding the two suites the
zoo runs and the files they read (``benchmarks/regression_zoo.py`` runs them).

A case folder::

    retrieval_gate.yaml          the gated suite: the gate queries (a subsample), regression max_drop
    retrieval_full.yaml          every judged query, no gate: what a change really costs
    data/corpus.jsonl            symlink to ../shared, or the changed corpus
    data/queries.jsonl           symlink to ../shared
    data/qrels_gate.tsv, data/qrels_full.tsv
    vectors/{corpus,queries}.npy, vectors/{corpus,query}_ids.txt   symlinks, or changed vectors

Every path in the suites is relative, so a case folder is its base folder copied (symlinks kept)
and then changed; the baseline written in the base folder is copied in beside the gate suite.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np
import yaml

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
EMBEDDINGS = Path("embeddings") / "all-MiniLM-L6-v2"
ENGINE_URLS = {"elasticsearch": "http://127.0.0.1:19202"}
GATE_SPLIT = "test"  # SciFact 300 queries, NFCorpus 323: the gate's subsample
FULL_SPLITS = ("test", "dev", "train")  # every judged query: the cost of a change
MAX_DROP = 0.01  # docs/how-to/baselines.md: max_drop {ndcg@10: 0.01}
WINDOW = 100


@dataclass
class Case:
    """A case folder and the suites it holds, as dicts (written by :meth:`write`)."""

    root: Path
    gate: Dict[str, Any]
    full: Dict[str, Any]
    texts: Dict[str, str] = field(default_factory=dict)  # raw YAML text that replaces a suite

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def vectors(self) -> Path:
        return self.root / "vectors"

    def both(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """The two suites, for a change that applies to both alike."""
        return self.gate, self.full

    def write(self) -> None:
        for name, suite in (("retrieval_gate.yaml", self.gate), ("retrieval_full.yaml", self.full)):
            text = self.texts.get(name) or yaml.safe_dump(suite, sort_keys=False)
            (self.root / name).write_text(text, encoding="utf-8")

    def own(self, path: Path) -> Path:
        """``path`` (a symlink into ../shared) replaced by nothing: the caller writes a new file."""
        if path.is_symlink() or path.exists():
            path.unlink()
        return path


# ----------------------------------------------------------------------------- base folder


def read_qrels(folder: Path, splits: Tuple[str, ...]) -> Dict[str, Dict[str, str]]:
    out: Dict[str, Dict[str, str]] = {}
    for split in splits:
        path = folder / "qrels" / f"{split}.tsv"
        if not path.exists():
            continue
        with open(path, encoding="utf-8") as fh:
            next(fh)
            for line in fh:
                q, d, g = line.rstrip("\n").split("\t")
                out.setdefault(q, {})[d] = g
    return out


def write_qrels(path: Path, qrels: Mapping[str, Mapping[str, str]]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for q, judged in qrels.items():
            fh.write("".join(f"{q}\t{d}\t{g}\n" for d, g in judged.items()))


def suite_dicts(dataset: str, engine: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The gate suite and the full suite of the unchanged pipeline."""
    backend: Dict[str, Any] = {"type": engine}
    if engine != "embedded":
        backend["connection"] = {"hosts": [ENGINE_URLS[engine]]}
    common: Dict[str, Any] = {
        "judgments": {"queries": "data/queries.jsonl", "corpus": "data/corpus.jsonl"},
        "backend": backend,
        "embedder": {
            "type": "precomputed",
            "queries": "vectors/queries.npy",
            "query_ids": "vectors/query_ids.txt",
            "documents": "vectors/corpus.npy",
            "document_ids": "vectors/corpus_ids.txt",
        },
        "evaluation": {"metrics": ["ndcg@10", "recall@100"]},
        "retrievers": {
            "bm25": {"type": "bm25", "fields": ["title", "text"]},
            "dense": {"type": "knn", "similarity": "cosine"},
            "rrf": {"type": "rrf", "of": ["bm25", "dense"], "rank_constant": 60, "window": WINDOW},
            "weighted": {
                "type": "weighted",
                "of": ["bm25", "dense"],
                "weights": [0.3, 0.7],
                "window": WINDOW,
            },
        },
    }
    gate = {"suite": f"zoo-{dataset}-gate", **copy.deepcopy(common)}
    gate["judgments"]["qrels"] = "data/qrels_gate.tsv"
    gate["regression"] = {"max_drop": {"ndcg@10": MAX_DROP}}
    # every query of the collection as a canary (labels ignored): mean RBO@10 against the
    # baseline's rankings beside the relevance drop (issue #33; the JSON report's stability)
    gate["judgments"]["canary"] = "data/queries.jsonl"
    full = {"suite": f"zoo-{dataset}-full", **copy.deepcopy(common)}
    full["judgments"]["qrels"] = "data/qrels_full.tsv"
    # one always-met floor per retriever: the suite has items, so pytest runs it
    full["floors"] = {name: {"ndcg@10": 0.0} for name in common["retrievers"]}
    return gate, full


def build_base(root: Path, dataset: str, engine: str, shared: Path = SHARED) -> Case:
    """The unchanged case folder (rebuilt every time: it is cheap, symlinks mostly) from the BEIR
    folder ``shared / dataset``."""
    source = shared / dataset
    if root.exists():
        shutil.rmtree(root)
    (root / "data").mkdir(parents=True)
    (root / "vectors").mkdir()
    texts = {json.loads(line)["_id"] for line in open(source / "queries.jsonl", encoding="utf-8")}
    gate = {q: j for q, j in read_qrels(source, (GATE_SPLIT,)).items() if q in texts}
    full = {q: j for q, j in read_qrels(source, FULL_SPLITS).items() if q in texts}
    write_qrels(root / "data" / "qrels_gate.tsv", gate)
    write_qrels(root / "data" / "qrels_full.tsv", full)
    (root / "data" / "corpus.jsonl").symlink_to(source / "corpus.jsonl")
    (root / "data" / "queries.jsonl").symlink_to(source / "queries.jsonl")
    emb = source / EMBEDDINGS
    for name in ("corpus.npy", "corpus_ids.txt", "queries.npy", "query_ids.txt"):
        (root / "vectors" / name).symlink_to(emb / name)
    case = Case(root, *suite_dicts(dataset, engine))
    case.write()
    return case


def copy_case(base: Case, root: Path) -> Case:
    """A fresh copy of the base folder (symlinks kept), to be changed."""
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(base.root, root, symlinks=True)
    for name in ("junit.xml", "report.json", "pytest.log"):  # the base run's outputs
        (root / name).unlink(missing_ok=True)
    return Case(root, copy.deepcopy(base.gate), copy.deepcopy(base.full))


# ----------------------------------------------------------------------------- file edits


def read_corpus(case: Case) -> List[Dict[str, Any]]:
    with open(case.data / "corpus.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_corpus(case: Case, rows: List[Dict[str, Any]]) -> None:
    path = case.own(case.data / "corpus.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def judged_documents(case: Case) -> set:
    return {d for judged in read_qrels_file(case.data / "qrels_full.tsv").values() for d in judged}


def read_qrels_file(path: Path) -> Dict[str, Dict[str, str]]:
    out: Dict[str, Dict[str, str]] = {}
    with open(path, encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            q, d, g = line.rstrip("\n").split("\t")
            out.setdefault(q, {})[d] = g
    return out


def load_vectors(case: Case, which: str) -> Tuple[np.ndarray, List[str]]:
    """``which``: ``corpus`` or ``queries``; the matrix and its ids."""
    ids_name = "corpus_ids.txt" if which == "corpus" else "query_ids.txt"
    return np.load(case.vectors / f"{which}.npy"), (case.vectors / ids_name).read_text().split()


def save_vectors(case: Case, which: str, matrix: np.ndarray, ids: Optional[List[str]] = None) -> None:
    np.save(case.own(case.vectors / f"{which}.npy"), matrix)
    if ids is not None:
        ids_name = "corpus_ids.txt" if which == "corpus" else "query_ids.txt"
        case.own(case.vectors / ids_name).write_text("\n".join(ids) + "\n", encoding="utf-8")


def seeded(seed: int) -> random.Random:
    return random.Random(seed)
