"""Benchmark: the embedded engine's language analyzers against OpenSearch's, on XQuAD-R
(``../shared/data/xquad-r``, 7 languages), both OpenSearch majors in one run.

    python benchmarks/language_agreement.py [--xquad PATH] [--engines os2,os3]

Token agreement: every corpus sentence, title and query of a language through the engine's
``_analyze`` (batched, ``tests/engines/analyze_batches.py``) and the embedded analyzer of the same
name: the share of texts whose terms are identical.

Retrieval agreement: BM25 (``text`` field, k1 1.2, b 0.75) with the language's analyzer, top 10,
on a throwaway index built by the backend as a suite builds it and on the embedded engine: mean
nDCG@10 of each, the mean of the per-query absolute difference, queries whose top 10 is
identical in order. Lucene stores document lengths in one byte (``SmallFloat``), bm25s exactly,
so near-ties can swap even where the terms agree (``backends/embedded/backend.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy

from pytest_retrieval.backends.base import BM25Spec  # noqa: E402
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend  # noqa: E402
from pytest_retrieval.backends.embedded.languages import named_analyzer  # noqa: E402
from pytest_retrieval.backends.opensearch import OpenSearchBackend  # noqa: E402
from pytest_retrieval.io.beir import load_beir  # noqa: E402
from pytest_retrieval.measures.metrics import evaluate  # noqa: E402
from pytest_retrieval.types import Query  # noqa: E402
from tests.engines.analyze_batches import engine_tokens, xquad_texts  # noqa: E402

LANGUAGES = [("ar", "arabic"), ("de", "german"), ("en", "english"), ("es", "spanish"), ("ru", "russian")]
LANGUAGES += [("th", "standard"), ("th", "thai"), ("zh", "cjk")]
URLS = {"os2": "http://127.0.0.1:19201", "os3": "http://127.0.0.1:19203"}


def token_row(folder: Path, analyzer: str, urls: Dict[str, str]) -> List[str]:
    texts = xquad_texts(folder)
    ours = [named_analyzer(analyzer).tokens(t) for t in texts]
    row = [folder.name, analyzer, f"{len(texts):,}"]
    for url in urls.values():
        same = sum(e == o for e, o in zip(engine_tokens(url, analyzer, texts), ours))
        row.append(f"{same / len(texts):.2%}")
    return row


def _ndcg(qrels, run) -> Dict[str, float]:
    return evaluate(qrels, run, ["ndcg@10"]).per_query["ndcg@10"]


def retrieval_row(folder: Path, analyzer: str, urls: Dict[str, str]) -> List[str]:
    js = load_beir(folder)
    docs = list(js.corpus.values()) if isinstance(js.corpus, dict) else list(js.corpus or [])
    queries = [Query(q, text) for q, text in js.queries.items()]
    spec = BM25Spec(fields=(("text", 1.0),), analyzer=(("text", analyzer),))
    embedded = EmbeddedBackend()
    embedded.prepare(docs, None)
    mine = embedded.search_batch(spec, queries, 10)
    base = _ndcg(js.qrels, mine)
    row = [folder.name, analyzer, f"{sum(base.values()) / len(base):.4f}"]
    for url in urls.values():
        backend = OpenSearchBackend({"hosts": [url]}, {"suite": f"xquad-{folder.name}"})
        try:
            backend.prepare(docs, None)
            theirs = backend.search_batch(spec, queries, 10)
        finally:
            backend.close()
        other = _ndcg(js.qrels, theirs)
        diff = sum(abs(base[q] - other.get(q, 0.0)) for q in base) / len(base)
        same = sum(mine[q].doc_ids == theirs.get(q).doc_ids for q in mine if theirs.get(q) is not None)
        row += [f"{sum(other.values()) / len(other):.4f}", f"{diff:.4f}", f"{same / len(mine):.1%}"]
    return row


def _table(header: List[str], rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--xquad", type=Path, default=ROOT.parent / "shared" / "data" / "xquad-r")
    parser.add_argument("--engines", default="os2,os3")
    args = parser.parse_args()
    urls = {k: URLS[k] for k in args.engines.split(",")}
    folders = [(args.xquad / lang, name) for lang, name in LANGUAGES]
    print(
        _table(
            ["lang", "analyzer", "texts"] + [f"identical {k}" for k in urls],
            [token_row(f, a, urls) for f, a in folders],
        )
    )
    print()
    header = ["lang", "analyzer", "embedded nDCG@10"]
    for k in urls:
        header += [f"{k} nDCG@10", f"{k} mean abs diff", f"{k} same top 10"]
    print(_table(header, [retrieval_row(f, a, urls) for f, a in folders]))


if __name__ == "__main__":
    main()
