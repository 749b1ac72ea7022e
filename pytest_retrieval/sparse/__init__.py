"""Learned sparse retrieval, the pure part (no I/O): the checks every sparse vector passes,
IDF applied query-side, and the efficiency facts a sparse model is judged on (issue #25).

``vectors``  checking {term: weight} vectors: one clear line per problem.
``weights``  document frequencies, IDF, the efficiency facts (non-zeros, FLOPS) and the
             share of the score mass carried by terms in more than half the documents.
"""

from .vectors import check_vectors, vocabulary_mismatch
from .weights import (
    COMMON_TERM_WARNING_SHARE,
    DocStats,
    SparseFacts,
    apply_idf,
    bm25_idf,
    common_term_share,
    doc_stats,
    sparse_facts,
)

# fmt: off
__all__ = [
    "COMMON_TERM_WARNING_SHARE", "DocStats", "SparseFacts", "apply_idf", "bm25_idf",
    "check_vectors", "common_term_share", "doc_stats", "sparse_facts", "vocabulary_mismatch",
]
# fmt: on
