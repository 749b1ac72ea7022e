"""The plugin's per-query precision@k, recall@k, MRR@k, nDCG@k and ERR@k equal what OpenSearch's
own ``_rank_eval`` returns for the same query bodies and ratings (issue #34), on SciFact and
NFCorpus (BEIR test splits: 300 and 323 queries), on OpenSearch 2.19 and 3.6, query by query.

``scripts/engines`` gives both majors the ``rank-eval`` module (the 3.x integ-test zip has it,
the 2.x one gets OpenSearch's published jar). Elasticsearch's module is not in the integ-test
builds nor on Maven Central, and its licence keeps it out of this repository: its side of the
check runs on a team's own cluster (``--retrieval-rank-eval``, docs/how-to/rank-eval.md).

One throwaway index per engine holds both corpora (the other collection's documents are
unjudged noise to each query: parity, not quality), built once for the module; each measure is
one ``_rank_eval`` call per batch of queries. Every difference of definition is mapped
explicitly below (``measures/rank_eval.py`` has the sources it follows):

* gain: ``_rank_eval``'s dcg is ``2^rating - 1`` = the plugin's profile ``exp`` (its default);
* unrated documents: ``unknown_doc_rating`` unset (gain 0) and ``ignore_unlabeled: false`` (an
  unrated hit is retrieved and not relevant) = the plugin's unjudged documents;
* ``relevant_rating_threshold`` = ``judgments.relevance_threshold`` (1 here);
* ties and order: both keep the engine's order (the plugin's ``ties: engine``): the hits
  ``_rank_eval`` rated are compared with the plugin's ranking, id by id;
* ERR's ``maximum_relevance`` = the highest grade of the judgments (SciFact 1, NFCorpus 2);
* k: ``_rank_eval`` fetches exactly k hits; a query with fewer hits (the ``operator: and`` body
  below) is where precision (hits returned vs k) and nDCG's ideal DCG (cut at the hits returned
  vs at k) part: the test asserts they do differ there and that the mapping gives the plugin's.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest

from pytest_retrieval.backends.base import BM25Spec, TemplateSpec
from pytest_retrieval.io.beir import load_beir
from pytest_retrieval.measures import rank_eval
from pytest_retrieval.measures.metrics import evaluate, parse_metric
from pytest_retrieval.types import Query

from .conftest import backend_class, http

pytestmark = pytest.mark.engines

K = 10
METRICS = [f"precision@{K}", f"recall@{K}", f"mrr@{K}", f"ndcg@{K}", f"err@{K}", "ndcg@3", "err@3"]
BATCH = 100  # rated requests per _rank_eval call
TOL = 1e-9
BM25 = BM25Spec(fields=(("title", 1.0), ("text", 1.0)), multi_match_type="best_fields")
# every term in the title: many queries get fewer than k hits (the short-ranking mappings)
SHORT = TemplateSpec(body={"query": {"match": {"title": {"query": "{{query_text}}", "operator": "and"}}}})
SPECS = {"bm25": BM25, "title-and": SHORT}


@pytest.fixture(scope="module")
def collections(shared_dir) -> Dict[str, Any]:
    out = {}
    for name in ("scifact", "nfcorpus"):
        js = load_beir(shared_dir / "data" / name, "test")
        out[name] = js
    return out


@pytest.fixture(scope="module")
def index(os_instance, collections):
    """One throwaway index per engine with both corpora (BM25 only), for the module."""
    docs = [d for js in collections.values() for d in js.corpus]
    backend = backend_class(os_instance)({"hosts": [os_instance.url]}, {"suite": "rank_eval parity"})
    backend.prepare(docs, None)
    yield backend
    backend.close()


def _rank_eval(url: str, index: str, body: Dict[str, Any]) -> Dict[str, Any]:
    status, answer = http(url, "POST", f"/{index}/_rank_eval", body, timeout=120)
    assert status == 200, f"_rank_eval answered {status}: {str(answer)[:500]}"
    assert not answer.get("failures"), answer["failures"]
    return answer["details"]


def _both(backend, url: str, js, spec, metric) -> Tuple[Dict[str, float], Dict[str, Any], Dict[str, Any]]:
    """(the plugin's per-query values, _rank_eval's details per query, the plugin's run)."""
    queries = [Query(q, js.queries[q]) for q in js.qrels]
    run = backend.search_batch(spec, queries, metric.k)
    ev = evaluate(js.qrels, run, [metric], ties="engine", gain="exp", relevance_threshold=1)
    max_grade = max(g for per_q in js.qrels.values() for g in per_q.values())
    body, why = rank_eval.metric_body(metric, rank_eval.RankEvalOptions(1, "exp", max_grade))
    assert body is not None, why
    details: Dict[str, Any] = {}
    index = backend.index_name
    for i in range(0, len(queries), BATCH):
        batch = [(q.qid, backend.build_body(spec, q, metric.k), js.qrels[q.qid]) for q in queries[i : i + BATCH]]
        details.update(_rank_eval(url, index, rank_eval.request_body(batch, index, body)))
    return ev.per_query[str(metric)], details, run


@pytest.mark.parametrize("spec_name", list(SPECS))
@pytest.mark.parametrize("collection", ["scifact", "nfcorpus"])
def test_per_query_parity(index, os_instance, collections, collection, spec_name, record_property):
    js = collections[collection]
    spec = SPECS[spec_name]
    compared = short = differs_raw = 0
    for name in METRICS:
        metric = parse_metric(name)
        plugin, details, run = _both(index, os_instance.url, js, spec, metric)
        assert set(plugin) <= set(details), "a query the plugin scored has no _rank_eval answer"
        wrong: List[str] = []
        for qid, value in plugin.items():
            d = details[qid]
            ids = run[qid].doc_ids[: metric.k]
            # ties and order: the same hits in the same order (the engine's; ties: engine)
            assert rank_eval.ranked_ids(d) == list(ids), f"{qid}: _rank_eval ranked other hits"
            mapped = rank_eval.plugin_value(metric, d, js.qrels[qid])
            assert mapped is not None, d
            if abs(mapped - value) > TOL:
                wrong.append(f"{qid}: plugin {value!r}, _rank_eval mapped {mapped!r} (raw {d['metric_score']!r})")
            compared += 1
            if len(ids) < metric.k:
                short += 1
                differs_raw += abs(d["metric_score"] - value) > TOL
            else:  # k hits: every value equal as returned (nDCG's ideal cut at k on both sides)
                assert abs(d["metric_score"] - value) <= TOL, (name, qid, d["metric_score"], value)
        assert not wrong, f"{name} on {collection}/{spec_name}: " + "; ".join(wrong[:5])
    record_property("compared", compared)
    print(f"{os_instance.id} {collection}/{spec_name}: {compared} values equal, {short} on short rankings")
    if spec_name == "title-and":
        # the short rankings exist, and there the raw precision / nDCG do part from the plugin's
        assert short > 0 and differs_raw > 0
