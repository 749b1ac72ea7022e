"""Session fixtures of the engine tests: real Elasticsearch and OpenSearch.

Start them with ``scripts/engines up`` (Elasticsearch on 19200, OpenSearch on 19201), or
point ``PYTEST_RETRIEVAL_ES_URL`` / ``PYTEST_RETRIEVAL_OS_URL`` elsewhere. An engine that
cannot be reached skips its tests, except under ``CI=true`` where that is a failure.
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

from pytest_retrieval.types import Document, DocVectors, Query
from tests.ci import unavailable

ES_URL = os.environ.get("PYTEST_RETRIEVAL_ES_URL", "http://127.0.0.1:19200")
OS_URL = os.environ.get("PYTEST_RETRIEVAL_OS_URL", "http://127.0.0.1:19201")
ENGINE_URLS = {"elasticsearch": ES_URL, "opensearch": OS_URL}

N_DOCS = 300
N_QUERIES = 30


def http(url: str, method: str = "GET", path: str = "/", body: Any = None, timeout: float = 10):
    """A tiny raw HTTP client for the tests' own setup and checks (outside the backends)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        url.rstrip("/") + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw or b"null")
        except ValueError:
            return exc.code, raw.decode(errors="replace")


def _require(engine: str) -> str:
    url = ENGINE_URLS[engine]
    try:
        status, _ = http(url, path="/_cluster/health", timeout=5)
        ok = status == 200
    except Exception as exc:  # noqa: BLE001
        ok, status = False, f"{type(exc).__name__}: {exc}"
    if not ok:
        msg = f"{engine} is not reachable at {url} ({status}); start it with `scripts/engines up {engine}`"
        unavailable(msg)
    return url


@pytest.fixture(scope="session")
def es_url() -> str:
    return _require("elasticsearch")


@pytest.fixture(scope="session")
def os_url() -> str:
    return _require("opensearch")


@dataclass
class Collection:
    documents: List[Document]
    vectors: DocVectors
    queries: List[Query]
    qrels: Dict[str, Dict[str, int]]


@pytest.fixture(scope="session")
def scifact_small(scifact_dir: Path) -> Collection:
    """A few hundred SciFact documents (including the relevant ones of the chosen test
    queries, so BM25 and kNN have something to find) with their MiniLM vectors."""
    qrels: Dict[str, Dict[str, int]] = {}
    with open(scifact_dir / "qrels" / "test.tsv") as fh:
        next(fh)
        for line in fh:
            qid, did, rel = line.rstrip("\n").split("\t")
            qrels.setdefault(qid, {})[did] = int(rel)
    chosen_q = list(qrels)[:N_QUERIES]
    wanted = {d for q in chosen_q for d in qrels[q]}
    documents: List[Document] = []
    with open(scifact_dir / "corpus.jsonl") as fh:
        for line in fh:
            d = json.loads(line)
            if d["_id"] in wanted or len(documents) < N_DOCS - len(wanted):
                documents.append(Document(d["_id"], {"title": d["title"], "text": d["text"]}))
            if len(documents) >= N_DOCS and wanted <= {x.doc_id for x in documents}:
                break
    emb = scifact_dir / "embeddings" / "all-MiniLM-L6-v2"
    corpus_ids = (emb / "corpus_ids.txt").read_text().split()
    row = {d: i for i, d in enumerate(corpus_ids)}
    matrix = np.load(emb / "corpus.npy", mmap_mode="r")
    vectors = DocVectors(
        [d.doc_id for d in documents],
        np.asarray(matrix[[row[d.doc_id] for d in documents]], dtype=np.float32),
    )
    q_ids = (emb / "query_ids.txt").read_text().split()
    q_row = {q: i for i, q in enumerate(q_ids)}
    q_matrix = np.load(emb / "queries.npy")
    texts = {}
    with open(scifact_dir / "queries.jsonl") as fh:
        for line in fh:
            q = json.loads(line)
            texts[q["_id"]] = q["text"]
    queries = [Query(q, texts[q], q_matrix[q_row[q]]) for q in chosen_q]
    return Collection(documents, vectors, queries, {q: qrels[q] for q in chosen_q})


def backend_class(engine: str):
    if engine == "elasticsearch":
        from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend

        return ElasticsearchBackend
    from pytest_retrieval.backends.opensearch import OpenSearchBackend

    return OpenSearchBackend


def vector_mapping(engine: str, dims: int) -> Dict[str, Any]:
    if engine == "elasticsearch":
        return {
            "type": "dense_vector",
            "dims": dims,
            "index": True,
            "similarity": "cosine",
            "index_options": {"type": "hnsw"},
        }
    return {
        "type": "knn_vector",
        "dimension": dims,
        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"},
    }


def random_name(tag: str) -> str:
    return f"pytest-retrieval-{tag}-{secrets.token_hex(4)}"


@pytest.fixture(scope="session", params=["elasticsearch", "opensearch"])
def engine(request) -> str:
    """Parametrises a test over both engines (each skipped/failed if unreachable)."""
    _require(request.param)
    return request.param


@pytest.fixture(scope="session")
def prepared(engine: str, scifact_small: Collection):
    """A prepared throwaway-index backend per engine, shared by the read-only tests."""
    backend = backend_class(engine)({"hosts": [ENGINE_URLS[engine]]}, {"suite": "engine tests"})
    backend.prepare(scifact_small.documents, scifact_small.vectors)
    yield backend
    backend.close()


# ---- the whole SciFact collection (parity tests): each engine index built once per session ----

SCIFACT_SUITE = "scifact parity"


@pytest.fixture(scope="session")
def scifact_full(scifact_dir: Path) -> Collection:
    """All 5,183 SciFact abstracts with their precomputed MiniLM vectors, and the 300 queries
    of the BEIR test split (with their query vectors), in qrels order."""
    from pytest_retrieval.suite.judgments import load_beir

    js = load_beir(scifact_dir, "test")
    emb = scifact_dir / "embeddings" / "all-MiniLM-L6-v2"
    vectors = DocVectors(
        (emb / "corpus_ids.txt").read_text().split(),
        np.load(emb / "corpus.npy").astype(np.float32, copy=False),
        embedder_id="all-MiniLM-L6-v2 (precomputed)",
    )
    q_row = {q: i for i, q in enumerate((emb / "query_ids.txt").read_text().split())}
    q_matrix = np.load(emb / "queries.npy").astype(np.float32, copy=False)
    queries = [Query(q, js.queries[q], q_matrix[q_row[q]]) for q in js.qrels]
    assert len(js.corpus) == 5183 and len(queries) == 300
    return Collection(js.corpus, vectors, queries, js.qrels)


def _scifact_backend(engine: str, collection: Collection):
    """A throwaway 1-shard index of the whole collection (the backend's own mapping: standard
    analyzer on title/text, HNSW cosine vectors); deleted by close().

    Built with periodic refresh off (the backend refreshes once at the end) and merged to one
    segment: a bulk load under a 1 s refresh leaves many small segments that the engine merges
    in the background, each merge rebuilding HNSW graphs, so an approximate kNN search could
    answer differently a minute later (and Elasticsearch searches segments concurrently, whose
    shared kNN bound is timing-dependent). One segment keeps every search of the session
    repeatable, which the exact server/client comparisons need."""
    backend = backend_class(engine)(
        {"hosts": [ENGINE_URLS[engine]]}, {"suite": SCIFACT_SUITE, "settings": {"refresh_interval": "-1"}}
    )
    try:
        backend.prepare(collection.documents, collection.vectors)
        status, body = http(
            ENGINE_URLS[engine], "POST", f"/{backend.index_name}/_forcemerge?max_num_segments=1", timeout=300
        )
        assert status == 200, f"force merge of {backend.index_name} failed: {body}"
    except BaseException:
        backend.close()
        raise
    return backend


@pytest.fixture(scope="session")
def scifact_es(es_url: str, scifact_full: Collection):
    backend = _scifact_backend("elasticsearch", scifact_full)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def scifact_os(os_url: str, scifact_full: Collection):
    backend = _scifact_backend("opensearch", scifact_full)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def scifact_embedded(scifact_full: Collection):
    from pytest_retrieval.backends.embedded.backend import EmbeddedBackend

    backend = EmbeddedBackend()
    backend.prepare(scifact_full.documents, scifact_full.vectors)
    yield backend
    backend.close()


ENGINES_DIR = Path(__file__).resolve().parent


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every test under tests/engines/ carries the ``engines`` marker, so ``-m "not engines"``
    selects exactly the tests that need no server (applied here, not per module)."""
    if ENGINES_DIR in Path(str(item.fspath)).resolve().parents:
        item.add_marker(pytest.mark.engines)
