"""Score fusion of sub-retriever rankings, replicating what the engines compute.

Pure functions, no I/O. Every sub-ranking is a :class:`~pytest_retrieval.types.Ranking`
in engine order (best first); it is first cut to ``window`` (Elasticsearch
``rank_window_size``; OpenSearch sub-query ``size`` / ``pagination_depth``).

Methods and semantics (read from the engines' sources; ES = elastic/elasticsearch,
NS = opensearch-project/neural-search, src/main/java/org/opensearch/neuralsearch/):

* ``rrf`` - reciprocal rank fusion, ``sum 1/(rank_constant + rank)``, 1-based ranks,
  a document absent from a list adds nothing.

  - ``elasticsearch``: ``rrf`` retriever, ES >= 8.16 (ES x-pack/plugin/rank-rrf/.../rrf/
    RRFRetrieverBuilder.java#combineInnerRetrieverResults): Java ``float`` sum of
    ``1.0f / (k + rank)`` in retriever order; result cut to ``rank_window_size``.
  - ``elasticsearch_legacy``: ``rank: {rrf: ...}`` and the rrf retriever before 8.16
    (.../rrf/RRFQueryPhaseRankCoordinatorContext.java): same float sum, equal scores
    ordered by the sub-queries' original scores (query 1 first, present before
    absent), every unique document kept (``size`` cuts later).
  - ``opensearch``: NS 2.19 ``score-ranker-processor``
    (processor/normalization/RRFNormalizationTechnique.java): each ``1/(k + rank)``
    is rounded HALF_UP to 10 decimals (BigDecimal) then made a float; the floats are
    summed (processor/combination/RRFScoreCombinationTechnique.java). No weights in
    2.19 (added in 3.1). ``rank_constant`` in [1, 10000]. NOTE: 2.19 ranks within each
    shard's list (global ranks came later), so this equals the server for 1-shard indices.
  - ``reference``: exact rational sums rounded once to double (embedded engine).

* ``weighted`` - NS 2.19 ``normalization-processor``: per sub-query normalisation
  (``min_max`` / ``l2``, global over all shards' hits), then ``arithmetic_mean`` /
  ``geometric_mean`` / ``harmonic_mean`` with optional weights, in Java float;
  every unique document of the sub-query windows is kept.

* ``linear`` - ES ``linear`` retriever (8.18+; ``l2_norm`` from 8.19):
  ``sum weight * norm(score)`` in Java float, normalizer ``minmax`` / ``l2_norm`` /
  ``none`` (one per sub-ranking allowed), result cut to ``rank_window_size``.

Ties. Every engine orders equal fused scores by internal Lucene identifiers (ES:
shard index, then Lucene doc id, .../search/rank/RankDoc.java#compareTo; OpenSearch:
Java ``HashMap`` iteration order over Lucene doc ids, then a stable sort,
processor/combination/ScoreCombiner.java#getSortedDocIds). Those ids are not in a
``Ranking``, so ties are ordered by ``tie_break``: ``"doc_id"`` (ascending id, the
default) or ``"input_order"`` (first appearance, sub-ranking 1 first). Exact engine
order inside a group of equal scores is therefore not reproduced; compare such
groups as sets.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ..types import Ranking, Run
from .candidates import Candidates, query_order
from .config import FusionConfig, is_int
from .javafloat import float32_scores, is_finite_number
from .rrf import exact_rrf
from .scores import FusedScores

__all__ = ["fuse", "fuse_runs", "linear_fusion", "rrf", "weighted_fusion"]


def fuse(rankings: Sequence[Ranking], config: FusionConfig) -> Ranking:
    """Fuse one query's sub-rankings (engine order, best first) into one Ranking."""
    if not isinstance(config, FusionConfig):
        raise ValueError(f"fuse needs a FusionConfig, got {type(config).__name__}")
    subs = _prepare(list(rankings), config.window)
    if config.method == "rrf" and config.semantics == "reference":
        return _exact_rrf(subs, config)
    scored = config.method != "rrf"
    if scored:
        check_scores(subs)
    candidates = Candidates.of_query(subs, scored=scored)
    ids = candidates.ids[0, : int(candidates.n_union[0])].tolist()
    scores = FusedScores(candidates).of(config)[0, : len(ids)].tolist()
    extra_key = None
    if config.semantics == "elasticsearch_legacy":
        check_scores(subs)
        extra_key = _by_query_scores(subs, ids)
    order = _fused_order(ids, scores, config.tie_break, extra_key)
    if config.method == "linear" or config.semantics == "elasticsearch":
        # RRFRetrieverBuilder / LinearRetrieverBuilder: top min(rank_window_size, n)
        order = order[: config.window]
    return Ranking([ids[c] for c in order], [scores[c] for c in order])


def _exact_rrf(subs: List[Ranking], config: FusionConfig) -> Ranking:
    """rrf ``reference``: exact rational sums, rounded once to double."""
    assert config.rank_constant is not None  # FusionConfig sets it for rrf
    exact = exact_rrf(subs, config.rank_constant)
    ids = list(exact)
    order = _fused_order(ids, [exact[d] for d in ids], config.tie_break)
    return Ranking([ids[c] for c in order], [float(exact[ids[c]]) for c in order])


def fuse_runs(runs: Sequence[Run], config: FusionConfig, k: Optional[int] = None) -> Run:
    """Fuse per query; a query absent from one run is an empty sub-ranking there.

    Queries appear in first-seen order across ``runs``; ``k`` cuts each fused ranking.
    """
    if k is not None and (not is_int(k) or k < 1):
        raise ValueError(f"fuse_runs k must be an integer >= 1 or None, got {k!r}")
    out: Run = {}
    for q in query_order(runs):
        fused = fuse([run.get(q, Ranking()) for run in runs], config)
        out[q] = fused.top(k) if k is not None else fused
    return out


def check_scores(rankings: Sequence[Ranking]) -> None:
    """``ValueError`` on the first score that is not a finite number."""
    for i, r in enumerate(rankings):
        for d, s in r.pairs():
            if not is_finite_number(s):
                raise ValueError(f"sub-ranking {i}: document {d!r} has a non-finite score {s!r}")


def _prepare(rankings: Sequence[Ranking], window: int) -> List[Ranking]:
    out = []
    for i, r in enumerate(rankings):
        if not isinstance(r, Ranking):
            raise ValueError(f"sub-ranking {i} is not a Ranking (got {type(r).__name__})")
        cut = r.top(window)
        if len(set(cut.doc_ids)) != len(cut.doc_ids):
            dup = next(d for j, d in enumerate(cut.doc_ids) if d in cut.doc_ids[:j])
            raise ValueError(f"sub-ranking {i} lists document {dup!r} twice")
        out.append(cut)
    return out


def _fused_order(
    ids: List[str], scores: Sequence[Any], tie_break: str, extra_key: Optional[Callable[[int], tuple]] = None
) -> List[int]:
    """The columns (candidates in first-seen order) by fused score descending, then
    ``extra_key``, then ``tie_break``: the document id, or the column itself (first seen)."""
    tie: Callable[[int], Any] = ids.__getitem__ if tie_break == "doc_id" else int
    if extra_key is None:
        return sorted(range(len(ids)), key=lambda c: (-scores[c], tie(c)))
    return sorted(range(len(ids)), key=lambda c: (-scores[c], extra_key(c), tie(c)))


def _by_query_scores(subs: Sequence[Ranking], ids: List[str]) -> Callable[[int], tuple]:
    """Legacy rrf: equal rrf scores -> higher original score in query 1, 2, ... (a document
    present in a query sorts before one absent from it), then shard / doc id."""
    originals: List[Dict[str, float]] = [
        dict(zip(r.doc_ids, float32_scores(r.scores).tolist())) for r in subs
    ]

    def key(c: int) -> tuple:
        d = ids[c]
        return tuple((0, -o[d]) if d in o else (1, 0.0) for o in originals)

    return key


def rrf(
    rankings: Sequence[Ranking],
    *,
    rank_constant: Optional[int] = 60,
    window: int = 100,
    semantics: str = "reference",
    tie_break: str = "doc_id",
) -> Ranking:
    """Reciprocal rank fusion of ``rankings`` (see module docstring for ``semantics``)."""
    return fuse(
        rankings,
        FusionConfig(
            method="rrf", semantics=semantics, rank_constant=rank_constant, window=window, tie_break=tie_break
        ),
    )


def weighted_fusion(
    rankings: Sequence[Ranking],
    *,
    normalization: str = "min_max",
    combination: str = "arithmetic_mean",
    weights: Optional[Sequence[float]] = None,
    window: int = 100,
    tie_break: str = "doc_id",
) -> Ranking:
    """OpenSearch ``normalization-processor`` fusion (neural-search 2.19)."""
    return fuse(
        rankings,
        FusionConfig(
            method="weighted",
            semantics="opensearch",
            normalization=normalization,
            combination=combination,
            weights=None if weights is None else tuple(weights),
            window=window,
            tie_break=tie_break,
        ),
    )


def linear_fusion(
    rankings: Sequence[Ranking],
    *,
    normalization: Union[str, Sequence[str]] = "none",
    weights: Optional[Sequence[float]] = None,
    window: int = 100,
    tie_break: str = "doc_id",
) -> Ranking:
    """Elasticsearch ``linear`` retriever fusion."""
    norm = normalization if isinstance(normalization, str) else tuple(normalization)
    return fuse(
        rankings,
        FusionConfig(
            method="linear",
            semantics="elasticsearch",
            normalization=norm,
            weights=None if weights is None else tuple(weights),
            window=window,
            tie_break=tie_break,
        ),
    )
