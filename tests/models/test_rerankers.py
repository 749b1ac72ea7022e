"""Rerankers: rerank_ranking semantics, the factory, the ONNX cross-encoder on a tiny model
built here (protobuf written by hand, so no ``onnx`` package is needed), the ONNX bi-encoder
against the shared all-MiniLM-L6-v2 vectors of SciFact, the sentence-transformers wrapper,
callables, and the Cohere client against a local fake HTTP server."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import sys
import threading
import time
import types
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.models.rerankers import (
    CallableReranker,
    CohereReranker,
    OnnxCrossEncoderReranker,
    Reranker,
    SentenceTransformersCrossEncoder,
    make_reranker,
    rerank_ranking,
    rerank_run,
    rerank_warnings,
)
from pytest_retrieval.types import Ranking

SECRET = "sk-test-" + uuid.uuid4().hex


def one_line(exc_info) -> str:
    message = str(exc_info.value)
    assert "\n" not in message
    return message


# =========================================================================== rerank_ranking


class ListReranker:
    """Scores from a dict doc_id -> score; records the calls."""

    def __init__(self, scores, id="fixed"):
        self.scores = scores
        self.id = id
        self.calls = []

    def rerank(self, query_text, candidates):
        self.calls.append((query_text, list(candidates)))
        return [self.scores[d] for d, _ in candidates]


TEXTS = {d: f"text of {d}" for d in "abcdefgh"}


def test_protocol_is_runtime_checkable():
    assert isinstance(ListReranker({}), Reranker)
    assert isinstance(CallableReranker(lambda q, docs: [0.0] * len(docs)), Reranker)


def test_rerank_ranking_sorts_window_by_new_score_and_drops_the_tail():
    ranking = Ranking(list("abcdef"), [9, 8, 7, 6, 5, 4])
    r = ListReranker({"a": 0.1, "b": 0.9, "c": 0.5, "d": 0.7, "e": 1.0, "f": 2.0})
    out = rerank_ranking(r, "q text", ranking, TEXTS, window=4)
    assert out.doc_ids == ["b", "d", "c", "a"]  # e, f are below the window: dropped
    assert out.scores == [0.9, 0.7, 0.5, 0.1]  # the reranker's scores
    assert r.calls == [("q text", [(d, TEXTS[d]) for d in "abcd"])]


def test_rerank_ranking_ties_keep_previous_rank():
    ranking = Ranking(list("abcde"), [5, 4, 3, 2, 1])
    r = ListReranker({"a": 1.0, "b": 2.0, "c": 1.0, "d": 2.0, "e": 1.0})
    out = rerank_ranking(r, "q", ranking, TEXTS, window=10)
    assert out.doc_ids == ["b", "d", "a", "c", "e"]


def test_rerank_ranking_empty_and_window_validation():
    r = ListReranker({})
    assert rerank_ranking(r, "q", Ranking(), TEXTS, 5) == Ranking()
    assert r.calls == []
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ConfigError):
            rerank_ranking(r, "q", Ranking(["a"], [1.0]), TEXTS, bad)


def test_rerank_ranking_missing_text_is_config_error():
    r = ListReranker({"a": 1.0, "zz": 2.0})
    with pytest.raises(ConfigError) as e:
        rerank_ranking(r, "q", Ranking(["a", "zz"], [2.0, 1.0]), TEXTS, 5)
    assert "'zz'" in one_line(e) and "no document text" in one_line(e)


@pytest.mark.parametrize(
    "scores", [[1.0], [1.0, 2.0, 3.0], [1.0, float("nan")], [float("inf"), 1.0], ["x", "y"]]
)
def test_rerank_ranking_bad_scores_are_infrastructure_errors(scores):
    class Bad:
        id = "bad"

        def rerank(self, query_text, candidates):
            return scores

    with pytest.raises(InfrastructureError) as e:
        rerank_ranking(Bad(), "q", Ranking(["a", "b"], [2.0, 1.0]), TEXTS, 5)
    assert "'bad'" in one_line(e)


def test_rerank_run_and_missing_query_text():
    run = {"q1": Ranking(["a", "b"], [2, 1]), "q2": Ranking(["c"], [1])}
    r = ListReranker({"a": 0.0, "b": 1.0, "c": 3.0})
    out = rerank_run(r, run, {"q1": "one", "q2": "two"}, TEXTS, 10)
    assert list(out) == ["q1", "q2"]
    assert out["q1"].doc_ids == ["b", "a"] and out["q2"].scores == [3.0]
    with pytest.raises(ConfigError, match="no query text for query 'q2'"):
        rerank_run(r, run, {"q1": "one"}, TEXTS, 10)


def test_rerank_warnings():
    assert rerank_warnings(100, 10) == []
    (w,) = rerank_warnings(20, 100)
    assert "20" in w and "100" in w


# =========================================================================== callable


def _write_module(tmp_path: Path, body: str) -> str:
    name = "rr_" + uuid.uuid4().hex[:8]
    (tmp_path / f"{name}.py").write_text(body)
    return name


def test_callable_reranker_from_module(tmp_path):
    mod = _write_module(
        tmp_path,
        "def score(query, docs):\n"
        "    return [float(len(set(query.split()) & set(d.split()))) for d in docs]\n",
    )
    r = make_reranker({"type": "callable", "function": f"{mod}:score"}, tmp_path)
    assert r.id.startswith(f"callable:{mod}:score")
    out = rerank_ranking(
        r,
        "red apple",
        Ranking(["x", "y", "z"], [3, 2, 1]),
        {"x": "green pear", "y": "red apple pie", "z": "apple"},
        10,
    )
    assert out.doc_ids == ["y", "z", "x"] and out.scores == [2.0, 1.0, 0.0]
    assert make_reranker({"type": "callable", "function": f"{mod}:score", "id": "v1"}, tmp_path).id == "v1"


def test_callable_reranker_errors(tmp_path):
    mod = _write_module(
        tmp_path,
        "def boom(q, docs):\n    raise RuntimeError('kaput')\n"
        "def short(q, docs):\n    return [1.0]\n"
        "def nan(q, docs):\n    return [float('nan')] * len(docs)\n"
        "NOT_CALLABLE = 3\n",
    )
    with pytest.raises(ConfigError, match="cannot import"):
        make_reranker({"type": "callable", "function": "no_such_module_xyz:f"}, tmp_path)
    with pytest.raises(ConfigError, match="has no 'missing'"):
        make_reranker({"type": "callable", "function": f"{mod}:missing"}, tmp_path)
    with pytest.raises(ConfigError, match="not callable"):
        make_reranker({"type": "callable", "function": f"{mod}:NOT_CALLABLE"}, tmp_path)
    with pytest.raises(ConfigError, match="module:function"):
        make_reranker({"type": "callable", "function": "nocolon"}, tmp_path)
    cands = [("a", "x"), ("b", "y")]
    with pytest.raises(InfrastructureError, match="kaput"):
        make_reranker({"type": "callable", "function": f"{mod}:boom"}, tmp_path).rerank("q", cands)
    with pytest.raises(ConfigError, match="for 2 candidates"):
        make_reranker({"type": "callable", "function": f"{mod}:short"}, tmp_path).rerank("q", cands)
    with pytest.raises(ConfigError, match="NaN"):
        make_reranker({"type": "callable", "function": f"{mod}:nan"}, tmp_path).rerank("q", cands)
    assert CallableReranker(lambda q, d: 1 / 0).rerank("q", []) == []


# =========================================================================== factory


@pytest.mark.parametrize(
    "config, message",
    [
        ({}, "'type' is required"),
        ({"type": "nope"}, "unknown type 'nope'"),
        ({"type": "onnx-cross-encoder"}, "missing 'model'"),
        ({"type": "callable", "function": "m:f", "extra": 1}, "unknown key(s) 'extra'"),
        ({"type": "onnx-cross-encoder", "model": "x", "batch_size": "8"}, "'batch_size' must be an integer"),
        (
            {"type": "onnx-cross-encoder", "model": "x", "batch_size": True},
            "'batch_size' expected a number, got the boolean true",
        ),
        ({"type": "cohere", "timeout": "fast"}, "'timeout' must be a number"),
        ({"type": "onnx-bi-encoder", "model": "x", "cache_documents": "yes"}, "must be true or false"),
        ({"type": "cohere", "base_url": 3}, "'base_url' must be a string"),
    ],
)
def test_factory_rejects_bad_config(config, message):
    with pytest.raises(ConfigError) as e:
        make_reranker(config)
    assert message in one_line(e)


def test_factory_rejects_non_mapping_and_missing_model_folder(tmp_path):
    with pytest.raises(ConfigError, match="expected a mapping"):
        make_reranker(["type", "cohere"])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="ONNX model folder not found"):
        make_reranker({"type": "onnx-cross-encoder", "model": "nowhere"}, tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no model.onnx"):
        make_reranker({"type": "cross-encoder", "model": "empty"}, tmp_path)


# =========================================================================== tiny ONNX models


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _int(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(value)


def _bytes(field: int, value) -> bytes:
    if isinstance(value, str):
        value = value.encode()
    return _key(field, 2) + _varint(len(value)) + value


def _tensor(name: str, array: np.ndarray) -> bytes:
    dtype = {np.dtype(np.float32): 1, np.dtype(np.int64): 7}[array.dtype]
    out = b"".join(_int(1, d) for d in array.shape) + _int(2, dtype) + _bytes(8, name)
    return out + _bytes(9, np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes())


def _value_info(name: str, elem_type: int, dims) -> bytes:
    shape = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _node(op: str, inputs, outputs, **attrs) -> bytes:
    out = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    out += _bytes(3, f"{op}_{outputs[0]}") + _bytes(4, op)
    for name, value in attrs.items():  # int attributes only
        out += _bytes(5, _bytes(1, name) + _int(3, value) + _int(20, 2))
    return out


def build_cross_encoder_onnx(
    path: Path, weights: np.ndarray, *, two_logits=False, token_types=True, output="logits"
) -> None:
    """logit = sum_t mask_t * W[id_t] * (1 + type_t)  (a bag-of-tokens 'cross-encoder')."""
    nodes = [
        _node("Gather", ["W", "input_ids"], ["g"], axis=0),
        _node("Cast", ["attention_mask"], ["m"], to=1),
        _node("Mul", ["g", "m"], ["gm"]),
    ]
    inputs = [
        _value_info("input_ids", 7, ["batch", "seq"]),
        _value_info("attention_mask", 7, ["batch", "seq"]),
    ]
    last = "gm"
    if token_types:
        nodes += [
            _node("Cast", ["token_type_ids"], ["t"], to=1),
            _node("Add", ["t", "one"], ["tw"]),
            _node("Mul", ["gm", "tw"], ["x"]),
        ]
        inputs.append(_value_info("token_type_ids", 7, ["batch", "seq"]))
        last = "x"
    logit = output if not two_logits else "l1"
    nodes.append(_node("ReduceSum", [last, "axes"], [logit], keepdims=1))
    if two_logits:
        nodes += [_node("Neg", ["l1"], ["l0"]), _node("Concat", ["l0", "l1"], [output], axis=1)]
    initializers = [
        _tensor("W", weights.astype(np.float32)),
        _tensor("one", np.array(1.0, dtype=np.float32)),
        _tensor("axes", np.array([1], dtype=np.int64)),
    ]
    graph = (
        b"".join(_bytes(1, n) for n in nodes)
        + _bytes(2, "tiny")
        + b"".join(_bytes(5, t) for t in initializers)
        + b"".join(_bytes(11, i) for i in inputs)
        + _bytes(12, _value_info(output, 1, ["batch", 2 if two_logits else 1]))
    )
    model = (
        _int(1, 8)
        + _bytes(2, "pytest-retrieval-tests")
        + _bytes(7, graph)
        + _bytes(8, _bytes(1, "") + _int(2, 13))
    )
    path.write_bytes(model)


WORDS = (
    "solar panel efficiency river flood defence quantum gravity theory of the a and in on cells energy water"
).split()


def build_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    tok.save(str(path))


@pytest.fixture
def tiny_cross_encoder(tmp_path):
    rng = np.random.default_rng(7)
    weights = rng.normal(size=4 + len(WORDS)).astype(np.float32)

    def make(name="ce", **kwargs):
        folder = tmp_path / name
        folder.mkdir()
        build_tokenizer(folder / "tokenizer.json")
        build_cross_encoder_onnx(folder / "model.onnx", weights, **kwargs)
        return folder

    return make, weights


def expected_scores(folder: Path, weights, query, docs, max_length=512, token_types=True):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_length, strategy="longest_first")
    out = []
    for d in docs:
        enc = tok.encode(query, d)
        w = weights[np.array(enc.ids)].astype(np.float64)
        factor = (1 + np.array(enc.type_ids)) if token_types else 1
        out.append(float(np.float32((w * factor).astype(np.float32).sum(dtype=np.float32))))
    return out


CANDS = [
    ("d1", "solar panel efficiency of cells"),
    ("d2", "river flood"),
    ("d3", "quantum gravity theory and the energy of water in a river"),
    ("d4", ""),
    ("d5", "unknown words only"),
]


def test_onnx_cross_encoder_single_logit(tiny_cross_encoder):
    make, weights = tiny_cross_encoder
    folder = make()
    r = OnnxCrossEncoderReranker(folder, batch_size=2)
    scores = r.rerank("solar energy", CANDS)
    want = expected_scores(folder, weights, "solar energy", [t for _, t in CANDS])
    np.testing.assert_allclose(scores, want, rtol=1e-5, atol=1e-5)
    # batching and padding do not change a pair's score
    np.testing.assert_allclose(
        OnnxCrossEncoderReranker(folder, batch_size=32).rerank("solar energy", CANDS),
        scores,
        rtol=1e-6,
        atol=1e-6,
    )
    assert r.rerank("q", []) == []
    assert r.id.startswith("onnx-cross-encoder:ce:")
    ranking = rerank_ranking(
        r, "solar energy", Ranking([d for d, _ in CANDS], [5, 4, 3, 2, 1]), dict(CANDS), 5
    )
    assert ranking.doc_ids == [d for _, d in sorted(zip(want, [c[0] for c in CANDS]), key=lambda x: -x[0])]


def test_onnx_cross_encoder_two_logits_and_truncation(tiny_cross_encoder):
    make, weights = tiny_cross_encoder
    folder = make("two", two_logits=True)
    r = OnnxCrossEncoderReranker(folder, max_length=6)
    scores = r.rerank("solar panel efficiency", CANDS)
    want = expected_scores(folder, weights, "solar panel efficiency", [t for _, t in CANDS], max_length=6)
    np.testing.assert_allclose(scores, [2 * w for w in want], rtol=1e-5, atol=1e-5)  # l1 - l0
    assert OnnxCrossEncoderReranker(folder, max_length=6).id != OnnxCrossEncoderReranker(folder).id


def test_onnx_cross_encoder_without_token_types_sigmoid_and_output_name(tiny_cross_encoder):
    make, weights = tiny_cross_encoder
    folder = make("nott", token_types=False, output="scores")
    r = make_reranker({"type": "onnx-cross-encoder", "model": "nott", "activation": "sigmoid"}, folder.parent)
    scores = r.rerank("river flood", CANDS)
    raw = expected_scores(folder, weights, "river flood", [t for _, t in CANDS], token_types=False)
    np.testing.assert_allclose(scores, 1 / (1 + np.exp(-np.array(raw))), rtol=1e-5)
    with pytest.raises(ConfigError, match="activation"):
        OnnxCrossEncoderReranker(folder, activation="softmax")


def test_onnx_cross_encoder_bad_folder(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(ConfigError, match="no tokenizer.json"):
        OnnxCrossEncoderReranker(tmp_path / "m")
    build_tokenizer(tmp_path / "m" / "tokenizer.json")
    r = OnnxCrossEncoderReranker(tmp_path / "m")
    with pytest.raises(ConfigError, match="cannot load the ONNX model"):
        r.rerank("q", [("a", "b")])


def test_onnx_cross_encoder_model_is_valid_onnx_when_onnx_is_installed(tiny_cross_encoder):
    import onnx

    make, _ = tiny_cross_encoder
    onnx.checker.check_model(onnx.load(str(make() / "model.onnx")))


# =========================================================================== bi-encoder (real)


def test_onnx_bi_encoder_reproduces_dense_cosine_order_on_scifact(shared_dir):
    SCIFACT = shared_dir / "data" / "scifact"
    MINILM_VECTORS = SCIFACT / "embeddings" / "all-MiniLM-L6-v2"
    MINILM_ONNX = shared_dir / "models" / "all-MiniLM-L6-v2-onnx"
    docs = {}
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            o = json.loads(line)
            docs[o["_id"]] = (o["title"] + " " + o["text"]).strip()  # embedders.document_text
    queries = {}
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            o = json.loads(line)
            queries[o["_id"]] = o["text"]
    D = np.load(MINILM_VECTORS / "corpus.npy")
    dids = (MINILM_VECTORS / "corpus_ids.txt").read_text().split()
    Q = np.load(MINILM_VECTORS / "queries.npy")
    qids = (MINILM_VECTORS / "query_ids.txt").read_text().split()
    r = make_reranker({"type": "onnx-bi-encoder", "model": str(MINILM_ONNX)})
    assert r.id.startswith("onnx-bi-encoder:onnx:all-MiniLM-L6-v2-onnx:")
    for qi in (0, 1, 2):
        cos = D @ Q[qi]
        top = np.argsort(-cos, kind="stable")[:15]
        dense = Ranking([dids[i] for i in top], [float(cos[i]) for i in top])
        shuffled = Ranking(dense.doc_ids[::-1], dense.scores[::-1])  # worst first
        out = rerank_ranking(r, queries[qids[qi]], shuffled, docs, 15)
        np.testing.assert_allclose(out.scores, dense.scores, atol=2e-5)
        gaps = np.diff(dense.scores)
        if (np.abs(gaps) > 1e-5).all():  # no near-ties: the exact order
            assert out.doc_ids == dense.doc_ids
        else:
            assert set(out.doc_ids) == set(dense.doc_ids)
    # documents seen before are not embedded again
    cached = len(r._cache)
    rerank_ranking(r, "another query", Ranking(dense.doc_ids[:3], [3, 2, 1]), docs, 3)
    assert len(r._cache) == cached


# =========================================================================== sentence-transformers


def test_sentence_transformers_missing_package_is_config_error(monkeypatch):
    # simulate an environment without the package, installed or not (never a skip)
    real_find_spec = importlib.util.find_spec
    monkeypatch.delitem(sys.modules, "sentence_transformers", raising=False)
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a, **k: None if name == "sentence_transformers" else real_find_spec(name, *a, **k),
    )
    with pytest.raises(ConfigError) as e:
        make_reranker({"type": "sentence-transformers", "model": "cross-encoder/x"})
    assert "pip install pytest-retrieval[sentence-transformers]" in one_line(e)


def test_sentence_transformers_cross_encoder_with_a_fake_package(monkeypatch):
    calls = {}

    class FakeCrossEncoder:
        def __init__(self, name, **kwargs):
            calls["init"] = (name, kwargs)

        def predict(self, pairs, batch_size=32, show_progress_bar=True):
            calls["predict"] = (list(pairs), batch_size, show_progress_bar)
            return np.array([[0.0, float(len(d))] for _, d in pairs])  # two labels

    fake = types.ModuleType("sentence_transformers")
    fake.CrossEncoder = FakeCrossEncoder
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    r = make_reranker({"type": "st", "model": "cross-encoder/ms-marco", "max_length": 128, "batch_size": 4})
    assert r.id == "sentence-transformers-cross-encoder:cross-encoder/ms-marco:" + r.id.split(":")[-1]
    assert r.rerank("q", [("a", "xx"), ("b", "xxxx")]) == [2.0, 4.0]
    assert calls["init"] == ("cross-encoder/ms-marco", {"max_length": 128})
    assert calls["predict"] == ([("q", "xx"), ("q", "xxxx")], 4, False)

    class Broken(FakeCrossEncoder):
        def predict(self, *a, **k):
            raise RuntimeError("CUDA out of memory")

    fake.CrossEncoder = Broken
    with pytest.raises(InfrastructureError, match="CUDA out of memory"):
        SentenceTransformersCrossEncoder("m").rerank("q", [("a", "b")])


# =========================================================================== Cohere (fake server)


class FakeCohere:
    """A scripted HTTP server: each POST takes the next (status, body, headers, delay)."""

    def __init__(self):
        self.script = []
        self.requests = []
        state = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                state.requests.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "json": json.loads(body),
                    }
                )
                status, payload, headers, delay = state.script.pop(0) if state.script else (200, None, {}, 0)
                if delay:
                    time.sleep(delay)
                if payload is None:  # default: a correct answer, best first
                    docs = state.requests[-1]["json"]["documents"]
                    results = sorted(
                        ({"index": i, "relevance_score": 1.0 / (1 + len(d))} for i, d in enumerate(docs)),
                        key=lambda x: -x["relevance_score"],
                    )
                    payload = json.dumps({"id": "x", "results": results, "meta": {}})
                data = payload.encode() if isinstance(payload, str) else payload
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def cohere():
    server = FakeCohere()
    yield server
    server.close()


def _client(server, **kw):
    kw.setdefault("timeout", 5)
    return CohereReranker(api_key=SECRET, base_url=server.url, **kw)


DOCS = [("a", "short"), ("b", "a much longer document"), ("c", "mid length")]


def test_cohere_success_request_shape_and_scores(cohere):
    r = _client(cohere, model="rerank-english-v3.0")
    scores = r.rerank("what is x", DOCS)
    assert scores == [1 / 6, 1 / 23, 1 / 11]  # mapped back by results[].index
    (req,) = cohere.requests
    assert req["path"] == "/v2/rerank"
    assert req["json"] == {
        "model": "rerank-english-v3.0",
        "query": "what is x",
        "documents": ["short", "a much longer document", "mid length"],
        "top_n": 3,
    }
    assert req["headers"]["authorization"] == f"Bearer {SECRET}"
    assert r.id == f"cohere:rerank-english-v3.0@127.0.0.1:{cohere.url.rsplit(':', 1)[1]}"
    assert SECRET not in repr(r)
    out = rerank_ranking(r, "what is x", Ranking(["a", "b", "c"], [3, 2, 1]), dict(DOCS), 3)
    assert out.doc_ids == ["a", "c", "b"]


def test_cohere_429_then_success(cohere):
    fast = {"retry-after-ms": "10"}  # the SDK honours it (else it backs off from 1 s)
    cohere.script = [
        (429, '{"message": "too many requests"}', fast, 0),
        (503, '{"message": "unavailable"}', fast, 0),
    ]
    r = _client(cohere)
    assert len(r.rerank("q", DOCS)) == 3
    assert len(cohere.requests) == 3


def test_cohere_persistent_500_is_infrastructure_error(cohere):
    cohere.script = [
        (500, f'{{"message": "internal error for key {SECRET}"}}', {"retry-after-ms": "10"}, 0)
    ] * 10
    r = _client(cohere, max_retries=2)
    with pytest.raises(InfrastructureError) as e:
        r.rerank("q", DOCS)
    msg = one_line(e)
    assert "HTTP 500" in msg and "3 attempt(s)" in msg and SECRET not in msg and "***" in msg
    assert len(cohere.requests) == 3


@pytest.mark.parametrize(
    "payload, fragment",
    [
        ("{not json", "malformed JSON"),
        ('{"results": "nope"}', "no 'results' list"),
        ('{"results": [{"index": 7, "relevance_score": 0.5}]}', "malformed result"),
        ('{"results": [{"index": 0, "relevance_score": "high"}]}', "malformed result"),
        ('{"results": [{"index": 0, "relevance_score": 0.5}]}', "scored 1 of 3 documents"),
        ("[]", "unreadable response"),
    ],
)
def test_cohere_malformed_responses(cohere, payload, fragment):
    cohere.script = [(200, payload, {}, 0)]
    with pytest.raises(InfrastructureError) as e:
        _client(cohere).rerank("q", DOCS)
    assert fragment in one_line(e) and SECRET not in one_line(e)
    assert len(cohere.requests) == 1  # not retried


def test_cohere_auth_error_is_not_retried_and_hides_the_key(cohere):
    cohere.script = [(401, f'{{"message": "invalid api token {SECRET}"}}', {}, 0)]
    with pytest.raises(InfrastructureError) as e:
        _client(cohere).rerank("q", DOCS)
    msg = one_line(e)
    assert "HTTP 401" in msg and "COHERE_API_KEY" in msg and SECRET not in msg
    assert len(cohere.requests) == 1
    assert e.value.__cause__ is None and SECRET not in repr(e.value.__context__)


def test_cohere_timeout_and_unreachable(cohere):
    cohere.script = [(200, None, {}, 1.0)] * 3
    r = _client(cohere, timeout=0.2, max_retries=1)
    with pytest.raises(InfrastructureError) as e:
        r.rerank("q", DOCS)
    assert "timed out after 0.2 s" in one_line(e) and SECRET not in one_line(e)
    dead = CohereReranker(api_key=SECRET, base_url="http://127.0.0.1:9", max_retries=0, timeout=1)
    with pytest.raises(InfrastructureError) as e:
        dead.rerank("q", DOCS)
    assert SECRET not in one_line(e)


def test_cohere_splits_large_candidate_lists(cohere):
    r = _client(cohere, max_documents=2)
    docs = [(str(i), "x" * i) for i in range(5)]
    assert r.rerank("q", docs) == [1.0 / (1 + i) for i in range(5)]
    assert [len(q["json"]["documents"]) for q in cohere.requests] == [2, 2, 1]
    assert [q["json"]["top_n"] for q in cohere.requests] == [2, 2, 1]


def test_cohere_key_from_environment_and_config_errors(monkeypatch, cohere):
    monkeypatch.delenv("COHERE_API_KEY", raising=False)
    with pytest.raises(ConfigError) as e:
        make_reranker({"type": "cohere"})
    assert "COHERE_API_KEY" in one_line(e)
    monkeypatch.setenv("MY_RERANK_KEY", SECRET)
    r = make_reranker(
        {
            "type": "cohere",
            "api_key_env": "MY_RERANK_KEY",
            "base_url": cohere.url,
            "model": "rerank-v3.5",
            "max_tokens_per_doc": 512,
        }
    )
    r.rerank("q", DOCS[:1])
    assert cohere.requests[-1]["json"]["max_tokens_per_doc"] == 512
    assert cohere.requests[-1]["json"]["model"] == "rerank-v3.5"
    assert SECRET not in repr(r) and SECRET not in r.id
    with pytest.raises(ConfigError, match="base_url"):
        CohereReranker(api_key=SECRET, base_url="ftp://x")
    with pytest.raises(ConfigError, match="credentials"):
        CohereReranker(api_key=SECRET, base_url="https://user:pw@api.cohere.com")
    monkeypatch.setenv("COHERE_API_KEY", SECRET)
    assert make_reranker({"type": "cohere"}).id == "cohere:rerank-english-v3.0"


# the package's own files (in CI's main pass, the installed wheel's)
MODELS = Path(importlib.import_module("pytest_retrieval.models").__file__ or "").parent


def test_rerankers_use_no_private_helper_of_embedders():
    for path in (MODELS / "rerankers").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and "embedders" in (node.module or ""):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, (path.name, private)
