"""The same YAML suite runs unchanged on the embedded engine and every engine of the matrix
(Elasticsearch 8.19 and 9.5, OpenSearch 2.19 and 3.6).

``example_suite/retrieval_scifact_mini.yaml`` (BM25, MiniLM kNN, RRF and weighted fusion,
100 SciFact queries over 671 abstracts) is run through pytest in a subprocess once per
backend, switching only ``--retrieval-backend`` (its YAML reads the engine URL from
``${RETRIEVAL_HOSTS:-...}``). Every gate passes on every backend, and the reports' nDCG@10 of
each retriever agree with the embedded engine's within 0.01: kNN is the same up to ties, BM25 differs
only by Lucene's one-byte field lengths (against the embedded engine's exact lengths), and the
client-side fusions follow their inputs.

The runs go one after the other (the suite gates p95 latency); each engine run builds its own
throwaway index and deletes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, Optional

import pytest

from .conftest import INSTANCES, Instance, _require, http, instance_params

pytestmark = pytest.mark.engines

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "example_suite" / "retrieval_scifact_mini.yaml"
RETRIEVERS = ("bm25", "dense", "rrf", "weighted")
NDCG_TOLERANCE = 0.01
TIMEOUT_S = 300  # per backend


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory) -> Callable[[Optional[Instance]], dict]:
    """``suite_run(instance)`` (None: the embedded engine) -> {"rc", "output", "report"}: the
    example suite run by pytest on that backend, once per module. The runs go one after the
    other (its rrf p95_ms floor measures latency: a concurrent run would load the CPUs the
    engine under test needs)."""
    out_dir = tmp_path_factory.mktemp("same-suite")
    results: Dict[str, dict] = {}

    def run(instance: Optional[Instance]) -> dict:
        key = "embedded" if instance is None else instance.key
        if key in results:
            return results[key]
        backend = "embedded" if instance is None else instance.name
        report = out_dir / f"{key}.json"
        env = dict(os.environ)
        env["RETRIEVAL_HOSTS"] = "http://127.0.0.1:9" if instance is None else instance.url
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            str(SUITE),
            "-p",
            "no:cacheprovider",
            "-q",
            "--retrieval-backend",
            backend,
            "--retrieval-report",
            str(report),
        ]
        try:
            proc = subprocess.run(
                cmd,
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=TIMEOUT_S,
            )
            rc, output = proc.returncode, proc.stdout
        except subprocess.TimeoutExpired as exc:
            partial = exc.output or b""
            if isinstance(partial, bytes):
                partial = partial.decode(errors="replace")
            rc, output = "timeout", f"no answer in {TIMEOUT_S} s\n{partial}"
        results[key] = {
            "rc": rc,
            "output": output,
            "report": json.loads(report.read_text()) if report.exists() else None,
        }
        return results[key]

    return run


def _suite_report(result: dict) -> dict:
    assert result["report"] is not None, f"no JSON report; pytest said:\n{result['output'][-3000:]}"
    (suite,) = result["report"]["suites"]
    return suite


@pytest.mark.parametrize("instance", [pytest.param(None, id="embedded")] + instance_params(INSTANCES))
def test_every_gate_passes(instance, suite_run, record_property):
    if instance is not None:
        _require(instance)
    result = suite_run(instance)
    name = "embedded" if instance is None else instance.id
    assert result["rc"] == 0, f"pytest exited {result['rc']} on {name}:\n{result['output'][-3000:]}"
    suite = _suite_report(result)
    assert suite["backend"]["backend"] == ("embedded" if instance is None else instance.name)
    if instance is not None:
        assert suite["backend"]["index_mode"] == "throwaway"
        assert suite["backend"]["version"] == instance.version
        assert suite["backend"]["client"]  # the client and its version are in the report
        assert suite["backend"]["vector_index"]["quantization"] == "none"
        assert not suite["warnings"], suite["warnings"]
    assert suite["queries"]["judged"] == 100
    gates = suite["gates"]
    assert gates and {g["retriever"] for g in gates} == set(RETRIEVERS)
    failed = [g for g in gates if not g["passed"]]
    assert not failed, f"{name}: gates not met: {failed}"
    for r in suite["retrievers"]:
        record_property(f"{r['name']}_ndcg@10", r["metrics"]["ndcg@10"])
    print(name, {r["name"]: round(r["metrics"]["ndcg@10"], 4) for r in suite["retrievers"]})


@pytest.mark.parametrize("instance", instance_params(INSTANCES))
def test_ndcg_agrees_with_embedded(instance, suite_run, record_property):
    """Each engine's report agrees with the embedded engine's within 0.01 nDCG@10 for every
    retriever (so any two engines within 0.02), and the run deleted its throwaway index."""
    _require(instance)
    ndcg = {}
    for key, inst in (("embedded", None), (instance.id, instance)):
        suite = _suite_report(suite_run(inst))
        ndcg[key] = {r["name"]: r["metrics"]["ndcg@10"] for r in suite["retrievers"]}
        assert set(ndcg[key]) == set(RETRIEVERS)
    for name in RETRIEVERS:
        a, b = ndcg["embedded"][name], ndcg[instance.id][name]
        record_property(f"{name}_ndcg@10_diff", b - a)
        print(f"{name}: embedded {a:.4f}, {instance.id} {b:.4f} (diff {b - a:+.4f})")
        assert abs(b - a) <= NDCG_TOLERANCE, (name, a, b)
    index = _suite_report(suite_run(instance))["backend"]["index"]
    assert http(instance.url, path=f"/{index}")[0] == 404, f"{index} left behind"
