"""A real suite over the ``http`` backend: SciFact's test split (300 queries, 5,183 abstracts)
asked of the service of ``service.py`` (BM25 of the embedded engine behind http.server), four
requests in flight, one query per request and 20 per request (``backend.batch``); its nDCG@10
and recall@100 equal the embedded engine's BM25, query by query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
import yaml

from pytest_retrieval.execution.runner import run_suite
from pytest_retrieval.io.beir import load_beir

from .service import TOKEN, SearchService


def suite(folder: Path, scifact: Path, backend: Dict[str, Any], leaf: Dict[str, Any]) -> Path:
    doc = {
        "suite": "scifact-http",
        "judgments": {"beir": str(scifact), "split": "test"},
        "backend": backend,
        "evaluation": {"metrics": ["ndcg@10", "recall@100"]},
        "latency": {"max_queries": 20, "repetitions": 1, "warmup": 0},
        "retrievers": {"r": leaf},
        "floors": {"r": {"ndcg@10": 0.6}},
    }
    path = folder / f"retrieval_{backend['type']}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("batch", [None, 20])
def test_scifact_over_http_scores_as_the_engine(
    tmp_path: Path, scifact_dir: Path, monkeypatch: pytest.MonkeyPatch, batch: Optional[int]
) -> None:
    corpus = load_beir(scifact_dir, "test", with_corpus=True).corpus
    assert corpus is not None
    monkeypatch.setenv("SEARCH_TOKEN", TOKEN)
    with SearchService(corpus) as service:
        http = {
            "type": "http",
            "request": {
                "method": "POST",
                "url": service.url + "/search",
                "body": {"query": "{query}", "size": "{k}", "id": "{query_id}"},
                "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"},
            },
            "response": {"hits": "results", "id": "doc.id", "score": "score", "took": "took"},
            "max_concurrency": 4,
        }
        if batch:
            http["batch"] = {
                "size": batch,
                "url": service.url + "/msearch",
                "body": {"searches": "{requests}"},
                "answers": "responses",
            }
        on_service = run_suite(suite(tmp_path, scifact_dir, http, {"type": "service"}))
        paths = [r["path"] for r in service.requests]
    on_engine = run_suite(suite(tmp_path, scifact_dir, {"type": "embedded"}, {"type": "bm25"}))
    mine, theirs = on_service.retrievers["r"].evaluation, on_engine.retrievers["r"].evaluation
    for metric in ("ndcg@10", "recall@100"):
        assert mine.per_query[metric] == theirs.per_query[metric], metric
    assert mine.aggregate["ndcg@10"] > 0.6
    # one request per query (or per batch: ceil(300 / 20)), then one per timed query
    assert paths.count("/msearch") == (15 if batch else 0)
    assert paths.count("/search") == (0 if batch else 300) + 20
    latency = on_service.retrievers["r"].latency
    assert latency is not None and len(latency.server_took_ms) == 20  # the service's own time
    assert TOKEN not in json.dumps(on_service.backend_info)
