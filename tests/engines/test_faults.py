"""Faults between the plugin and a real engine, injected by a loopback proxy (faultproxy.py).

Faults that heal (429 with Retry-After, 502/503, connection resets, slow answers, a shard
failed because its node left) are retried by the one retry policy and give exactly the
rankings, hence the metrics, of a clean run. Faults that corrupt (a dropped ``_msearch`` item, a failed shard, an HTML page
with status 200) and faults that outlast the retries are errors naming the first cause
(the search and its query id), with a failed clean-up only second.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Dict, Iterator

import numpy as np
import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec
from pytest_retrieval.errors import InfrastructureError
from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.types import Run

from .conftest import ENGINE_URLS, Collection, backend_class, http
from .faultproxy import Fault, FaultProxy

K = 10
METRICS = ["ndcg@10", "recall@10", "mrr@10"]
SPECS = {"bm25": BM25Spec(fields=(("title", 1.0), ("text", 1.0))), "knn": KnnSpec(field="embedding")}


@pytest.fixture(scope="module")
def proxied(engine: str, scifact_small: Collection) -> Iterator[tuple]:
    """(proxy, backend searching through it, the clean runs); batches of 5 queries, so a
    retriever's quality pass is 6 ``_msearch`` requests."""
    with FaultProxy(ENGINE_URLS[engine]) as proxy:
        backend = backend_class(engine)(
            {"hosts": [proxy.url], "batch_size": 5, "concurrency": 2, "request_timeout": 30},
            {"suite": "fault tests"},
        )
        backend.prepare(scifact_small.documents, scifact_small.vectors)
        try:
            clean = {
                name: backend.search_batch(spec, scifact_small.queries, K) for name, spec in SPECS.items()
            }
            yield proxy, backend, clean
        finally:
            proxy.inject()
            backend.close()


def _ids(run: Run) -> Dict[str, list]:
    return {q: list(rk.doc_ids) for q, rk in run.items()}


def _scores(run: Run) -> Dict[str, np.ndarray]:
    return {q: np.asarray(rk.scores, dtype=np.float64) for q, rk in run.items()}


def _same_run(run: Run, clean: Run) -> bool:
    """The same documents in the same order, and the same scores to 1e-6 relative: OpenSearch
    3.6 gave a kNN score one float32 ulp apart for the same document in two identical searches
    of the same one-segment index (seen once, under load), so only the scores get a tolerance."""
    if _ids(run) != _ids(clean):
        return False
    got, want = _scores(run), _scores(clean)
    return all(np.allclose(got[q], want[q], rtol=1e-6, atol=0) for q in want)


@pytest.mark.parametrize(
    "fault",
    [
        Fault("429", path="_msearch", every=2, seconds=1),
        Fault("503", path="_msearch", every=3),
        Fault("502", path="_msearch", times=2),
        Fault("reset", path="_msearch", every=3),
        Fault("slow", path="_msearch", every=2, seconds=0.3),
        # a shard copy lost with its node: that search alone is sent again (times=3: a retry may
        # meet the fault again, and 3 retries are allowed)
        Fault("lost_shard", path="_msearch", times=3),
    ],
    ids=lambda f: f.kind,
)
def test_faults_that_heal_give_the_clean_metrics(proxied, scifact_small: Collection, fault: Fault) -> None:
    proxy, backend, clean = proxied
    proxy.inject(fault)
    for name, spec in SPECS.items():
        run = backend.search_batch(spec, scifact_small.queries, K)
        assert _ids(run) == _ids(clean[name]), f"{name}: rankings differ after {fault.kind} faults"
        assert _same_run(run, clean[name]), f"{name}: scores differ after {fault.kind} faults"
        got = evaluate(scifact_small.qrels, run, METRICS).aggregate
        assert got == evaluate(scifact_small.qrels, clean[name], METRICS).aggregate
    assert proxy.fired(fault.kind) >= 2, proxy.log


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (
            Fault("drop_item", path="_msearch", times=1),
            r"_msearch of 5 queries \(first '\w+'\) failed: expected 5",
        ),
        (
            Fault("failed_shard", path="_msearch", times=1),
            r"search for query '\w+' failed: 1 of 1 shards failed",
        ),
        (
            Fault("lost_shard", path="_msearch"),
            r"search for query '\w+' failed: 1 of 1 shards failed: node_disconnected_exception: injected "
            r"\(after 1 retry in",
        ),
        (
            Fault("html", path="_msearch", times=1),
            r"_msearch of 5 queries \(first '\w+'\) failed: .*not JSON",
        ),
        (
            Fault("429", path="_msearch", seconds=1),
            r"_msearch of 5 queries \(first '\w+'\) failed \(HTTP 429\) \(after 1 retry in .*es_rejected",
        ),
    ],
    ids=["drop_item", "failed_shard", "lost_shard_forever", "html_200", "429_forever"],
)
def test_faults_that_corrupt_are_errors_naming_the_query(
    proxied, scifact_small: Collection, fault: Fault, expected: str
) -> None:
    proxy, backend, _clean = proxied
    proxy.inject(fault)
    retries = backend._http.retry.max_retries
    backend._http.retry.max_retries = 1
    try:
        with pytest.raises(InfrastructureError, match=expected):
            backend.search_batch(SPECS["bm25"], scifact_small.queries, K)
    finally:
        backend._http.retry.max_retries = retries
        proxy.inject()


HUNG_SUITE = """\
suite: {suite}
judgments:
  inline:
    - {{id: q1, text: "solar panels efficiency", relevant: {{d1: 1}}}}
    - {{id: q2, text: "river flood defences", relevant: {{d2: 1}}}}
  documents:
    - {{id: d1, title: "Solar panels", text: "efficiency of solar panels in winter"}}
    - {{id: d2, title: "Floods", text: "river flood defences in cities"}}
backend:
  type: {engine}
  connection:
    hosts: ["{url}"]
    request_timeout: 1
    max_retries: 1
latency:
  enabled: false
retrievers:
  bm25: {{type: bm25, fields: [title, text]}}
floors:
  bm25: {{ndcg@10: 0.1}}
"""


def test_a_hung_engine_reports_the_search_first_and_the_clean_up_second(engine: str, tmp_path: Path) -> None:
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    suite = f"hung-{secrets.token_hex(3)}"
    with FaultProxy(ENGINE_URLS[engine]) as proxy:
        proxy.inject(
            Fault("slow", path="_msearch", seconds=4), Fault("slow", path="", method="DELETE", seconds=4)
        )
        path = tmp_path / "retrieval_hung.yaml"
        path.write_text(HUNG_SUITE.format(suite=suite, engine=engine, url=proxy.url))
        try:
            with pytest.raises(InfrastructureError) as err:
                SuiteRunner(load_suite(path)).run()
        finally:
            _delete_leftovers(engine, suite)
    text = str(err.value)
    assert text.startswith(
        f"{engine} at {proxy.url} cannot be reached (_msearch of 2 queries (first 'q1'))"
    ), text
    assert "after 1 retry" in text and "Timeout" in text, text
    assert text.index("_msearch") < text.index("; clean-up also failed:") < text.index("deleting index"), text


def _delete_leftovers(engine: str, suite: str) -> None:
    """The throwaway index the hung run could not delete (its creator, this process, is alive)."""
    url = ENGINE_URLS[engine]
    status, found = http(url, path=f"/pytest-retrieval-{suite}-*/_mapping")
    for name in found if status == 200 and isinstance(found, dict) else ():
        http(url, "DELETE", f"/{name}")
