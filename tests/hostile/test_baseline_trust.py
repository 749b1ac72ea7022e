"""Hostile baselines (issue #28, "a baseline file is validated before it is trusted"): a
hand-edited, truncated or badly merged baseline is one clear line naming what does not add up;
a baseline of the previous version (no checksums) is accepted with a note; a query id with a NUL
or control character never corrupts the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.gates.baseline import Baseline, baseline_from_result, read_baseline, write_baseline
from pytest_retrieval.gates.baseline_checks import NO_CHECKSUMS, checksums

from ..tiny import run_tiny
from .conftest import bounded, one_line

Edit = Callable[[Dict[str, Any]], None]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """The tiny suite's baseline as written by --retrieval-baseline-update, as JSON data."""
    directory = tmp_path_factory.mktemp("trust")
    path = write_baseline(directory / "b.json", baseline_from_result(run_tiny(directory)))
    return json.loads(path.read_text(encoding="utf-8"))


def _ndcg(data: Dict[str, Any]) -> Dict[str, float]:
    return data["retrievers"]["bm25"]["per_query"]["ndcg@10"]


def _unsealed(edit: Edit) -> Edit:
    """``edit`` on a baseline of the previous version (no checksums, and so no query hashes:
    a baseline with them and without checksums lost its checksums, issue #32)."""

    def apply(data: Dict[str, Any]) -> None:
        data.pop("checksums")
        data["fingerprint"].pop("query_hashes", None)
        edit(data)

    return apply


def _resealed(edit: Edit) -> Edit:
    """``edit``, then the checksums written again (what only the plugin should write)."""

    def apply(data: Dict[str, Any]) -> None:
        edit(data)
        data["checksums"] = checksums(data)

    return apply


def _set(column: Callable[[Dict[str, Any]], Dict[str, Any]], key: str, value: Any) -> Edit:
    return lambda data: column(data).__setitem__(key, value)


def _drop(column: Callable[[Dict[str, Any]], Dict[str, Any]], key: str) -> Edit:
    return lambda data: column(data).pop(key)


CASES: List[Tuple[str, Edit, str]] = [
    ("value-edited", _set(_ndcg, "q2", 0.0), "retrievers.bm25: its values do not match the checksum"),
    (
        "fingerprint-edited",
        lambda d: d["fingerprint"]["queries"].__setitem__("count", 9),
        "fingerprint: its values do not match the checksum",
    ),
    (
        "retriever-removed",
        lambda d: d["retrievers"].pop("rrf"),
        "retrievers.rrf: missing, though its checksum was written",
    ),
    (
        "retriever-added",
        lambda d: d["retrievers"].__setitem__("extra", d["retrievers"]["bm25"]),
        "retrievers.extra: has no checksum",
    ),
    ("checksums-not-an-object", lambda d: d.__setitem__("checksums", "abc"), "checksums: expected {"),
    (
        "truncated-column",
        _unsealed(_drop(_ndcg, "q2")),
        "retrievers.bm25.per_query.ndcg@10: 2 queries, the retriever's count says 3",
    ),
    (
        "out-of-range",
        _unsealed(_set(_ndcg, "q2", 1.5)),
        "retrievers.bm25.per_query.ndcg@10.q2: 1.5 is out of range for ndcg@10 (0 to 1)",
    ),
    (
        "negative",
        _unsealed(_set(_ndcg, "q2", -0.25)),
        "retrievers.bm25.per_query.ndcg@10.q2: -0.25 is out of range",
    ),
    ("edited-no-checksum", _unsealed(_set(_ndcg, "q2", 0.0)), "retrievers.bm25.aggregate.ndcg@10: "),
    (
        "stray-query",
        _resealed(lambda d: d["fingerprint"]["query_hashes"].pop("q2")),
        "query 'q2' is not among the fingerprint's 3 queries",
    ),
    (
        "query-hashes-malformed",
        _resealed(lambda d: d["fingerprint"].__setitem__("query_hashes", ["q1"])),
        "fingerprint.query_hashes: expected an object",
    ),
    (
        "checksums-lost",
        lambda d: d.pop("checksums"),
        "checksums: no checksums, though pytest-retrieval 0.1.0 always writes them",
    ),
    (
        "checksums-lost-later-version",
        _unsealed(lambda d: d.__setitem__("plugin_version", "0.2.0")),
        "checksums: no checksums, though pytest-retrieval 0.2.0 always writes them",
    ),
    (
        "retriever-lost",
        _resealed(lambda d: d["retrievers"].pop("bm25")),
        "retrievers.bm25: the fingerprint names 'bm25' but the baseline has no values for it",
    ),
    (
        "retriever-lost-unsealed",
        _unsealed(lambda d: d["retrievers"].pop("bm25")),
        "retrievers.bm25: the fingerprint names 'bm25' but the baseline has no values for it",
    ),
    (
        "string-value",
        _unsealed(_set(_ndcg, "q2", "0.5")),
        "retrievers.bm25.per_query.ndcg@10.q2: per-query value must be a finite number",
    ),
]


@pytest.mark.parametrize(("name", "edit", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_baseline_that_does_not_add_up_is_one_line(
    written: Dict[str, Any], tmp_path: Path, name: str, edit: Edit, expected: str
) -> None:
    data = json.loads(json.dumps(written))
    edit(data)
    path = tmp_path / f"{name}.baseline.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with bounded(30), pytest.raises(ConfigError) as info:
        read_baseline(path)
    one_line(str(info.value), str(path), expected)


def test_a_baseline_of_the_previous_version_is_accepted_with_a_note(
    written: Dict[str, Any], tmp_path: Path
) -> None:
    data = json.loads(json.dumps(written))
    _unsealed(lambda d: None)(data)
    path = tmp_path / "old.baseline.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with bounded(30):
        back = read_baseline(path)
    assert back.notes == [NO_CHECKSUMS] and back.per_query("bm25", "ndcg@10") == _ndcg(written)


HOSTILE_IDS = [
    "q\x00nul",
    "\x00",
    "\x000\x00",  # the shape of the placeholders the writer once used for the rankings
    "tab\there",
    "line\nbreak",
    "sep\u2028=======",  # a line separator, then what looks like a merge marker
    "<<<<<<< HEAD",
    "\x1b[31mred",
    "\u202eevil",
    '": "q',
]


@pytest.mark.parametrize("qid", HOSTILE_IDS, ids=[repr(q) for q in HOSTILE_IDS])
def test_a_query_id_never_corrupts_the_baseline(tmp_path: Path, qid: str) -> None:
    ids = [qid, "plain"]
    values = {qid: 0.25, "plain": 0.75}
    tops = {qid: ["d1", "\x000\x00"], "plain": ["d2"]}
    base = Baseline(
        suite="s",
        created="2026-01-01T00:00:00Z",
        plugin_version="0.1.0",
        fingerprint={"query_hashes": {q: "aa:bb" for q in ids}},
        retrievers={
            "bm25": {
                "per_query": {"ndcg@10": values},
                "aggregate": {"ndcg@10": 0.5},
                "queries": 2,
                "top": tops,
            }
        },
    )
    with bounded(30):
        path = write_baseline(tmp_path / "b.json", base)
        back = read_baseline(path)
    assert back.per_query("bm25", "ndcg@10") == values and back.top("bm25") == tops
    assert back.notes == []  # its checksums add up
