"""The backend registry: built-ins by name, backends registered in the process or declared by
installed packages (entry point group ``pytest_retrieval.backends``), an unknown name refused."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest

from pytest_retrieval.backends import registry
from pytest_retrieval.backends.base import Backend, SearchResult
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.types import Ranking


class FakeBackend:
    """A structural Backend: no base class."""

    name = "fake"

    def __init__(self, connection, index):
        self.connection, self.index = connection, index

    def prepare(self, documents, doc_vectors):
        pass

    def search_batch(self, spec, queries, k):
        return {}

    def search_one(self, spec, query, k):
        return SearchResult(Ranking(query.query_id, [], []))

    def prepare_sparse(self, doc_sparse):
        pass

    def existing_ids(self, doc_ids):
        return None

    def exact_knn(self, spec, queries, k):
        return None

    def describe(self):
        return {"backend": self.name}

    def close(self):
        pass


@pytest.fixture
def fake():
    registry.register("fake", FakeBackend)
    yield
    registry.unregister("fake")


def test_a_registered_backend_is_found_by_name(fake):
    make = registry.backend_factory("fake")
    backend = make({"hosts": ["http://x:1"]}, {"suite": "s"})
    assert isinstance(backend, FakeBackend) and isinstance(backend, Backend)
    assert backend.connection == {"hosts": ["http://x:1"]} and backend.index == {"suite": "s"}
    assert registry.backend_names()[:6] == [
        "embedded",
        "elasticsearch",
        "opensearch",
        "http",
        "python",
        "fake",
    ]


def test_an_unknown_name_is_a_config_error_listing_the_known_ones(fake):
    with pytest.raises(ConfigError) as err:
        registry.backend_factory("vespa")
    assert str(err.value).startswith(
        "unknown backend type 'vespa' (known: embedded, elasticsearch, opensearch, http, python, fake"
    )
    registry.unregister("fake")
    with pytest.raises(ConfigError, match="unknown backend type 'fake'"):
        registry.backend_factory("fake")


def test_a_built_in_name_cannot_be_taken():
    with pytest.raises(ValueError, match="'opensearch' is a built-in backend"):
        registry.register("opensearch", FakeBackend)
    assert registry.backend_factory("opensearch") is registry.BUILT_IN["opensearch"]


def test_the_built_ins_are_made_by_name():
    embedded = registry.backend_factory("embedded")(None, {"suite": "s"})
    assert embedded.name == "embedded" and isinstance(embedded, Backend)
    es = registry.backend_factory("elasticsearch")({"hosts": ["http://127.0.0.1:1"]}, {"suite": "s"})
    assert es.name == "elasticsearch" and isinstance(es, Backend)


def test_an_entry_point_declares_a_backend(monkeypatch):
    declared = EntryPoint("fake", f"{__name__}:FakeBackend", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [declared] if group == declared.group else [])
    assert registry.backend_factory("fake") is FakeBackend
    assert "fake" in registry.backend_names()


def test_the_built_ins_load_on_first_use():
    code = (
        "import sys; from pytest_retrieval.backends import registry; "
        "print(sorted(m for m in sys.modules if m.startswith('pytest_retrieval.backends.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["['pytest_retrieval.backends.base',", "'pytest_retrieval.backends.registry']"]


class Recorder(Backend):
    """A third-party backend that answers every leaf with the judged documents, recording what
    it was given (the factory contract of docs/how-to/custom-backends.md)."""

    name = "recorder"
    made: list = []

    def __init__(self, connection, index):
        self.connection, self.index, self.specs = connection, dict(index), []
        Recorder.made.append(self)

    def prepare(self, documents, doc_vectors):
        self.documents = [d.doc_id for d in documents or []]

    def search_batch(self, spec, queries, k):
        self.specs.append(spec)
        return {q.qid: self.search_one(spec, q, k).ranking for q in queries}

    def search_one(self, spec, query, k):
        return SearchResult(Ranking(self.documents[:k], [1.0] * len(self.documents[:k])))


def test_a_third_party_backend_gets_its_options_and_the_suite_folder(tmp_path):
    from pytest_retrieval.backends.base import ServiceSpec
    from pytest_retrieval.execution.runner import run_suite

    registry.register("recorder", Recorder)
    try:
        path = tmp_path / "retrieval_r.yaml"
        path.write_text(
            "suite: r\njudgments:\n  inline:\n    - {id: q1, text: a, relevant: {d1: 1}}\n"
            "  documents:\n    - {id: d1, text: a}\n"
            "backend: {type: recorder, options: {location: here, n: 2}}\n"
            "latency: {enabled: false}\n"
            "retrievers:\n  svc: {type: service, params: {mode: x}}\n  lex: {type: bm25}\n"
            "floors:\n  svc: {ndcg@10: 0.5}\n"
        )
        result = run_suite(path)
    finally:
        registry.unregister("recorder")
    made = Recorder.made[-1]
    assert made.connection is None
    assert made.index["options"] == {"location": "here", "n": 2} and made.index["suite"] == "r"
    assert made.index["base_dir"] == str(tmp_path)
    assert made.documents == ["d1"]  # a third-party backend builds from the corpus (no index name)
    assert ServiceSpec(params=(("mode", "x"),)) in made.specs  # service leaves reach it as asked
    assert result.retrievers["svc"].metrics["ndcg@10"] == 1.0
