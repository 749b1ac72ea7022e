"""``backend: {type: http}``: a team's own search endpoint, asked one request per query, or
``batch.size`` queries per request in the quality pass when the suite gives ``batch``.

The request is the suite's template filled per query (``template``); the answer is read with
JMESPath (``response.hits``, and each hit's ``id`` and ``score``; ``response.took``, the
service's own milliseconds, for the latency pass). A batch POSTs the queries' filled bodies as
one list (``batch.body``'s ``{requests}``) and reads the list of answers at ``batch.answers``,
one per query in their order; the latency pass still times one request per query. Failures follow the engines'
one retry policy (``search_engine/retry.py``): 429/502/503/504, refused or reset connections
and timeouts are retried with backoff and counted; any other status, an answer that is not JSON
(an HTML login page), a missing path or a hit of the wrong shape is an ``InfrastructureError``
naming the endpoint without its credentials, never a ranking with no hits.

Header values (tokens) and every ``${VAR}`` value of the template are secrets: they are removed
from every message, log line and ``repr``, in every encoded form (``redaction``); the endpoint is
named by its template (``/t/${T}/search``). A URL's ``user:pass@`` is sent as basic auth, never
dropped; a redirect (301/302/303/307/308) is an error saying where to, never followed.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from ...errors import ConfigError, InfrastructureError
from ...redaction import Redactor, basic_auth_token, register_basic_auth, split_user_info, templated
from ...types import Query, Ranking, Run
from ..base import LeafSpec, ServiceSpec
from ..pipeline import PipelineBackend, ranking_of, score_of
from ..search_engine.http import REDIRECTS, describe_answer, redirect_line, snippet
from ..search_engine.retry import RETRY_STATUSES, Retried, RetryPolicy, parse_retry_after
from .config import HttpBatchConfig, HttpRequestConfig, HttpResponseConfig, batch_problem, compile_path
from .template import BUILT_IN_PLACEHOLDERS, fill_body, fill_url, placeholders_in, values_of

__all__ = ["HttpBackend", "ServiceAnswerError", "ServiceHTTPError", "ServiceUnreachable"]


_DEADLINE = "(request.timeout: one attempt's deadline, from connecting to the answer's last byte)"


class ServiceHTTPError(Exception):
    """The service answered an error status."""

    def __init__(self, status: int, body: bytes, headers: Mapping[str, Any]):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.headers = {str(k).lower(): v for k, v in headers.items()}


class ServiceUnreachable(Exception):
    """No answer: refused, reset, timed out."""

    def __init__(self, message: str, timeout: bool):
        super().__init__(message)
        self.timeout = timeout
        self.retry_reason = "a timeout" if timeout else "a lost connection"


class ServiceAnswerError(Exception):
    """A 2xx answer that is not the JSON the response paths read."""


class HttpBackend(PipelineBackend):
    """Asks ``request.url`` for each query's ranking (see the module's text)."""

    name = "http"

    def __init__(
        self,
        request: HttpRequestConfig,
        response: HttpResponseConfig,
        max_concurrency: int = 4,
        secrets: Sequence[str] = (),
        retry: Optional[RetryPolicy] = None,
        batch: Optional[HttpBatchConfig] = None,
    ) -> None:
        super().__init__(max_concurrency)
        self.request = request
        self.response = response
        self.batch = batch
        self._hits = compile_path(response.hits)
        self._id = compile_path(response.id)
        self._score = compile_path(response.score)
        self._took = compile_path(response.took) if response.took else None
        if batch is not None:
            problem = batch_problem(request, batch)
            if problem:
                raise ConfigError(f"backend.{problem[0]}: {problem[1]}")
            self._answers = compile_path(batch.answers)
        self.redact = Redactor()
        self.redact.add_all([h.get_secret_value() for h in request.headers.values()] + list(secrets))
        self.url, self._auth = self._user_info(request.url)
        self.batch_url, self._batch_auth = (
            self._user_info(batch.url) if batch and batch.url else (self.url, self._auth)
        )
        self.retry = retry or RetryPolicy(max_retries=request.max_retries, deadline_s=request.retry_deadline)
        # named by its template (/t/${T}/search): the same after a token's rotation
        self.endpoint = self.redact(templated(_endpoint(self.url)))
        self.batch_endpoint = self.redact(templated(_endpoint(self.batch_url))) if batch else ""
        self._pool: Any = None

    def __repr__(self) -> str:
        return f"HttpBackend({self.request.method} {self.endpoint})"

    def _user_info(self, url: str) -> Tuple[str, Dict[str, str]]:
        """``url`` without its user part, and the ``Authorization: Basic`` header it means (RFC
        7617; urllib3 would drop it silently). The request's own Authorization header beside it
        is refused by the config (``HttpRequestConfig``)."""
        bare, credentials = split_user_info(url)
        if credentials is None:
            return url, {}
        register_basic_auth(*credentials)
        if any(name.lower() == "authorization" for name in self.request.headers):
            raise ConfigError(
                "backend.batch.url carries credentials (user:password@, sent as basic auth) and "
                "request.headers gives an Authorization header too: keep one"
            )
        self.redact.add_all([credentials[1], f"{credentials[0]}:{credentials[1]}"])
        return bare, {"Authorization": "Basic " + basic_auth_token(*credentials)}

    def _client(self) -> Any:
        if self._pool is None:
            from ...bounds.urllib3_pool import bounded_pool

            self._pool = bounded_pool(self.max_concurrency)
        return self._pool

    def service_spec(self, spec: LeafSpec) -> ServiceSpec:
        """The service retriever's spec, once every placeholder of the request has a value for
        it (a ConfigError before anything is sent otherwise)."""
        service = super().service_spec(spec)
        params = set(dict(service.params))
        templates: List[Tuple[str, Any, Any]] = [
            ("request.url", self.request.url, BUILT_IN_PLACEHOLDERS),
            ("request.body", self.request.body, BUILT_IN_PLACEHOLDERS),
        ]
        if self.batch is not None:
            templates += [
                ("batch.url", self.batch.url, ("k",)),
                ("batch.body", self.batch.body, ("k", "requests")),
            ]
        for key, template, built_in in templates:
            missing = sorted(placeholders_in(template) - params - set(built_in))
            if missing:
                raise ConfigError(
                    f"backend.{key}: placeholder {{{missing[0]}}} has no value (not built in, not a param "
                    "of the service retriever); nothing was sent"
                )
        return service

    # --- one query
    def ask(self, spec: ServiceSpec, query: Query, k: int) -> Tuple[Ranking, Optional[float]]:
        values = values_of(query.text, k, query.qid, dict(spec.params))
        url = fill_url(self.url, values)
        body = None if self.request.body is None else fill_body(self.request.body, values)
        what = f"{self.request.method} {self.endpoint} (query {query.qid!r})"
        answer = self._call(self.request.method, url, body, what, self.request.timeout, self._auth)
        return self._ranking(answer, k, what), self._service_time(answer, what)

    # --- the quality pass, batched
    def search_batch(self, spec: LeafSpec, queries: Sequence[Query], k: int) -> Run:
        service = self.service_spec(spec)
        if self.batch is None or not queries:
            return super().search_batch(service, queries, k)
        size = self.batch.size
        groups = [queries[i : i + size] for i in range(0, len(queries), size)]
        if self.max_concurrency == 1 or len(groups) < 2:
            runs = [self._ask_batch(service, g, k) for g in groups]
        else:
            with ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix=self.name) as pool:
                runs = list(pool.map(lambda g: self._ask_batch(service, g, k), groups))
        return {qid: ranking for run in runs for qid, ranking in run.items()}

    def _ask_batch(self, spec: ServiceSpec, group: Sequence[Query], k: int) -> Run:
        """One POST of ``group``'s requests; their rankings, read from the list of answers."""
        assert self.batch is not None and self.request.body is not None
        params = dict(spec.params)
        bodies = [fill_body(self.request.body, values_of(q.text, k, q.qid, params)) for q in group]
        shared = {**params, "k": int(k)}
        url = fill_url(self.batch_url, shared)
        body = (
            bodies if self.batch.body is None else fill_body(self.batch.body, {**shared, "requests": bodies})
        )
        what = f"POST {self.batch_endpoint} (batch of {len(group)} from query {group[0].qid!r})"
        answer = self._call(
            "POST", url, body, what, self.batch.timeout or self.request.timeout, self._batch_auth
        )
        answers = self._answers.search(answer)
        path = f"batch.answers {self.batch.answers!r}"
        if not isinstance(answers, list):
            found = "nothing" if answers is None else f"a {_json_type(answers)}"
            raise self._fail(f"{what}: {path} is {found}, not the list of answers: {_answer(answer)}")
        if len(answers) != len(group):
            raise self._fail(
                f"{what}: {path} holds {len(answers)} answers for {len(group)} queries (one per query, in order)"
            )
        return {
            q.qid: self._ranking(a, k, f"{what}, answer {i} (query {q.qid!r})")
            for i, (q, a) in enumerate(zip(group, answers))
        }

    # --- one request, under the retry policy
    def _call(self, method: str, url: str, body: Any, what: str, timeout: float, auth: Dict[str, str]) -> Any:
        try:
            return self.retry.call(
                lambda: self._send(method, url, body, timeout, auth),
                self._classify,
                f"http {what}",
                self.redact,
            )
        except Retried as given_up:
            raise self._failure(what, given_up) from None

    def _send(self, method: str, url: str, body: Any, timeout: float, auth: Dict[str, str]) -> Any:
        headers = {"accept": "application/json", **auth}
        headers.update({name: value.get_secret_value() for name, value in self.request.headers.items()})
        payload = None
        if body is not None:
            headers.setdefault("content-type", "application/json")
            payload = json.dumps(body).encode("utf-8")
        answer = self._fetch(method, url, payload, headers, timeout)
        if not 200 <= answer.status < 300:
            raise ServiceHTTPError(answer.status, answer.body, answer.headers)
        try:
            return json.loads(answer.body)
        except (ValueError, UnicodeDecodeError):
            kind = answer.headers.get("content-type") or "untyped"
            raise ServiceAnswerError(
                f"HTTP {answer.status} {kind}, not JSON: {_answer(answer.body)}"
            ) from None

    def _fetch(
        self, method: str, url: str, payload: Optional[bytes], headers: Dict[str, str], timeout: float
    ) -> Any:
        """One attempt, whole within ``timeout`` s and ``request.max_response_bytes``; its
        failures as the exceptions the retry policy classifies."""
        import urllib3

        from ...bounds.limits import AnswerTooLarge, DeadlineExceeded, UnexpectedEncoding
        from ...bounds.urllib3_pool import fetch

        try:
            return fetch(
                self._client(), method, url, payload, headers, timeout, self.request.max_response_bytes
            )
        except DeadlineExceeded:
            raise ServiceUnreachable(f"timed out after {timeout:g} s {_DEADLINE}", True) from None
        except AnswerTooLarge as exc:
            raise ServiceAnswerError(f"{exc} (backend.request.max_response_bytes)") from None
        except UnexpectedEncoding as exc:
            raise ServiceAnswerError(str(exc)) from None
        except urllib3.exceptions.NewConnectionError as exc:  # a subclass of the timeout error
            reason = str(exc).split(": ", 1)[-1]  # after the connection object's repr
            raise ServiceUnreachable(f"cannot be reached: {reason}", False) from None
        except urllib3.exceptions.TimeoutError as exc:
            raise ServiceUnreachable(
                f"timed out after {timeout:g} s {_DEADLINE} ({type(exc).__name__})", True
            ) from None
        except urllib3.exceptions.HTTPError as exc:
            raise ServiceUnreachable(f"cannot be reached: {type(exc).__name__}", False) from None

    @staticmethod
    def _classify(exc: BaseException) -> Tuple[bool, Optional[float]]:
        if isinstance(exc, ServiceHTTPError) and exc.status in RETRY_STATUSES:
            return True, parse_retry_after(exc.headers.get("retry-after"))
        return isinstance(exc, ServiceUnreachable), None

    def _failure(self, what: str, given_up: Retried) -> InfrastructureError:
        exc, note = given_up.cause, given_up.note()
        if isinstance(exc, ServiceHTTPError) and exc.status in REDIRECTS:
            detail = f"failed: {redirect_line(exc.status, exc.headers.get('location'))}"
        elif isinstance(exc, ServiceHTTPError):
            text = snippet(exc.body.decode("utf-8", "replace")) if exc.body else "(no body)"
            detail = f"failed (HTTP {exc.status}){note}: {text}"
        elif isinstance(exc, ServiceUnreachable):
            detail = f"{exc}{note}"
        elif isinstance(exc, ServiceAnswerError):
            detail = f"failed: {exc}"
        else:
            detail = f"failed: {type(exc).__name__}: {exc}"
        return InfrastructureError(self.redact(f"http backend {what} {detail}"))

    # --- the answer
    def _fail(self, message: str) -> InfrastructureError:
        return InfrastructureError(self.redact(f"http backend {message}"))

    def _service_time(self, answer: Any, what: str) -> Optional[float]:
        """The milliseconds at ``response.took`` (None when not configured): a finite number
        >= 0, anything else an error (a latency report never silently lacks it)."""
        if self._took is None:
            return None
        took = self._took.search(answer)
        if took is None:
            raise self._fail(
                f"{what}: the answer has no {self.response.took!r} (response.took): {_answer(answer)}"
            )
        ms = score_of(took)
        if ms is None or ms < 0:
            raise self._fail(
                f"{what}: response.took {self.response.took!r} is {_json_type(took)} {snippet(json.dumps(took))}, "
                "not a finite number of milliseconds >= 0"
            )
        return ms

    def _ranking(self, answer: Any, k: int, what: str) -> Ranking:
        fail = self._fail
        hits = self._hits.search(answer)
        if hits is None:
            raise fail(f"{what}: the answer has no {self.response.hits!r} (response.hits): {_answer(answer)}")
        if not isinstance(hits, list):
            raise fail(
                f"{what}: response.hits {self.response.hits!r} is a {_json_type(hits)}, not a list of hits"
            )
        pairs: List[Tuple[Any, Any]] = []
        for i, hit in enumerate(hits[:k]):
            doc_id, score = self._id.search(hit), self._score.search(hit)
            for key, expression, value in (
                ("id", self.response.id, doc_id),
                ("score", self.response.score, score),
            ):
                if value is None:
                    raise fail(f"{what}: hit {i} has no {expression!r} (response.{key}): {_answer(hit)}")
            pairs.append((doc_id, score))
        return ranking_of(pairs, k, what, fail)

    def retries(self) -> Dict[str, int]:
        """Every retry made so far, by reason (the runner counts a pass's as the difference)."""
        return self.retry.count.snapshot()

    def describe(self) -> Dict[str, Any]:
        return {
            "backend": self.name,
            "engine": "http",
            # the endpoint stands as the "version": a baseline made on another one says so
            "version": f"{self.request.method} {self.endpoint}",
            "endpoint": f"{self.request.method} {self.endpoint}",
            "max_concurrency": self.max_concurrency,
            **({"batch": f"{self.batch.size} queries per POST {self.batch_endpoint}"} if self.batch else {}),
        }

    def close(self) -> None:
        if self._pool is not None:
            self._pool.clear()
            self._pool = None


def _endpoint(url: str) -> str:
    """The URL as a message names it: scheme, host, port and path, without the user info and
    the query string (either may hold a credential)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if _port(parts) else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _port(parts: Any) -> Optional[int]:
    try:
        return int(parts.port) if parts.port else None
    except ValueError:
        return None


def _answer(value: Any) -> str:
    """A JSON answer or a body, in one short line."""
    if isinstance(value, (bytes, bytearray)):
        return describe_answer(value).replace("the engine's JSON", "JSON")
    return repr(snippet(json.dumps(value, ensure_ascii=False, default=str)))


def _json_type(value: Any) -> str:
    return {dict: "object", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )
