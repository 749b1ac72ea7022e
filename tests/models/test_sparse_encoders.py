"""Sparse encoders: precomputed (JSONL, .npz + vocabulary + ids), callable, and ONNX (a tiny
SPLADE-style MLM generated here with the ``onnx`` package), their checks and the corpus cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.models.sparse import encode_corpus, make_sparse_encoder
from pytest_retrieval.types import Document

# ---------------------------------------------------------------- precomputed


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_precomputed_jsonl(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "d.jsonl", [{"_id": "d1", "vector": {"a": 1.5}}, {"_id": 2, "vector": {"b": 1}}])
    write_jsonl(tmp_path / "q.jsonl", [{"_id": "q1", "vector": {"a": 0.5}}])
    enc = make_sparse_encoder({"type": "precomputed", "queries": "q.jsonl", "documents": "d.jsonl"}, tmp_path)
    assert enc.encode_documents(["2", "d1"], ["", ""]) == [{"b": 1}, {"a": 1.5}]
    assert enc.encode_queries(["q1"], ["text ignored"]) == [{"a": 0.5}]
    assert enc.id.startswith("precomputed-sparse:")
    with pytest.raises(ConfigError, match=r"no query sparse vector for 1 of 2 id\(s\): 'q9'"):
        enc.encode_queries(["q1", "q9"], ["", ""])


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "invalid JSON"),
        ('{"vector": {"a": 1}}', "missing id (one of: _id, id)"),
        ('{"_id": "d", "vector": [1, 2]}', '"vector" must be a {"term": weight} object'),
        ('{"_id": "d1", "vector": {}}\n{"_id": "d1", "vector": {}}', "duplicate id 'd1'"),
    ],
)
def test_precomputed_jsonl_hostile(tmp_path: Path, line: str, message: str) -> None:
    (tmp_path / "d.jsonl").write_text(line + "\n", encoding="utf-8")
    enc = make_sparse_encoder({"type": "precomputed", "documents": "d.jsonl"}, tmp_path)
    with pytest.raises(ConfigError) as info:
        enc.encode_documents(["d1"], [""])
    assert message in str(info.value) and "d.jsonl" in str(info.value) and "\n" not in str(info.value)


def write_npz(tmp_path: Path, name: str, dense: np.ndarray, ids, terms) -> None:
    import scipy.sparse as sp

    sp.save_npz(tmp_path / f"{name}.npz", sp.csr_matrix(dense))
    (tmp_path / f"{name}_ids.txt").write_text("\n".join(ids) + "\n")
    (tmp_path / "vocab.txt").write_text("\n".join(terms) + "\n")


def test_precomputed_npz(tmp_path: Path) -> None:
    write_npz(tmp_path, "docs", np.array([[0, 1.5, 0], [2.0, 0, 0.25]]), ["d1", "d2"], ["a", "b", "c"])
    cfg = {
        "type": "precomputed",
        "documents": "docs.npz",
        "document_ids": "docs_ids.txt",
        "vocabulary": "vocab.txt",
    }
    enc = make_sparse_encoder(cfg, tmp_path)
    assert enc.encode_documents(["d2", "d1"], ["", ""]) == [{"a": 2.0, "c": 0.25}, {"b": 1.5}]
    ids, vectors = enc.all_documents()
    assert ids == ["d1", "d2"] and len(vectors) == 2
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "c": 2}))
    enc = make_sparse_encoder({**cfg, "vocabulary": "vocab.json"}, tmp_path)
    assert enc.encode_documents(["d1"], [""]) == [{"b": 1.5}]


def test_precomputed_npz_vocabulary_and_id_mismatches(tmp_path: Path) -> None:
    write_npz(tmp_path, "docs", np.array([[0, 1.5, 0], [2.0, 0, 0.25]]), ["d1", "d2"], ["a", "b"])
    cfg = {
        "type": "precomputed",
        "documents": "docs.npz",
        "document_ids": "docs_ids.txt",
        "vocabulary": "vocab.txt",
    }
    with pytest.raises(
        ConfigError, match="vocabulary mismatch: the matrix has 3 columns but .*vocab.txt names 2 terms"
    ):
        make_sparse_encoder(cfg, tmp_path).encode_documents(["d1"], [""])
    (tmp_path / "vocab.txt").write_text("a\nb\nc\n")
    (tmp_path / "docs_ids.txt").write_text("d1\n")
    with pytest.raises(ConfigError, match="2 matrix rows but 1 ids"):
        make_sparse_encoder(cfg, tmp_path).encode_documents(["d1"], [""])
    with pytest.raises(ConfigError, match="needs its id file \\('document_ids'"):
        make_sparse_encoder({"type": "precomputed", "documents": "docs.npz"}, tmp_path).encode_documents(
            ["d1"], [""]
        )
    (tmp_path / "bad.npz").write_bytes(b"nope")
    with pytest.raises(ConfigError, match="not a scipy sparse .npz matrix"):
        make_sparse_encoder({**cfg, "documents": "bad.npz"}, tmp_path).encode_documents(["d1"], [""])


@pytest.mark.parametrize(
    "config, message",
    [
        ({"type": "precomputed"}, "give 'queries' and/or 'documents'"),
        ({"type": "splade"}, "unknown type 'splade' (known: precomputed, onnx, transformers, callable)"),
        ({"type": "onnx"}, "missing 'model'"),
        ({"type": "onnx", "model": "m", "batch_size": "8"}, "'batch_size' must be an integer"),
        ({"type": "callable", "function": "x:y", "nope": 1}, "unknown key(s) 'nope'"),
        ({"type": "transformers"}, "missing 'model'"),
        ({"type": "transformers", "model": "m", "device": 3}, "'device' must be a string"),
        ({"type": "transformers", "model": "m", "threads": 0}, "'threads': Input should be greater than 0"),
        ({"type": "transformers", "model": "m", "max_length": 1}, "'max_length': Input should be greater"),
        ({"type": "transformers", "model": "m", "pooling": "mean"}, "unknown key(s) 'pooling'"),
    ],
)
def test_configs_one_line(tmp_path: Path, config, message) -> None:
    with pytest.raises(ConfigError) as info:
        make_sparse_encoder(config, tmp_path)
    assert message in str(info.value) and "\n" not in str(info.value)


# ---------------------------------------------------------------- callable


def test_callable(tmp_path: Path) -> None:
    (tmp_path / "enc.py").write_text(
        "def encode(texts):\n    return [{w: 1.0 for w in t.split()} for t in texts]\n"
        "def short(texts):\n    return [{}]\n"
        "def boom(texts):\n    raise RuntimeError('model down')\n"
    )
    enc = make_sparse_encoder({"type": "callable", "function": "enc:encode"}, tmp_path)
    assert enc.encode_queries(["q"], ["solar panel"]) == [{"solar": 1.0, "panel": 1.0}]
    assert enc.id.startswith("callable-sparse:enc:encode:")
    with pytest.raises(ConfigError, match="returned 1 vectors for 2 texts"):
        make_sparse_encoder({"type": "callable", "function": "enc:short"}, tmp_path).encode_queries(
            ["a", "b"], ["x", "y"]
        )
    with pytest.raises(InfrastructureError, match="raised RuntimeError: model down"):
        make_sparse_encoder({"type": "callable", "function": "enc:boom"}, tmp_path).encode_queries(
            ["a"], ["x"]
        )


# ---------------------------------------------------------------- ONNX (tiny SPLADE-style MLM)

WORDS = "solar panel efficiency river flood defence quantum gravity the of".split()


def build_tokenizer(path: Path) -> int:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    tok.save(str(path))
    return len(vocab)


def build_mlm(path: Path, embedding: np.ndarray, projection: np.ndarray, output: str = "logits") -> None:
    """logits = E[input_ids] @ P: (batch, tokens, vocabulary), an MLM head in two matrices."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["E", "input_ids"], ["h"], axis=0),
            helper.make_node("MatMul", ["h", "P"], [output]),
        ],
        "tiny-mlm",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", "seq", projection.shape[1]])],
        initializer=[numpy_helper.from_array(embedding, "E"), numpy_helper.from_array(projection, "P")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


@pytest.fixture
def tiny_splade(tmp_path: Path):
    folder = tmp_path / "splade"
    folder.mkdir()
    vocab = build_tokenizer(folder / "tokenizer.json")
    rng = np.random.default_rng(3)
    embedding = rng.normal(size=(vocab, 6)).astype(np.float32)
    projection = rng.normal(size=(6, vocab)).astype(np.float32)
    build_mlm(folder / "model.onnx", embedding, projection)
    return folder, embedding, projection


def reference(folder: Path, embedding, projection, text: str, max_length: int = 256):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_length)
    ids = tok.encode(text).ids
    logits = embedding[ids] @ projection  # (tokens, vocabulary)
    weights = np.log1p(np.maximum(logits, 0)).max(axis=0)
    terms = {i: t for t, i in tok.get_vocab().items()}
    return {terms[j]: float(weights[j]) for j in np.flatnonzero(weights > 0)}


def test_onnx_sparse_encoder_is_splade_max_pooling(tiny_splade) -> None:
    folder, embedding, projection = tiny_splade
    enc = make_sparse_encoder({"type": "onnx", "model": str(folder), "batch_size": 2}, ".")
    texts = ["solar panel efficiency", "river", "quantum gravity of the river flood defence", ""]
    got = enc.encode_documents([str(i) for i in range(len(texts))], texts)
    for text, vector in zip(texts, got):
        want = reference(folder, embedding, projection, text)
        assert vector.keys() == want.keys()
        for term, weight in want.items():
            assert vector[term] == pytest.approx(weight, rel=1e-5)
    # padding is masked: a short text batched with a long one encodes as it does alone
    assert enc.encode_queries(["a"], ["river"])[0] == pytest.approx(got[1])
    assert enc.id.startswith("onnx-sparse:splade:")


def test_onnx_sparse_encoder_vocabulary_mismatch(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    vocab = build_tokenizer(folder / "tokenizer.json")
    build_mlm(folder / "model.onnx", np.ones((vocab, 2), np.float32), np.ones((2, vocab + 3), np.float32))
    enc = make_sparse_encoder({"type": "onnx", "model": str(folder)}, ".")
    with pytest.raises(ConfigError, match=f"vocabulary mismatch: .* expected \\(texts, tokens, {vocab}\\)"):
        enc.encode_queries(["q"], ["solar"])


def test_corpus_cache_reuses_the_encoding(tmp_path: Path, tiny_splade, monkeypatch) -> None:
    folder, _, _ = tiny_splade
    enc = make_sparse_encoder({"type": "onnx", "model": str(folder)}, ".")
    docs = [Document("d1", {"title": "Solar", "text": "panel efficiency"}), Document("d2", {"text": "river"})]
    first = encode_corpus(enc, docs, cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").glob("*.sparse.npz"))
    monkeypatch.setattr(enc, "encode_documents", lambda ids, texts: pytest.fail("not cached"))
    again = encode_corpus(enc, docs, cache_dir=tmp_path / "cache")
    for a, b in zip(again.vectors, first.vectors):
        assert dict(a) == pytest.approx(dict(b))
    assert again.encoder_id == enc.id
