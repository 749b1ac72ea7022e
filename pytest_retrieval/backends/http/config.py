"""The keys of ``backend: {type: http}``, declared once: the suite schema's ``backend.request``
and ``backend.response`` (composed in ``config/schema.py``) and what :class:`HttpBackend` reads."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from typing_extensions import Annotated

__all__ = ["HttpRequestConfig", "HttpResponseConfig", "compile_path"]


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
    timeout: Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False)] = Field(
        30.0, description="Seconds per attempt (connect and read)."
    )
    max_retries: Annotated[int, Field(ge=0, le=100)] = Field(
        3,
        description="Retries of a request answered 429/502/503/504 or lost (refused, reset, timed "
        "out): exponential backoff with jitter, at least the answer's Retry-After.",
    )
    retry_deadline: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)] = Field(
        300.0, description="Seconds after a request's first attempt when no retry starts any more."
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        scheme, sep, rest = v.partition("://")
        if not sep or scheme.lower() not in ("http", "https") or not rest.strip("/"):
            raise ValueError("expected an http:// or https:// URL")
        if any(c.isspace() for c in v):
            raise ValueError("a URL holds no white space (write it percent-encoded)")
        return v

    @field_validator("headers")
    @classmethod
    def _header_names(cls, v: Dict[str, SecretStr]) -> Dict[str, SecretStr]:
        for name, value in v.items():
            if not name or not all(33 <= ord(c) < 127 and c != ":" for c in name):
                raise ValueError(f"header name {name!r} is not a token (RFC 9110 section 5.1)")
            if any(c in value.get_secret_value() for c in "\r\n\0"):
                raise ValueError(f"the value of header {name!r} holds a line break")
        return v


class HttpResponseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    hits: str = Field(
        description="JMESPath to the list of hits in the answer, e.g. 'results' or 'hits.hits'."
    )
    id: str = Field(
        "id", description="JMESPath to a hit's document id, from the hit, e.g. '_id' or 'doc.id'."
    )
    score: str = Field("score", description="JMESPath to a hit's score, from the hit, e.g. '_score'.")

    @field_validator("hits", "id", "score")
    @classmethod
    def _jmespath(cls, v: str) -> str:
        compile_path(v)
        return v
