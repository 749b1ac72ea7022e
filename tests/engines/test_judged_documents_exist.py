"""Judged documents must exist in an existing index (issue 12): batched read-only id
lookups on Elasticsearch and OpenSearch, the missing ones reported, too many refused."""

from __future__ import annotations

import json
import textwrap
import warnings
from pathlib import Path

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.runner import SuiteRunner

from .conftest import ENGINE_URLS, backend_class, http, random_name

pytestmark = pytest.mark.engines

DOCS = {f"doc-{i}": f"alpha beta word{i} gamma" for i in range(30)}


@pytest.fixture(scope="module")
def existing(engine: str):
    """An index the suite only reads: 30 documents, plus an alias over it and a second one."""
    url = ENGINE_URLS[engine]
    name, other, alias = random_name("exist"), random_name("exist2"), random_name("alias")
    for idx in (name, other):
        http(url, "PUT", f"/{idx}", {"mappings": {"properties": {"text": {"type": "text"}}}})
    lines = []
    for d, t in DOCS.items():
        lines += [json.dumps({"index": {"_index": name, "_id": d}}), json.dumps({"text": t})]
    lines += [json.dumps({"index": {"_index": other, "_id": "only-in-other"}}), json.dumps({"text": "x"})]
    import urllib.request

    req = urllib.request.Request(
        f"{url}/_bulk?refresh=true",
        data=("\n".join(lines) + "\n").encode(),
        method="POST",
        headers={"Content-Type": "application/x-ndjson"},
    )
    urllib.request.urlopen(req, timeout=30).read()
    http(
        url, "POST", "/_aliases", {"actions": [{"add": {"index": i, "alias": alias}} for i in (name, other)]}
    )
    yield engine, url, name, alias
    for idx in (name, other):
        http(url, "DELETE", f"/{idx}")


def test_existing_ids_batched_on_an_index_and_an_alias(existing) -> None:
    engine, url, name, alias = existing
    for target in (name, alias):
        b = backend_class(engine)({"hosts": [url]}, {"name": target, "suite": "ids"})
        b.prepare(None, None)
        try:
            ids = ["doc-1", "doc-29", "nope", "only-in-other", "doc-1"]
            found = b.existing_ids(ids, batch=2)
        finally:
            b.close()
        expected = {"doc-1", "doc-29"} | ({"only-in-other"} if target == alias else set())
        assert found == expected
    status, _ = http(url, "GET", f"/{name}/_count")
    assert status == 200  # still there: read-only


def _suite(tmp_path: Path, engine: str, url: str, index: str, extra: str = "") -> Path:
    (tmp_path / "queries.tsv").write_text("q1\talpha word1\nq2\tword2 gamma\nq3\tword3\n")
    qrels = ["q1 0 doc-1 1", "q1 0 missing-a 1", "q2 0 doc-2 1", "q3 0 missing-b 1", "q3 0 missing-c 0"]
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    p = tmp_path / "retrieval_existing.yaml"
    p.write_text(
        textwrap.dedent(
            f"""
            suite: existing
            judgments:
              queries: queries.tsv
              qrels: qrels.txt
            {extra}
            backend:
              type: {engine}
              connection: {{hosts: ["{url}"]}}
              index: {{name: {index}}}
            latency: {{enabled: false}}
            retrievers:
              bm25: {{type: bm25, fields: [text]}}
            floors:
              bm25: {{ndcg@10: 0.0}}
            """
        )
    )
    return p


def _run(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SuiteRunner(load_suite(path)).run()


def test_missing_documents_of_an_existing_index(existing, tmp_path: Path) -> None:
    engine, url, name, _ = existing
    with pytest.raises(
        ConfigError,
        match=r"2 of 4 relevant judgments .* missing from the index .*queries: q3 \(missing-b, missing-c\); q1",
    ):
        _run(_suite(tmp_path, engine, url, name))
    ok = _suite(tmp_path, engine, url, name, "  max_missing_documents: 0.9")
    result = _run(ok)
    md = result.missing_documents
    assert md.count == 3 and md.missing_relevant == 2 and md.hopeless == ["q3"]
    assert md.affected() == ["q3", "q1"]
    ev = result.retrievers["bm25"].evaluation
    assert ev.per_query["ndcg@10"]["q3"] == 0.0 and "q3" in ev.evaluated
    assert any(f"missing from the index {name!r}" in line for line in result.check_lines())


def test_an_expectation_of_a_document_missing_from_the_index(existing, tmp_path: Path) -> None:
    """Issue #28: an ``excludes`` of a document the index does not hold would pass forever."""
    engine, url, name, _ = existing
    path = _suite(tmp_path, engine, url, name, "  max_missing_documents: 0.9")
    path.write_text(
        path.read_text() + "expectations:\n  - {query: alpha, contains: [doc-1], excludes: [doc-1x]}\n"
    )
    with pytest.raises(
        ConfigError,
        match=rf"expectations\[0\]\.excludes\[0\]: document 'doc-1x' is not in the index '{name}'",
    ):
        _run(path)
