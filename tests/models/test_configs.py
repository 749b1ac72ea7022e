"""One config model per embedder and reranker kind: the suite schema and the factories read
the same models, so every option the code supports is accepted in a suite file, the schema's
defaults are the implementations' defaults, and the ONNX embedder's ``max_length`` defaults to
the model folder's ``max_seq_length``."""

from __future__ import annotations

import inspect
import json
import textwrap
from pathlib import Path

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.config.schema import json_schema
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.models.embedders import (
    EMBEDDER_CONFIGS,
    CallableEmbedder,
    OnnxEmbedder,
    OnnxEmbedderConfig,
    PrecomputedEmbedder,
    SentenceTransformersEmbedder,
    make_embedder,
)
from pytest_retrieval.models.rerankers import (
    RERANKER_CONFIGS,
    CallableReranker,
    CohereReranker,
    OnnxCrossEncoderReranker,
    SentenceTransformersCrossEncoder,
    make_reranker,
)
from pytest_retrieval.models.rerankers.onnx_bi_encoder import OnnxBiEncoderReranker

SUITE = """\
suite: t
judgments:
  queries: queries.jsonl
  qrels: qrels.trec
  corpus: corpus.jsonl
EMBEDDER
retrievers:
  bm25:
    type: bm25
  dense:
    type: knn
floors:
  bm25:
    ndcg@10: 0.1
"""


def _suite(folder: Path, embedder: str):
    (folder / "queries.jsonl").write_text('{"_id": "1", "text": "alpha"}\n')
    (folder / "qrels.trec").write_text("1 0 d1 1\n")
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "alpha beta"}\n')
    path = folder / "retrieval_t.yaml"
    path.write_text(SUITE.replace("EMBEDDER", textwrap.dedent(embedder).strip()))
    return load_suite(path)


def _onnx_folder(folder: Path, max_seq_length=None) -> Path:
    """Enough of an exported model for the embedder's constructor (nothing is run)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(b"not run in these tests")
    (folder / "tokenizer.json").write_text("{}")
    if max_seq_length is not None:
        (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": max_seq_length}))
    return folder


# ---- the defect: options the code supports were "unknown key" in a suite ------------------


def test_suite_accepts_every_onnx_embedder_option(tmp_path):
    _onnx_folder(tmp_path / "m")
    suite = _suite(
        tmp_path,
        """
        embedder:
          type: onnx
          model: m
          query_prefix: "query: "
          document_prefix: "passage: "
          pooling: cls
          max_batch_tokens: 4096
          threads: 1
          normalize: false
        """,
    )
    emb = SuiteRunner(suite).embedder()
    assert isinstance(emb, OnnxEmbedder)
    assert (emb.query_prefix, emb.document_prefix, emb.pooling) == ("query: ", "passage: ", "cls")
    assert (emb.max_batch_tokens, emb.threads, emb.normalize) == (4096, 1, False)
    assert emb.model_dir == tmp_path / "m"


def test_suite_accepts_sentence_transformers_device_and_prefixes(tmp_path, monkeypatch):
    import types

    monkeypatch.setitem(__import__("sys").modules, "sentence_transformers", types.ModuleType("x"))
    suite = _suite(
        tmp_path,
        """
        embedder:
          type: sentence-transformers
          model: intfloat/e5-small-v2
          device: cpu
          query_prefix: "query: "
          batch_size: 8
          id: e5-v2
        """,
    )
    emb = SuiteRunner(suite).embedder()
    assert isinstance(emb, SentenceTransformersEmbedder)
    assert (emb.device, emb.query_prefix, emb.batch_size, emb.id) == ("cpu", "query: ", 8, "e5-v2")
    assert emb.model_name_or_path == "intfloat/e5-small-v2"  # a hub name is passed through


def test_suite_accepts_callable_query_function(tmp_path):
    (tmp_path / "my_vectors.py").write_text(
        "def docs(texts):\n    return [[1.0, 0.0] for _ in texts]\n"
        "def queries(texts):\n    return [[0.0, 1.0] for _ in texts]\n"
    )
    suite = _suite(
        tmp_path,
        """
        embedder:
          type: callable
          function: my_vectors:docs
          query_function: my_vectors:queries
        """,
    )
    emb = SuiteRunner(suite).embedder()
    assert isinstance(emb, CallableEmbedder)
    assert emb.embed_queries(["q"], ["x"]).tolist() == [[0.0, 1.0]]
    assert emb.embed_documents(["d"], ["x"]).tolist() == [[1.0, 0.0]]


def test_unknown_embedder_option_is_still_one_line_with_file_and_key(tmp_path):
    with pytest.raises(ConfigError) as exc:
        _suite(tmp_path, "embedder: {type: onnx, model: m, query_prefx: 'q'}")
    message = str(exc.value)
    assert "\n" not in message and "retrieval_t.yaml" in message
    assert "embedder.query_prefx: unknown key 'query_prefx' (did you mean 'query_prefix'?)" in message


# ---- the defect: max_length 256 in the schema overrode the model folder ---------------------


def test_onnx_max_length_defaults_to_the_model_folder(tmp_path):
    _onnx_folder(tmp_path / "m", max_seq_length=128)
    suite = _suite(tmp_path, "embedder: {type: onnx, model: m}")
    assert suite.model.embedder.max_length is None  # "use the folder's value"
    assert SuiteRunner(suite).embedder().max_length == 128
    assert make_embedder({"type": "onnx", "model": "m"}, tmp_path).max_length == 128


def test_onnx_max_length_set_in_the_suite_wins_and_256_without_folder_value(tmp_path):
    _onnx_folder(tmp_path / "m", max_seq_length=128)
    suite = _suite(tmp_path, "embedder: {type: onnx, model: m, max_length: 64}")
    assert SuiteRunner(suite).embedder().max_length == 64
    _onnx_folder(tmp_path / "plain")
    assert make_embedder({"type": "onnx", "model": "plain"}, tmp_path).max_length == 256


def test_published_schema_documents_the_options(tmp_path):
    defs = json_schema()["$defs"]
    onnx = defs["OnnxEmbedderConfig"]["properties"]
    assert onnx["max_length"]["default"] is None
    for key in ("query_prefix", "document_prefix", "pooling", "threads", "max_batch_tokens"):
        assert key in onnx
    assert "device" in defs["SentenceTransformersEmbedderConfig"]["properties"]
    assert "query_function" in defs["CallableEmbedderConfig"]["properties"]
    reranker = defs["RerankRetrieverConfig"]["properties"]["reranker"]
    assert {r["$ref"].split("/")[-1] for r in reranker["oneOf"]} == {
        cls.__name__ for cls in RERANKER_CONFIGS.values()
    }


# ---- one source of truth ---------------------------------------------------------------------

CONSTRUCTORS = {
    ("embedder", "precomputed"): PrecomputedEmbedder,
    ("embedder", "onnx"): OnnxEmbedder,
    ("embedder", "sentence-transformers"): SentenceTransformersEmbedder,
    ("embedder", "callable"): CallableEmbedder,
    ("reranker", "onnx-cross-encoder"): OnnxCrossEncoderReranker,
    ("reranker", "sentence-transformers"): SentenceTransformersCrossEncoder,
    ("reranker", "cohere"): CohereReranker,
    ("reranker", "callable"): CallableReranker,
}


@pytest.mark.parametrize("family, kind", sorted(CONSTRUCTORS))
def test_config_defaults_are_the_constructor_defaults(family, kind):
    config = (EMBEDDER_CONFIGS if family == "embedder" else RERANKER_CONFIGS)[kind]
    params = inspect.signature(CONSTRUCTORS[family, kind]).parameters
    for name, field in config.model_fields.items():
        if name == "type" or field.is_required():
            continue
        assert name in params, (kind, name)
        default = params[name].default
        assert field.default == default, (kind, name, field.default, default)


def test_bi_encoder_options_are_the_onnx_embedders():
    params = inspect.signature(OnnxEmbedder).parameters
    own = RERANKER_CONFIGS["onnx-bi-encoder"].model_fields
    for name, field in own.items():
        if name in ("type", "model", "cache_documents"):
            continue
        assert field.default == params[name].default, name
    assert inspect.signature(OnnxBiEncoderReranker).parameters["cache_documents"].default is True


def test_union_tags_are_the_models_types():
    for configs in (EMBEDDER_CONFIGS, RERANKER_CONFIGS):
        for kind, cls in configs.items():
            assert cls.model_fields["type"].annotation.__args__ == (kind,)


def test_factory_takes_the_validated_model(tmp_path):
    _onnx_folder(tmp_path / "m", max_seq_length=100)
    config = OnnxEmbedderConfig(type="onnx", model="m", query_prefix="q: ")
    emb = make_embedder(config, tmp_path)
    assert (emb.max_length, emb.query_prefix) == (100, "q: ")
    with pytest.raises(ConfigError, match="expected a mapping"):
        make_reranker(config, tmp_path)  # type: ignore[arg-type]


def test_factories_read_dicts_strictly_with_aliases_and_null_defaults(tmp_path):
    _onnx_folder(tmp_path / "m")
    assert make_embedder({"type": "ONNX", "model": "m", "batch_size": None}, tmp_path).batch_size == 32
    with pytest.raises(ConfigError, match=r"embedder \(onnx\): 'batch_size' must be int, got '8'"):
        make_embedder({"type": "onnx", "model": "m", "batch_size": "8"}, tmp_path)
    with pytest.raises(ConfigError, match=r"embedder \(onnx\): 'model' must be a path"):
        make_embedder({"type": "onnx", "model": 3}, tmp_path)
    rr = make_reranker({"type": "Bi-Encoder", "model": tmp_path / "m", "threads": None}, tmp_path)
    assert isinstance(rr, OnnxBiEncoderReranker) and rr.embedder.batch_size == 32


def test_suite_reranker_keeps_the_factory_messages_and_the_fingerprint_sees_it_as_written(tmp_path):
    (tmp_path / "myrr.py").write_text("def score(q, docs):\n    return [1.0] * len(docs)\n")
    text = SUITE.replace("EMBEDDER\n", "").replace(
        "  dense:\n    type: knn\n",
        "  rr:\n    type: rerank\n    of: [bm25]\n    reranker: RR\n",
    )
    for reranker, problem in [
        (
            '{type: callable, function: "myrr:score", extra: 1}',
            "unknown key(s) 'extra' (allowed: function, id)",
        ),
        ("{type: cohere, timeout: fast}", "reranker (cohere): 'timeout' must be a number, got 'fast'"),
        ("{type: magic}", "reranker: unknown type 'magic'"),
    ]:
        (tmp_path / "retrieval_t.yaml").write_text(text.replace("RR", reranker))
        _suite_files(tmp_path)
        with pytest.raises(ConfigError) as exc:
            load_suite(tmp_path / "retrieval_t.yaml")
        assert "retrievers.rr.reranker: " in str(exc.value) and problem in str(exc.value)
    written = '{type: python, function: "myrr:score", id: null}'
    (tmp_path / "retrieval_t.yaml").write_text(text.replace("RR", written))
    suite = load_suite(tmp_path / "retrieval_t.yaml")
    dumped = suite.model.retrievers["rr"].model_dump(mode="json")
    assert dumped["reranker"] == {"type": "python", "function": "myrr:score", "id": None}
    assert isinstance(suite.reranker("rr"), CallableReranker)


def _suite_files(folder: Path) -> None:
    (folder / "queries.jsonl").write_text('{"_id": "1", "text": "alpha"}\n')
    (folder / "qrels.trec").write_text("1 0 d1 1\n")
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "alpha beta"}\n')
