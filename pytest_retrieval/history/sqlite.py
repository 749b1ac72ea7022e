"""The SQLite history store (issue #37): the default store, one file a team keeps beside its CI.

Concurrency: WAL mode (readers never block the writer), every append one ``BEGIN IMMEDIATE``
transaction, and a busy timeout (``busy_timeout`` seconds: a second writer waits for the first,
then, past it, one ``HistoryError`` line). Run ids are primary keys: create-only.

Schema: the ``schema_version`` table holds the version; :data:`MIGRATIONS` take a store forward
one version at a time, in one transaction each (a new store runs them all). A store written
by a newer schema is refused with one line, never read wrong.

Tables: ``runs`` (one row per record: its ``run`` facts and the record as zlib-compressed
JSON), ``run_suites`` (the suites of a run, for ``runs(suite=...)``), ``metrics`` (one row per
run, suite, retriever and metric: ``record.summarize``, filled when a record is appended, so
a trend never decompresses a record), ``run_tags``.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from ..errors import HistoryError
from .record import format_time, parse_time, summarize
from .store import MetricPoint, RunEntry

__all__ = ["BUSY_TIMEOUT", "MIGRATIONS", "SCHEMA_VERSION", "SQLiteStore", "migrate"]

BUSY_TIMEOUT = 30.0  # seconds a writer waits for another one before it says the store is locked

_V1 = """
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    time TEXT NOT NULL,
    commit_sha TEXT,
    branch TEXT,
    ci_job TEXT,
    pull_request TEXT,
    host TEXT,
    partial INTEGER NOT NULL DEFAULT 0,
    exitstatus INTEGER NOT NULL DEFAULT 0,
    tags TEXT NOT NULL DEFAULT '[]',
    fingerprints TEXT NOT NULL DEFAULT '{}',
    record BLOB NOT NULL
);
CREATE INDEX runs_time ON runs (time);
CREATE TABLE run_suites (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    suite TEXT NOT NULL,
    PRIMARY KEY (run_id, suite)
);
CREATE TABLE metrics (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    suite TEXT NOT NULL,
    retriever TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    lo REAL,
    hi REAL,
    gated INTEGER NOT NULL DEFAULT 0,
    verdict TEXT
);
CREATE INDEX metrics_run ON metrics (run_id);
"""

# version 2: tags in their own table (``resolve`` by tag without reading every run), and the
# trend lookup (suite, retriever, metric) indexed; a version 1 store's tags are copied over
_V2 = """
CREATE TABLE run_tags (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (run_id, tag)
);
CREATE INDEX run_tags_tag ON run_tags (tag);
CREATE INDEX metrics_series ON metrics (suite, retriever, metric);
INSERT INTO run_tags (run_id, tag) SELECT runs.id, j.value FROM runs, json_each(runs.tags) AS j;
"""

#: version -> the SQL that takes a store from the version before it to this one
MIGRATIONS: Dict[int, str] = {1: _V1, 2: _V2}
SCHEMA_VERSION = max(MIGRATIONS)


def migrate(conn: sqlite3.Connection, upto: int = SCHEMA_VERSION) -> int:
    """Take the store of ``conn`` forward to ``upto``, one transaction per step (the version is
    read inside it, so two processes opening a new store at once migrate it once). Returns the
    version found before."""
    found = None
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            version = int(row[0] or 0)
            found = version if found is None else found
            if version >= upto:
                conn.execute("COMMIT")
                return found
            for statement in _statements(MIGRATIONS[version + 1]):
                conn.execute(statement)
            conn.execute("DELETE FROM schema_version")
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version + 1,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _statements(script: str) -> List[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


class SQLiteStore:
    """The history in one SQLite file (made, with its folder, on first use)."""

    def __init__(self, path: Path, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self.busy_timeout = busy_timeout
        self._conn: Optional[sqlite3.Connection] = None

    # ------------------------------------------------------------ the connection

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._guarded(self._open)
        return self._conn

    def _open(self) -> sqlite3.Connection:
        if self.path.is_dir():
            raise HistoryError(f"history {self.location}: is a folder, expected a SQLite file")
        if self.path.exists() and not self.path.is_file():  # a FIFO would block the open
            raise HistoryError(f"history {self.location}: not a regular file, expected a SQLite file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._check_newer(conn)
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints, never corrupt
            migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_newer(self, conn: sqlite3.Connection) -> None:
        """A store written by a newer schema is refused before anything else touches it."""
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if not exists:
            if conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]:
                raise HistoryError(
                    f"history {self.location}: a SQLite file that is not a pytest-retrieval history "
                    "(no schema_version table)"
                )
            return
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row[0] is not None and int(row[0]) > SCHEMA_VERSION:
            raise HistoryError(
                f"history {self.location}: written by a newer pytest-retrieval (history schema "
                f"{int(row[0])}, this version reads up to {SCHEMA_VERSION}): upgrade pytest-retrieval"
            )

    def _guarded(self, work: Callable[[], Any]) -> Any:
        """``work()``, SQLite's errors made one ``HistoryError`` line naming the file."""
        try:
            return work()
        except HistoryError:
            raise
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                raise HistoryError(
                    f"history {self.location}: locked by another writer for more than "
                    f"{self.busy_timeout:g}s (busy timeout)"
                ) from None
            raise HistoryError(f"history {self.location}: {text}") from None
        except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
            raise HistoryError(f"history {self.location}: not a readable SQLite history ({exc})") from None
        except OSError as exc:
            raise HistoryError(f"history {self.location}: {exc.strerror or exc}") from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------ writing

    def append(self, record: Mapping[str, Any]) -> str:
        try:
            entry, points = summarize(record)
        except (TypeError, ValueError) as exc:
            raise HistoryError(f"history {self.location}: not a run record ({exc})") from None
        blob = zlib.compress(
            json.dumps(record, allow_nan=False, separators=(",", ":")).encode("utf-8"), 1
        )  # level 1: a tenth larger, 4x faster

        def write() -> None:
            with self._transaction() as conn:
                if conn.execute("SELECT 1 FROM runs WHERE id = ?", (entry.id,)).fetchone():
                    raise HistoryError(f"history {self.location}: run {entry.id} is stored already")
                conn.execute(
                    "INSERT INTO runs (id, time, commit_sha, branch, ci_job, pull_request, host, partial,"
                    " exitstatus, tags, fingerprints, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        entry.id,
                        format_time(entry.time),
                        entry.commit,
                        entry.branch,
                        entry.ci_job,
                        entry.pull_request,
                        entry.host,
                        int(entry.partial),
                        entry.exitstatus,
                        json.dumps(list(entry.tags)),
                        json.dumps(entry.fingerprints, sort_keys=True),
                        blob,
                    ),
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO run_suites (run_id, suite) VALUES (?, ?)",
                    [(entry.id, s) for s in entry.suites],
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?, ?)",
                    [(entry.id, t) for t in entry.tags],
                )
                conn.executemany(
                    "INSERT INTO metrics (run_id, suite, retriever, metric, value, lo, hi, gated, verdict)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            entry.id,
                            p.suite,
                            p.retriever,
                            p.metric,
                            p.value,
                            p.lo,
                            p.hi,
                            int(p.gated),
                            p.verdict,
                        )
                        for p in points
                    ],
                )

        self._guarded(write)
        return entry.id

    def prune(self, *, keep_last: Optional[int] = None, before: Optional[datetime] = None) -> int:
        def work() -> int:
            with self._transaction() as conn:
                doomed: Set[str] = set()
                if before is not None:
                    rows = conn.execute("SELECT id FROM runs WHERE time < ?", (format_time(before),))
                    doomed.update(r[0] for r in rows)
                if keep_last is not None:
                    rows = conn.execute(
                        "SELECT id FROM runs ORDER BY time DESC, id DESC LIMIT -1 OFFSET ?", (keep_last,)
                    )
                    doomed.update(r[0] for r in rows)
                for table, column in (
                    ("metrics", "run_id"),
                    ("run_suites", "run_id"),
                    ("run_tags", "run_id"),
                    ("runs", "id"),
                ):
                    conn.executemany(f"DELETE FROM {table} WHERE {column} = ?", [(d,) for d in doomed])
                return len(doomed)

        return int(self._guarded(work))

    # ------------------------------------------------------------ reading

    def runs(
        self,
        *,
        suite: Optional[str] = None,
        branch: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        include_partial: bool = True,
        limit: Optional[int] = None,
    ) -> List[RunEntry]:
        where, args = _run_filter(
            suite=suite, branch=branch, since=since, until=until, include_partial=include_partial
        )
        sql = (
            "SELECT id, time, commit_sha, branch, ci_job, pull_request, host, partial, exitstatus, tags, fingerprints,"
            " (SELECT json_group_array(suite) FROM run_suites WHERE run_id = runs.id)"
            f" FROM runs{where} ORDER BY time DESC, id DESC"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._guarded(lambda: self.conn.execute(sql, args).fetchall())
        return [_entry(row) for row in reversed(rows)]

    def points(
        self,
        *,
        suite: Optional[str] = None,
        retriever: Optional[str] = None,
        metric: Optional[str] = None,
        branch: Optional[str] = None,
        since: Optional[datetime] = None,
        include_partial: bool = False,
        limit_runs: Optional[int] = None,
    ) -> List[MetricPoint]:
        where, args = _run_filter(suite=suite, branch=branch, since=since, include_partial=include_partial)
        runs_sql = f"SELECT id FROM runs{where} ORDER BY time DESC, id DESC"
        if limit_runs is not None:
            runs_sql += f" LIMIT {int(limit_runs)}"
        conds, margs = [], []
        for column, value in (("m.suite", suite), ("m.retriever", retriever), ("m.metric", metric)):
            if value is not None:
                conds.append(f"{column} = ?")
                margs.append(value)
        sql = (
            "SELECT m.run_id, r.time, m.suite, m.retriever, m.metric, m.value, m.lo, m.hi, m.gated, m.verdict"
            f" FROM metrics m JOIN runs r ON r.id = m.run_id WHERE m.run_id IN ({runs_sql})"
            + "".join(f" AND {c}" for c in conds)
            + " ORDER BY r.time, r.id, m.rowid"
        )
        rows = self._guarded(lambda: self.conn.execute(sql, [*args, *margs]).fetchall())
        return [
            MetricPoint(
                run_id=r[0],
                time=parse_time(r[1]),
                suite=r[2],
                retriever=r[3],
                metric=r[4],
                value=r[5],
                lo=r[6],
                hi=r[7],
                gated=bool(r[8]),
                verdict=r[9],
            )
            for r in rows
        ]

    def load(self, run_id: str) -> Dict[str, Any]:
        row = self._guarded(
            lambda: self.conn.execute("SELECT record FROM runs WHERE id = ?", (run_id,)).fetchone()
        )
        if row is None:
            raise HistoryError(f"history {self.location}: no run {run_id}")
        try:
            return dict(json.loads(zlib.decompress(row[0]).decode("utf-8")))
        except (zlib.error, ValueError, TypeError) as exc:
            raise HistoryError(
                f"history {self.location}: run {run_id}: its record cannot be read ({exc})"
            ) from None

    def resolve(self, ref: str) -> str:
        ref = str(ref).strip()
        if not ref:
            raise HistoryError(f"history {self.location}: an empty run reference")
        conn = self.conn
        like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        lookups: Sequence[Tuple[str, str, Tuple[Any, ...]]] = (
            ("run id", "SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\'", (like.lower(),)),
            (
                "tag",
                "SELECT id FROM runs WHERE id IN (SELECT run_id FROM run_tags WHERE tag = ?) ORDER BY time DESC, id DESC",
                (ref,),
            ),
            (
                "commit",
                "SELECT id FROM runs WHERE commit_sha LIKE ? ESCAPE '\\' ORDER BY time DESC, id DESC",
                (like,),
            ),
        )
        for what, sql, args in lookups:
            ids = [r[0] for r in self._guarded(partial(_fetch, conn, sql, args))]
            if what == "run id" and len(ids) > 1:
                raise HistoryError(f"history {self.location}: run id prefix {ref!r} names {len(ids)} runs")
            if ids:
                return str(ids[0])
        raise HistoryError(f"history {self.location}: no run, tag or commit {ref!r}")


def _fetch(conn: sqlite3.Connection, sql: str, args: Sequence[Any]) -> List[Any]:
    return conn.execute(sql, args).fetchall()


def _run_filter(
    *,
    suite: Optional[str] = None,
    branch: Optional[str] = None,
    since: Optional[datetime] = None,
    until: Optional[datetime] = None,
    include_partial: bool = True,
) -> Tuple[str, List[Any]]:
    conds: List[str] = []
    args: List[Any] = []
    if suite is not None:
        conds.append("id IN (SELECT run_id FROM run_suites WHERE suite = ?)")
        args.append(suite)
    if branch is not None:
        conds.append("branch = ?")
        args.append(branch)
    if since is not None:
        conds.append("time >= ?")
        args.append(format_time(since))
    if until is not None:
        conds.append("time <= ?")
        args.append(format_time(until))
    if not include_partial:
        conds.append("partial = 0")
    return (" WHERE " + " AND ".join(conds) if conds else ""), args


def _entry(row: Sequence[Any]) -> RunEntry:
    return RunEntry(
        id=row[0],
        time=parse_time(row[1]),
        commit=row[2],
        branch=row[3],
        ci_job=row[4],
        pull_request=row[5],
        host=row[6],
        partial=bool(row[7]),
        exitstatus=int(row[8]),
        tags=tuple(json.loads(row[9] or "[]")),
        suites=tuple(json.loads(row[11] or "[]")),
        fingerprints=json.loads(row[10] or "{}"),
    )
