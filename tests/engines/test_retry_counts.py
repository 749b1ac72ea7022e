"""Retries are part of the verdict's story (issue #28): a real engine behind the fault proxy
sheds load (HTTP 429 with ``Retry-After``) on every other ``_msearch``; the run's metrics are
the clean ones, and the JSON report counts exactly the retries the proxy caused, in
``retries`` and in the suite's ``warnings`` (not only as captured log lines)."""

from __future__ import annotations

import json
import secrets
import textwrap

import pytest

from .conftest import ENGINE_URLS, http
from .faultproxy import Fault, FaultProxy

pytest_plugins = ["pytester"]

SUITE = """\
suite: {suite}
judgments:
  inline:
    - {{id: q1, text: "solar panels efficiency", relevant: {{d1: 1}}}}
    - {{id: q2, text: "river flood defences", relevant: {{d2: 1}}}}
    - {{id: q3, text: "wind turbines", relevant: {{d3: 1}}}}
    - {{id: q4, text: "loop gravity", relevant: {{d4: 1}}}}
  documents:
    - {{id: d1, title: "Solar panels", text: "efficiency of solar panels in winter"}}
    - {{id: d2, title: "Floods", text: "river flood defences in cities"}}
    - {{id: d3, title: "Wind", text: "wind turbines and solar farms"}}
    - {{id: d4, title: "Physics", text: "loop gravity theories"}}
backend:
  type: {engine}
  connection:
    hosts: ["{url}"]
    batch_size: 1
latency:
  enabled: false
retrievers:
  bm25: {{type: bm25, fields: [title, text]}}
  text: {{type: bm25, fields: [text]}}
floors:
  bm25: {{ndcg@10: 0.5}}
  text: {{ndcg@10: 0.5}}
"""


def test_the_json_report_counts_the_retries_of_shed_load(engine: str, pytester: pytest.Pytester) -> None:
    suite = f"retries-{secrets.token_hex(3)}"
    report = pytester.path / "report.json"
    with FaultProxy(ENGINE_URLS[engine]) as proxy:
        (pytester.path / "retrieval_retries.yaml").write_text(
            textwrap.dedent(SUITE.format(suite=suite, engine=engine, url=proxy.url))
        )
        proxy.inject(Fault("429", path="_msearch", every=2, seconds=0))
        try:
            result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--retrieval-report={report}")
        finally:
            for name in http(ENGINE_URLS[engine], path=f"/pytest-retrieval-{suite}-*/_mapping")[1] or {}:
                http(ENGINE_URLS[engine], "DELETE", f"/{name}")
        fired = proxy.fired("429")
    result.assert_outcomes(passed=2)
    assert fired >= 2  # 8 single-query _msearch requests (4 queries, 2 retrievers), every other refused
    doc = json.loads(report.read_text())["suites"][0]
    assert doc["retries"] == {"total": fired, "quality": {"HTTP 429": fired}}
    said = f"the quality pass made {fired} retries (HTTP 429: {fired})"
    assert [w for w in doc["warnings"] if w.startswith(said)], doc["warnings"]
    assert said in result.stdout.str()  # in the terminal summary too
    assert doc["retrievers"][0]["metrics"]["ndcg@10"] == 1.0  # a retried run scores as a clean one
