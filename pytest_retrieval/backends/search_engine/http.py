"""Talking to the engine: the connection's keys (:class:`ConnectionConfig`, which the suite
schema composes as ``backend.connection``), the validated settings and client built from them,
and every HTTP failure mapped to an ``InfrastructureError`` whose text holds no credential.

Credentials (password, API key, ``user:pass@`` in URLs, basic-auth tokens) never appear in
an exception message, a ``repr`` or a log line: :class:`ConnectionSettings` knows them and
its :class:`Redactor` removes them from every message :class:`EngineHTTP` builds.
"""

from __future__ import annotations

import base64
import importlib
import logging
import re
from typing import Any, Callable, Dict, Iterable, List, Literal, Mapping, Optional, Sequence, Tuple
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from typing_extensions import Annotated

from ...errors import ConfigError, InfrastructureError, QueryRefused
from ...numbers import NUMBER
from ...redaction import Redactor, clip, register_basic_auth, secret_forms, split_user_info
from .retry import RETRY_STATUSES, Retried, RetryPolicy, parse_retry_after

log = logging.getLogger("pytest_retrieval.backends")

__all__ = [
    "ConnectionConfig",
    "ConnectionSettings",
    "EngineBadAnswer",
    "EngineHTTP",
    "EngineHTTPError",
    "EngineUnreachable",
    "REDIRECTS",
    "Redactor",
    "api_key_parts",
    "connect",
    "describe_answer",
    "error_reason",
    "redirect_line",
    "import_client",
    "request_headers",
    "secret_forms",
    "snippet",
]

# send(method, path, params, body, ndjson) -> the decoded JSON body
Send = Callable[[str, str, Optional[Mapping[str, Any]], Any, bool], Any]


class EngineHTTPError(Exception):
    """The engine answered with an HTTP error status (engine adapter -> shared code)."""

    def __init__(self, status: int, body: Any, headers: Optional[Mapping[str, Any]] = None):
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = {str(k).lower(): v for k, v in (headers or {}).items()}

    def __str__(self) -> str:
        return f"HTTP {self.status}"


class EngineUnreachable(Exception):
    """No answer from the engine: connection refused or reset, TLS, timeout (adapter -> shared
    code). ``timeout``: the engine took longer than ``request_timeout``."""

    retry_reason = "a lost connection"  # how a retry of it is counted (retry.py)

    def __init__(self, message: str, *, timeout: bool = False):
        super().__init__(message)
        self.timeout = timeout


class EngineBadAnswer(Exception):
    """The engine (or something in front of it) answered with a body that is not JSON, e.g.
    an HTML page with status 200 from a proxy. Never retried, never read as no hits."""


_SHOWN_CHARACTERS = 160  # of an answer that is not JSON, in an error line


def snippet(text: str) -> str:
    """``text`` with whitespace folded, its secrets redacted, then cut to ``_SHOWN_CHARACTERS``
    for an error line (``redaction.clip``: a cut never shows the start of a secret)."""
    return clip(" ".join(text.split()), _SHOWN_CHARACTERS)


#: statuses that send the client elsewhere (RFC 9110 section 15.4): never followed
REDIRECTS = (301, 302, 303, 307, 308)


def redirect_line(status: int, location: Any) -> str:
    """A redirect as one line: what it is and where to (redacted, cut), never followed (the
    address of a login page or of another service would be scored as the engine's answer)."""
    where = snippet(str(location)) if location else "nowhere (no Location header)"
    return f"HTTP {status} is a redirect to {where}; redirects are not followed: point the URL at it"


def describe_answer(body: Any, where: Sequence[str] = ()) -> str:
    """One line about an answer that is not a JSON object: what it looks like, its size and
    its start, whitespace folded and cut (a proxy's page can be thousands of lines)."""
    source = f" from {', '.join(where)}" if where else ""
    if body is None or body == "" or body == b"":
        return f"got an empty answer{source} instead of the engine's JSON (a proxy or load balancer in front of it?)"
    text = body.decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else str(body)
    head = text[:2000].lower()
    kind = "an HTML page" if ("<html" in head or "<!doctype" in head) else "an answer"
    shown = snippet(text)
    return (
        f"got {kind} of {len(text)} characters{source} instead of the engine's JSON "
        f"(a proxy, load balancer or login page in front of it?): {shown!r}"
    )


def not_json(status: int, content_type: Any, raw: Any) -> EngineBadAnswer:
    """A 2xx answer whose body is not JSON (never retried, never read as no hits)."""
    return EngineBadAnswer(f"HTTP {status} {content_type or 'untyped'}, not JSON: {describe_answer(raw)}")


# the analysis module the integ-test distributions of scripts/engines lack (docs/how-to/engines.md)
_NO_ANALYZER = (
    "failed to find analyzer",
    "unknown analyzer",
    "failed to find tokenizer",
    "failed to find filter",
    "failed to find global analyzer",
    "failed to find global tokenizer",
    "failed to find global token filter",
)
ANALYSIS_HINT = (
    "the local engines of scripts/engines are the minimal integ-test builds without the analysis-common "
    "module (no language analyzers such as english, no stemmers, no whitespace tokenizer): Elasticsearch "
    "publishes no analysis-common for them; scripts/engines installs OpenSearch's. Use a full "
    "distribution (Docker, a staging cluster) for a production mapping (docs/how-to/engines.md)"
)


def with_hint(reason: str) -> str:
    """An engine's error reason, with what the local engines lack when it names an unknown
    analyzer, tokenizer or filter."""
    lowered = reason.lower()
    # "[match] analyzer [english] not found", "analyzer [english] has not been configured in mappings"
    unknown = re.search(
        r"(analyzer|tokenizer|filter) \[[^\]]*\] (not found|has not been configured)", lowered
    )
    if unknown or any(marker in lowered for marker in _NO_ANALYZER):
        return f"{reason}; if this is a local engine: {ANALYSIS_HINT}"
    return reason


def error_reason(err: Any) -> str:
    """One readable line from an engine error object (``{"type", "reason", "root_cause", ...}``)."""
    if err is None:
        return "unknown error"
    if isinstance(err, str):
        return err
    if not isinstance(err, Mapping):
        return str(err)
    inner = err.get("error", err)
    if isinstance(inner, str):
        return inner
    if not isinstance(inner, Mapping):
        return str(inner)
    text = _root_cause(inner)
    deepest = _deepest_cause(inner)
    if deepest is not None:
        extra = f"{deepest.get('type', 'error')}: {deepest.get('reason', '')}"
        if extra not in text:
            text = f"{text} (caused by {extra})"
    return text


def _root_cause(error: Mapping[str, Any]) -> str:
    """``type: reason`` of the first root cause (else of the error itself)."""
    roots = error.get("root_cause") or []
    first = roots[0] if roots and isinstance(roots[0], Mapping) else error
    reason = first.get("reason")  # null in e.g. master_not_discovered_exception
    if reason in (None, ""):
        return str(first.get("type", "error"))
    return f"{first.get('type', 'error')}: {reason}"


def _deepest_cause(error: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
    """The deepest ``caused_by`` (often the actual cause of a search_phase_execution_exception),
    below the first failed shard's reason when there is one."""
    deepest = None
    node: Any = error
    for shard in error.get("failed_shards") or []:
        node = shard.get("reason") or node
        break
    while isinstance(node, Mapping) and isinstance(node.get("caused_by"), Mapping):
        node = node["caused_by"]
        deepest = node
    return deepest


def request_headers(body: Any, ndjson: bool) -> Dict[str, str]:
    """JSON in and out; NDJSON for ``_msearch``/``_bulk`` bodies."""
    headers = {"accept": "application/json"}
    if body is not None:
        headers["content-type"] = "application/x-ndjson" if ndjson else "application/json"
    return headers


def api_key_parts(api_key: Any) -> List[str]:
    """What an ``api_key`` reveals besides itself: an encoded key (base64 of ``id:key``) decoded,
    and its id and key; an ``(id, key)`` pair joined and encoded. Each is redacted."""
    if isinstance(api_key, (tuple, list)) and len(api_key) == 2:
        joined = f"{api_key[0]}:{api_key[1]}"
        return [joined, base64.b64encode(joined.encode()).decode(), str(api_key[0]), str(api_key[1])]
    if not isinstance(api_key, str):
        return []
    try:
        decoded = base64.b64decode(api_key.strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return []
    if ":" not in decoded:  # not an encoded key: a key used as it is
        return []
    key_id, _, key = decoded.partition(":")
    return [decoded, key_id, key]


# The one declaration of the connection's keys and defaults: the suite schema's
# ``backend.connection``, and what ConnectionSettings reads from a plain mapping (no docstring:
# it would become the published JSON Schema's description).
class ConnectionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    hosts: List[str] = Field(default_factory=lambda: ["http://localhost:9200"])
    api_key: Optional[SecretStr] = None
    username: Optional[str] = None
    password: Optional[SecretStr] = None
    ca_certs: Optional[str] = None
    verify_certs: bool = True
    request_timeout: Annotated[float, Field(gt=0), NUMBER] = 30.0
    max_retries: Annotated[int, Field(ge=0), NUMBER] = Field(
        3,
        description="Retries of a request answered 429/502/503/504 or lost (refused, reset, "
        "timed out): exponential backoff with jitter, at least the answer's Retry-After.",
    )
    retry_on_timeout: bool = Field(True, description="Also retry a request that timed out.")
    retry_deadline: Annotated[float, Field(gt=0), NUMBER] = Field(
        300.0, description="Seconds after a request's first attempt when no retry starts any more."
    )
    # reproducible searches: which shard copies answer, and how BM25 statistics are gathered
    preference: Optional[str] = Field(
        None,
        description="Every search's preference (which shard copies answer). Default: "
        "'pytest-retrieval-<suite>', so every query and every rerun of the suite reads the same "
        "copies. _local: copies on the node that receives the search; _primary: primaries "
        "only (OpenSearch; Elasticsearch 8 refuses it).",
    )
    search_type: Optional[Literal["query_then_fetch", "dfs_query_then_fetch"]] = Field(
        None,
        description="dfs_query_then_fetch: BM25 term statistics over all shards, not per shard "
        "(for multi-shard indexes; one extra round trip per search).",
    )
    # tuning of the quality pass (not credentials, not required)
    batch_size: Annotated[int, Field(ge=1), NUMBER] = Field(100, description="Queries per _msearch request.")
    concurrency: Annotated[int, Field(ge=1), NUMBER] = Field(3, description="_msearch requests in flight.")


def _with_defaults(connection: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """``connection`` checked for unknown keys, the keys it leaves out (and empty hosts) set to
    :class:`ConnectionConfig`'s defaults."""
    given = dict(connection or {})
    fields = ConnectionConfig.model_fields
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise ConfigError(
            f"unknown connection key(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}",
            key="connection",
        )
    values = {key: field.get_default(call_default_factory=True) for key, field in fields.items()}
    values.update(given)
    values["hosts"] = values["hosts"] or fields["hosts"].get_default(call_default_factory=True)
    return values


class ConnectionSettings:
    """Validated connection keys (a suite's, or a plain mapping of :class:`ConnectionConfig`'s
    keys). Holds the secrets; its repr does not show them."""

    def __init__(self, connection: Optional[Mapping[str, Any]]):
        values = _with_defaults(connection)
        self.redact = Redactor()
        self.username: Optional[str] = values["username"]
        self.password: Optional[str] = values["password"]
        self.hosts = self._clean_hosts(values["hosts"], values["api_key"])
        self.api_key = values["api_key"]
        self.ca_certs = values["ca_certs"]
        self.verify_certs = bool(values["verify_certs"])
        self.request_timeout = float(values["request_timeout"])
        self.max_retries = int(values["max_retries"])
        self.retry_on_timeout = bool(values["retry_on_timeout"])
        self.retry_deadline = float(values["retry_deadline"])
        self.preference: Optional[str] = values["preference"]
        self.search_type: Optional[str] = values["search_type"]
        self.batch_size = int(values["batch_size"])
        self.concurrency = int(values["concurrency"])
        self._check()
        self._redact_credentials()

    def _check(self) -> None:
        """What a mapping not validated by the suite schema may still get wrong."""
        if self.max_retries < 0 or self.retry_deadline <= 0:
            raise ConfigError("max_retries must be >= 0 and retry_deadline > 0", key="connection")
        if self.search_type not in (None, "query_then_fetch", "dfs_query_then_fetch"):
            raise ConfigError(
                f"search_type must be query_then_fetch or dfs_query_then_fetch, not {self.search_type!r}",
                key="connection.search_type",
            )
        if self.batch_size < 1 or self.concurrency < 1:
            raise ConfigError("batch_size and concurrency must be >= 1", key="connection")

    def _redact_credentials(self) -> None:
        """The password, the API key and their basic-auth/ApiKey tokens, removed from every message."""
        for secret in (self.password, self.api_key):
            if isinstance(secret, str):
                self.redact.add(secret_forms(secret))
        self.redact.add(self.api_key, api_key_parts(self.api_key))
        if self.username and self.password:
            token = f"{self.username}:{self.password}".encode()
            self.redact.add(base64.b64encode(token).decode())

    def _clean_hosts(self, hosts: Any, api_key: Any) -> List[str]:
        """Host URLs with a scheme, without a trailing slash, and without credentials (taken
        out into username/password and sent as basic auth). Credentials in a URL that would not
        be sent (an api_key, another username/password, another host's other credentials) are refused,
        naming the host by its position: never silently dropped."""
        if isinstance(hosts, str):
            hosts = [hosts]
        clean: List[str] = []
        # the credentials sent: username/password as given, else a host's (all hosts the same)
        sent = (self.username, self.password or "") if self.username is not None else None
        for i, host in enumerate(hosts):
            host = str(host)
            if "://" not in host:
                host = "http://" + host
            host, credentials = split_user_info(host)
            if credentials is not None:  # inside the URL: taken out, decoded
                register_basic_auth(*credentials)
                self.redact.add(credentials[1], quote(credentials[1], safe=""))
                if api_key or (sent is not None and sent != credentials):
                    raise ConfigError(
                        f"hosts[{i}] carries credentials (user:password@) that would not be sent: "
                        "api_key, other username/password or another host's credentials are given "
                        "too; keep one",
                        key="connection.hosts",
                    )
                sent = credentials
                self.username, self.password = credentials[0], credentials[1] or None
            clean.append(host.rstrip("/"))
        return clean

    def __repr__(self) -> str:
        auth = "api_key" if self.api_key else ("basic" if self.username else "none")
        return f"ConnectionSettings(hosts={self.hosts!r}, auth={auth})"


def import_client(backend: str, module: str, attr: str, package: str) -> Any:
    """The engine's client class, or a ConfigError saying which extra to install."""
    try:
        return getattr(importlib.import_module(module), attr)
    except ImportError:
        raise ConfigError(
            f"the {backend} backend needs the '{package}' client: pip install 'pytest-retrieval[{backend}]'"
        ) from None


def connect(name: str, conn: ConnectionSettings, make_client: Callable[[ConnectionSettings], Any]) -> Any:
    """The engine's client; a client that refuses its arguments is a ``ConfigError``."""
    try:
        return make_client(conn)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - a client that refuses its arguments
        raise ConfigError(f"{name} connection: {conn.redact(exc)}", key="connection") from None


def _short(exc: BaseException) -> str:
    """One failed attempt in a few words, e.g. ``HTTP 503 master_not_discovered_exception``."""
    if isinstance(exc, EngineHTTPError):
        return f"HTTP {exc.status}: {error_reason(exc.body)}"
    return f"{type(exc).__name__}: {exc}" if not isinstance(exc, EngineUnreachable) else str(exc)


class EngineHTTP:
    """Requests to one engine through its adapter's ``send``; every failure becomes an
    ``InfrastructureError`` with redacted text, naming the backend and what was tried."""

    def __init__(self, name: str, conn: ConnectionSettings, send: Send, retry: Optional[RetryPolicy] = None):
        self.name = name
        self.conn = conn
        self._send = send
        self.retry = retry or RetryPolicy(max_retries=conn.max_retries, deadline_s=conn.retry_deadline)
        self._engine_info: Optional[Tuple[str, str]] = None

    def _classify(self, exc: BaseException) -> Tuple[bool, Optional[float]]:
        """The retry policy's view of a failure: (retry it?, Retry-After seconds)."""
        if isinstance(exc, EngineHTTPError) and exc.status in RETRY_STATUSES:
            return True, parse_retry_after(exc.headers.get("retry-after"))
        if isinstance(exc, EngineUnreachable):
            return (self.conn.retry_on_timeout or not exc.timeout), None
        return False, None

    def fail(self, what: str, detail: Any) -> InfrastructureError:
        return InfrastructureError(self.conn.redact(f"{self.name} {what}: {detail}"))

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        ndjson: bool = False,
        what: Optional[str] = None,
        ok_status: Iterable[int] = (),
    ) -> Any:
        """One request; every failure becomes an InfrastructureError with redacted text.
        Statuses in ``ok_status`` are returned as ``EngineHTTPError`` objects instead of raised."""
        what = what or f"{method} {path}"
        allowed = tuple(ok_status)

        def attempt() -> Any:
            try:
                return self._send(method, path, params, body, ndjson)
            except EngineHTTPError as exc:
                if exc.status in allowed:
                    return exc
                raise

        try:
            return self.retry.call(attempt, self._classify, f"{self.name} {what}", self.conn.redact)
        except Retried as given_up:
            raise self._failure(what, given_up) from None

    def _failure(self, what: str, given_up: Retried) -> Exception:
        """The final failure of a request as one redacted line (with its retries, if any, and
        the other kinds of failure its earlier attempts met: a node that is down answers
        "connection refused" while the node left answers 503 "no master", and the last attempt
        alone would name only one of them)."""
        exc, note = given_up.cause, given_up.note()
        others = list(dict.fromkeys(_short(e) for e in given_up.earlier))
        others = [o for o in others if o != _short(exc)]
        if others:
            note += f" (earlier attempts: {'; '.join(others)})"
        if isinstance(exc, EngineHTTPError) and exc.status in REDIRECTS:
            return self.fail(f"{what} failed", redirect_line(exc.status, exc.headers.get("location")))
        if isinstance(exc, EngineHTTPError):
            failure = self.fail(f"{what} failed (HTTP {exc.status}){note}", with_hint(error_reason(exc.body)))
            # 400: the request as written is refused (a query or a mapping), not the engine's state
            return QueryRefused(str(failure)) if exc.status == 400 else failure
        if isinstance(exc, EngineUnreachable):
            return self.fail(f"at {', '.join(self.conn.hosts)} cannot be reached ({what}){note}", exc)
        if isinstance(exc, EngineBadAnswer):
            return self.fail(f"{what} failed", exc)
        if isinstance(exc, (ConfigError, InfrastructureError)):
            return exc
        return self.fail(f"{what} failed", f"{type(exc).__name__}: {exc}")  # whatever the client raised

    def engine_info(self) -> Tuple[str, str]:
        """(distribution, version) of the engine, asked once."""
        if self._engine_info is None:
            root = self.request("GET", "/", what="version check", ok_status=(401, 403, 404, 405))
            if isinstance(root, EngineHTTPError):
                self._engine_info = self._version_from_nodes()
            else:
                ver = root.get("version", {})
                self._engine_info = (ver.get("distribution", "elasticsearch"), str(ver.get("number", "?")))
        return self._engine_info

    def _version_from_nodes(self) -> Tuple[str, str]:
        # Elasticsearch without the rest-root module (integ-test distribution) has no
        # GET /; a user without the monitor privilege may see neither.
        nodes = self.request(
            "GET",
            "/_nodes/_local",
            params={"filter_path": "nodes.*.version"},
            what="version check",
            ok_status=(401, 403),
        )
        if isinstance(nodes, EngineHTTPError):
            log.warning(
                "%s: cannot read the engine version (HTTP %s); reported as unknown", self.name, nodes.status
            )
            return (self.name, "unknown")
        found = nodes.get("nodes") if isinstance(nodes, Mapping) else None
        first = next(iter(found.values()), None) if isinstance(found, Mapping) else None
        if not isinstance(first, Mapping) or "version" not in first:  # e.g. a proxy's own JSON
            raise self.fail(
                "version check failed",
                f"no version in the answer of GET /_nodes/_local: {snippet(str(nodes))}",
            )
        return ("elasticsearch", str(first["version"]))
