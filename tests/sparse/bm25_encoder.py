"""A deterministic learned-sparse stand-in for tests and benchmarks: BM25 term weights.

Documents: each analysed term's BM25 saturation ``tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``
(avgdl over the texts of the call: the whole corpus, as the runner encodes it in one call);
queries: 1 per distinct term. With ``idf: bm25_plus1`` the sparse dot product is BM25 itself."""

from __future__ import annotations

import re
from typing import Dict, List, Sequence

K1, B = 1.2, 0.75
WORD = re.compile(r"\w+")


def terms(text: str) -> List[str]:
    return WORD.findall(text.lower())


def documents(texts: Sequence[str]) -> List[Dict[str, float]]:
    tokens = [terms(t) for t in texts]
    avgdl = sum(len(t) for t in tokens) / max(1, len(tokens))
    out = []
    for words in tokens:
        tf: Dict[str, int] = {}
        for w in words:
            tf[w] = tf.get(w, 0) + 1
        norm = K1 * (1 - B + B * len(words) / avgdl) if avgdl else K1
        out.append({w: n * (K1 + 1) / (n + norm) for w, n in tf.items()})
    return out


def queries(texts: Sequence[str]) -> List[Dict[str, float]]:
    return [dict.fromkeys(terms(t), 1.0) for t in texts]


def negative(texts: Sequence[str]) -> List[Dict[str, float]]:
    return [{"solar": -1.0} for _ in texts]


def empty_queries(texts: Sequence[str]) -> List[Dict[str, float]]:
    return [{} if "flood" in t else dict.fromkeys(terms(t), 1.0) for t in texts]


def numbers(texts: Sequence[str]) -> List[Dict[str, float]]:
    return [{str(len(t) + i): 1.0} for i, t in enumerate(texts)]


def rerank_by_length(query: str, docs: Sequence[str]) -> List[float]:
    """A reranker for tests: shorter documents first."""
    return [-float(len(d)) for d in docs]
