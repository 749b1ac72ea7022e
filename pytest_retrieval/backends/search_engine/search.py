"""Searching: the quality pass (every query, batched into concurrent ``_msearch``
requests, or one ``_search`` each when a search pipeline is involved) and the latency pass
(one uncached ``_search`` per query).

Every sub-response is checked (:func:`read_hits`): an error, a failed shard, a timed-out
search, a hit without a score or OpenSearch's hybrid sub-query markers fail loudly, naming
the query id and the engine's reason, never as an empty ranking. An answer that is not JSON
at all (an HTML login or error page from a proxy, with HTTP 200) is caught for every request
by :func:`json_answers` and named with what came back, truncated. The fields of BM25/kNN
specs are checked against the index mapping once (:class:`FieldCheck`), since the engines
answer a query on an unmapped field with no hits.

One failure inside a 200 heals: shard copies lost with their node (:func:`lost_with_a_node`).
Those searches, and only those, are sent again under the one retry policy (retry.py), and a
ranking is kept only from an answer whose every shard succeeded.
"""

from __future__ import annotations

import concurrent.futures
import json
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ...errors import InfrastructureError, QueryRefused
from ...io.numeric import external_float
from ...types import Ranking, Run
from ..base import BM25Spec, KnnSpec
from ..id_field import IdField, asking_for_id, unique_ids
from .http import EngineBadAnswer, EngineHTTP, Send, describe_answer, error_reason, snippet, with_hint
from .retry import Retried

__all__ = ["FieldCheck", "Searcher", "json_answers", "lost_with_a_node", "read_hits", "refused_query"]

# Shard failures that mean the copies searched were on a node that left mid-search (stopped,
# restarting, partitioned): Elasticsearch's and OpenSearch's transport exceptions
# (o.e.transport.NodeNotConnectedException, NodeDisconnectedException, ConnectTransportException,
# o.e.node.NodeClosedException) and NoShardAvailableActionException (no copy of a shard is
# active yet, e.g. a replica being promoted). The coordinating node fails over to another copy
# only within one search (AbstractSearchAsyncAction tries the next copy of the shard's
# iterator); a search routed before the cluster state dropped the node fails, and sent again
# once the cluster has noticed, it is answered in full by the copies left.
_NODE_GONE = frozenset(
    {
        "node_not_connected_exception",
        "node_disconnected_exception",
        "connect_transport_exception",
        "node_closed_exception",
        "no_shard_available_action_exception",
    }
)


def lost_with_a_node(resp: Any) -> bool:
    """Whether a search response failed only because shard copies went with a node: shard
    failures (or an error's root causes and failed shards) all of a :data:`_NODE_GONE` type."""
    if not isinstance(resp, Mapping) or resp.get("timed_out"):
        return False
    error = resp.get("error")
    if error is not None and not isinstance(error, Mapping):
        return False
    types = _error_types(error) if error is not None else []
    types += _failed_shard_types(resp.get("_shards"))
    return bool(types) and all(t in _NODE_GONE for t in types)


def _error_types(error: Mapping[str, Any]) -> List[Any]:
    """The types of an error's root causes and of its failed shards' reasons."""
    types: List[Any] = [c.get("type") for c in error.get("root_cause") or () if isinstance(c, Mapping)]
    return types + [_reason_type(shard) for shard in error.get("failed_shards") or ()]


def _failed_shard_types(shards: Any) -> List[Any]:
    """The reason types of the ``_shards.failures`` of an answer with failed shards."""
    if isinstance(shards, Mapping) and shards.get("failed"):
        return [_reason_type(failure) for failure in shards.get("failures") or [{}]]
    return []


def _reason_type(failure: Any) -> Any:
    """The ``reason.type`` of a shard failure (None when it has none)."""
    reason = failure.get("reason") if isinstance(failure, Mapping) else None
    return reason.get("type") if isinstance(reason, Mapping) else None


class _LostWithANode(InfrastructureError):
    """A search failed only because its shard copies left with a node: sent again."""

    retry_reason = "a node left mid-search"  # how a retry of it is counted (retry.py)


# OpenSearch's hybrid query marks sub-query boundaries with these magic scores; seeing them
# in a ranking means the hybrid query ran without a normalization/score-ranker pipeline.
_HYBRID_MAGIC_SCORE = -4.0e9

Bodies = List[Tuple[str, Dict[str, Any]]]  # (query id, search body)


def json_answers(send: Send, where: Sequence[str] = ()) -> Send:
    """``send`` whose every answer is a JSON object (every request we send has one): anything else raises
    :class:`~.http.EngineBadAnswer`, which ``EngineHTTP.request`` turns into an
    ``InfrastructureError`` naming the engine and the request."""

    def checked(method: str, path: str, params: Optional[Mapping[str, Any]], body: Any, ndjson: bool) -> Any:
        answer = send(method, path, params, body, ndjson)
        if isinstance(answer, Mapping):
            return answer
        raise EngineBadAnswer(describe_answer(answer, where))

    return checked


# the error types of a search answer that mean the query as written is refused (a field of the
# wrong type, a query that does not parse, an unknown analyzer): the retriever's problem
_QUERY_ERRORS = frozenset(
    {
        "query_shard_exception",
        "parsing_exception",
        "x_content_parse_exception",
        "illegal_argument_exception",
        "number_format_exception",
        "query_parsing_exception",
        "search_parse_exception",
        "json_parse_exception",
    }
)


def refused_query(resp: Mapping[str, Any]) -> bool:
    """Whether a failed search answer refused the query itself (HTTP 400, or every error type
    one of a query error), not the engine's state (a node gone, a timeout, a full queue)."""
    if resp.get("status") == 400:
        return True
    error = resp.get("error")
    types = _error_types(error) if isinstance(error, Mapping) else []
    types += _failed_shard_types(resp.get("_shards"))
    return bool(types) and all(t in _QUERY_ERRORS for t in types)


def read_hits(
    resp: Any,
    qid: str,
    k: int,
    fail: Callable[[str, Any], InfrastructureError],
    id_field: Optional[IdField] = None,
) -> Tuple[Ranking, Optional[float]]:
    """Check one search response (an _msearch item or a _search answer) and read its hits (their
    ids from ``id_field`` when the suite names one); returns the ranking and the server's
    ``took`` (ms)."""
    what = f"search for query {qid!r} failed"
    if not isinstance(resp, Mapping):
        raise fail(what, describe_answer(resp))
    failure = _failure(resp)
    if failure is not None:
        error = fail(what, with_hint(failure))
        raise QueryRefused(str(error)) if refused_query(resp) else error
    hits = resp.get("hits")
    hits = hits.get("hits") if isinstance(hits, Mapping) else None
    if not isinstance(hits, list):
        raise fail(what, f"the answer has no hits list: {snippet(json.dumps(resp, default=str))!r}")
    pairs = [_scored_hit(hit, qid, fail) for hit in hits[:k]]
    if id_field is not None:
        where = f"search for query {qid!r}"
        pairs = [(id_field.of_hit(hit, where), score) for hit, (_id, score) in zip(hits, pairs)]
        unique_ids((doc_id for doc_id, _ in pairs), id_field, f"{where} ({id_field.name!r})")
    took = resp.get("took")
    numeric = isinstance(took, (int, float)) and not isinstance(took, bool)
    try:
        ms = external_float(took) if numeric else None
    except ValueError as exc:
        raise fail(what, f"took is not a finite number of milliseconds: {exc}") from None
    return Ranking.from_pairs(pairs), ms


def _failure(resp: Mapping[str, Any]) -> Optional[str]:
    """Why a search answer is not a complete ranking (an error, an HTTP status, a timeout,
    failed shards); None when it is one."""
    if "error" in resp:
        return error_reason(resp["error"])
    status = resp.get("status")
    if isinstance(status, int) and status >= 300:
        return f"HTTP {status}"
    if resp.get("timed_out"):
        return "the search timed out (partial results)"
    shards = resp.get("_shards")
    if isinstance(shards, Mapping) and shards.get("failed"):
        failures = shards.get("failures") or [{}]
        return f"{shards['failed']} of {shards.get('total')} shards failed: {error_reason(failures[0].get('reason'))}"
    return None


def _scored_hit(hit: Any, qid: str, fail: Callable[[str, Any], InfrastructureError]) -> Tuple[str, float]:
    """``(_id, _score)`` of one hit: it has an id and a numeric score that is not one of
    OpenSearch's hybrid sub-query markers."""
    what = f"search for query {qid!r} failed"
    if not isinstance(hit, Mapping) or "_id" not in hit:
        raise fail(what, f"a hit without an _id: {snippet(json.dumps(hit, default=str))!r}")
    score = hit.get("_score")
    if score is None:
        raise fail(
            f"search for query {qid!r} returned hits without _score",
            'a template that sorts needs "track_scores": true',
        )
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise fail(what, f"hit {hit['_id']!r} has a _score that is not a number: {str(score)[:40]!r}")
    if score <= _HYBRID_MAGIC_SCORE:
        raise fail(
            f"search for query {qid!r} returned hybrid sub-query markers",
            "a hybrid query needs a search pipeline with a normalization-processor or score-ranker-processor",
        )
    try:
        return str(hit["_id"]), external_float(score)
    except ValueError as exc:
        raise fail(what, f"hit {hit['_id']!r} has a _score that is not a finite number: {exc}") from None


class FieldCheck:
    """Fails loudly, once per (index, field), when a BM25/kNN spec names a field the index
    does not have, or a kNN spec a field that is not a vector field of this engine."""

    def __init__(
        self,
        http: EngineHTTP,
        vector_field_types: Tuple[str, ...],
        other: Optional[Callable[[str, Any], None]] = None,
    ):
        self._http = http
        self._vector_field_types = vector_field_types
        self._other = other  # checks of other specs' fields (learned sparse: sparse.SparseFields)
        self._checked: Set[Tuple[str, str, bool]] = set()

    def __call__(self, index: str, spec: Any) -> None:
        if isinstance(spec, KnnSpec):
            wanted = [(spec.field, True)]
        elif isinstance(spec, BM25Spec):
            wanted = [(name, False) for name, _boost in spec.fields if "*" not in name]
        else:
            if self._other is not None:
                self._other(index, spec)
            return
        todo = [(f, vec) for f, vec in wanted if (index, f, vec) not in self._checked]
        if not todo:
            return
        fields = ",".join(f for f, _ in todo)
        found = self._http.request(
            "GET", f"/{index}/_mapping/field/{fields}", what=f"reading the mapping of {fields!r} in {index!r}"
        )
        for field, vector in todo:
            self._check(index, field, vector, found)
            self._checked.add((index, field, vector))

    def _check(self, index: str, field: str, vector: bool, found: Any) -> None:
        types = _field_types(found, field)
        if not types:
            refused = self._http.fail(
                f"index {index!r} has no field {field!r}", "a search on it would find nothing"
            )
            raise QueryRefused(str(refused))
        if vector and not types <= set(self._vector_field_types):
            refused = self._http.fail(
                f"field {field!r} of index {index!r} is {'/'.join(sorted(types))}",
                f"a kNN retriever needs a {' or '.join(self._vector_field_types)} field",
            )
            raise QueryRefused(str(refused))


def _field_types(found: Any, field: str) -> Set[str]:
    """The mapping types of ``field`` in a ``_mapping/field`` answer, over its indices
    (``object`` when a field entry has no type)."""
    types = set()
    for idx_info in (found or {}).values():
        mappings = idx_info.get("mappings") if isinstance(idx_info, Mapping) else None
        entry = mappings.get(field) if isinstance(mappings, Mapping) else None
        if isinstance(entry, Mapping):
            leaf = field.rsplit(".", 1)[-1]
            mapping = (entry.get("mapping") or {}).get(leaf) or {}
            types.add(mapping.get("type", "object"))
    return types


class Searcher:
    """Sends search bodies and reads rankings: batched and concurrent for quality, one
    request at a time for latency."""

    def __init__(
        self,
        http: EngineHTTP,
        batch_size: int,
        concurrency: int,
        settings: Optional[Mapping[str, str]] = None,
        id_field: Optional[str] = None,
    ):
        self._http = http
        self.id_field = IdField(id_field) if id_field else None  # the judgments' ids: this field of each hit
        self._batch_size = batch_size
        self._concurrency = concurrency
        # carried by every search: preference (the shard copies that answer), search_type
        self.settings: Dict[str, str] = dict(settings or {})

    def facts(self) -> Dict[str, Any]:
        """What the backend's description says of the searches: the id field, when one is read."""
        return {"id_field": self.id_field.name} if self.id_field is not None else {}

    def asking_for_id(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``body`` asking every hit for the id field (as it is without one)."""
        return asking_for_id(body, self.id_field)

    def msearch(self, index: str, bodies: Bodies, k: int) -> Run:
        """Every body through ``_msearch`` requests of ``batch_size``, ``concurrency`` at a time."""
        size = self._batch_size
        batches = [bodies[i : i + size] for i in range(0, len(bodies), size)]
        return self._run_concurrently(lambda batch: self._msearch_batch(index, batch, k), batches)

    def _msearch_batch(self, index: str, batch: Bodies, k: int) -> List[Tuple[str, Ranking]]:
        """One ``_msearch`` of ``batch``; the searches lost with a node are sent again (only
        they), under the retry policy."""
        done: Dict[str, Ranking] = {}
        pending = list(batch)
        what = f"_msearch of {len(batch)} queries (first {batch[0][0]!r})"

        def attempt() -> List[Tuple[str, Ranking]]:
            failed = self._msearch_once(index, pending, k, done)
            if failed:
                pending[:] = [item for item, _exc, _healing in failed]
                more = (
                    f" (and {len(failed) - 1} more of this batch of {len(batch)})" if len(failed) > 1 else ""
                )
                text = f"{failed[0][1]}{more}"
                if all(h for _i, _e, h in failed):
                    raise _LostWithANode(text)
                raise (
                    QueryRefused(text)
                    if all(isinstance(e, QueryRefused) for _i, e, _h in failed)
                    else InfrastructureError(text)
                )
            return [(qid, done[qid]) for qid, _body in batch]

        return self._healing(attempt, what)

    def _msearch_once(
        self, index: str, batch: Bodies, k: int, done: Dict[str, Ranking]
    ) -> List[Tuple[Tuple[str, Dict[str, Any]], InfrastructureError, bool]]:
        """Sends ``batch`` as one ``_msearch``; fills ``done`` with the rankings read and returns
        the searches that failed: (item, error, lost with a node?)."""
        lines = []
        header = json.dumps(self.settings, separators=(",", ":"))
        for _qid, body in batch:
            lines.append(header)
            lines.append(json.dumps(body, separators=(",", ":")))
        what = f"_msearch of {len(batch)} queries (first {batch[0][0]!r})"
        resp = self._http.request(
            "POST", f"/{index}/_msearch", body="\n".join(lines) + "\n", ndjson=True, what=what
        )
        responses = (resp or {}).get("responses")
        if not isinstance(responses, list) or len(responses) != len(batch):
            raise self._http.fail(
                f"{what} failed",
                f"expected {len(batch)} responses, got "
                f"{len(responses) if isinstance(responses, list) else 'none'}",
            )
        failed = []
        for item, r in zip(batch, responses):
            try:
                done[item[0]] = read_hits(r, item[0], k, self._http.fail, self.id_field)[0]
            except InfrastructureError as exc:
                failed.append((item, exc, lost_with_a_node(r)))
        return failed

    def _healing(self, attempt: Callable[[], Any], what: str) -> Any:
        """``attempt()`` under the retry policy, retrying only searches lost with a node; a
        final failure is the first search's error, with the retries it had."""
        try:
            return self._http.retry.call(
                attempt, lambda exc: (isinstance(exc, _LostWithANode), None), f"{self._http.name} {what}"
            )
        except Retried as given_up:
            cause = given_up.cause
            if not isinstance(cause, _LostWithANode):  # another failure: as it is (its own retries named)
                raise cause from None
            raise InfrastructureError(f"{cause}{given_up.note()}") from None

    def each(self, index: str, bodies: Bodies, params: Mapping[str, Any], k: int) -> Run:
        """One ``_search`` per body, concurrently (``_msearch`` takes no search pipeline)."""

        def run_one(item: Tuple[str, Dict[str, Any]]) -> List[Tuple[str, Ranking]]:
            qid, body = item

            def attempt() -> List[Tuple[str, Ranking]]:
                resp = self._http.request(
                    "POST",
                    f"/{index}/_search",
                    params={**self.settings, **params},
                    body=body,
                    what=f"search for query {qid!r}",
                )
                try:
                    return [(qid, read_hits(resp, qid, k, self._http.fail, self.id_field)[0])]
                except InfrastructureError as exc:
                    raise (_LostWithANode(str(exc)) if lost_with_a_node(resp) else exc) from None

            return self._healing(attempt, f"search for query {qid!r}")

        return self._run_concurrently(run_one, bodies)

    def one(
        self, index: str, qid: str, body: Dict[str, Any], params: Mapping[str, Any], k: int
    ) -> Tuple[Ranking, Optional[float]]:
        """The latency pass: one request, the request cache off; the ranking and ``took``."""
        params = {**self.settings, **params}
        params["request_cache"] = "false"
        resp = self._http.request(
            "POST", f"/{index}/_search", params=params, body=body, what=f"search for query {qid!r}"
        )
        return read_hits(resp, qid, k, self._http.fail, self.id_field)

    def _run_concurrently(self, fn: Callable[[Any], List[Tuple[str, Ranking]]], items: Sequence[Any]) -> Run:
        if len(items) <= 1 or self._concurrency == 1:
            results: List[Optional[List[Tuple[str, Ranking]]]] = [fn(item) for item in items]
        else:
            results = self._in_threads(fn, items)
        run: Run = {}
        for chunk in results:
            for qid, ranking in chunk or ():
                run[qid] = ranking
        return run

    def _in_threads(
        self, fn: Callable[[Any], List[Tuple[str, Ranking]]], items: Sequence[Any]
    ) -> List[Optional[List[Tuple[str, Ranking]]]]:
        """``fn`` of every item on up to ``concurrency`` threads, results in item order; the
        first failure cancels what has not started and is raised."""
        results: List[Optional[List[Tuple[str, Ranking]]]] = [None] * len(items)
        workers = min(self._concurrency, len(items))
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix=f"{self._http.name}-search"
        ) as pool:
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            try:
                for fut in concurrent.futures.as_completed(futures):
                    results[futures[fut]] = fut.result()
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return results
