"""A change that should not touch ranking passes a stability gate on a real engine (issue #33):
the replica count of the live index changed, then the index re-created from the same documents;
canary and judged queries compared with the baseline's stored rankings each time. One small
index per module (30 documents)."""

from __future__ import annotations

import json
import textwrap
import urllib.request
import warnings
from pathlib import Path
from typing import Iterator

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.gates.baseline import update_baseline
from pytest_retrieval.gates.stability import judge_stability
from pytest_retrieval.pytest_plugin.stability import StabilityInputs

from .conftest import http, random_name

pytestmark = pytest.mark.engines

DOCS = {f"doc-{i}": f"alpha beta word{i} gamma delta{i % 7} epsilon{i % 3}" for i in range(30)}
QUERIES = {f"q{i}": f"word{i} gamma" for i in range(1, 9)}
CANARY = {f"c{i}": f"delta{i} epsilon{i % 3} alpha" for i in range(7)}


def _index(url: str, name: str) -> None:
    settings = {"settings": {"number_of_shards": 1, "number_of_replicas": 0}}
    http(url, "PUT", f"/{name}", settings, timeout=60)  # a loaded CI machine: the shard takes a while
    lines = []
    for d, t in DOCS.items():
        lines += [json.dumps({"index": {"_index": name, "_id": d}}), json.dumps({"text": t})]
    req = urllib.request.Request(
        f"{url}/_bulk?refresh=true",
        data=("\n".join(lines) + "\n").encode(),
        method="POST",
        headers={"Content-Type": "application/x-ndjson"},
    )
    urllib.request.urlopen(req, timeout=60).read()


@pytest.fixture(scope="module")
def live_index(es_instance) -> Iterator[tuple]:
    name = random_name("stable")
    _index(es_instance.url, name)
    try:
        yield es_instance, name
    finally:
        http(es_instance.url, "DELETE", f"/{name}")


def _suite(tmp_path: Path, engine: str, url: str, index: str) -> Path:
    (tmp_path / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    (tmp_path / "canary.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in CANARY.items()))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 doc-{q[1:]} 1\n" for q in QUERIES))
    p = tmp_path / "retrieval_live.yaml"
    p.write_text(
        textwrap.dedent(
            f"""
            suite: live
            judgments: {{queries: queries.tsv, qrels: qrels.txt, canary: canary.tsv}}
            backend:
              type: {engine}
              connection: {{hosts: ["{url}"]}}
              index: {{name: {index}}}
            latency: {{enabled: false}}
            retrievers:
              bm25: {{type: bm25, fields: [text]}}
            stability:
              bm25: {{rbo@10: 0.99, top1_changed: 0.0}}
            """
        )
    )
    return p


def _gates(path: Path) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        suite = load_suite(path)
        result = SuiteRunner(suite).run()
    inputs = StabilityInputs()
    out = []
    for gate in suite.stability:
        compared = inputs.compared(suite, result, gate.retriever)
        texts = {**result.judgments.queries, **result.canary}
        out.append(judge_stability("live", gate, compared, texts=texts, titles={}, judged_docs={}))
    return out


def test_replica_change_and_recreated_index_pass_the_stability_gate(live_index, tmp_path: Path) -> None:
    instance, name = live_index
    path = _suite(tmp_path, instance.name, instance.url, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        suite = load_suite(path)
        update_baseline(suite, SuiteRunner(suite).run())
    stored = json.loads((tmp_path / "retrieval_live.baseline.json").read_text())["retrievers"]["bm25"]
    assert set(stored["canary"]) == set(CANARY)

    # a replica change on the live index (yellow on a single node: searches are unchanged)
    http(instance.url, "PUT", f"/{name}/_settings", {"index": {"number_of_replicas": 1}})
    outcomes = _gates(path)
    assert all(o.passed for o in outcomes), [o.message for o in outcomes]
    assert outcomes[0].canary == len(CANARY) and outcomes[0].judged == len(QUERIES)

    # the same index re-created from the same documents
    http(instance.url, "DELETE", f"/{name}")
    _index(instance.url, name)
    outcomes = _gates(path)
    assert all(o.passed for o in outcomes), [o.message for o in outcomes]
    assert outcomes[0].value == pytest.approx(1.0, abs=1e-12)
