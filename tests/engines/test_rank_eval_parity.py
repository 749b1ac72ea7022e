"""The plugin's per-query precision@k, recall@k, MRR@k, nDCG@k and ERR@k equal what OpenSearch's
own ``_rank_eval`` returns for the same query bodies and ratings (issue #34), on SciFact and
NFCorpus (BEIR test splits: 300 and 323 queries), on OpenSearch 2.19 and 3.6, query by query.

``scripts/engines`` gives both majors the ``rank-eval`` module (the 3.x integ-test zip has it,
the 2.x one gets OpenSearch's published jar). Elasticsearch's module is not in the integ-test
builds nor on Maven Central, and its licence keeps it out of this repository: its side of the
check runs on a team's own cluster (``--retrieval-rank-eval``, docs/how-to/rank-eval.md).

Per engine, SciFact is searched in the session's index (``scifact_index``, which the other parity
tests build) and NFCorpus in this module's, built once; each measure is one ``_rank_eval`` call
per batch of 100 queries. Every difference of definition is mapped
explicitly below (``measures/rank_eval.py`` has the sources it follows):

* gain: ``_rank_eval``'s dcg is ``2^rating - 1`` = the plugin's profile ``exp`` (its default);
* unrated documents: ``unknown_doc_rating`` unset (gain 0) and ``ignore_unlabeled: false`` (an
  unrated hit is retrieved and not relevant) = the plugin's unjudged documents;
* ``relevant_rating_threshold`` = ``judgments.relevance_threshold`` (1 here);
* ties and order: both keep the engine's order (the plugin's ``ties: engine``): the hits
  ``_rank_eval`` rated are compared with the plugin's ranking, id by id;
* ERR's ``maximum_relevance`` = the highest grade of the judgments (SciFact 1, NFCorpus 2);
* k: ``_rank_eval`` fetches exactly k hits; a query with fewer hits (NFCorpus has some: rare
  terms) is where precision (hits returned vs k) and nDCG's ideal DCG (cut at the hits returned
  vs at k) part: the test asserts they do differ there and that the mapping gives the plugin's.
"""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from pytest_retrieval.backends.base import BM25Spec
from pytest_retrieval.io.beir import load_beir
from pytest_retrieval.measures import rank_eval
from pytest_retrieval.measures.metrics import evaluate, parse_metric
from pytest_retrieval.types import Query

from .conftest import backend_class, http

# one xdist group with the other users of the full SciFact index (conftest: scifact_index),
# so one worker builds it per engine
pytestmark = [pytest.mark.engines, pytest.mark.xdist_group("scifact_index")]

K = 10
METRICS = [f"precision@{K}", f"recall@{K}", f"mrr@{K}", f"ndcg@{K}", f"err@{K}"]
BATCH = 100  # rated requests per _rank_eval call
TOL = 1e-9
BM25 = BM25Spec(fields=(("title", 1.0), ("text", 1.0)), multi_match_type="best_fields")


@pytest.fixture(scope="module")
def collections(shared_dir) -> Dict[str, Any]:
    return {name: load_beir(shared_dir / "data" / name, "test") for name in ("scifact", "nfcorpus")}


@pytest.fixture(scope="module")
def indexes(os_instance, collections, scifact_index):
    """Per engine: the session's SciFact index (``scifact_index``, shared with the other parity
    tests) and this module's NFCorpus index (BM25 only), built once."""
    backend = backend_class(os_instance)({"hosts": [os_instance.url]}, {"suite": "rank_eval parity"})
    backend.prepare(collections["nfcorpus"].corpus, None)
    yield {"scifact": scifact_index(os_instance), "nfcorpus": backend}
    backend.close()


@pytest.fixture(scope="module")
def runs(indexes, collections) -> Dict[str, Any]:
    """The plugin's BM25 run of each collection's queries at k (one pass, read by every metric)."""
    out = {}
    for name, js in collections.items():
        queries = [Query(q, js.queries[q]) for q in js.qrels]
        out[name] = (queries, indexes[name].search_batch(BM25, queries, K))
    return out


def _rank_eval(url: str, index: str, body: Dict[str, Any]) -> Dict[str, Any]:
    status, answer = http(url, "POST", f"/{index}/_rank_eval", body, timeout=300)
    assert status == 200, f"_rank_eval answered {status}: {str(answer)[:500]}"
    assert not answer.get("failures"), answer["failures"]
    return answer["details"]


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("collection", ["scifact", "nfcorpus"])
def test_per_query_parity(indexes, runs, os_instance, collections, collection, name, record_property):
    js, index = collections[collection], indexes[collection]
    queries, run = runs[collection]
    metric = parse_metric(name)
    plugin = evaluate(js.qrels, run, [metric], ties="engine", gain="exp", relevance_threshold=1).per_query[
        name
    ]
    max_grade = max(g for per_q in js.qrels.values() for g in per_q.values())  # ERR's maximum_relevance
    body, why = rank_eval.metric_body(metric, rank_eval.RankEvalOptions(1, "exp", max_grade))
    assert body is not None, why
    details: Dict[str, Any] = {}
    target = index.index_name
    for i in range(0, len(queries), BATCH):
        batch = [(q.qid, index.build_body(BM25, q, K), js.qrels[q.qid]) for q in queries[i : i + BATCH]]
        details.update(_rank_eval(os_instance.url, target, rank_eval.request_body(batch, target, body)))
    assert set(plugin) == set(details), "the plugin and _rank_eval scored other queries"
    wrong: List[str] = []
    short = parted = 0
    for qid, value in plugin.items():
        d = details[qid]
        ids = run[qid].doc_ids[:K]
        # ties and order: the same hits in the same order (the engine's; the plugin's ties: engine)
        assert rank_eval.ranked_ids(d) == list(ids), f"{qid}: _rank_eval ranked other hits"
        mapped = rank_eval.plugin_value(metric, d, js.qrels[qid])
        if mapped is None or abs(mapped - value) > TOL:
            wrong.append(
                f"{qid}: plugin {value!r}, _rank_eval {d.get('metric_score')!r} mapped to {mapped!r}"
            )
        if len(ids) < K:  # fewer hits than k: precision and nDCG's ideal part (mapped above)
            short += 1
            parted += abs(d["metric_score"] - value) > TOL
        else:  # k hits: the value as returned equals the plugin's (nDCG's ideal cut at k on both sides)
            assert abs(d["metric_score"] - value) <= TOL, (qid, d["metric_score"], value)
    assert not wrong, f"{len(wrong)} of {len(plugin)} queries differ: " + "; ".join(wrong[:5])
    record_property("queries_equal", len(plugin))
    print(f"{os_instance.id} {collection} {name}: {len(plugin)} queries equal, {short} with < {K} hits")
    if short and metric.name in ("precision", "ndcg"):
        assert parted > 0, "a short ranking should part the raw value from the plugin's"
    if collection == "nfcorpus":
        assert short > 0, "NFCorpus has queries with fewer than k BM25 hits (the mapped cases)"
