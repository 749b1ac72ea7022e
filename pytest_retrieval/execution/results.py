"""What a suite run produced: what the engines returned (``Retrieval``); per retriever the run, its evaluation and latency; the A/B latency
samples; and the lookups every gate and report reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..config.load import Suite
from ..io.judgment_set import JudgmentSet, Overlap
from ..stats.latency import LatencySummary
from ..types import Query, Run
from .integrity import MissingDocuments


@dataclass
class Retrieval:
    """What the engines returned for a suite: runs per retriever, latency, engine facts."""

    depth: int
    fusions: Dict[str, Any]
    rerankers: Dict[str, Any] = field(default_factory=dict)
    runs: Dict[str, Run] = field(default_factory=dict)
    latency: Dict[str, LatencySummary] = field(default_factory=dict)
    ab: Dict[str, ABLatency] = field(default_factory=dict)
    queries: List[Query] = field(default_factory=list)  # as sent, with vectors when embedded
    backend_info: Dict[str, Any] = field(default_factory=dict)
    missing_documents: Optional[MissingDocuments] = None  # when asked to check the judged docs
    golden: Dict[str, Run] = field(default_factory=dict)  # retriever -> rankings of extra_queries
    exact: Dict[str, Run] = field(default_factory=dict)  # kNN leaf -> its exact top k (ann_recall@k)
    retries: Dict[str, Dict[str, int]] = field(default_factory=dict)  # pass -> reason -> retries
    sparse: Dict[str, Any] = field(default_factory=dict)  # sparse leaf -> sparse.SparseFacts
    rank_eval: Any = None  # rank_eval.RankEvalCheck: the engine's _rank_eval answers (evaluation.rank_eval)
    # retriever -> the error that failed it (its own problem, or an input's): a gate run only
    failed: Dict[str, Exception] = field(default_factory=dict)


@dataclass
class RetrieverResult:
    name: str
    kind: str
    run: Run
    evaluation: Any  # metrics.Evaluation
    latency: Optional[LatencySummary] = None
    warnings: List[str] = field(default_factory=list)
    abstention: Any = None  # stats.abstention.AbstentionResult when the suite has unanswerable queries
    window: Optional[int] = None  # candidates taken from each input (fusion / rerank stages)
    ab: Optional[ABLatency] = None  # interleaved timing against latency.baseline
    candidate_recall: Dict[str, float] = field(default_factory=dict)  # input -> recall@window
    depth: Optional[int] = None  # the rankings were scored cut at this depth
    sparse: Any = None  # sparse.SparseFacts of a sparse leaf (non-zeros, FLOPS)

    @property
    def metrics(self) -> Dict[str, float]:
        return dict(self.evaluation.aggregate)


@dataclass
class ABLatency:
    """An interleaved A/B latency pass: per query, its times over the rounds (ms)."""

    baseline: str
    baseline_ms: List[List[float]]
    current_ms: List[List[float]]
    repetitions: int
    _results: Dict[tuple, Any] = field(default_factory=dict, repr=False, compare=False)

    def paired(self) -> tuple:
        """Every (query, round) sample of both arms, paired: sample ``i`` of each list
        comes from the same query in the same round, timed back to back."""
        pairs = [(x, y) for a, b in zip(self.baseline_ms, self.current_ms) for x, y in zip(a, b)]
        return [x for x, _ in pairs], [y for _, y in pairs]

    def result(self, q: float, *, confidence: float = 0.95, max_ratio: Optional[float] = None):
        """``stats.latency.ab_ratio`` of the percentile ``q``, paired by (query, round).
        All samples, not each query's fastest round: under CPU contention, 200 queries x 2
        rounds, the paired samples caught a 30% slowdown 95/100 times and the fastest rounds
        78/100, both passing 100/100 unchanged runs; with 4 rounds 100/100 and 100/100
        (``benchmarks/latency_gate_flakiness.py``)."""
        import dataclasses

        from ..stats.latency import ab_ratio

        key = (float(q), float(confidence))  # the bootstrap is seeded: compute it once
        if key not in self._results:
            a, b = self.paired()
            self._results[key] = ab_ratio(a, b, q=q, confidence=confidence, paired=True)
        return dataclasses.replace(self._results[key], max_ratio=max_ratio)


@dataclass
class SuiteResult:
    suite: Suite
    judgments: JudgmentSet
    overlap: Overlap
    retrievers: Dict[str, RetrieverResult]
    backend_info: Dict[str, Any]
    warnings: List[str] = field(default_factory=list)
    query_set: Any = None  # integrity.QuerySetCheck
    missing_documents: Any = None  # integrity.MissingDocuments, when the judged docs were checked
    golden_runs: Dict[str, Run] = field(default_factory=dict)  # retriever -> golden query rankings
    canary: Dict[str, str] = field(default_factory=dict)  # canary query id -> text (judgments.canary)
    canary_runs: Dict[str, Run] = field(default_factory=dict)  # retriever -> canary rankings, never scored
    retries: Dict[str, Dict[str, int]] = field(default_factory=dict)  # "quality"/"latency" -> reason -> n
    rank_eval: Any = None  # rank_eval.RankEvalCheck, compared with the plugin's values
    # retrievers that failed (passes.StagePasses, ``isolate``): not in ``retrievers``, their gates errors
    failed: Dict[str, Exception] = field(default_factory=dict)
    _titles: Optional[Dict[str, str]] = field(default=None, repr=False, compare=False)

    def expectation_hits(self, expectation: Any, retriever: str) -> Any:
        """The ``Hits`` of a golden query (``gates.expectations.Expectation``) for ``retriever``:
        the judged query's ranking, or the text's from the same pass, cut at the run's depth."""
        from ..types import Ranking
        from .hits import make_hits, titles_of

        qid = expectation.qid
        rr = self.retrievers[retriever]
        ranking = rr.run.get(qid)
        if ranking is None:
            ranking = self.golden_runs.get(retriever, {}).get(qid, Ranking())
        js = self.judgments
        judged = qid if qid in js.qrels else None
        if self._titles is None:
            self._titles = titles_of(js.judged_corpus)
        titles = self._titles
        text = expectation.text if expectation.text is not None else js.queries.get(qid, qid)
        return make_hits(
            ranking,
            rr.depth or len(ranking),
            query=text,
            retriever=retriever,
            titles=titles,
            grades=js.qrels.get(judged) if judged else None,
            query_id=expectation.query_id,
            suite=self.suite.name,
        )

    def titles(self) -> Dict[str, str]:
        """Document id -> title, from the corpus when the suite read one (empty otherwise)."""
        from .hits import titles_of

        if self._titles is None:
            self._titles = titles_of(self.judgments.corpus)
        return self._titles

    def check_lines(self) -> List[str]:
        """The judgment checks for the summary: query set, then missing documents."""
        out = []
        if self.query_set is not None:
            out.append(self.query_set.line())
            synthetic = self.query_set.synthetic_line()
            if synthetic:
                out.append(synthetic)
        if self.missing_documents is not None:
            line = self.missing_documents.line()
            if line:
                out.append(f"missing documents: {line}")
            elif self.missing_documents.checked_against.startswith("not checked"):
                out.append(f"documents: judged documents {self.missing_documents.checked_against}")
            elif self.missing_documents.judgments:
                out.append(
                    f"documents: all {self.missing_documents.judgments} judged documents exist in the "
                    f"{self.missing_documents.checked_against}"
                )
        if self.suite.model.evaluation.exclude_self_hits:
            out.append("self-hits excluded (evaluation.exclude_self_hits)")
        return out

    def checks_dict(self) -> Dict[str, Any]:
        """The judgment checks for the JSON report."""
        return {
            "query_set": self.query_set.as_dict() if self.query_set is not None else None,
            "missing_documents": (
                self.missing_documents.as_dict() if self.missing_documents is not None else None
            ),
            "exclude_self_hits": self.suite.model.evaluation.exclude_self_hits,
        }

    def query(self, retriever: str, qid: Any) -> Any:
        """One query through ``retriever``: its metrics, ranking (with titles and grades) and
        judgments, as a ``suite.queries.QueryResult`` (for per-query tests)."""
        from .queries import query_result

        return query_result(self, retriever, qid)

    def inputs(self, retriever: str) -> List[str]:
        """The retrievers a stage builds on (empty for a leaf)."""
        return list(getattr(self.suite.model.retrievers[retriever], "of", None) or [])

    def value(self, retriever: str, metric: str) -> float:
        """A retriever's value of a metric or floor key (``ndcg@10``, ``p95_ms``, ``lift@ndcg@10``...)."""
        from ..gates.verdicts import metric_value

        return metric_value(self, retriever, metric)

    def unjudged(self, retriever: str, k: int = 10) -> List[tuple]:
        """(qid, doc_id, rank) for every document in the top ``k`` without any judgment."""
        qrels = self.judgments.qrels
        out = []
        for qid in self.retrievers[retriever].evaluation.evaluated:
            ranking = self.retrievers[retriever].run.get(qid)
            if ranking is None:
                continue
            judged = qrels.get(qid, {})
            out += [(qid, d, i) for i, d in enumerate(ranking.doc_ids[:k], 1) if d not in judged]
        return out

    def unjudged_share(self, retriever: str, k: int = 10) -> float:
        """The share of the top ``k`` documents without a judgment (:meth:`unjudged`, counted
        without listing them)."""
        qrels, run = self.judgments.qrels, self.retrievers[retriever].run
        shown = unjudged = 0
        for qid in self.retrievers[retriever].evaluation.evaluated:
            ranking = run.get(qid)
            if ranking is None:
                continue
            top = ranking.doc_ids[:k]
            judged = qrels.get(qid, {})
            shown += len(top)
            unjudged += sum(1 for d in top if d not in judged)
        return unjudged / shown if shown else 0.0

    def stratum_queries(self, retriever: str, stratum: str) -> List[str]:
        ev = self.retrievers[retriever].evaluation
        return [q for q in ev.evaluated if stratum in self.judgments.tags.get(q, ())]

    def n_queries(self, retriever: str, stratum: Optional[str] = None) -> int:
        if stratum:
            return len(self.stratum_queries(retriever, stratum))
        return len(self.retrievers[retriever].evaluation.evaluated)
