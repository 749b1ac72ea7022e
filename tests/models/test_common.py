"""What embedders and rerankers share (models/_common.py), and the one atomic writer the
document-vector cache writes through."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.fileio import atomic_write
from pytest_retrieval.models._common import (
    as_matrix,
    find_onnx_files,
    import_function,
    length_batches,
    local_or_hub,
    normalize_rows,
    onnx_feed,
    options_tag,
    read_json,
)

MODELS = Path(__file__).resolve().parents[2] / "pytest_retrieval" / "models"


def test_length_batches_longest_first_within_both_budgets():
    lengths = [3, 10, 1, 10, 5, 2]
    batches = list(length_batches(lengths, batch_size=3, max_batch_tokens=20))
    assert batches == [([1, 3], 10), ([4, 0, 5], 5), ([2], 1)]
    assert sorted(i for b, _ in batches for i in b) == list(range(len(lengths)))
    # one text longer than the token budget still makes a batch of one
    assert list(length_batches([50], batch_size=8, max_batch_tokens=10)) == [([0], 50)]
    assert list(length_batches([], 8, 10)) == []


def test_onnx_feed_pads_and_feeds_only_declared_inputs():
    encs = [SimpleNamespace(ids=[5, 6, 7], type_ids=[0, 1, 1]), SimpleNamespace(ids=[8], type_ids=[0])]
    feed, mask = onnx_feed(encs, 4, pad_id=1, input_names=("input_ids", "attention_mask"))
    assert sorted(feed) == ["attention_mask", "input_ids"]
    assert feed["input_ids"].tolist() == [[5, 6, 7, 1], [8, 1, 1, 1]]
    assert mask.tolist() == [[1, 1, 1, 0], [1, 0, 0, 0]] and feed["input_ids"].dtype == np.int64
    feed, _ = onnx_feed(encs, 3, 0, ("input_ids", "token_type_ids"))
    assert feed["token_type_ids"].tolist() == [[0, 1, 1], [0, 0, 0]]


def test_find_onnx_files_messages(tmp_path):
    with pytest.raises(ConfigError, match="nope: x: ONNX model folder not found"):
        find_onnx_files(tmp_path / "nope", "x: ")
    (tmp_path / "m" / "onnx").mkdir(parents=True)
    with pytest.raises(ConfigError, match="no model.onnx"):
        find_onnx_files(tmp_path / "m")
    (tmp_path / "m" / "onnx" / "model.onnx").write_bytes(b"")
    with pytest.raises(ConfigError, match="no tokenizer.json"):
        find_onnx_files(tmp_path / "m")
    (tmp_path / "m" / "tokenizer.json").write_text("{}")
    assert find_onnx_files(tmp_path / "m") == (
        tmp_path / "m" / "onnx" / "model.onnx",
        tmp_path / "m" / "tokenizer.json",
    )


def test_small_helpers(tmp_path):
    assert options_tag(a=None, b="", c=False) == ""
    assert options_tag(a=1) == options_tag(a=1, b=None) != options_tag(a=2)
    assert read_json(tmp_path / "absent.json") == {}
    (tmp_path / "list.json").write_text("[1]")
    assert read_json(tmp_path / "list.json") == {}
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="cannot read JSON"):
        read_json(tmp_path / "bad.json")
    (tmp_path / "local").mkdir()
    assert local_or_hub("local", tmp_path) == str(tmp_path / "local")
    assert local_or_hub("org/model", tmp_path) == "org/model"
    assert import_function("os.path:join", None, "thing") is __import__("os").path.join
    with pytest.raises(ConfigError, match="^thing: expected 'module:function'"):
        import_function("nocolon", None, "thing")
    m = as_matrix([[3.0, 4.0], [0.0, 0.0]], 2, "src")
    assert m.dtype == np.float32
    np.testing.assert_allclose(normalize_rows(m), [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    with pytest.raises(ConfigError, match="src returned NaN"):
        as_matrix([[float("nan")]], 1, "src")


def test_atomic_write_binary_and_text(tmp_path):
    target = tmp_path / "sub" / "m.npy"
    atomic_write(target, lambda fh: np.save(fh, np.eye(2, dtype=np.float32)), binary=True)
    assert np.load(target).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    atomic_write(tmp_path / "t.txt", lambda fh: fh.write("é\n"))
    assert (tmp_path / "t.txt").read_text(encoding="utf-8") == "é\n"
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["m.npy"]  # no temp file left


def test_rerankers_use_no_private_helper_of_embedders():
    for path in (MODELS / "rerankers").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and "embedders" in (node.module or ""):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, (path.name, private)
