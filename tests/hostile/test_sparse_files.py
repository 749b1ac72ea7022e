"""Hostile sparse vector files (issue #25): every precomputed sparse file a suite names, JSONL,
.npz, its id file and its vocabulary, broken in the ways files break, is one clear line naming
the file (or the retriever and the id), never a traceback, a hang or a silent pass."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Dict

import numpy as np
import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.runner import SuiteRunner

from .conftest import BASE, FLOORS, bounded, one_line

SPARSE = """\
  sparse:
    type: sparse
    sparse_encoder:
      type: precomputed
      documents: {documents}
      queries: q.jsonl
{more}"""

GOOD_DOCS = [{"_id": "d1", "vector": {"solar": 1.0}}, {"_id": "d2", "vector": {"river": 2.0}}]
GOOD_QUERIES = [{"_id": "q1", "vector": {"solar": 1.0}}, {"_id": "q2", "vector": {"river": 1.0}}]


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def fifo(path: Path) -> None:
    os.mkfifo(path)


def npz(dense, ids="d1\nd2\n", vocab="solar\nriver\n") -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        import scipy.sparse as sp

        sp.save_npz(folder / "d.npz", sp.csr_matrix(np.asarray(dense, dtype=float)))
        (folder / "ids.txt").write_text(ids)
        (folder / "vocab.txt").write_text(vocab)

    return write


# case -> (documents file content or writer, the fragment of the one line)
JSONL_CASES: Dict[str, tuple] = {
    "empty": (b"", "no document sparse vector for 2 of 2 id(s)"),
    "binary": (b"\xff\xfe\x00garbage", "not UTF-8 text"),
    "not-json": (b"{nope\n", "invalid JSON"),
    "array-line": (b"[1, 2]\n", "each line must be a JSON object"),
    "no-id": (b'{"vector": {"a": 1}}\n', "missing id"),
    "bool-id": (b'{"_id": true, "vector": {"a": 1}}\n', "bad id"),
    "vector-list": (b'{"_id": "d1", "vector": [1, 2]}\n', '"vector" must be a {"term": weight} object'),
    "nan": (
        b'{"_id": "d1", "vector": {"solar": NaN}}\n{"_id": "d2", "vector": {}}\n',
        "non-finite weight nan",
    ),
    "overflow": (
        b'{"_id": "d1", "vector": {"solar": 1e400}}\n{"_id": "d2", "vector": {}}\n',
        "non-finite weight inf",
    ),
    "negative": (jsonl([{"_id": "d1", "vector": {"solar": -2}}, GOOD_DOCS[1]]), "negative weight -2.0"),
    "string-weight": (
        jsonl([{"_id": "d1", "vector": {"solar": "2"}}, GOOD_DOCS[1]]),
        "has weight '2', not a number",
    ),
    "duplicate": (jsonl(GOOD_DOCS + GOOD_DOCS[:1]), "duplicate id 'd1'"),
    "missing-doc": (jsonl(GOOD_DOCS[:1]), "no document sparse vector for 1 of 2 id(s): 'd2'"),
    "bidi-term": (jsonl([{"_id": "d1", "vector": {"\u202e": -1}}, GOOD_DOCS[1]]), "negative weight"),
}

NPZ_CASES: Dict[str, tuple] = {
    "vocabulary-short": (npz([[1, 0, 2], [0, 1, 0]]), "vocabulary mismatch: the matrix has 3 columns"),
    "ids-short": (npz([[1, 0], [0, 1]], ids="d1\n"), "2 matrix rows but 1 ids"),
    "ids-duplicate": (npz([[1, 0], [0, 1]], ids="d1\nd1\n"), "duplicate id 'd1'"),
    "negative": (npz([[1, 0], [0, -1]]), "negative weight -1.0"),
    "not-npz": (npz([[1, 0], [0, 1]]), "not a scipy sparse .npz matrix"),
    "vocabulary-binary": (npz([[1, 0], [0, 1]]), "not UTF-8 text"),
}


def write_suite(folder: Path, documents: str, more: str = "") -> Path:
    (folder / "q.jsonl").write_bytes(jsonl(GOOD_QUERIES))
    path = folder / "s.yaml"
    suite = BASE.replace("retrievers:\n", "retrievers:\n" + SPARSE.format(documents=documents, more=more))
    path.write_text(suite + FLOORS)
    return path


def run_case(path: Path) -> str:
    with bounded(30), pytest.raises(ConfigError) as info:
        SuiteRunner(load_suite(path)).run()
    return str(info.value)


@pytest.mark.parametrize("case", sorted(JSONL_CASES))
def test_hostile_sparse_jsonl_is_one_clear_line(tmp_path: Path, case: str) -> None:
    content, fragment = JSONL_CASES[case]
    (tmp_path / "d.jsonl").write_bytes(content)
    one_line(run_case(write_suite(tmp_path, "d.jsonl")), fragment, "retrievers.sparse.sparse_encoder")


@pytest.mark.parametrize("case", sorted(NPZ_CASES))
def test_hostile_sparse_npz_is_one_clear_line(tmp_path: Path, case: str) -> None:
    write, fragment = NPZ_CASES[case]
    write(tmp_path)
    if case == "vocabulary-binary":
        (tmp_path / "vocab.txt").write_bytes(b"\xff\xfe\xfa")
    if case == "not-npz":
        (tmp_path / "d.npz").write_bytes(b"PK junk")
    more = "      document_ids: ids.txt\n      vocabulary: vocab.txt\n"
    one_line(run_case(write_suite(tmp_path, "d.npz", more)), fragment)


@pytest.mark.parametrize("name", ["d.jsonl", "d.npz", "ids.txt", "vocab.txt"])
def test_special_sparse_files_are_refused_without_blocking(tmp_path: Path, name: str) -> None:
    npz([[1, 0], [0, 1]])(tmp_path)
    (tmp_path / "d.jsonl").write_bytes(jsonl(GOOD_DOCS))
    (tmp_path / name).unlink()
    fifo(tmp_path / name)
    documents = "d.jsonl" if name == "d.jsonl" else "d.npz"
    more = "" if name == "d.jsonl" else "      document_ids: ids.txt\n      vocabulary: vocab.txt\n"
    one_line(run_case(write_suite(tmp_path, documents, more)), "not a regular file")
