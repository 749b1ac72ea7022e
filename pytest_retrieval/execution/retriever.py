"""One retriever of a suite, bound to the suite's own backend, to ask questions from a test.

``retrieval_retriever("retrieval_x.yaml", "hybrid")`` (the plugin's fixture) gives a
:class:`Retriever`: the same index the suite's YAML items search (a throwaway index is built
once per session, see :mod:`.shared`), the same embedder, fusion and rerank stages, and the
same depth, so ``search(text)`` ranks exactly as the suite's run would, cut at ``k``.
"""

from __future__ import annotations

import time
from typing import Dict, List, Optional, Sequence

from ..errors import ConfigError
from ..io.ids import internal_query_id
from ..types import Query, Ranking
from .cutoffs import run_depth
from .hits import Hits, HitsBatch, make_hits, titles_of
from .plan import StagePlan
from .runner import SuiteRunner, quiet_client_loggers
from .shared import SharedBackend

#: embedder kinds that embed any text (``precomputed`` only holds the vectors it was given)
TEXT_EMBEDDERS = ("onnx", "sentence-transformers", "callable")


class Retriever:
    """A suite's retriever over the suite's shared backend: ``search`` and ``search_many``."""

    def __init__(self, shared: SharedBackend, name: str):
        suite = shared.suite
        if name not in suite.model.retrievers:
            raise ConfigError(
                f"{suite.path}: no retriever {name!r} (defined: {', '.join(suite.model.retrievers)})"
            )
        self.suite = suite
        self.name = name
        self.kind = suite.model.retrievers[name].type
        self._shared = shared
        self._runner = SuiteRunner(suite, shared=shared)
        self._plans: Dict[int, StagePlan] = {}
        self._titles: Optional[Dict[str, str]] = None
        self._by_text: Optional[Dict[str, str]] = None

    def __repr__(self) -> str:
        return f"<Retriever {self.name!r} ({self.kind}) of suite {self.suite.name!r}>"

    # ---- searching ---------------------------------------------------------------------

    def search(self, text: str, k: int = 10) -> Hits:
        """The top ``k`` for ``text``: one request per leaf (as production would send it), the
        fusion / rerank stages on top; ``client_ms`` is the wall time, ``server_ms`` the
        engines' ``took`` (None on the embedded engine). With ``evaluation.exclude_self_hits``
        it goes through the batched pass, which drops self-hits as the suite's run does. The
        engine clients' loggers are quiet meanwhile, as in the suite's run: a fault is the
        backend's one ``InfrastructureError`` line."""
        with quiet_client_loggers():
            return self._search(text, k)

    def _search(self, text: str, k: int) -> Hits:
        from .latency import stage_timer

        if self.suite.model.evaluation.exclude_self_hits:
            # the leaves drop a query's own document before fusion: the batched pass does that
            (hits,) = batch = self.search_many([text], k)
            hits.client_ms = batch.client_ms
            return hits
        plan = self._plan(k)
        js = self._shared.judgments()
        backend = self._runner.shared_backend(js)
        (query,) = self._queries([text], plan)
        single = stage_timer(self.suite, backend, plan, self._runner.doc_texts(js, plan))
        t0 = time.perf_counter()
        ranking, took = single(self.name, query)
        client_ms = (time.perf_counter() - t0) * 1000.0
        hits = self._hits(ranking, k, query)
        hits.client_ms, hits.server_ms = client_ms, (float(took) if took is not None else None)
        return hits

    def search_many(self, texts: Sequence[str], k: int = 10) -> HitsBatch:
        """The top ``k`` for each of ``texts``, batched as the suite's run is (``_msearch`` on
        the engines); ``.client_ms`` of the result is the whole batch's wall time."""
        if isinstance(texts, str):
            raise TypeError("search_many takes a list of texts (use search for one)")
        with quiet_client_loggers():
            return self._search_many(texts, k)

    def _search_many(self, texts: Sequence[str], k: int) -> HitsBatch:
        plan = self._plan(k)
        js = self._shared.judgments()
        backend = self._runner.shared_backend(js)
        queries = self._queries(list(texts), plan)
        t0 = time.perf_counter()
        runs = self._runner.search_all(backend, plan, queries, self._runner.doc_texts(js, plan))
        out = HitsBatch(self._hits(runs[self.name].get(q.qid, Ranking()), k, q) for q in queries)
        out.client_ms = (time.perf_counter() - t0) * 1000.0
        return out

    # ---- helpers -----------------------------------------------------------------------

    def _plan(self, k: int) -> StagePlan:
        """The suite run's plan for this retriever (its depth, or ``k`` when deeper)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        depth = run_depth(self.suite, k)
        if depth not in self._plans:
            self._plans[depth] = self._runner.plan(self.suite.with_inputs([self.name]), depth)
        return self._plans[depth]

    def _queries(self, texts: List[str], plan: StagePlan) -> List[Query]:
        """The texts as queries: a judged query's text keeps its id (and its precomputed
        vector); vectors when a leaf needs them."""
        _check_texts(texts)
        judged = self._judged_ids()
        qids = [judged.get(t, internal_query_id("text", i)) for i, t in enumerate(texts)]
        self._check_sparse_encodable(plan, [t for t in texts if t not in judged])
        if not plan.needs_vectors:
            return [Query(q, t) for q, t in zip(qids, texts)]
        self._check_embeddable([t for t in texts if t not in judged])
        embedder = self._runner.vectors.embedder()
        vecs = embedder.embed_queries(qids, texts)
        return [Query(q, t, vecs[i]) for i, (q, t) in enumerate(zip(qids, texts))]

    def _check_embeddable(self, free: List[str]) -> None:
        """Texts that are no judged query need an embedder that embeds any text."""
        cfg = self.suite.model.embedder
        if cfg is not None and cfg.type == "precomputed" and free:
            raise ConfigError(
                f"retriever {self.name!r} of {self.suite.path.name} cannot embed free text "
                f"({free[0]!r}): its embedder is precomputed (vectors of the judged queries only); "
                f"search a judged query's text, or use an embedder of kind {', '.join(TEXT_EMBEDDERS)}"
            )

    def _check_sparse_encodable(self, plan: StagePlan, free: List[str]) -> None:
        """Texts that are no judged query need sparse encoders that encode any text."""
        for name in plan.sparse_leaves if free else ():
            if self.suite.model.retrievers[name].sparse_encoder.type == "precomputed":  # type: ignore[union-attr]
                raise ConfigError(
                    f"retriever {self.name!r} of {self.suite.path.name} cannot encode free text "
                    f"({free[0]!r}): the sparse encoder of {name!r} is precomputed (vectors of the "
                    f"judged queries only); search a judged query's text, or use an onnx or callable encoder"
                )

    def _judged_ids(self) -> Dict[str, str]:
        """judged query text -> its id (the first id when two share a text)."""
        if self._by_text is None:
            by_text: Dict[str, str] = {}
            for qid, text in self._shared.judgments().queries.items():
                by_text.setdefault(text, qid)
            self._by_text = by_text
        return self._by_text

    def _hits(self, ranking: Ranking, k: int, query: Query) -> Hits:
        js = self._shared.judgments()
        judged = query.qid if query.qid in js.queries else None
        return make_hits(
            ranking,
            k,
            query=query.text,
            retriever=self.name,
            titles=self.titles(),
            grades=js.qrels.get(judged, {}) if judged else None,
            query_id=judged,
            suite=self.suite.name,
        )

    def titles(self) -> Dict[str, str]:
        """doc id -> title, for the documents of the suite's corpus that have one."""
        if self._titles is None:
            self._titles = titles_of(self._shared.judgments().judged_corpus)
        return self._titles


def _check_texts(texts: Sequence[str]) -> None:
    for t in texts:
        if not isinstance(t, str) or not t.strip():
            raise ValueError(f"a query is a non-empty text, got {t!r}")
