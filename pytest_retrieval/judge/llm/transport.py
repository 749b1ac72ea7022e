"""What the API judges share: the provider's official SDK client (``anthropic``,
``openai``: optional extras), its failures mapped to judge errors, and keys kept out of every
message.

One retry layer: the SDK clients are built with ``max_retries=0`` and every retry goes
through :func:`~.grading.grade_pairs`' ``RetryPolicy`` and token bucket, so each attempt is
rate limited, counted in the report and logged; the waits honour the server's
``Retry-After`` (or ``retry-after-ms``) and ``x-should-retry`` headers, read from the SDK's
error, as the SDKs' own retry loops do.

HTTP 429, 5xx (and Anthropic's 529), timeouts and dropped connections are
:class:`TransientJudgeError`; 401/403/404 are :class:`FatalJudgeError` (wrong key, URL or
model); other 4xx and answers the SDK cannot read are :class:`JudgeError` (that pair
fails). Keys are read from the environment at request time; the client made for a key is
kept under the key's hash, and any echo of a key in an error message becomes ``***``.

Bounded: the SDK's HTTP client is ``bounds/httpx_transport.py``'s, so ``timeout`` is each
attempt's total deadline (from connecting to the answer's last byte, not per read: a server
dripping its answer is stopped), and an answer larger than :data:`MAX_ANSWER_BYTES` after
decompression is a :class:`JudgeError` (that pair fails; not retried).
"""

from __future__ import annotations

import email.utils
import hashlib
import importlib
import os
import threading
from datetime import datetime, timezone
from typing import Any, Iterable, Optional, Tuple

from ...errors import ConfigError
from ...redaction import clip, split_user_info
from ...redaction import redact as registered
from .base import FatalJudgeError, Judge, JudgeError, TransientJudgeError
from .parsing import snippet
from .prompts import PromptTemplate, prompt_template

__all__ = ["MAX_ANSWER_BYTES", "SDKJudge", "bounded_http_client", "parse_retry_after", "redact", "usage_int"]

MAX_ANSWER_BYTES = 8 * 1024 * 1024  # a grade is a few tokens; a chat completion, kilobytes


def bounded_http_client(module: Any, timeout: float, cap: int, base_url: str) -> Any:
    """The httpx client an SDK (``module``: anthropic, openai) is built with: each attempt
    within ``timeout`` seconds in all and at most ``cap`` bytes of answer (the SDK's own
    defaults otherwise, through its ``DefaultHttpxClient`` when it has one)."""
    from ...bounds.httpx_transport import flavor_of, transport_class

    make = getattr(module, "DefaultHttpxClient", None)
    flavor = flavor_of(make)
    if make is None:
        make = importlib.import_module(flavor).Client
    try:
        transport = transport_class(flavor)(timeout, cap, base_url)
    except ValueError as exc:
        raise ConfigError(f"{base_url}: {exc}") from None
    return make(transport=transport)


class SDKJudge(Judge):
    """A judge behind a provider's API, through its official SDK; subclasses name the
    provider and its SDK, build the client (:meth:`_make_client`) and ask (``complete``)."""

    provider = "api"
    sdk = ""  # the SDK's import name, which is also the pytest-retrieval extra
    default_base_url = ""
    default_key_env = ""
    base_url_env = ""
    default_max_tokens = 16

    def __init__(
        self,
        model: str,
        *,
        base_url: Optional[str] = None,
        api_key_env: Optional[str] = None,
        prompt: Optional[PromptTemplate] = None,
        timeout: float = 60.0,
        max_tokens: Optional[int] = None,
        temperature: float = 0.0,
        judge_id: Optional[str] = None,
    ):
        if not model:
            raise ValueError(f"{self.provider} judge needs a model name")
        self.model = model
        self.base_url = (base_url or os.environ.get(self.base_url_env, "") or self.default_base_url).rstrip(
            "/"
        )
        if split_user_info(self.base_url)[1] is not None:  # never silently dropped, never shown
            source = "base_url" if base_url else f"${self.base_url_env}"
            raise ConfigError(
                f"{self.provider} judge: {source} carries credentials (user:password@), which the SDK "
                "would send as basic auth in place of the API key: give the key in its variable"
            )
        self.api_key_env = api_key_env or self.default_key_env
        self.prompt = prompt or prompt_template()
        self.prompt_version = self.prompt.version
        self.timeout = float(timeout)
        self.max_tokens = int(max_tokens) if max_tokens is not None else self.default_max_tokens
        self.temperature = float(temperature)
        self.id = judge_id or f"{self.provider}:{model}"
        self._client_lock = threading.Lock()
        self._client_for: Tuple[str, Any] = ("", None)  # (hash of the key, SDK client)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, base_url={self.base_url!r})"

    @property
    def estimated_output_tokens(self) -> int:
        """Output tokens per answer, for a dry run's cost estimate."""
        return 2

    def _key(self) -> Optional[str]:
        return os.environ.get(self.api_key_env) or None

    def judge(self, query: str, document: str) -> Any:
        return self.complete(self.prompt.render(query, document))

    def complete(self, prompt: str) -> Any:  # pragma: no cover - per provider
        raise NotImplementedError

    def _make_client(self, module: Any, key: Optional[str]) -> Any:  # pragma: no cover - per provider
        raise NotImplementedError

    def _client(self, key: Optional[str]) -> Any:
        """The SDK client for ``key``, made once per key (thread-safe; the SDK clients are)."""
        digest = hashlib.sha256((key or "").encode()).hexdigest()
        with self._client_lock:
            if self._client_for[0] != digest or self._client_for[1] is None:
                try:
                    module = importlib.import_module(self.sdk)
                except ImportError:
                    raise ConfigError(
                        f"the {self.provider} judge needs the official '{self.sdk}' SDK: "
                        f"pip install 'pytest-retrieval[{self.sdk}]'"
                    ) from None
                self._client_for = (digest, self._make_client(module, key))
            return self._client_for[1]

    def _call(self, create: Any, key: Optional[str], **request: Any) -> Any:
        """One SDK request; every failure mapped to the judge error it means."""
        where = f"{self.provider} judge ({self.base_url})"
        try:
            return create(**request)
        except Exception as exc:  # noqa: BLE001 - mapped by the SDK's error classes below
            raise sdk_error(exc, where, [key], self.timeout, self.api_key_env) from None


def sdk_error(
    exc: BaseException, where: str, secrets: Iterable[Optional[str]], timeout: float, key_env: str
) -> JudgeError:
    """An ``anthropic``/``openai`` SDK exception -> the judge error it means. Both SDKs share
    their error shapes: ``APIStatusError`` (``status_code``, ``response``, ``body``),
    ``APITimeoutError`` and ``APIConnectionError``."""
    kinds = {k.__name__ for k in type(exc).__mro__}
    if "APITimeoutError" in kinds:
        return TransientJudgeError(
            f"{where}: timed out after {timeout:g} s (the judge's timeout: one attempt, from "
            "connecting to the answer's last byte)"
        )
    bound = _bound_exceeded(exc)
    if bound is not None:  # the answer is too large or encoded unasked: not retried
        return JudgeError(redact(f"{where}: {bound}", secrets))
    if "APIConnectionError" in kinds:
        cause = exc.__cause__ or exc.__context__ or exc
        return TransientJudgeError(
            redact(f"{where}: connection failed ({type(cause).__name__}: {cause})", secrets)
        )
    status = getattr(exc, "status_code", None)
    if "APIStatusError" in kinds and isinstance(status, int):
        return _status_error(exc, status, where, secrets, key_env)
    if isinstance(exc, ConfigError):
        return FatalJudgeError(str(exc))
    # the SDK could not read the answer (not JSON, wrong shape), or refused its arguments
    return JudgeError(redact(f"{where}: {type(exc).__name__}: {snippet(str(exc), 200)}", secrets))


def _bound_exceeded(exc: BaseException) -> Optional[BaseException]:
    """The size cap or the encoding check in ``exc``'s chain of causes, or None."""
    from ...bounds.limits import AnswerTooLarge, UnexpectedEncoding

    seen = 0
    node: Optional[BaseException] = exc
    while node is not None and seen < 10:
        if isinstance(node, (AnswerTooLarge, UnexpectedEncoding)):
            return node
        node, seen = node.__cause__ or node.__context__, seen + 1
    return None


def _status_error(
    exc: BaseException, status: int, where: str, secrets: Iterable[Optional[str]], key_env: str
) -> JudgeError:
    """An HTTP error status -> the judge error it means; the server's ``x-should-retry``
    header overrides the status."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    body = redact(" ".join(str(_body(response)).split()), secrets)  # redacted, then cut
    msg = redact(f"{where}: HTTP {status} {clip(body, 200, '')}".rstrip(), secrets)
    should_retry = str(headers.get("x-should-retry", "")).lower()
    if should_retry == "false":
        return JudgeError(msg)
    if status in (429, 408, 409) or status >= 500 or should_retry == "true":
        return TransientJudgeError(msg, retry_after_of(headers))
    if status in (401, 403):
        return FatalJudgeError(msg + f" (check ${key_env})")
    if status == 404:
        return FatalJudgeError(msg + " (check the base URL and the model name)")
    return JudgeError(msg)


def _body(response: Any) -> Any:
    """The body of an error response, as far as it can be read."""
    try:
        return response.text if response is not None else ""
    except Exception:  # noqa: BLE001 - a streamed or closed body
        return ""


def retry_after_of(headers: Any) -> Optional[float]:
    """The server's wait: ``retry-after-ms`` (both APIs send it) or ``Retry-After``."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
    except (TypeError, ValueError):
        pass
    return parse_retry_after(headers.get("retry-after"))


def redact(text: str, secrets: Iterable[Optional[str]]) -> str:
    """``text`` with every secret of 4+ characters, and every registered one
    (``redaction``), replaced by ``***``."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    return registered(text)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), else None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def usage_int(v: Any) -> Optional[int]:
    """A token count from a usage block, or None when the API did not report one."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None
