"""The baseline never goes silent on an existing index (issue #28): a new document, a new index
behind the alias (blue/green) or a changed analyzer is a system change, compared and reported;
a reindex that truncates the documents fails the baseline gate instead of passing on a floor."""

from __future__ import annotations

import json
import textwrap
import urllib.request
import warnings
from pathlib import Path
from typing import Dict

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.gates import evaluate
from pytest_retrieval.gates.baseline import load_comparable_baseline, update_baseline

from .conftest import http, random_name

pytestmark = pytest.mark.engines

DOCS = {f"doc-{i}": f"alpha beta word{i} gamma" for i in range(30)}
QUERIES = {f"q{i}": f"word{i} gamma" for i in range(1, 9)}


def _index(url: str, name: str, docs: Dict[str, str], analyzer: str = "standard") -> None:
    http(
        url, "PUT", f"/{name}", {"mappings": {"properties": {"text": {"type": "text", "analyzer": analyzer}}}}
    )
    lines = []
    for d, t in docs.items():
        lines += [json.dumps({"index": {"_index": name, "_id": d}}), json.dumps({"text": t})]
    req = urllib.request.Request(
        f"{url}/_bulk?refresh=true",
        data=("\n".join(lines) + "\n").encode(),
        method="POST",
        headers={"Content-Type": "application/x-ndjson"},
    )
    urllib.request.urlopen(req, timeout=30).read()


def _point(url: str, alias: str, old: str, new: str) -> None:
    actions = [{"remove": {"index": old, "alias": alias}}, {"add": {"index": new, "alias": alias}}]
    http(url, "POST", "/_aliases", {"actions": actions})


def _suite(tmp_path: Path, engine: str, url: str, index: str) -> Path:
    (tmp_path / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 doc-{q[1:]} 1\n" for q in QUERIES))
    p = tmp_path / "retrieval_live.yaml"
    p.write_text(
        textwrap.dedent(
            f"""
            suite: live
            judgments:
              queries: queries.tsv
              qrels: qrels.txt
            backend:
              type: {engine}
              connection: {{hosts: ["{url}"]}}
              index: {{name: {index}}}
            latency: {{enabled: false}}
            retrievers:
              bm25: {{type: bm25, fields: [text]}}
            regression:
              max_drop: {{ndcg@10: 0.05}}
              resamples: 500
            floors:
              bm25: {{ndcg@10: 0.0}}
            """
        )
    )
    return p


def _compare(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        suite = load_suite(path)
        result = SuiteRunner(suite).run()
    baseline, note = load_comparable_baseline(suite, result)
    assert baseline is not None, note  # never floors only
    return evaluate(result, suite.regression[0], baseline=baseline), note


def test_an_existing_index_that_changes_is_compared(es_instance, tmp_path: Path) -> None:
    engine, url = es_instance.name, es_instance.url
    blue, green, cut, alias = (random_name(t) for t in ("blue", "green", "cut", "live"))
    try:
        _index(url, blue, DOCS)
        http(url, "POST", "/_aliases", {"actions": [{"add": {"index": blue, "alias": alias}}]})
        path = _suite(tmp_path, engine, url, alias)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            suite = load_suite(path)
            update_baseline(suite, SuiteRunner(suite).run())
        fp = json.loads((tmp_path / "retrieval_live.baseline.json").read_text())["fingerprint"]
        assert fp["index"]["target"] == blue and len(fp["index"]["mapping_sha256"]) == 64

        # one unjudged document more: compared (was: every baseline item skipped)
        _index(url, blue, {"new-doc": "word1 gamma gamma unjudged"})
        outcome, note = _compare(path)
        assert "index doc count 30 -> 31" in note, note
        assert outcome.judged is not None and outcome.judged.now <= outcome.judged.before

        # blue/green behind the alias, the same analyzers: compared, the new target named
        _index(url, green, DOCS)
        _point(url, alias, blue, green)
        outcome, note = _compare(path)
        assert f"index {alias} now points to {green} (was {blue})" in note, note
        assert "mapping/settings" not in note and outcome.passed

        # another analyzer: the mapping is in the fingerprint, the change is reported
        http(url, "DELETE", f"/{green}")
        _index(url, green, DOCS, analyzer="whitespace")
        http(url, "POST", "/_aliases", {"actions": [{"add": {"index": green, "alias": alias}}]})
        _, note = _compare(path)
        assert "index mapping/settings changed" in note, note

        # a reindex that truncates the documents: the gate fails (it passed on its floor before)
        _index(url, cut, {d: t.split()[0] for d, t in DOCS.items()})
        _point(url, alias, green, cut)
        outcome, _ = _compare(path)
        assert not outcome.passed and outcome.overall.mean_diff < -0.5, outcome.message
    finally:
        for name in (blue, green, cut):
            http(url, "DELETE", f"/{name}")
