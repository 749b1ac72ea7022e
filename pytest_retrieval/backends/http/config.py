"""The keys of ``backend: {type: http}``, declared once: the suite schema's ``backend.request``,
``backend.response`` and ``backend.batch`` (composed in ``config/schema.py``) and what
:class:`HttpBackend` reads."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple, Union
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from typing_extensions import Annotated

from ...bounds.limits import DEFAULT_MAX_RESPONSE_BYTES
from ...numbers import NUMBER
from .template import PLACEHOLDER, misplaced_placeholder, placeholders_in, whole_placeholders

__all__ = [
    "HttpBatchConfig",
    "HttpRequestConfig",
    "HttpResponseConfig",
    "batch_problem",
    "compile_path",
    "header_value_problem",
]


def compile_path(expression: str) -> Any:
    """A JMESPath expression compiled (``jmespath``, the ``http`` extra); ValueError when the
    package is missing or the expression does not parse."""
    try:
        import jmespath
        from jmespath.exceptions import JMESPathError
    except ImportError:
        raise ValueError(
            "the http backend reads answers with JMESPath: pip install 'pytest-retrieval[http]'"
        ) from None
    if not expression.strip():
        raise ValueError("an empty JMESPath expression")
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise ValueError(f"not a JMESPath expression: {' '.join(str(exc).split())}") from None


def header_value_problem(value: str) -> Optional[str]:
    """Why ``value`` cannot be sent as a header value, or None. http.client and urllib3 encode
    header values as latin-1 and refuse CR, LF and NUL (RFC 9110 section 5.5: visible
    characters, space and tab; obs-text 0x80-0xFF is what latin-1 adds)."""
    if any(c in value for c in "\r\n"):
        return "holds a line break"
    # which character is not said: it is part of the value (a token)
    bad = next((i for i, c in enumerate(value) if (ord(c) < 32 and c != "\t") or ord(c) == 127), None)
    if bad is not None:
        return f"holds a control character (character {bad + 1})"
    try:
        value.encode("latin-1")
    except UnicodeEncodeError as exc:
        return (
            f"holds a character a header cannot carry (character {exc.start + 1}; latin-1 only: "
            "percent-encode or base64 it)"
        )
    return None


def http_url(v: str) -> str:
    """``v`` when it is an http(s) URL with a host and no white space; ValueError otherwise."""
    scheme, sep, rest = v.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest.strip("/"):
        raise ValueError("expected an http:// or https:// URL")
    if any(c.isspace() for c in v):
        raise ValueError("a URL holds no white space (write it percent-encoded)")
    misplaced = misplaced_placeholder(v)
    if misplaced:
        raise ValueError(
            f"placeholder {misplaced} is in the scheme or host: placeholders go in the path or the query string"
        )
    return v


# no docstrings on the models: they would become the published JSON Schema's descriptions
class HttpRequestConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    method: Literal["GET", "POST"] = "GET"
    url: str = Field(
        description="http(s) URL; {query}, {k}, {query_id} and the service retriever's params "
        "are percent-encoded into it."
    )
    headers: Dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Sent with every request; values are secrets (write tokens as ${VAR}), "
        "never shown in a report, an error or a log line.",
    )
    body: Optional[Union[Dict[str, Any], List[Any]]] = Field(
        None,
        description="JSON body template (POST): a string that is exactly '{k}' or '{query}' "
        "becomes that value as JSON; inside longer strings, its text.",
    )
    timeout: Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False), NUMBER] = Field(
        30.0,
        description="Seconds per attempt, in all: from connecting to the answer's last byte (a "
        "service that drips its answer is stopped there too).",
    )
    max_response_bytes: Annotated[int, Field(ge=1024, le=2**40, strict=True)] = Field(
        DEFAULT_MAX_RESPONSE_BYTES,
        description="Largest answer read, in bytes after decompression (a batch's answer too); "
        "a larger one is an error naming the endpoint and this cap, and is not read further.",
    )
    max_retries: Annotated[int, Field(ge=0, le=100), NUMBER] = Field(
        3,
        description="Retries of a request answered 429/502/503/504 or lost (refused, reset, timed "
        "out): exponential backoff with jitter, at least the answer's Retry-After.",
    )
    retry_deadline: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False), NUMBER] = Field(
        300.0, description="Seconds after a request's first attempt when no retry starts any more."
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        return http_url(v)

    @field_validator("headers")
    @classmethod
    def _header_names(cls, v: Dict[str, SecretStr]) -> Dict[str, SecretStr]:
        for name, value in v.items():
            if not name or not all(33 <= ord(c) < 127 and c != ":" for c in name):
                raise ValueError(f"header name {name!r} is not a token (RFC 9110 section 5.1)")
            problem = header_value_problem(value.get_secret_value())
            if problem:  # the header is named, never its value (a token)
                raise ValueError(f"the value of header {name!r} {problem}")
            if PLACEHOLDER.search(value.get_secret_value()):
                # (the value is a secret: not shown)
                raise ValueError(
                    f"the value of header {name!r} holds a {{placeholder}}: header values are sent as "
                    "written, nothing is filled into them (put it in the url or the body)"
                )
        return v

    @model_validator(mode="after")
    def _one_authorization(self) -> HttpRequestConfig:
        if "@" in urlsplit(self.url).netloc and any(n.lower() == "authorization" for n in self.headers):
            raise ValueError(
                "url carries credentials (user:password@, sent as basic auth) and headers give an "
                "Authorization header too: keep one"
            )
        return self


class HttpResponseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    hits: str = Field(
        description="JMESPath to the list of hits in the answer, e.g. 'results' or 'hits.hits'."
    )
    id: str = Field(
        "id", description="JMESPath to a hit's document id, from the hit, e.g. '_id' or 'doc.id'."
    )
    score: str = Field("score", description="JMESPath to a hit's score, from the hit, e.g. '_score'.")
    took: Optional[str] = Field(
        None,
        description="JMESPath to the service's own time in milliseconds in the answer, e.g. 'took': "
        "the latency pass reports it beside the client's time; an answer without it is an error.",
    )

    @field_validator("hits", "id", "score", "took")
    @classmethod
    def _jmespath(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            compile_path(v)
        return v


# the placeholders that differ from query to query: they belong in request.body, not a batch's
PER_QUERY = ("query", "query_id")
REQUESTS = "requests"


class HttpBatchConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    size: Annotated[int, Field(ge=1, le=10000, strict=True)] = Field(
        description="Queries per request of the quality pass (the latency pass still sends one "
        "request per query, as users do)."
    )
    url: Optional[str] = Field(
        None,
        description="http(s) URL the batches are POSTed to (default request.url); {k} and the "
        "service retriever's params are filled in, not {query} or {query_id}.",
    )
    body: Optional[Union[Dict[str, Any], List[Any]]] = Field(
        None,
        description="JSON body template of a batch, holding the string '{requests}' once: the list "
        "of the queries' request.body, filled per query. Default: that list itself.",
    )
    answers: str = Field(
        "@",
        description="JMESPath to the list of the per-query answers, in the queries' order, each read "
        "with response.hits/id/score, e.g. 'responses' ('@': the answer is the list).",
    )
    timeout: Optional[Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False), NUMBER]] = Field(
        None,
        description="Seconds per attempt of a batch request, from connecting to the last byte "
        "(default request.timeout).",
    )

    @field_validator("url")
    @classmethod
    def _batch_url(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            http_url(v)
            if REQUESTS in placeholders_in(v):
                raise ValueError("{requests} goes in batch.body, not the URL")
        return v

    @field_validator("body")
    @classmethod
    def _one_requests_slot(cls, v: Any) -> Any:
        if v is not None:
            slots = whole_placeholders(v, REQUESTS)
            if slots != 1:
                raise ValueError(
                    "expected the string '{requests}' exactly once, as a whole value (it becomes the "
                    f"list of the queries' bodies); found it {_times(slots)}"
                )
        return v

    @field_validator("answers")
    @classmethod
    def _answers_path(cls, v: str) -> str:
        compile_path(v)
        return v


def _times(slots: int) -> str:
    return "inside a longer string" if slots < 0 else f"{slots} times"


def batch_problem(request: HttpRequestConfig, batch: HttpBatchConfig) -> Optional[Tuple[str, str]]:
    """(the key, why) when ``batch`` cannot be sent with ``request``: the batch needs the
    per-query body, and its URL and body take no per-query placeholder; None when it can."""
    if request.body is None:
        return "batch", "needs request.body (a batch POSTs the list of the queries' bodies)"
    templates = (
        ("batch.url", "batch.url", batch.url)
        if batch.url
        else ("batch", "request.url (the default batch.url: give one)", request.url),
        ("batch.body", "batch.body", batch.body),
    )
    for key, whose, template in templates:
        given = sorted(set(PER_QUERY) & placeholders_in(template))
        if given:
            return key, (
                f"{whose} holds {{{given[0]}}}, which differs from query to query in a batch "
                "(it belongs in request.body)"
            )
    return None
