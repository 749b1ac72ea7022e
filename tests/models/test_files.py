"""Model option files and paths (models/files.py), and the one atomic writer the
document-vector cache writes through."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.fileio import atomic_write
from pytest_retrieval.models.files import local_or_hub, read_json


def test_read_json_and_local_or_hub(tmp_path):
    assert read_json(tmp_path / "absent.json") == {}
    (tmp_path / "list.json").write_text("[1]")
    assert read_json(tmp_path / "list.json") == {}
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="cannot read JSON"):
        read_json(tmp_path / "bad.json")
    (tmp_path / "local").mkdir()
    assert local_or_hub("local", tmp_path) == str(tmp_path / "local")
    assert local_or_hub("org/model", tmp_path) == "org/model"


def test_atomic_write_binary_and_text(tmp_path):
    target = tmp_path / "sub" / "m.npy"
    atomic_write(target, lambda fh: np.save(fh, np.eye(2, dtype=np.float32)), binary=True)
    assert np.load(target).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    atomic_write(tmp_path / "t.txt", lambda fh: fh.write("é\n"))
    assert (tmp_path / "t.txt").read_text(encoding="utf-8") == "é\n"
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["m.npy"]  # no temp file left
