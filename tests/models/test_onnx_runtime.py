"""The ONNX plumbing the ONNX embedder and rerankers share (models/onnx_runtime.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.models.onnx_runtime import find_onnx_files, onnx_feed


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
