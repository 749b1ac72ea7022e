"""The run history in an Elasticsearch or OpenSearch index (issue #37), for a team that keeps its
data there: ``elasticsearch+https://host:9200/index`` or ``opensearch+http://host:9200/index``.

* Credentials come from ``${VAR}`` in the URL (``https://${ES_USER}:${ES_PASSWORD}@host/index``,
  ``?api_key=${ES_API_KEY}``), read from the environment when the store is opened and never
  shown: ``location`` is the URL without them, and every message goes through the backend's
  redaction (``backends/search_engine/http.py``). Query keys: ``api_key``, ``ca_certs``,
  ``verify_certs``, ``request_timeout``.
* The plugin creates the index it writes to, with a mapping it owns (``_meta.pytest_retrieval``
  says so and gives the schema), and never writes to an index it did not create: an existing
  index (or an alias) without that marker is refused with one line. Nothing here deletes an index.
* Create-only: a record is ``PUT /<index>/_create/<run id>`` (``op_type=create``): two jobs
  writing at once both land, and a run id is never overwritten.
* One document per run: the ``run`` facts as keyword/date fields (filters and sorting), the
  points (``record.summarize``) and fingerprints not indexed, the record zlib-compressed in a
  ``binary`` field.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import zlib
from datetime import datetime
from typing import Any, Dict, Iterator, List, Mapping, Optional, Set, Tuple
from urllib.parse import parse_qsl, unquote, urlsplit

from ..errors import HistoryError, RetrievalError
from .record import format_time, parse_time, summarize
from .store import MetricPoint, RunEntry

__all__ = ["ENGINE_SCHEMA", "EngineStore", "MARKER", "index_mapping", "parse_store_url"]

MARKER = "pytest_retrieval"  # the key of the index mapping's _meta the plugin writes
ENGINE_SCHEMA = 1  # the index layout below; a newer one is refused
PAGE = 1000  # hits per search page
_QUERY_KEYS = ("api_key", "ca_certs", "verify_certs", "request_timeout")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Elasticsearch's index name rules (create index API): lowercase, none of these characters,
# not starting with - _ +, not . or ..; a wildcard or a comma would name several indexes
_BAD_INDEX = re.compile(r'[\\/*?"<>| ,#:A-Z]|^[-_+]|^\.{1,2}$')
_RUN_FIELDS = ("id", "time", "commit", "branch", "ci_job", "pull_request", "host", "partial", "exitstatus")


def index_mapping() -> Dict[str, Any]:
    """The mapping of a history index: the plugin's marker, strict fields."""
    keyword = {"type": "keyword"}
    return {
        "_meta": {MARKER: {"history": ENGINE_SCHEMA}},
        "dynamic": "strict",
        "properties": {
            "id": keyword,
            "time": {"type": "date_nanos"},
            "commit": keyword,
            "branch": keyword,
            "ci_job": keyword,
            "pull_request": keyword,
            "host": keyword,
            "partial": {"type": "boolean"},
            "exitstatus": {"type": "integer"},
            "tags": keyword,
            "suites": keyword,
            "digest": keyword,
            "fingerprints": {"type": "object", "enabled": False},
            "points": {"type": "object", "enabled": False},
            "record": {"type": "binary"},
        },
    }


def _interpolate(text: str, env: Mapping[str, str], where: str) -> str:
    def value(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in env:
            raise HistoryError(f"history {where}: ${{{name}}} is not set in the environment")
        return env[name]

    return _VAR.sub(value, text)


def parse_store_url(
    url: str, env: Optional[Mapping[str, str]] = None
) -> Tuple[str, str, Dict[str, Any], str]:
    """``(engine, index, connection, location)`` of an engine store URL; ``connection`` holds the
    credentials (``${VAR}`` read from ``env``), ``location`` never does."""
    env = os.environ if env is None else env
    if any(not c.isprintable() for c in url):
        raise HistoryError("history: the store URL has control or format characters")
    scheme, _, _ = url.partition("://")
    engine, _, transport = scheme.lower().partition("+")
    parts = urlsplit(url)
    try:
        host, port = parts.hostname, parts.port
    except ValueError as exc:  # a port that is not a number
        raise HistoryError(f"history {engine}+{transport}://...: {exc}") from None
    index = unquote(parts.path.strip("/"))
    location = f"{engine}+{transport}://{host or ''}{f':{port}' if port else ''}/{index}"
    if not host:
        raise HistoryError(f"history {location}: no host")
    if not index or "/" in index or _BAD_INDEX.search(index) or len(index.encode()) > 255:
        raise HistoryError(
            f"history {location}: expected one index name after the host (lowercase, none of "
            '\\ / * ? " < > | , # : or a space, not starting with - _ +)'
        )
    connection: Dict[str, Any] = {
        "hosts": [f"{transport}://{_interpolate(host, env, location)}{f':{port}' if port else ''}"],
        "request_timeout": 10.0,
        "max_retries": 2,
        "retry_deadline": 30.0,
    }
    if parts.username:
        connection["username"] = _interpolate(unquote(parts.username), env, location)
        connection["password"] = _interpolate(unquote(parts.password or ""), env, location)
    for key, raw in parse_qsl(parts.query, keep_blank_values=True):
        if key not in _QUERY_KEYS:
            raise HistoryError(
                f"history {location}: unknown URL key {key[:40]!r} (known: {', '.join(_QUERY_KEYS)})"
            )
        connection[key] = _query_value(key, _interpolate(raw, env, location), location)
    return engine, index, connection, location


def _query_value(key: str, text: str, location: str) -> Any:
    if key == "verify_certs":
        if text.lower() not in ("true", "false"):
            raise HistoryError(f"history {location}: verify_certs must be true or false")
        return text.lower() == "true"
    if key == "request_timeout":
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value < 3600:
            raise HistoryError(
                f"history {location}: request_timeout must be a number of seconds in (0, 3600)"
            )
        return value
    return text


class EngineStore:
    """A run history kept in one index of an Elasticsearch or OpenSearch cluster."""

    def __init__(self, engine: str, index: str, connection: Mapping[str, Any], location: str) -> None:
        self.engine = engine
        self.index = index
        self.location = location
        self._connection = dict(connection)
        self._backend: Any = None
        self._checked: Optional[bool] = None  # the index: True owned, False missing, None not asked

    @classmethod
    def from_url(cls, url: str, **options: Any) -> EngineStore:
        if options:
            raise HistoryError(f"history: options {sorted(options)} do not apply to an engine store")
        return cls(*parse_store_url(url))

    # ------------------------------------------------------------ talking to the engine

    @property
    def backend(self) -> Any:
        if self._backend is None:
            try:
                if self.engine == "opensearch":
                    from ..backends.opensearch import OpenSearchBackend as Backend
                else:
                    from ..backends.elasticsearch import ElasticsearchBackend as Backend  # type: ignore[assignment]
                self._backend = Backend(self._connection, None)
            except RetrievalError as exc:
                raise HistoryError(f"history {self.location}: {exc}") from None
        return self._backend

    def _request(self, method: str, path: str, **options: Any) -> Any:
        """One request; an engine that cannot be reached or refuses is one HistoryError line."""
        try:
            from ..backends.search_engine.backend import engine_request

            return engine_request(self.backend, method, path, **options)
        except HistoryError:
            raise
        except RetrievalError as exc:  # InfrastructureError / ConfigError, already redacted
            raise HistoryError(f"history {self.location}: {exc}") from None

    def _owned(self, create: bool) -> bool:
        """Is the index there and the plugin's? Creates it when ``create``; refuses an index (or
        an alias) without the plugin's marker, or of a newer schema."""
        if self._checked:
            return True
        from ..backends.search_engine.http import EngineHTTPError

        answer = self._request("GET", f"/{self.index}", what="reading the history index", ok_status=(404,))
        if isinstance(answer, EngineHTTPError):
            if not create:
                return False
            made = self._request(
                "PUT",
                f"/{self.index}",
                body={
                    "settings": {"number_of_shards": 1, "auto_expand_replicas": "0-1"},
                    "mappings": index_mapping(),
                },
                what="creating the history index",
                ok_status=(400,),
            )
            if isinstance(made, EngineHTTPError) and "already_exists" not in json.dumps(made.body):
                raise HistoryError(f"history {self.location}: the index cannot be created (HTTP 400)")
            return self._owned(create=False)  # made now, by this job or another: check it
        self._check_marker(answer)
        self._checked = True
        return True

    def _check_marker(self, answer: Mapping[str, Any]) -> None:
        names = sorted(answer)
        if names != [self.index]:
            raise HistoryError(
                f"history {self.location}: {self.index!r} is an alias of {', '.join(names)[:200]}: the history "
                "writes only to an index pytest-retrieval created"
            )
        meta = ((answer[self.index].get("mappings") or {}).get("_meta") or {}).get(MARKER)
        if not isinstance(meta, Mapping) or "history" not in meta:
            raise HistoryError(
                f"history {self.location}: the index exists and was not created by pytest-retrieval's history "
                f"(no _meta.{MARKER} in its mapping): refusing to write to it; name a new index"
            )
        version = meta.get("history")
        if not isinstance(version, int) or version > ENGINE_SCHEMA:
            raise HistoryError(
                f"history {self.location}: written by a newer pytest-retrieval (history index schema "
                f"{version!r}, this version reads up to {ENGINE_SCHEMA}): upgrade pytest-retrieval"
            )

    def close(self) -> None:
        if self._backend is not None:
            try:
                self._backend.close()  # no throwaway index was made: closes the client
            finally:
                self._backend = None

    # ------------------------------------------------------------ writing

    def append(self, record: Mapping[str, Any]) -> str:
        from ..backends.search_engine.http import EngineHTTPError

        try:
            entry, points = summarize(record)
        except (TypeError, ValueError) as exc:
            raise HistoryError(f"history {self.location}: not a run record ({exc})") from None
        blob = zlib.compress(
            json.dumps(record, allow_nan=False, separators=(",", ":")).encode("utf-8"), 1
        )  # level 1: a tenth larger, 4x faster
        digest = hashlib.sha256(blob).hexdigest()
        doc = {
            **_entry_fields(entry),
            "digest": digest,
            "points": [_point_fields(p) for p in points],
            "record": base64.b64encode(blob).decode("ascii"),
        }
        self._owned(create=True)
        answer = self._request(
            "PUT",
            f"/{self.index}/_create/{entry.id}",
            params={"refresh": "true"},
            body=doc,
            what=f"storing run {entry.id}",
            ok_status=(409,),
        )
        if isinstance(answer, EngineHTTPError):  # the id is taken: ours (a retried request) or not
            stored = self._get(entry.id, ("digest",))
            if (stored or {}).get("digest") != digest:
                raise HistoryError(f"history {self.location}: run {entry.id} is stored already")
        return entry.id

    def prune(self, *, keep_last: Optional[int] = None, before: Optional[datetime] = None) -> int:
        if not self._owned(create=False):
            return 0
        doomed: Set[str] = set()
        if before is not None:
            query = {"range": {"time": {"lt": format_time(before)}}}
            doomed.update(h["_id"] for h in self._hits(query, ("id",)))
        if keep_last is not None:
            ids = [h["_id"] for h in self._hits({"match_all": {}}, ("id",))]
            doomed.update(ids[: max(0, len(ids) - keep_last)])
        ordered = sorted(doomed)
        for start in range(0, len(ordered), PAGE):  # _bulk deletes: _delete_by_query needs the reindex module
            lines = [
                json.dumps({"delete": {"_index": self.index, "_id": i}})
                for i in ordered[start : start + PAGE]
            ]
            answer = self._request(
                "POST",
                "/_bulk",
                params={"refresh": "true"},
                body="\n".join(lines) + "\n",
                ndjson=True,
                what="pruning the history",
            )
            failed = [
                item
                for item in answer.get("items") or ()
                if (item.get("delete") or {}).get("status") not in (200, 404)
            ]
            if failed:
                raise HistoryError(f"history {self.location}: {len(failed)} runs could not be deleted")
        return len(ordered)

    # ------------------------------------------------------------ reading

    def _hits(
        self, query: Mapping[str, Any], fields: Tuple[str, ...], *, newest: Optional[int] = None
    ) -> Iterator[Dict[str, Any]]:
        """Every hit of ``query``, oldest first (``search_after`` pages); the newest ``newest``,
        newest first, when given."""
        sort = [
            {"time": "desc" if newest is not None else "asc"},
            {"id": "desc" if newest is not None else "asc"},
        ]
        after: Optional[List[Any]] = None
        left = newest
        while left is None or left > 0:
            size = PAGE if left is None else min(PAGE, left)
            body: Dict[str, Any] = {"query": query, "sort": sort, "size": size, "_source": list(fields)}
            if after is not None:
                body["search_after"] = after
            answer = self._request("POST", f"/{self.index}/_search", body=body, what="reading the history")
            hits = (answer.get("hits") or {}).get("hits") or []
            yield from hits
            if len(hits) < size:
                return
            after = hits[-1]["sort"]
            left = None if left is None else left - len(hits)

    def _filtered(
        self, newest: Optional[int], fields: Tuple[str, ...], **filters: Any
    ) -> List[Dict[str, Any]]:
        if not self._owned(create=False):
            return []
        query = _run_query(**filters)
        hits = list(self._hits(query, fields, newest=newest))
        if newest is not None:  # pages came newest first: put them oldest first
            hits.sort(key=lambda h: (h["_source"].get("time") or "", h["_id"]))
        return hits

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
        fields = (*_RUN_FIELDS, "tags", "suites", "fingerprints")
        hits = self._filtered(
            limit,
            fields,
            suite=suite,
            branch=branch,
            since=since,
            until=until,
            include_partial=include_partial,
        )
        return [_entry(h["_source"]) for h in hits]

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
        hits = self._filtered(
            limit_runs,
            ("id", "time", "points"),
            suite=suite,
            branch=branch,
            since=since,
            include_partial=include_partial,
        )
        out = []
        for h in hits:
            src = h["_source"]
            for p in src.get("points") or ():
                if all(
                    want is None or p.get(k) == want
                    for k, want in (("suite", suite), ("retriever", retriever), ("metric", metric))
                ):
                    out.append(MetricPoint(run_id=src["id"], time=parse_time(src["time"]), **p))
        return out

    def _get(self, run_id: str, fields: Tuple[str, ...]) -> Optional[Dict[str, Any]]:
        from urllib.parse import quote

        from ..backends.search_engine.http import EngineHTTPError

        answer = self._request(
            "GET",
            f"/{self.index}/_doc/{quote(run_id, safe='')}",
            params={"_source_includes": ",".join(fields)},
            what=f"reading run {run_id[:40]}",
            ok_status=(404,),
        )
        if isinstance(answer, EngineHTTPError) or not answer.get("found"):
            return None
        return dict(answer.get("_source") or {})

    def load(self, run_id: str) -> Dict[str, Any]:
        src = self._get(run_id, ("record",)) if self._owned(create=False) else None
        if src is None:
            raise HistoryError(f"history {self.location}: no run {run_id}")
        try:
            return dict(json.loads(zlib.decompress(base64.b64decode(src["record"])).decode("utf-8")))
        except (KeyError, zlib.error, ValueError, TypeError) as exc:
            raise HistoryError(
                f"history {self.location}: run {run_id}: its record cannot be read ({exc})"
            ) from None

    def resolve(self, ref: str) -> str:
        ref = str(ref).strip()
        if not ref:
            raise HistoryError(f"history {self.location}: an empty run reference")
        if self._owned(create=False):
            ids = [h["_id"] for h in self._hits({"prefix": {"id": ref.lower()}}, ("id",), newest=2)]
            if len(ids) > 1:
                raise HistoryError(f"history {self.location}: run id prefix {ref!r} names several runs")
            if ids:
                return str(ids[0])
            for query in ({"term": {"tags": ref}}, {"prefix": {"commit": ref}}):
                found = list(self._hits(query, ("id",), newest=1))
                if found:
                    return str(found[0]["_id"])
        raise HistoryError(f"history {self.location}: no run, tag or commit {ref!r}")


def _run_query(
    *,
    suite: Optional[str] = None,
    branch: Optional[str] = None,
    since: Optional[datetime] = None,
    until: Optional[datetime] = None,
    include_partial: bool = True,
) -> Dict[str, Any]:
    filters: List[Dict[str, Any]] = []
    if suite is not None:
        filters.append({"term": {"suites": suite}})
    if branch is not None:
        filters.append({"term": {"branch": branch}})
    if since is not None or until is not None:
        bounds = {k: format_time(v) for k, v in (("gte", since), ("lte", until)) if v is not None}
        filters.append({"range": {"time": bounds}})
    if not include_partial:
        filters.append({"term": {"partial": False}})
    return {"bool": {"filter": filters}} if filters else {"match_all": {}}


def _entry_fields(entry: RunEntry) -> Dict[str, Any]:
    return {
        "id": entry.id,
        "time": format_time(entry.time),
        "commit": entry.commit,
        "branch": entry.branch,
        "ci_job": entry.ci_job,
        "pull_request": entry.pull_request,
        "host": entry.host,
        "partial": entry.partial,
        "exitstatus": entry.exitstatus,
        "tags": list(entry.tags),
        "suites": list(entry.suites),
        "fingerprints": dict(entry.fingerprints),
    }


def _point_fields(p: MetricPoint) -> Dict[str, Any]:
    return {
        "suite": p.suite,
        "retriever": p.retriever,
        "metric": p.metric,
        "value": p.value,
        "lo": p.lo,
        "hi": p.hi,
        "gated": p.gated,
        "verdict": p.verdict,
    }


def _entry(src: Mapping[str, Any]) -> RunEntry:
    return RunEntry(
        id=src["id"],
        time=parse_time(src["time"]),
        commit=src.get("commit"),
        branch=src.get("branch"),
        ci_job=src.get("ci_job"),
        pull_request=src.get("pull_request"),
        host=src.get("host"),
        partial=bool(src.get("partial")),
        exitstatus=int(src.get("exitstatus") or 0),
        tags=tuple(src.get("tags") or ()),
        suites=tuple(src.get("suites") or ()),
        fingerprints=dict(src.get("fingerprints") or {}),
    )
