"""The learned sparse side of a suite run (issue #25): each sparse retriever's encoder, the
documents' vectors checked and handed to the backend once per encoder (``prepare_sparse``),
their statistics (df, non-zeros), and the queries' vectors, checked, with IDF applied
query-side when the retriever asks for it, so every backend ranks alike."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ..backends.base import Backend, prepare_sparse
from ..config.load import Suite
from ..errors import ConfigError
from ..safe_names import one_line
from ..sparse import (
    DocStats,
    SparseFacts,
    apply_idf,
    check_vectors,
    doc_stats,
    sparse_facts,
    vocabulary_mismatch,
)
from ..types import DocSparseVectors, Document, Query


def sparse_retrievers(suite: Suite) -> List[str]:
    """The suite's ``type: sparse`` retrievers, in file order."""
    return [n for n, r in suite.model.retrievers.items() if r.type == "sparse"]


class SparseLeaves:
    """The sparse retrievers of one suite: made once per run (once per session with a shared
    backend), so the documents are encoded once and each query once per encoder."""

    def __init__(self, suite: Suite, progress: Callable[[str], None]):
        self.suite = suite
        self.progress = progress
        self._stats: Dict[str, Optional[DocStats]] = {}  # encoder id -> the documents' statistics
        self._raw: Dict[str, Dict[Tuple[str, str], Dict[str, float]]] = {}  # encoder id -> (qid, text) -> raw
        self._sent: Dict[
            str, Dict[Tuple[str, str], Dict[str, float]]
        ] = {}  # retriever -> (qid, text) -> sent
        self._checked_vocabulary: Dict[str, bool] = {}

    @contextlib.contextmanager
    def _at(self, name: str) -> Iterator[None]:
        """A ConfigError without a place is located at the retriever's ``sparse_encoder``."""
        try:
            yield
        except ConfigError as exc:
            if exc.key or exc.file and str(exc.file) == str(self.suite.path):
                raise
            detail = exc.detail + (
                f" ({one_line(str(exc.file))}{':' + str(exc.line) if exc.line else ''})" if exc.file else ""
            )
            raise self.suite.error(("retrievers", name, "sparse_encoder"), detail) from None

    def encoder(self, name: str) -> Any:
        return self.suite.sparse_encoder(name)

    def encoders(self) -> Dict[str, str]:
        """retriever -> its encoder's id."""
        return {n: self.encoder(n).id for n in sparse_retrievers(self.suite)}

    # ---- documents ---------------------------------------------------------------------

    def prepare(self, backend: Backend, documents: Optional[Sequence[Document]]) -> None:
        """Every encoder's document vectors, checked, given to ``backend`` (once per encoder) and
        counted. Without ``documents`` (an existing index holds the vectors) the statistics come
        from a precomputed documents file when there is one."""
        done: Dict[str, str] = {}
        for name in sparse_retrievers(self.suite):
            with self._at(name):
                encoder = self.encoder(name)
                if encoder.id in done:
                    continue
                done[encoder.id] = name
                self._stats[encoder.id] = self._documents(backend, encoder, documents)

    def _documents(
        self, backend: Backend, encoder: Any, documents: Optional[Sequence[Document]]
    ) -> Optional[DocStats]:
        from ..models.sparse import encode_corpus

        if documents is None:
            every = getattr(encoder, "all_documents", lambda: None)()
            if every is None:
                return None
            ids, raw = every
            vectors, _ = check_vectors(ids, raw, "document", encoder.id)
            return doc_stats(vectors, encoder.id)
        self.progress(f"encoding {len(documents)} documents ({encoder.id})")
        got = encode_corpus(encoder, documents)
        vectors, _ = check_vectors([str(i) for i in got.doc_ids], list(got.vectors), "document", encoder.id)
        stats = doc_stats(vectors, encoder.id)
        prepare_sparse(backend, DocSparseVectors(list(got.doc_ids), vectors, encoder.id))
        return stats

    def stats(self, name: str) -> Optional[DocStats]:
        return self._stats.get(self.encoder(name).id)

    # ---- queries -----------------------------------------------------------------------

    def queries(self, name: str, queries: Sequence[Query]) -> List[Query]:
        """``queries`` with the retriever's sparse vectors (IDF applied when it asks for it)."""
        with self._at(name):
            return self._queries(name, queries)

    def _queries(self, name: str, queries: Sequence[Query]) -> List[Query]:
        encoder = self.encoder(name)
        idf = self.suite.model.retrievers[name].idf  # type: ignore[union-attr]
        raw = self._raw_vectors(encoder, queries)
        stats = self._stats.get(encoder.id)
        if idf == "bm25_plus1" and stats is None:
            raise ConfigError(
                "idf: bm25_plus1 needs the documents' sparse vectors (their document frequencies): "
                "give the corpus, or precomputed 'documents' vectors"
            )
        sent = self._sent.setdefault(name, {})
        out = []
        for q in queries:
            key = (q.qid, q.text)
            if key not in sent:
                vector = raw[key]
                sent[key] = apply_idf(vector, stats) if idf == "bm25_plus1" and stats else dict(vector)
            out.append(dataclasses.replace(q, sparse=sent[key]))
        return out

    def _raw_vectors(self, encoder: Any, queries: Sequence[Query]) -> Dict[Tuple[str, str], Dict[str, float]]:
        """(qid, text) -> raw query vector, encoding (and checking) the ones not seen yet."""
        cache = self._raw.setdefault(encoder.id, {})
        todo = [q for q in queries if (q.qid, q.text) not in cache]
        if todo:
            ids = [q.qid for q in todo]
            got = encoder.encode_queries(ids, [q.text for q in todo])
            vectors, _ = check_vectors(ids, got, "query", encoder.id)
            cache.update({(q.qid, q.text): v for q, v in zip(todo, vectors)})
            self._check_vocabulary(encoder.id, vectors)
        return cache

    def _check_vocabulary(self, encoder_id: str, vectors: List[Dict[str, float]]) -> None:
        stats = self._stats.get(encoder_id)
        if stats is None or self._checked_vocabulary.get(encoder_id) or len(vectors) < 2:
            return
        self._checked_vocabulary[encoder_id] = True  # on the first batch of queries: the run's
        problem = vocabulary_mismatch(vectors, stats.df)
        if problem:
            raise ConfigError(problem)

    def facts(self, name: str, queries: Sequence[Query]) -> SparseFacts:
        """The efficiency facts of the retriever over ``queries`` (already sent through it)."""
        encoder = self.encoder(name)
        cache = self._raw.get(encoder.id, {})
        raw = {q.qid: cache[(q.qid, q.text)] for q in queries if (q.qid, q.text) in cache}
        idf = self.suite.model.retrievers[name].idf  # type: ignore[union-attr]
        return sparse_facts(raw, self._stats.get(encoder.id), encoder.id, idf)
