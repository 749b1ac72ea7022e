"""Session fixtures of the engine tests: real Elasticsearch and OpenSearch, every version of
the matrix that ``scripts/engines`` runs (Elasticsearch 8.19 and 9.5, OpenSearch 2.19 and 3.6).

Start them with ``scripts/engines up`` (es8 :19200, os2 :19201, es9 :19202, os3 :19203). The
instances and their versions come from ``scripts/engines list``; ``PYTEST_RETRIEVAL_ENGINES``
("es9=http://host:9200,os3=http://host:9201") restricts the run to some and points them
elsewhere. Every engine test is parametrised over the instances (ids like
``elasticsearch-9.5.0``). An instance that cannot be reached, or that answers with another
engine or major, skips its tests, except under ``CI=true`` where that is a failure.

Clients: one Python environment holds one ``elasticsearch`` client major, and each
Elasticsearch major is tested with its own (8.x client against 8.19, 9.x against 9.5), so the
items of an Elasticsearch instance whose major differs from the installed client's are
deselected (named in the terminal summary); ``scripts/test`` runs them again in an
environment with the other client, selecting them with ``PYTEST_RETRIEVAL_ENGINES_ONLY=es8``
(only the items parametrised with those instances). ``opensearch-py`` 3 tests both
OpenSearch majors.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import pytest

from pytest_retrieval.backends.search_engine.versions import client_version, major
from pytest_retrieval.types import Document, DocVectors, Query
from tests.ci import unavailable

ROOT = Path(__file__).resolve().parents[2]
N_DOCS = 300
N_QUERIES = 30


class Instance(str):
    """One engine server of the matrix. As a string it is its engine's name ("elasticsearch" /
    "opensearch"), so tests written before the matrix, which take ``engine`` as that name, run
    unchanged on every instance; equality and hashing between instances go by ``key``."""

    key: str  # es8 | es9 | os2 | os3 (es8x2 ...: a 2-node cluster)
    name: str  # elasticsearch | opensearch
    version: str  # the version scripts/engines installs there
    url: str

    def __new__(cls, key: str, name: str, version: str, url: str) -> Instance:
        self = super().__new__(cls, name)
        self.key, self.name, self.version, self.url = key, name, version, url
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Instance):
            return (self.key, self.url) == (other.key, other.url)
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self.key, self.url))

    def __repr__(self) -> str:
        return f"Instance({self.key}, {self.id}, {self.url})"

    @property
    def id(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    def client_problem(self) -> Optional[str]:
        """Why the installed client cannot test this instance, or None."""
        if self.name != "elasticsearch":
            return None
        client = client_version("elasticsearch")
        if client is None:
            return "the elasticsearch client is not installed"
        if major(client.rsplit(" ", 1)[-1]) != self.major:
            return f"it is tested with the {self.major}.x elasticsearch client, and {client} is installed"
        return None


def _listed(*args: str) -> Dict[str, Instance]:
    """The instances ``scripts/engines list`` names (with ``--nodes 2``: the 2-node clusters)."""
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "engines"), "list", *args], capture_output=True, text=True, check=True
    ).stdout
    known = {}
    for line in out.splitlines():
        key, name, version, url = line.split()
        known[key] = Instance(key, name, version, url)
    return known


def _instances() -> List[Instance]:
    known = _listed()
    wanted = os.environ.get("PYTEST_RETRIEVAL_ENGINES", "").strip()
    if not wanted:
        return list(known.values())
    chosen = []
    for item in wanted.split(","):
        key, _, url = item.strip().partition("=")
        if key not in known:
            raise pytest.UsageError(
                f"PYTEST_RETRIEVAL_ENGINES: unknown instance {key!r} (known: {sorted(known)})"
            )
        base = known[key]
        chosen.append(Instance(key, base.name, base.version, url or base.url))
    return chosen


INSTANCES: List[Instance] = _instances()
ES_INSTANCES = [i for i in INSTANCES if i.name == "elasticsearch"]
OS_INSTANCES = [i for i in INSTANCES if i.name == "opensearch"]


class _EngineURLs(Mapping):
    """``ENGINE_URLS[instance]`` -> its URL; ``ENGINE_URLS["elasticsearch"]`` (tests written
    before the matrix) -> the first instance of that engine."""

    def __getitem__(self, key: Any) -> str:
        if isinstance(key, Instance):
            return key.url
        found = next((i for i in INSTANCES if i.name == key), None)
        if found is None:
            raise KeyError(key)
        return found.url

    def __iter__(self):
        return iter(dict.fromkeys(i.name for i in INSTANCES))

    def __len__(self) -> int:
        return len({i.name for i in INSTANCES})


ENGINE_URLS: Mapping = _EngineURLs()

# 2-node clusters (tests/engines/test_clusters.py), opt-in until CI has budgeted them
CLUSTERS_OPTED_IN = os.environ.get("PYTEST_RETRIEVAL_CLUSTERS", "") not in ("", "0")
CLUSTERS: List[Instance] = list(_listed("--nodes", "2").values()) if CLUSTERS_OPTED_IN else []
collect_ignore = [] if CLUSTERS_OPTED_IN else ["test_clusters.py"]
ONLY = {k.strip() for k in os.environ.get("PYTEST_RETRIEVAL_ENGINES_ONLY", "").split(",") if k.strip()}


def http(url: str, method: str = "GET", path: str = "/", body: Any = None, timeout: float = 10):
    """A tiny raw HTTP client for the tests' own setup and checks (outside the backends)."""
    if isinstance(body, str):
        data, ctype = body.encode(), "application/x-ndjson"
    else:
        data, ctype = (None if body is None else json.dumps(body).encode()), "application/json"
    req = urllib.request.Request(
        url.rstrip("/") + path, data=data, method=method, headers={"Content-Type": ctype}
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


def _answering(url: str):
    """(distribution, version) of the server at url (GET /, or the local node's info where the
    integ-test Elasticsearch has no root endpoint)."""
    status, body = http(url, path="/", timeout=5)
    if status == 200 and isinstance(body, dict):
        ver = body.get("version") or {}
        return ver.get("distribution", "elasticsearch"), str(ver.get("number"))
    status, body = http(url, path="/_nodes/_local?filter_path=nodes.*.version", timeout=5)
    if status == 200:
        return "elasticsearch", str(next(iter(body["nodes"].values()))["version"])
    raise RuntimeError(f"HTTP {status}")


_checked: Dict[str, str] = {}


def _require(instance: Instance) -> Instance:
    """The instance answers, with the expected engine and major (its tests are about that
    version); otherwise fail under CI=true, skip elsewhere."""
    if instance.key not in _checked:
        try:
            dist, version = _answering(instance.url)
            if dist != instance.name or major(version) != instance.major:
                problem = f"it is {dist} {version}, not {instance.name} {instance.major}.x"
            else:
                problem = ""
        except Exception as exc:  # noqa: BLE001
            problem = f"{type(exc).__name__}: {exc}"
        _checked[instance.key] = problem
    problem = _checked[instance.key]
    if problem:
        msg = (
            f"{instance.id} is not usable at {instance.url} ({problem}); "
            f"start it with `scripts/engines up {instance.key}`"
        )
        unavailable(msg)
    return instance


def peer(instance: Instance) -> Instance:
    """The other engine's instance on the same Lucene generation (es8 <-> os2 on Lucene 9,
    es9 <-> os3 on Lucene 10), else any instance of the other engine."""
    other = "opensearch" if instance.name == "elasticsearch" else "elasticsearch"
    pairs = {"es8": "os2", "os2": "es8", "es9": "os3", "os3": "es9"}
    candidates = [i for i in INSTANCES if i.name == other]
    chosen = next((i for i in candidates if i.key == pairs.get(instance.key)), None) or next(
        iter(candidates), None
    )
    if chosen is None:
        msg = f"no {other} instance to compare {instance.id} with (PYTEST_RETRIEVAL_ENGINES)"
        unavailable(msg)
    return _require(chosen)


def instance_params(instances: List[Instance]):
    return [pytest.param(i, id=i.id) for i in instances]


@pytest.fixture(scope="session", params=instance_params(INSTANCES))
def engine(request) -> Instance:
    """Parametrises a test over every instance (each skipped/failed if unreachable)."""
    return _require(request.param)


@pytest.fixture(scope="session", params=instance_params(ES_INSTANCES))
def es_instance(request) -> Instance:
    return _require(request.param)


@pytest.fixture(scope="session", params=instance_params(OS_INSTANCES))
def os_instance(request) -> Instance:
    return _require(request.param)


def pytest_collection_modifyitems(config, items):
    """Deselect the items of an Elasticsearch instance the installed client does not test
    (scripts/test runs them with the other client) and, with PYTEST_RETRIEVAL_ENGINES_ONLY,
    every item not parametrised with one of the instances named there."""
    keep, dropped, reasons = [], [], {}
    for item in items:
        used = [
            v
            for v in getattr(getattr(item, "callspec", None), "params", {}).values()
            if isinstance(v, Instance)
        ]
        # (a 2-node cluster es8x2 belongs to its server's pass: es8)
        if ONLY and not any(i.key.removesuffix("x2") in ONLY for i in used):
            dropped.append(item)
            continue
        problems = [(i, i.client_problem()) for i in used]
        problems = [(i, p) for i, p in problems if p]
        if problems:
            dropped.append(item)
            i, p = problems[0]
            reasons.setdefault(i.id, [p, 0])[1] += 1
            continue
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    config._engine_client_deselected = reasons  # noqa: SLF001 - read by the summary below


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for inst, (why, n) in sorted(getattr(config, "_engine_client_deselected", {}).items()):
        terminalreporter.write_line(
            f"engine tests: {n} item(s) of {inst} deselected here: {why} "
            f"(scripts/test runs them with that client)"
        )


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


def backend_class(engine: Any):
    """The backend class of an engine, given as an Instance or by name."""
    if getattr(engine, "name", engine) == "elasticsearch":
        from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend

        return ElasticsearchBackend
    from pytest_retrieval.backends.opensearch import OpenSearchBackend

    return OpenSearchBackend


def vector_mapping(engine: str, dims: int) -> Dict[str, Any]:
    """A vector field as a team would write it by hand (HNSW, cosine; no quantisation pin
    beyond the index type)."""
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


@pytest.fixture(scope="session")
def prepared(engine: Instance, scifact_small: Collection):
    """A prepared throwaway-index backend per instance, shared by the read-only tests."""
    backend = backend_class(engine.name)({"hosts": [engine.url]}, {"suite": "engine tests"})
    backend.prepare(scifact_small.documents, scifact_small.vectors)
    yield backend
    backend.close()


# ---- the whole SciFact collection (parity tests): each instance's index built once per session ----

SCIFACT_SUITE = "scifact parity"


@pytest.fixture(scope="session")
def scifact_full(scifact_dir: Path) -> Collection:
    """All 5,183 SciFact abstracts with their precomputed MiniLM vectors, and the 300 queries
    of the BEIR test split (with their query vectors), in qrels order."""
    from pytest_retrieval.io.beir import load_beir

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


def _scifact_backend(instance: Instance, collection: Collection):
    """A throwaway 1-shard index of the whole collection (the backend's own mapping: standard
    analyzer on title/text, pinned float HNSW cosine vectors); deleted by close().

    Built with periodic refresh off (the backend refreshes once at the end) and merged to one
    segment: a bulk load under a 1 s refresh leaves many small segments that the engine merges
    in the background, each merge rebuilding HNSW graphs, so an approximate kNN search could
    answer differently a minute later (and Elasticsearch searches segments concurrently, whose
    shared kNN bound is timing-dependent). One segment keeps every search of the session
    repeatable, which the exact server/client comparisons need."""
    backend = backend_class(instance.name)(
        {"hosts": [instance.url]}, {"suite": SCIFACT_SUITE, "settings": {"refresh_interval": "-1"}}
    )
    try:
        backend.prepare(collection.documents, collection.vectors)
        status, body = http(
            instance.url, "POST", f"/{backend.index_name}/_forcemerge?max_num_segments=1", timeout=300
        )
        assert status == 200, f"force merge of {backend.index_name} failed: {body}"
        # Warm the server's kNN path before any measured search. On JDK 21+ Lucene 10 computes
        # vector similarities with the Panama Vector API, whose float add-reductions have no
        # specified order: interpreted and C2-compiled code round differently, and a cold
        # server's first kNN scores differ by an ulp from its warm ones (measured on OpenSearch
        # 3.6 / JDK 25: 184 scores in 13 of 300 queries; none once warm). A leaf run taken
        # cold against a hybrid query run warm then differs by ~1e-6 after min-max
        # normalisation (which divides by the kNN score range, ~0.07 on SciFact).
        from pytest_retrieval.backends.base import KnnSpec

        for _ in range(4):
            backend.search_batch(KnnSpec(similarity="cosine"), collection.queries, 100)
    except BaseException:
        backend.close()
        raise
    return backend


@pytest.fixture(scope="session")
def scifact_index(scifact_full: Collection):
    """``scifact_index(instance)``: that instance's SciFact backend, built on first use and
    kept for the session (the fusion and leaf parity tests share it)."""
    built: Dict[str, Any] = {}

    def get(instance: Instance):
        if instance.key not in built:
            built[instance.key] = _scifact_backend(_require(instance), scifact_full)
        return built[instance.key]

    yield get
    for backend in built.values():
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
    selects exactly the tests that need no server (applied here, not per module). It also
    carries an ``xdist_group``, its module's unless the module names one: ``scripts/test`` runs
    the engine phases on two workers with ``--dist loadgroup``, so a module's items (and its
    module-scoped indexes) stay on one worker, and the modules sharing a session index (the
    full SciFact one) share a worker too. Every item of a 2-node cluster is in one group, so no
    item searches a cluster while test_clusters has stopped one of its nodes."""
    if ENGINES_DIR in Path(str(item.fspath)).resolve().parents:
        item.add_marker(pytest.mark.engines)
        params = getattr(getattr(item, "callspec", None), "params", {}).values()
        if any(isinstance(v, Instance) and v.key.endswith("x2") for v in params):
            # a 2-node cluster's items on one worker: test_clusters stops and restarts its nodes
            item.add_marker(pytest.mark.xdist_group("clusters"))
        elif item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(Path(str(item.fspath)).stem))
