"""The vectors of a suite run: the suite's embedder (the session's one when the backend is
shared), the queries and the golden queries embedded, and the corpus's vectors for an index."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Set

from ..config.load import Suite, vector_leaves
from ..io.judgment_set import JudgmentSet
from ..types import Document, DocVectors, Query
from .shared import SharedBackend, needs_vectors


class SuiteVectors:
    """Embeds what a suite run sends: queries, golden queries and the documents of an index."""

    def __init__(self, suite: Suite, shared: Optional[SharedBackend], progress: Callable[[str], None]):
        self.suite = suite
        self._shared = shared
        self.progress = progress
        self._sparse: Any = None

    def new_embedder(self) -> Any:
        """A new embedder of the suite's ``embedder`` section (its paths resolved)."""
        from ..models.embedders import make_embedder

        if self.suite.model.embedder is None:
            raise self.suite.error(("embedder",), "knn retrievers need an 'embedder' section")

        cfg = self.suite.model.embedder
        paths = {}  # relative to the file that names them
        for key in ("queries", "query_ids", "documents", "document_ids", "model"):
            if getattr(cfg, key, None) is not None and cfg.type in ("precomputed", "onnx"):
                paths[key] = str(self.suite.resolve_path(("embedder", key), getattr(cfg, key)))
        return make_embedder(cfg.model_copy(update=paths), self.suite.path.parent)

    def embedder(self) -> Any:
        """The suite's embedder: the session's one when shared, else a new one."""
        if self._shared is not None:
            return self._shared.embedder(self.new_embedder)
        return self.new_embedder()

    def index_embedder(self) -> Any:
        """The embedder of the documents of a shared index: whenever any retriever of the suite
        needs vectors (the index serves them all, whatever this run asked for)."""
        return self.embedder() if needs_vectors(self.suite) else None

    def queries(self, js: JudgmentSet, qids: Sequence[str], embedder: Any = None) -> List[Query]:
        """The queries ``qids`` as the backends take them, with vectors from ``embedder``
        when one is given."""
        queries = [Query(q, js.queries[q], None, js.tags.get(q, ())) for q in qids]
        if embedder is None:
            return queries
        self.progress(f"embedding {len(queries)} queries ({embedder.id})")
        vecs = embedder.embed_queries([q.qid for q in queries], [q.text for q in queries])
        return [Query(q.qid, q.text, vecs[i], q.tags) for i, q in enumerate(queries)]

    def golden(self, queries: List[Query], embedder: Any, only_for: Dict[str, Set[str]]) -> List[Query]:
        """``queries`` with vectors from ``embedder`` when one of their retrievers sends them."""
        vector = vector_leaves(self.suite)
        todo = [q for q in queries if only_for.get(q.qid, vector) & vector]
        if not todo or embedder is None:
            return queries
        vecs = embedder.embed_queries([q.qid for q in todo], [q.text for q in todo])
        by_id = {q.qid: Query(q.qid, q.text, vecs[i], q.tags) for i, q in enumerate(todo)}
        return [by_id.get(q.qid, q) for q in queries]

    def sparse(self) -> Any:
        """The suite's sparse retrievers (``.sparse.SparseLeaves``): the session's when shared."""
        from .sparse import SparseLeaves

        if self._shared is not None:
            return self._shared.sparse(lambda: SparseLeaves(self.suite, self.progress))
        if self._sparse is None:
            self._sparse = SparseLeaves(self.suite, self.progress)
        return self._sparse

    def documents(self, embedder: Any, documents: Sequence[Document]) -> DocVectors:
        from ..models.embedders import embed_corpus

        self.progress(f"embedding {len(documents)} documents ({embedder.id})")
        return embed_corpus(embedder, documents)
