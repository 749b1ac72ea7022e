"""The SQLite history store (issue #37): a round trip, filters, create-only ids, prune, forward
migrations, and one clear line for a store of a newer schema, a corrupt file, a file that is
not a history and a database locked past the busy timeout."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from pytest_retrieval.errors import HistoryError
from pytest_retrieval.history import open_store
from pytest_retrieval.history.sqlite import SCHEMA_VERSION, SQLiteStore, migrate

from .records import T0, record


@pytest.fixture
def store(tmp_path: Path):
    s = open_store(tmp_path / "deep" / "h.sqlite")
    yield s
    s.close()


def test_round_trip(store) -> None:
    recs = [record(h, ndcg=0.5 + h / 100, tags=["v1"] if h == 1 else []) for h in range(3)]
    for r in reversed(recs):  # stored in any order, read back by time
        assert store.append(r) == r["run"]["id"]
    runs = store.runs()
    assert [r.id for r in runs] == [r["run"]["id"] for r in recs]
    assert runs[1].tags == ("v1",) and runs[0].suites == ("s",) and runs[0].time == T0
    assert runs[0].fingerprints == {"s": {"corpus": {"sha256": "c0"}}}
    assert store.load(recs[2]["run"]["id"]) == recs[2]
    points = store.points(metric="ndcg@10")
    assert [p.value for p in points] == [0.5, 0.51, 0.52] and all(
        p.gated and p.verdict == "passed" for p in points
    )
    assert points[0].lo < 0.5 < points[0].hi
    assert [p.run_id for p in store.points(metric="ndcg@10", limit_runs=2)] == [
        r["run"]["id"] for r in recs[1:]
    ]
    assert store.points(retriever="nope") == []


def test_filters_and_partial_runs(store) -> None:
    store.append(record(0, branch="main"))
    store.append(record(1, branch="dev", suite="other"))
    partial = record(2, partial=True)
    store.append(partial)
    assert len(store.runs()) == 3 and len(store.runs(include_partial=False)) == 2
    assert [r.branch for r in store.runs(branch="dev")] == ["dev"]
    assert [r.suites for r in store.runs(suite="other")] == [("other",)]
    assert len(store.runs(since=T0 + timedelta(hours=1))) == 2
    assert len(store.runs(until=T0 + timedelta(minutes=30))) == 1
    assert [r.id for r in store.runs(limit=1)] == [partial["run"]["id"]]
    # a partial run is never a point of a trend unless asked
    assert partial["run"]["id"] not in {p.run_id for p in store.points()}
    assert partial["run"]["id"] in {p.run_id for p in store.points(include_partial=True)}


def test_ids_are_create_only(store) -> None:
    r = record(0)
    store.append(r)
    with pytest.raises(HistoryError, match="stored already"):
        store.append(record(5, run_id=r["run"]["id"]))
    assert len(store.runs()) == 1 and store.load(r["run"]["id"]) == r


def test_resolve_by_id_prefix_tag_and_commit(store) -> None:
    a = record(0, run_id="aa" + "0" * 30, tags=["release-1"], commit="1111aaaa")
    b = record(1, run_id="ab" + "0" * 30, commit="2222bbbb")
    c = record(2, run_id="ac" + "0" * 30, tags=["release-1"], commit="2222cccc")
    for r in (a, b, c):
        store.append(r)
    assert store.resolve("ab") == b["run"]["id"]
    assert store.resolve("release-1") == c["run"]["id"]  # the newest of a tag
    assert store.resolve("1111") == a["run"]["id"]
    assert store.resolve("2222") == c["run"]["id"]  # the newest of a commit prefix
    with pytest.raises(HistoryError, match="names 3 runs"):
        store.resolve("a")
    with pytest.raises(HistoryError, match="no run, tag or commit 'zz%'"):
        store.resolve("zz%")


def test_prune(store) -> None:
    recs = [record(h) for h in range(6)]
    for r in recs:
        store.append(r)
    assert store.prune(before=T0 + timedelta(hours=2)) == 2
    assert store.prune(keep_last=3) == 1
    assert [r.id for r in store.runs()] == [r["run"]["id"] for r in recs[3:]]
    assert {p.run_id for p in store.points()} == {r["run"]["id"] for r in recs[3:]}
    assert store.prune(keep_last=10) == 0


def test_a_store_of_an_older_schema_is_migrated_forward(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(str(path), isolation_level=None)
    migrate(old, upto=1)  # as version 1 wrote it: no run_tags table
    old.execute(
        "INSERT INTO runs (id, time, tags, record) VALUES ('r1', '2026-01-01T00:00:00.000000Z', '[\"nightly\"]', x'00')"
    )
    old.close()
    store = SQLiteStore(path)
    assert store.resolve("nightly") == "r1"  # the version 1 tags were copied into run_tags
    assert store.conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    store.append(record(1, tags=["x"]))
    assert [r.id for r in store.runs()][0] == "r1"
    store.close()


def test_a_store_of_a_newer_schema_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    SQLiteStore(path).runs()
    conn = sqlite3.connect(str(path))
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(HistoryError) as err:
        SQLiteStore(path).append(record())
    assert str(err.value) == (
        f"history {path}: written by a newer pytest-retrieval (history schema {SCHEMA_VERSION + 1}, "
        f"this version reads up to {SCHEMA_VERSION}): upgrade pytest-retrieval"
    )


def test_a_corrupt_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    path.write_bytes(b"this is not a database, it is a text file\n" * 100)
    with pytest.raises(HistoryError) as err:
        SQLiteStore(path).append(record())
    assert str(err.value).startswith(f"history {path}: not a readable SQLite history (file is not a database")
    assert "\n" not in str(err.value)


def test_another_sqlite_database_is_not_a_history(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite"
    conn = sqlite3.connect(str(path))
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.close()
    with pytest.raises(HistoryError, match="not a pytest-retrieval history"):
        SQLiteStore(path).runs()
    assert sqlite3.connect(str(path)).execute("SELECT name FROM sqlite_master").fetchall() == [("users",)]


def test_a_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="is a folder"):
        SQLiteStore(tmp_path).runs()


def test_locked_past_the_busy_timeout_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    SQLiteStore(path).append(record(0))
    holder = sqlite3.connect(str(path), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another writer, mid-transaction
    try:
        store = SQLiteStore(path, busy_timeout=0.2)
        with pytest.raises(HistoryError) as err:
            store.append(record(1))
        assert str(err.value) == f"history {path}: locked by another writer for more than 0.2s (busy timeout)"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.append(record(1))  # once the other writer is done, the write goes through
    assert len(store.runs()) == 2
    store.close()


def test_unknown_scheme_and_empty_location() -> None:
    with pytest.raises(HistoryError, match="unknown store 'postgres'"):
        open_store("postgres://db/x")
    with pytest.raises(HistoryError, match="empty store location"):
        open_store("  ")
    assert isinstance(open_store("sqlite:///tmp/x.sqlite"), SQLiteStore)
