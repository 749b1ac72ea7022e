"""Embedders: precomputed loaders and their errors, the factory, callable embedders, the ONNX
embedder against the shared precomputed all-MiniLM-L6-v2 vectors, and the document-vector
disk cache."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.models.embedders import (
    CACHE_ENV,
    CallableEmbedder,
    Embedder,
    OnnxEmbedder,
    PrecomputedEmbedder,
    SentenceTransformersEmbedder,
    default_cache_dir,
    document_text,
    embed_corpus,
    make_embedder,
)
from pytest_retrieval.types import Document

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED", ROOT.parent / "shared"))
SCIFACT = SHARED / "data" / "scifact"
MINILM_VECTORS = SCIFACT / "embeddings" / "all-MiniLM-L6-v2"
MINILM_ONNX = SHARED / "models" / "all-MiniLM-L6-v2-onnx"


def one_line(exc_info) -> str:
    message = str(exc_info.value)
    assert "\n" not in message
    return message


@pytest.fixture
def npy_vectors(tmp_path):
    q = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = np.arange(12, dtype=np.float32).reshape(4, 3) + 100
    np.save(tmp_path / "queries.npy", q)
    (tmp_path / "query_ids.txt").write_text("q1\nq2\n")
    np.save(tmp_path / "corpus.npy", d)
    (tmp_path / "corpus_ids.txt").write_text("a\nb\nc\nd\n")
    return tmp_path, q, d


# ---- precomputed ---------------------------------------------------------------------------


def test_precomputed_npy_lookup_by_id(npy_vectors):
    tmp, q, d = npy_vectors
    emb = make_embedder(
        {
            "type": "precomputed",
            "queries": "queries.npy",
            "query_ids": "query_ids.txt",
            "documents": "corpus.npy",
            "document_ids": "corpus_ids.txt",
        },
        tmp,
    )
    assert isinstance(emb, Embedder) and isinstance(emb, PrecomputedEmbedder)
    assert np.array_equal(emb.embed_documents(["c", "a"], ["", ""]), d[[2, 0]])
    out = emb.embed_queries(["q2"], ["ignored text"])
    assert out.dtype == np.float32 and np.array_equal(out, q[[1]])
    assert (
        emb.id.startswith("precomputed:")
        and emb.id
        == make_embedder(
            {
                "type": "precomputed",
                "documents": str(tmp / "corpus.npy"),
                "document_ids": str(tmp / "corpus_ids.txt"),
                "queries": str(tmp / "queries.npy"),
                "query_ids": str(tmp / "query_ids.txt"),
            },
            "/elsewhere",
        ).id
    )  # content, not path


def test_precomputed_missing_ids_name_the_file_and_ids(npy_vectors):
    tmp, _, _ = npy_vectors
    emb = PrecomputedEmbedder(documents=tmp / "corpus.npy", document_ids=tmp / "corpus_ids.txt")
    with pytest.raises(ConfigError) as exc:
        emb.embed_documents(["a", "x1", "x2", "x3", "x4", "x5", "x6", "x7"], [""] * 8)
    message = one_line(exc)
    assert "corpus_ids.txt" in message and "7 id(s)" in message
    assert "'x1'" in message and "'x5'" in message and "'x6'" not in message
    assert "2 more" in message
    with pytest.raises(ConfigError, match="no query vectors"):
        emb.embed_queries(["q1"], [""])


def test_precomputed_dimension_mismatch(npy_vectors):
    tmp, _, _ = npy_vectors
    np.save(tmp / "queries4.npy", np.ones((2, 4), dtype=np.float32))
    emb = PrecomputedEmbedder(
        queries=tmp / "queries4.npy",
        query_ids=tmp / "query_ids.txt",
        documents=tmp / "corpus.npy",
        document_ids=tmp / "corpus_ids.txt",
    )
    with pytest.raises(ConfigError) as exc:
        emb.embed_queries(["q1"], [""])
    assert "4 dimensions" in one_line(exc) and "3" in one_line(exc)


def test_precomputed_file_problems(npy_vectors):
    tmp, _, _ = npy_vectors
    with pytest.raises(ConfigError) as exc:
        PrecomputedEmbedder(documents=tmp / "nope.npy", document_ids=tmp / "corpus_ids.txt").embed_documents(
            ["a"], [""]
        )
    assert "nope.npy" in one_line(exc) and "not found" in one_line(exc)
    with pytest.raises(ConfigError, match="not found"):
        _ = PrecomputedEmbedder(documents=tmp / "nope.npy").id
    with pytest.raises(ConfigError, match="id list"):
        PrecomputedEmbedder(documents=tmp / "corpus.npy").embed_documents(["a"], [""])
    (tmp / "short_ids.txt").write_text("a\nb\n")
    with pytest.raises(ConfigError) as exc:
        PrecomputedEmbedder(documents=tmp / "corpus.npy", document_ids=tmp / "short_ids.txt").embed_documents(
            ["a"], [""]
        )
    assert "2 ids for 4 vector rows" in one_line(exc)
    (tmp / "dup_ids.txt").write_text("a\nb\na\nd\n")
    with pytest.raises(ConfigError) as exc:
        PrecomputedEmbedder(documents=tmp / "corpus.npy", document_ids=tmp / "dup_ids.txt").embed_documents(
            ["a"], [""]
        )
    assert "dup_ids.txt:3" in one_line(exc) and "duplicate" in one_line(exc)
    np.save(tmp / "flat.npy", np.ones(4, dtype=np.float32))
    with pytest.raises(ConfigError, match="2-D"):
        PrecomputedEmbedder(documents=tmp / "flat.npy", document_ids=tmp / "corpus_ids.txt").embed_documents(
            ["a"], [""]
        )


def test_precomputed_jsonl(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "vector": [1, 0]}\n\n{"id": 7, "vector": [0.5, 0.5]}\n')
    emb = make_embedder({"type": "precomputed", "documents": "docs.jsonl"}, tmp_path)
    assert emb.embed_documents(["7", "a"], ["", ""]).tolist() == [[0.5, 0.5], [1.0, 0.0]]
    for body, problem in [
        (
            '{"id": "a", "vector": [1, 0]}\n{"id": "b", "vector": [1]}\n',
            "docs.jsonl:2: vector has 1 dimensions",
        ),
        ('{"id": "a", "vector": [1, 0]}\nnot json\n', "docs.jsonl:2: invalid JSON"),
        ('{"id": "a"}\n', "docs.jsonl:1: expected"),
        ('{"id": "a", "vector": ["x"]}\n', 'docs.jsonl:1: "vector" must be'),
        ('{"id": "a", "vector": [1]}\n{"id": "a", "vector": [2]}\n', "docs.jsonl:2: duplicate id 'a'"),
    ]:
        path.write_text(body)
        with pytest.raises(ConfigError) as exc:
            PrecomputedEmbedder(documents=path).embed_documents(["a"], [""])
        assert problem in one_line(exc)


# ---- factory ------------------------------------------------------------------------------


def test_make_embedder_errors(tmp_path):
    for config, problem in [
        ({}, "'type' is required"),
        ({"type": "magic"}, "unknown type 'magic'"),
        ({"type": "onnx"}, "missing 'model'"),
        ({"type": "onnx", "model": "m", "colour": 1}, "unknown key(s) 'colour'"),
        ({"type": "callable", "function": "x:y", "query_function": 3}, "'query_function' must be str"),
        ({"type": "precomputed"}, "give 'queries' and/or 'documents'"),
        ({"type": "onnx", "model": "missing-dir"}, "not found"),
    ]:
        with pytest.raises(ConfigError) as exc:
            make_embedder(config, tmp_path)
        assert problem in one_line(exc), (config, str(exc.value))


def test_sentence_transformers_missing_package_is_a_clear_config_error(monkeypatch):
    # simulate an environment without the package, installed or not (never a skip)
    real_find_spec = importlib.util.find_spec
    monkeypatch.delitem(sys.modules, "sentence_transformers", raising=False)
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a, **k: None if name == "sentence_transformers" else real_find_spec(name, *a, **k),
    )
    with pytest.raises(ConfigError) as exc:
        make_embedder({"type": "sentence-transformers", "model": "all-MiniLM-L6-v2"})
    assert "pip install pytest-retrieval[sentence-transformers]" in one_line(exc)
    with pytest.raises(ConfigError):
        SentenceTransformersEmbedder("all-MiniLM-L6-v2")


# ---- callable -----------------------------------------------------------------------------


def _write_module(tmp_path, body: str) -> str:
    name = f"emb_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(body)
    return name


def test_callable_embedder(tmp_path):
    mod = _write_module(
        tmp_path,
        (
            "import numpy as np\n"
            "def embed(texts):\n"
            "    return [[len(t), 1.0] for t in texts]\n"
            "def embed_q(texts):\n"
            "    return np.array([[0.0, len(t)] for t in texts])\n"
            "def broken(texts):\n"
            "    raise RuntimeError('model server down')\n"
            "def wrong_shape(texts):\n"
            "    return [1.0] * len(texts)\n"
        ),
    )
    emb = make_embedder(
        {"type": "callable", "function": f"{mod}:embed", "query_function": f"{mod}:embed_q"}, tmp_path
    )
    assert emb.embed_documents(["a", "b"], ["abc", "z"]).tolist() == [[3, 1], [1, 1]]
    assert emb.embed_queries(["q"], ["four"]).tolist() == [[0, 4]]
    assert emb.id.startswith(f"callable:{mod}:embed|{mod}:embed_q:")
    with pytest.raises(InfrastructureError, match="model server down"):
        make_embedder({"type": "callable", "function": f"{mod}:broken"}, tmp_path).embed_documents(
            ["a"], ["x"]
        )
    with pytest.raises(ConfigError) as exc:
        make_embedder({"type": "callable", "function": f"{mod}:wrong_shape"}, tmp_path).embed_documents(
            ["a", "b"], ["x", "y"]
        )
    assert "shape (2,)" in one_line(exc)
    for spec, problem in [
        ("no_such_module_xyz:f", "cannot import 'no_such_module_xyz'"),
        (f"{mod}:nothing", "has no 'nothing'"),
        ("just_a_name", "expected 'module:function'"),
    ]:
        with pytest.raises(ConfigError) as exc:
            CallableEmbedder(spec, search_path=tmp_path)
        assert problem in one_line(exc)


# ---- ONNX ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def onnx_embedder(shared_dir):  # onnxruntime and tokenizers are test dependencies
    return make_embedder({"type": "onnx", "model": str(MINILM_ONNX)})


def _precomputed(kind: str):  # kind: "query" or "corpus"
    ids = (MINILM_VECTORS / f"{kind}_ids.txt").read_text().split()
    matrix = np.load(MINILM_VECTORS / ("queries.npy" if kind == "query" else "corpus.npy"))
    return {i: matrix[n] for n, i in enumerate(ids)}


def test_onnx_matches_shared_vectors_for_queries(onnx_embedder):
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh][:20]
    got = onnx_embedder.embed_queries([q["_id"] for q in queries], [q["text"] for q in queries])
    want = _precomputed("query")
    assert got.shape == (20, 384) and got.dtype == np.float32
    cos = [float(got[i] @ want[q["_id"]]) for i, q in enumerate(queries)]
    assert min(cos) > 0.9999, cos
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_onnx_matches_shared_vectors_for_documents(onnx_embedder):
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    rows = rows[::260][:20]  # a spread of documents; most run past the 256-token limit
    docs = [Document(r["_id"], {"title": r["title"], "text": r["text"]}) for r in rows]
    got = onnx_embedder.embed_documents([d.doc_id for d in docs], [document_text(d) for d in docs])
    want = _precomputed("corpus")
    cos = [float(got[i] @ want[d.doc_id]) for i, d in enumerate(docs)]
    assert min(cos) > 0.9999, cos


def test_onnx_embedder_settings(tmp_path, shared_dir):
    emb = OnnxEmbedder(MINILM_ONNX)
    assert (emb.max_length, emb.pooling, emb.normalize) == (256, "mean", True)
    assert emb.id.startswith("onnx:all-MiniLM-L6-v2-onnx:")
    other = OnnxEmbedder(MINILM_ONNX, query_prefix="query: ")
    assert other.id != emb.id  # anything that changes vectors changes the id
    with pytest.raises(ConfigError, match="no model.onnx"):
        OnnxEmbedder(tmp_path)
    with pytest.raises(ConfigError, match="pooling"):
        OnnxEmbedder(MINILM_ONNX, pooling="max")


# ---- corpus embedding + cache -------------------------------------------------------------


class CountingEmbedder:
    id = "counting:v1"

    def __init__(self):
        self.calls = 0

    def embed_queries(self, ids, texts):
        return self.embed_documents(ids, texts)

    def embed_documents(self, ids, texts):
        self.calls += 1
        return np.array([[len(t), t.count(" ") + 1.0] for t in texts], dtype=np.float32)


DOCS = [
    Document("d1", {"title": "Hello", "text": "big world"}),
    Document("d2", {"title": "", "text": "no title"}),
    Document("d3", {"body": "only a body"}),
]


def test_document_text_follows_beir():
    assert [document_text(d) for d in DOCS] == ["Hello big world", "no title", "only a body"]


def test_embed_corpus_cache_hit_miss_and_atomic_files(tmp_path):
    emb = CountingEmbedder()
    first = embed_corpus(emb, DOCS, cache_dir=tmp_path)
    assert emb.calls == 1 and list(first.doc_ids) == ["d1", "d2", "d3"]
    assert first.embedder_id == "counting:v1"
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 1 and files[0].startswith("counting_v1-") and files[0].endswith(".npy")
    second = embed_corpus(emb, DOCS, cache_dir=tmp_path)
    assert emb.calls == 1  # cache hit
    assert np.array_equal(first.matrix, second.matrix)
    changed = [DOCS[0], Document("d2", {"title": "", "text": "a new text"}), DOCS[2]]
    embed_corpus(emb, changed, cache_dir=tmp_path)
    assert emb.calls == 2 and len(list(tmp_path.iterdir())) == 2  # text changed: miss
    (tmp_path / files[0]).write_bytes(b"garbage")
    embed_corpus(emb, DOCS, cache_dir=tmp_path)
    assert emb.calls == 3  # unreadable cache file is recomputed and replaced
    embed_corpus(emb, DOCS, cache_dir=tmp_path)
    assert emb.calls == 3
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_embed_corpus_default_dir_env_and_precomputed_bypass(tmp_path, monkeypatch, npy_vectors):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache-root"))
    assert default_cache_dir() == tmp_path / "cache-root" / "vectors"
    emb = CountingEmbedder()
    embed_corpus(emb, DOCS)
    assert len(list((tmp_path / "cache-root" / "vectors").iterdir())) == 1
    vec_dir, _, d = npy_vectors
    pre = PrecomputedEmbedder(documents=vec_dir / "corpus.npy", document_ids=vec_dir / "corpus_ids.txt")
    docs = [Document(i, {"text": i}) for i in ("d", "b")]
    out = embed_corpus(pre, docs, cache_dir=tmp_path / "unused")
    assert np.array_equal(out.matrix, d[[3, 1]]) and not (tmp_path / "unused").exists()


def test_embed_corpus_unwritable_cache_only_warns(tmp_path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    with pytest.warns(RuntimeWarning, match="could not cache"):
        out = embed_corpus(CountingEmbedder(), DOCS, cache_dir=blocker / "sub")
    assert out.matrix.shape == (3, 2)
