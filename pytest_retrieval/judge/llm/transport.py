"""What the HTTP judges share: one JSON POST over stdlib ``urllib``, its failures mapped
to judge errors, and keys kept out of every message.

HTTP 429, 5xx (and Anthropic's 529), timeouts and dropped connections are
:class:`TransientJudgeError` (retried, honouring ``Retry-After``); 401/403/404 are
:class:`FatalJudgeError` (wrong key, URL or model); other 4xx and answers that are not a
JSON object are :class:`JudgeError` (that pair fails). Keys are read from the environment
at request time, never stored on the judge, and any echo of one in an error message is
replaced by ``***``.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import socket
import urllib.error
import urllib.request
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional

from .base import Answer, FatalJudgeError, Judge, JudgeError, TransientJudgeError
from .parsing import snippet
from .prompts import PromptTemplate, prompt_template

__all__ = ["HTTPJudge"]


class HTTPJudge(Judge):
    """A judge behind an HTTP API; subclasses name the provider and implement ``complete``."""

    provider = "http"
    default_base_url = ""
    default_key_env = ""
    base_url_env = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: Optional[str] = None,
        api_key_env: Optional[str] = None,
        prompt: Optional[PromptTemplate] = None,
        timeout: float = 60.0,
        max_tokens: int = 16,
        temperature: float = 0.0,
        judge_id: Optional[str] = None,
    ):
        if not model:
            raise ValueError(f"{self.provider} judge needs a model name")
        self.model = model
        self.base_url = (base_url or os.environ.get(self.base_url_env, "") or self.default_base_url).rstrip(
            "/"
        )
        self.api_key_env = api_key_env or self.default_key_env
        self.prompt = prompt or prompt_template()
        self.prompt_version = self.prompt.version
        self.timeout = float(timeout)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.id = judge_id or f"{self.provider}:{model}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, base_url={self.base_url!r})"

    def _key(self) -> Optional[str]:
        return os.environ.get(self.api_key_env) or None

    def judge(self, query: str, document: str) -> Answer:
        return self.complete(self.prompt.render(query, document))

    def complete(self, prompt: str) -> Answer:  # pragma: no cover - per provider
        raise NotImplementedError

    def _chat(self, path: str, prompt: str, headers: Dict[str, str]) -> Dict[str, Any]:
        """POST the one-message chat request both providers take (model, limits, prompt)."""
        body = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "messages": [{"role": "user", "content": prompt}],
        }
        return self._post(path, body, headers)

    def _post(self, path: str, body: Dict[str, Any], headers: Dict[str, str]) -> Dict[str, Any]:
        url = self.base_url + path
        secrets = [self._key()]
        req = urllib.request.Request(
            url,
            data=json.dumps(body).encode("utf-8"),
            method="POST",
            headers={"content-type": "application/json", "accept": "application/json", **headers},
        )
        where = f"{self.provider} judge ({url})"
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc, where, secrets) from None
        except TimeoutError:
            raise TransientJudgeError(f"{where}: timed out after {self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise TransientJudgeError(f"{where}: timed out after {self.timeout:g} s") from None
            raise TransientJudgeError(redact(f"{where}: {reason}", secrets)) from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise TransientJudgeError(redact(f"{where}: {type(exc).__name__}: {exc}", secrets)) from None
        return _json_object(payload, where, secrets)

    def _status_error(
        self, exc: urllib.error.HTTPError, where: str, secrets: List[Optional[str]]
    ) -> JudgeError:
        """An HTTP error status -> the judge error it means (retry, stop, or fail the pair)."""
        status = exc.code
        try:
            detail = exc.read()[:300].decode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - best effort
            detail = ""
        retry_after = parse_retry_after(exc.headers.get("Retry-After") if exc.headers else None)
        msg = redact(f"{where}: HTTP {status} {' '.join(detail.split())[:200]}".rstrip(), secrets)
        if status == 429 or status >= 500:
            return TransientJudgeError(msg, retry_after)
        if status in (401, 403):
            return FatalJudgeError(msg + f" (check ${self.api_key_env})")
        if status == 404:
            return FatalJudgeError(msg + " (check the base URL and the model name)")
        return JudgeError(msg)


def _json_object(payload: bytes, where: str, secrets: List[Optional[str]]) -> Dict[str, Any]:
    try:
        obj = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        text = redact(snippet(payload.decode("utf-8", "replace")), secrets)
        raise JudgeError(f"{where}: response is not JSON: {text!r}") from None
    if not isinstance(obj, dict):
        raise JudgeError(f"{where}: response is not a JSON object")
    return obj


def redact(text: str, secrets: Iterable[Optional[str]]) -> str:
    """``text`` with every secret of 4+ characters replaced by ``***``."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    return text


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
