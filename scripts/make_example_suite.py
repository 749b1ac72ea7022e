"""Build example_suite/data from the SciFact collection in ../shared (developer tool).

The example suite ships its own copy (a few hundred documents) so that it never needs
../shared. Selection, seeded and reproducible:
  * 100 queries drawn from the SciFact BEIR test split;
  * every document judged relevant for them;
  * hard negatives: for each query the 3 best-scoring non-relevant documents by BM25
    and the 3 best by MiniLM cosine over the full corpus (so the task stays realistic);
  * 100 further random documents.
Vectors are the precomputed all-MiniLM-L6-v2 rows of ../shared, copied for the subset.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import bm25s
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT.parent / "shared" / "data" / "scifact"
OUT = ROOT / "example_suite" / "data"
N_QUERIES, PER_QUERY, N_RANDOM, SEED = 100, 3, 100, 20261122


def main() -> None:
    rng = random.Random(SEED)
    corpus = [json.loads(l) for l in open(SRC / "corpus.jsonl", encoding="utf-8")]
    queries = {q["_id"]: q for q in map(json.loads, open(SRC / "queries.jsonl", encoding="utf-8"))}
    qrels: dict[str, dict[str, int]] = {}
    for line in open(SRC / "qrels" / "test.tsv").read().splitlines()[1:]:
        q, d, g = line.split("\t")
        qrels.setdefault(q, {})[d] = int(g)
    chosen = sorted(rng.sample(sorted(qrels, key=int), N_QUERIES), key=int)

    ids = [d["_id"] for d in corpus]
    texts = [f"{d['title']} {d['text']}" for d in corpus]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    emb = SRC / "embeddings" / "all-MiniLM-L6-v2"
    dvec = np.load(emb / "corpus.npy")
    dids = (emb / "corpus_ids.txt").read_text().split()
    qvec = np.load(emb / "queries.npy")
    qids = (emb / "query_ids.txt").read_text().split()
    drow = {d: i for i, d in enumerate(dids)}
    qrow = {q: i for i, q in enumerate(qids)}

    keep: set[str] = set()
    for q in chosen:
        rel = set(qrels[q])
        keep |= rel
        res, _ = retriever.retrieve(
            bm25s.tokenize([queries[q]["text"]], stopwords="en", show_progress=False),
            k=30,
            show_progress=False,
        )
        lex = [ids[i] for i in res[0] if ids[i] not in rel][:PER_QUERY]
        sims = dvec @ qvec[qrow[q]]
        dense = [dids[i] for i in np.argsort(-sims)[:30] if dids[i] not in rel][:PER_QUERY]
        keep |= set(lex) | set(dense)
    rest = sorted(set(ids) - keep, key=int)
    keep |= set(rng.sample(rest, N_RANDOM))

    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "vectors").mkdir(parents=True)
    docs = [d for d in corpus if d["_id"] in keep]
    with open(OUT / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps({"_id": d["_id"], "title": d["title"], "text": d["text"]}) + "\n")
    with open(OUT / "queries.jsonl", "w", encoding="utf-8") as fh:
        for q in chosen:
            fh.write(json.dumps({"_id": q, "text": queries[q]["text"]}) + "\n")
    with open(OUT / "qrels.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for q in chosen:
            for d, g in sorted(qrels[q].items()):
                fh.write(f"{q}\t{d}\t{g}\n")
    with open(OUT / "tags.tsv", "w") as fh:
        fh.write("query-id\ttags\n")
        for q in chosen:
            labels = {e["label"] for v in queries[q].get("metadata", {}).values() for e in v}
            tags = [t for t, l in (("supports", "SUPPORT"), ("contradicts", "CONTRADICT")) if l in labels]
            fh.write(f"{q}\t{','.join(tags) or 'unlabelled'}\n")
    np.save(OUT / "vectors" / "corpus.npy", dvec[[drow[d["_id"]] for d in docs]].astype(np.float32))
    (OUT / "vectors" / "corpus_ids.txt").write_text("\n".join(d["_id"] for d in docs) + "\n")
    np.save(OUT / "vectors" / "queries.npy", qvec[[qrow[q] for q in chosen]].astype(np.float32))
    (OUT / "vectors" / "query_ids.txt").write_text("\n".join(chosen) + "\n")
    print(
        f"{len(chosen)} queries, {len(docs)} documents, "
        f"{sum(len(qrels[q]) for q in chosen)} judgments -> {OUT}"
    )


if __name__ == "__main__":
    main()
