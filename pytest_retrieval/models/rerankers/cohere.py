"""Cohere reranker: Cohere's hosted ``/v2/rerank``, through the official ``cohere`` SDK, on
``bounds/httpx_transport.py``'s client: ``timeout`` is each attempt's total deadline (connect
to the answer's last byte) and an answer over :data:`MAX_ANSWER_BYTES` (after decompression)
is an error."""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple

from pydantic import Field, SecretStr
from typing_extensions import Annotated

from ...errors import ConfigError, InfrastructureError
from ...io.numeric import external_float
from ...numbers import NUMBER
from ...redaction import clip, redact
from ..config_parsing import ModelConfig
from ..digests import options_tag
from .base import Candidate, Reranker

MAX_ANSWER_BYTES = 32 * 1024 * 1024  # scores of at most max_documents documents

DEFAULT_COHERE_URL = "https://api.cohere.com"


def _api_key(api_key: Optional[str], api_key_env: str) -> str:
    """The key given, else the one in the environment variable ``api_key_env``."""
    key = api_key if api_key else os.environ.get(api_key_env or "", "")
    if not key:
        raise ConfigError(
            f"cohere reranker: no API key (set the environment variable {api_key_env or 'COHERE_API_KEY'})"
        )
    return key


def _checked_base_url(base_url: Optional[str]) -> Tuple[str, str]:
    """(the API root without a trailing ``/``, its host): an http(s) URL without credentials."""
    base = (base_url or DEFAULT_COHERE_URL).rstrip("/")
    parts = urllib.parse.urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"cohere reranker: base_url must be an http(s) URL, got {base_url!r}")
    if parts.username or parts.password:
        raise ConfigError("cohere reranker: base_url must not carry credentials")
    return base, parts.netloc


def _valid_result(index: Any, score: Any, n: int) -> bool:
    """An ``index`` among the ``n`` documents and a finite numeric ``relevance_score``."""
    return isinstance(index, int) and not isinstance(index, bool) and 0 <= index < n and _finite(score)


def _finite(score: Any) -> bool:
    """A finite number (``io.numeric``: a boolean, NaN or an integer too large for a float is not)."""
    try:
        external_float(score)
    except ValueError:
        return False
    return True


class CohereReranker:
    """Cohere's hosted rerank API through the official ``cohere`` SDK (``ClientV2.rerank``;
    ``pip install pytest-retrieval[cohere]``): ``{"model", "query", "documents": [text, ...],
    "top_n": len(documents)}``; the response's ``results[].index`` / ``relevance_score``
    become the scores, and every document must come back.

    The key is ``api_key`` or the environment variable ``api_key_env`` (default
    ``COHERE_API_KEY``). Requests time out after ``timeout`` seconds. Retries are the SDK's:
    HTTP 408/409/429/5xx and connection errors, ``max_retries`` times, honouring
    ``Retry-After`` / ``retry-after-ms``, else exponential backoff from 1 s. What remains
    (other HTTP errors, a timeout, malformed or incomplete results) is an
    :class:`InfrastructureError` naming the status and a scrubbed excerpt of the body, never
    the key. More than ``max_documents`` candidates go in several requests (Cohere takes up
    to 1,000 per request; scores are per document, so requests can be merged).
    ``max_tokens_per_doc`` is passed through when set."""

    def __init__(
        self,
        model: str = "rerank-english-v3.0",
        api_key: Optional[str] = None,
        api_key_env: str = "COHERE_API_KEY",
        base_url: Optional[str] = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_documents: int = 1000,
        max_tokens_per_doc: Optional[int] = None,
        id: Optional[str] = None,
    ):
        key = _api_key(api_key, api_key_env)
        base, netloc = _checked_base_url(base_url)
        if timeout <= 0 or max_retries < 0 or max_documents < 1:
            raise ConfigError("cohere reranker: timeout must be > 0, max_retries >= 0, max_documents >= 1")
        self.model = str(model)
        self._api_key = str(key)
        self.api_key_env = api_key_env
        self.base_url = base
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_documents = int(max_documents)
        self.max_tokens_per_doc = int(max_tokens_per_doc) if max_tokens_per_doc else None
        where = "" if base == DEFAULT_COHERE_URL else f"@{netloc}"
        tag = options_tag(max_tokens_per_doc=self.max_tokens_per_doc)
        self.id = id or f"cohere:{self.model}{where}{tag}"
        self._client: Any = None

    def __repr__(self) -> str:
        return f"CohereReranker(model={self.model!r}, base_url={self.base_url!r}, api_key=***)"

    def _scrub(self, text: str) -> str:
        text = str(text)
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return redact(text.replace("\n", " ").replace("\r", " "))

    def _sdk(self) -> Any:
        if self._client is None:
            try:
                import cohere
            except ImportError:
                raise ConfigError(
                    "the cohere reranker needs Cohere's SDK: pip install pytest-retrieval[cohere]"
                ) from None
            self._client = cohere.ClientV2(
                api_key=self._api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
                httpx_client=_bounded_client(self.timeout, self.base_url),
            )
        return self._client

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        if not candidates:
            return []
        texts = [text or "" for _, text in candidates]
        scores: List[float] = []
        for start in range(0, len(texts), self.max_documents):
            scores.extend(self._rerank_chunk(query_text or "", texts[start : start + self.max_documents]))
        return scores

    def _rerank_chunk(self, query: str, documents: List[str]) -> List[float]:
        import httpx
        from cohere.core.api_error import ApiError

        client = self._sdk()
        what = f"cohere rerank ({self.model}) at {self.base_url}"
        kwargs: Dict[str, Any] = {
            "model": self.model,
            "query": query,
            "documents": documents,
            "top_n": len(documents),
        }
        if self.max_tokens_per_doc:
            kwargs["max_tokens_per_doc"] = self.max_tokens_per_doc
        try:
            response = client.rerank(**kwargs)
        except ApiError as exc:
            raise self._api_error(what, exc.status_code, exc.body) from None
        except httpx.TimeoutException:
            raise InfrastructureError(f"{what}: timed out after {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise InfrastructureError(
                f"{what}: {type(exc).__name__} after "
                f"{self.max_retries + 1} attempt(s): "
                f"{clip(self._scrub(str(exc)), 200, '')}"
            ) from None
        except Exception as exc:  # the SDK could not read the response
            raise InfrastructureError(
                f"{what}: unreadable response ({type(exc).__name__}: {clip(self._scrub(str(exc)), 200, '')})"
            ) from None
        return self._scores_of(response, len(documents))

    def _api_error(self, what: str, status: Optional[int], body: Any) -> InfrastructureError:
        """An HTTP error the SDK raised (after its retries, for the statuses it retries); a
        2xx one is a body it could not parse."""
        text = body if isinstance(body, str) else json.dumps(body, default=str)
        if status is not None and 200 <= status < 300:
            return InfrastructureError(
                f"{what}: malformed JSON in the response ({clip(self._scrub(text), 200, '')})"
            )
        retried = (
            f" after {self.max_retries + 1} attempt(s)"
            if status in (408, 409, 429) or (status or 0) >= 500
            else ""
        )
        hint = f" (check {self.api_key_env or 'the API key'})" if status in (401, 403) else ""
        return InfrastructureError(
            f"{what}: HTTP {status}{retried}: {clip(self._scrub(text), 300, '')}{hint}"
        )

    def _scores_of(self, response: Any, n: int) -> List[float]:
        """One score per document from the SDK's response, which it builds without validating."""
        results = getattr(response, "results", None)
        if not isinstance(results, list):
            raise InfrastructureError(f"cohere rerank ({self.model}): response has no 'results' list")
        scores: List[Optional[float]] = [None] * n
        for item in results:
            index: Any = getattr(item, "index", None)
            score: Any = getattr(item, "relevance_score", None)
            if not _valid_result(index, score, n):
                raise InfrastructureError(
                    f"cohere rerank ({self.model}): malformed result "
                    f"(index {index!r}, relevance_score {score!r})"
                )
            scores[index] = external_float(score)
        absent = sum(1 for s in scores if s is None)
        if absent:
            raise InfrastructureError(
                f"cohere rerank ({self.model}): the response scored {n - absent} of {n} documents"
            )
        return [s for s in scores if s is not None]


class CohereRerankerConfig(ModelConfig):
    type: Literal["cohere"]
    model: str = Field("rerank-english-v3.0", description="Cohere rerank model.")
    api_key: Optional[SecretStr] = Field(None, description="The key itself (prefer api_key_env).")
    api_key_env: str = Field("COHERE_API_KEY", description="Environment variable holding the key.")
    base_url: Optional[str] = Field(None, description=f"API root (default: {DEFAULT_COHERE_URL}).")
    timeout: Annotated[float, NUMBER] = Field(30.0, description="Seconds per request.")
    max_retries: Annotated[int, NUMBER] = Field(
        2, description="Retries on 408/409/429/5xx and connection errors."
    )
    max_documents: Annotated[int, NUMBER] = Field(1000, description="Documents per request at most.")
    max_tokens_per_doc: Optional[Annotated[int, NUMBER]] = Field(
        None, description="Passed to Cohere when set."
    )
    id: Optional[str] = Field(None, description="Version of the reranker (default: model and host).")

    def build(self, base_dir: Path) -> Reranker:
        key = self.api_key.get_secret_value() if self.api_key is not None else None
        return CohereReranker(**{**self.options(), "api_key": key})


def _bounded_client(timeout: float, base_url: str) -> Any:
    """The httpx client of the SDK: each attempt within ``timeout`` seconds in all, its answer
    at most MAX_ANSWER_BYTES."""
    import httpx

    from ...bounds.httpx_transport import flavor_of, transport_class

    try:
        transport = transport_class(flavor_of(httpx.Client))(timeout, MAX_ANSWER_BYTES, base_url)
    except ValueError as exc:
        raise ConfigError(f"cohere reranker ({base_url}): {exc}") from None
    return httpx.Client(transport=transport, timeout=timeout)
