"""An ``httpx`` client for the providers' SDKs (the LLM judges' ``anthropic`` and ``openai``,
the Cohere reranker's ``cohere``): a total deadline per attempt and a capped answer.

httpx's timeouts bound each socket operation, not the request (a server dripping one byte
every half second never times out). Here every socket operation of an attempt is given what is
left of the attempt's :class:`~.limits.Deadline` at most (httpcore's network backend, wrapped:
``httpcore.NetworkBackend`` is its public extension point), so the attempt ends at its
deadline with ``httpx.ReadTimeout``, which the SDKs report as their timeout error. The request
asks for ``identity``; an answer in gzip or deflate anyway is inflated here, with a bound, and
its decoded bytes are counted: past the cap, :class:`~.limits.AnswerTooLarge`.

Proxies: ``HTTP(S)_PROXY``/``ALL_PROXY``/``NO_PROXY`` are honoured (``urllib.request``'s
reading of them) for http(s) proxies; a SOCKS proxy is refused by name.

The SDKs moved from ``httpx`` to its fork ``httpx2`` (on ``httpcore2``), with the same API, and
each accepts only its own: :func:`transport_class` makes the transport for either.
"""

from __future__ import annotations

import importlib
import threading
import urllib.request
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlsplit

from .limits import AnswerTooLarge, CappedDecoder, Deadline, DeadlineExceeded, UnexpectedEncoding

__all__ = ["env_proxy", "flavor_of", "transport_class"]

_CURRENT = threading.local()  # the deadline of the attempt this thread is making
_ENCODINGS = (b"gzip", b"x-gzip", b"deflate")
FLAVORS = ("httpx", "httpx2")


def _left(timeout: Optional[float], error: Any) -> Optional[float]:
    deadline: Optional[Deadline] = getattr(_CURRENT, "deadline", None)
    if deadline is None:
        return timeout
    try:
        return deadline.left(timeout)
    except DeadlineExceeded as exc:
        raise error(str(exc)) from None


class _Stream:
    """An httpcore network stream whose every operation ends by the attempt's deadline."""

    def __init__(self, inner: Any, core: Any):
        self._inner, self._core = inner, core

    def read(self, max_bytes: int, timeout: Optional[float] = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, self._core.ReadTimeout))

    def write(self, buffer: bytes, timeout: Optional[float] = None) -> None:
        self._inner.write(buffer, _left(timeout, self._core.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: Optional[str] = None, timeout: Optional[float] = None
    ) -> Any:
        left = _left(timeout, self._core.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, left), self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    """httpcore's sync network backend, its streams bounded by the attempt's deadline."""

    def __init__(self, core: Any) -> None:
        self._inner, self._core = core.SyncBackend(), core

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: Optional[float] = None,
        local_address: Optional[str] = None,
        socket_options: Any = None,
    ) -> Any:
        left = _left(timeout, self._core.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, left, local_address, socket_options), self._core)

    def connect_unix_socket(
        self, path: str, timeout: Optional[float] = None, socket_options: Any = None
    ) -> Any:
        left = _left(timeout, self._core.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, left, socket_options), self._core)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def env_proxy(url: str) -> Optional[str]:
    """The proxy the environment names for ``url`` (None: go direct)."""
    parts = urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all") or None


def _mapped(exc: Exception, web: Any) -> Exception:
    """An httpcore error as the httpx error of the same name (what the SDKs catch)."""
    mapped = getattr(web, type(exc).__name__, None)
    if isinstance(mapped, type) and issubclass(mapped, web.TransportError):
        return mapped(str(exc))
    return exc


class _Body:
    """The answer's body, inflated with a bound when it came encoded, read against the
    attempt's deadline and refused past the cap; the attempt ends when it is closed. (Mixed
    with the flavor's ``SyncByteStream`` by :func:`transport_class`.)"""

    web: Any = None
    core: Any = None

    def __init__(self, inner: Any, cap: int, encoding: bytes, deadline: Deadline):
        self._inner, self._cap, self._deadline = inner, cap, deadline
        self._decoder = CappedDecoder(encoding.decode("latin-1"), cap) if encoding else None

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        try:
            for raw in self._inner:
                for chunk in self._decoder.decode(raw) if self._decoder is not None else (raw,):
                    seen += len(chunk)
                    if seen > self._cap:
                        raise AnswerTooLarge(self._cap)
                    yield chunk
        except (self.core.NetworkError, self.core.ProtocolError, self.core.TimeoutException) as exc:
            if self._deadline.remaining() <= 0:
                raise self.web.ReadTimeout(str(DeadlineExceeded(self._deadline.seconds))) from None
            raise _mapped(exc, self.web) from None

    def close(self) -> None:
        try:
            if hasattr(self._inner, "close"):
                self._inner.close()
        finally:
            if getattr(_CURRENT, "deadline", None) is self._deadline:
                _CURRENT.deadline = None


class _Transport:
    """An httpx transport whose every attempt ends within ``deadline_s`` seconds and reads at
    most ``cap`` bytes of answer (after decompression). (Mixed with the flavor's
    ``BaseTransport`` by :func:`transport_class`.)"""

    web: Any = None
    core: Any = None
    body: Any = None

    def __init__(self, deadline_s: float, cap: int, base_url: str = "", max_connections: int = 100):
        self.deadline_s, self.cap = float(deadline_s), int(cap)
        proxy = env_proxy(base_url) if base_url else None
        kwargs: Any = dict(
            ssl_context=self.web.create_ssl_context(),
            max_connections=max_connections,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_Backend(self.core),
        )
        if proxy is None:
            self._pool: Any = self.core.ConnectionPool(**kwargs)
        elif urlsplit(proxy).scheme in ("http", "https"):
            self._pool = self.core.HTTPProxy(proxy_url=proxy, **kwargs)
        else:
            raise ValueError(f"a {urlsplit(proxy).scheme} proxy from the environment is not supported here")

    def handle_request(self, request: Any) -> Any:
        deadline = Deadline(self.deadline_s)
        _CURRENT.deadline = deadline
        headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"accept-encoding"]
        url = request.url
        sent = self.core.Request(
            method=request.method,
            url=self.core.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=[*headers, (b"accept-encoding", b"identity")],
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            answer = self._pool.handle_request(sent)
        except Exception as exc:
            _CURRENT.deadline = None
            raise _mapped(exc, self.web) from None
        encoding, kept = _encoding(answer.headers)
        if encoding is None:
            _CURRENT.deadline = None
            answer.close()
            raise UnexpectedEncoding(_named_encoding(answer.headers))
        return self.web.Response(
            status_code=answer.status,
            headers=kept,
            stream=self.body(answer.stream, self.cap, encoding, deadline),
            extensions=answer.extensions,
        )

    def close(self) -> None:
        self._pool.close()


_MADE: Dict[str, Any] = {}
_LOCK = threading.Lock()


def transport_class(flavor: str) -> Any:
    """The bounded transport class for ``httpx`` or ``httpx2``: ``cls(deadline_s, cap,
    base_url)``."""
    with _LOCK:
        if flavor not in _MADE:
            web = importlib.import_module(flavor)
            core = importlib.import_module(flavor.replace("httpx", "httpcore"))
            spec = {"web": web, "core": core}
            body = type("BoundedBody", (_Body, web.SyncByteStream), dict(spec))
            _MADE[flavor] = type("BoundedTransport", (_Transport, web.BaseTransport), {**spec, "body": body})
        return _MADE[flavor]


def flavor_of(client_class: Any) -> str:
    """Which of ``httpx``/``httpx2`` an SDK's client class is built on (``httpx`` if neither)."""
    for base in getattr(client_class, "__mro__", ()):
        root = base.__module__.split(".")[0]
        if root in FLAVORS:
            return root
    return "httpx"


def _named_encoding(headers: List[Tuple[bytes, bytes]]) -> str:
    given = ", ".join(v.decode("latin-1") for k, v in headers if k.lower() == b"content-encoding")
    return UnexpectedEncoding.message(given)


def _encoding(headers: List[Tuple[bytes, bytes]]) -> Tuple[Optional[bytes], List[Tuple[bytes, bytes]]]:
    """(the encoding inflated here, b'' for none, None for one refused; the headers without
    ``Content-Encoding`` and ``Content-Length`` when it is inflated here)."""
    given = [v.strip().lower() for k, v in headers if k.lower() == b"content-encoding"]
    encoding = given[0] if len(given) == 1 else (b"" if not given else b"?")
    if encoding in (b"", b"identity"):
        return b"", headers
    if encoding not in _ENCODINGS:
        return None, headers
    return encoding, [(k, v) for k, v in headers if k.lower() not in (b"content-encoding", b"content-length")]
