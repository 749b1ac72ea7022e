"""The judges: Anthropic's Messages API, any OpenAI-compatible chat endpoint, and your own
callable; :func:`make_judge` picks one by provider name.

* Anthropic: ``POST {base_url}/v1/messages``, key from ``ANTHROPIC_API_KEY`` in
  ``x-api-key``, ``anthropic-version`` header.
* OpenAI-compatible: ``POST {base_url}/chat/completions``, ``Authorization: Bearer`` from
  ``OPENAI_API_KEY`` or the variable you name; none sent when it is unset, for local servers.
* Callable: any ``module:function`` ``(query, document) -> int | str``.
"""

from __future__ import annotations

import importlib
import json
from typing import Any, Callable, Optional, Union

from ...errors import ConfigError
from .base import Answer, FatalJudgeError, Judge, JudgeError
from .parsing import snippet
from .transport import HTTPJudge, usage_int

__all__ = ["AnthropicJudge", "CallableJudge", "OpenAICompatibleJudge", "make_judge"]


class AnthropicJudge(HTTPJudge):
    """Anthropic Messages API over plain HTTP (no SDK needed)."""

    provider = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"

    def __init__(self, model: str, *, anthropic_version: str = "2023-06-01", **kw: Any):
        super().__init__(model, **kw)
        self.anthropic_version = anthropic_version

    def complete(self, prompt: str) -> Answer:
        key = self._key()
        if key is None:
            raise FatalJudgeError(f"${self.api_key_env} is not set (the Anthropic API key)")
        obj = self._chat(
            "/v1/messages", prompt, {"x-api-key": key, "anthropic-version": self.anthropic_version}
        )
        content = obj.get("content")
        if not isinstance(content, list):
            raise JudgeError(
                f"anthropic judge: unexpected response (no 'content' list): {snippet(json.dumps(obj))!r}"
            )
        text = "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
        usage = obj.get("usage") or {}
        return Answer(text, usage_int(usage.get("input_tokens")), usage_int(usage.get("output_tokens")))


class OpenAICompatibleJudge(HTTPJudge):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, Azure-style proxies, vLLM,
    Ollama, llama.cpp server, ...): ``base_url`` is the part before ``/chat/completions``."""

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"

    def complete(self, prompt: str) -> Answer:
        key = self._key()
        obj = self._chat("/chat/completions", prompt, {"authorization": f"Bearer {key}"} if key else {})
        try:
            text = obj["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise JudgeError(
                f"openai judge: unexpected response (no choices[0].message.content): "
                f"{snippet(json.dumps(obj))!r}"
            ) from None
        if text is None:
            text = ""
        usage = obj.get("usage") or {}
        return Answer(
            str(text), usage_int(usage.get("prompt_tokens")), usage_int(usage.get("completion_tokens"))
        )


class CallableJudge(Judge):
    """Your own ``module:function`` (or any callable) ``(query, document) -> int | str``.

    An ``int`` is taken as the grade (still checked to lie in 0-3); a ``str`` is parsed like
    an LLM answer. Raise :class:`TransientJudgeError` to have a pair retried. The prompt
    version is the function's ``prompt_version`` attribute if it has one, else ``callable``."""

    def __init__(
        self,
        fn: Union[str, Callable[[str, str], Any]],
        *,
        judge_id: Optional[str] = None,
        prompt_version: Optional[str] = None,
    ):
        if isinstance(fn, str):
            self.fn = _import_callable(fn)
            name = fn
        else:
            self.fn = fn
            name = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        self.id = judge_id or f"callable:{name}"
        self.prompt_version = prompt_version or str(getattr(self.fn, "prompt_version", "callable"))

    def judge(self, query: str, document: str) -> Answer:
        value = self.fn(query, document)
        if isinstance(value, Answer):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise JudgeError(
                f"callable judge returned {type(value).__name__} {value!r}, expected an int or a str"
            )
        return Answer(str(value))


def _import_callable(spec: str) -> Callable[[str, str], Any]:
    mod, _, attr = spec.partition(":")
    if not mod or not attr:
        raise ValueError(f"callable judge {spec!r}: expected 'module:function'")
    try:
        obj: Any = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"callable judge {spec!r}: {exc}") from None
    if not callable(obj):
        raise ConfigError(f"callable judge {spec!r} is not callable")
    return obj


def make_judge(
    provider: str, *, model: Optional[str] = None, function: Optional[str] = None, **kw: Any
) -> Judge:
    """``provider``: ``anthropic`` | ``openai`` (any OpenAI-compatible endpoint) | ``callable``."""
    if provider == "anthropic":
        return AnthropicJudge(model or "", **kw)
    if provider in ("openai", "openai-compatible"):
        kw.pop("anthropic_version", None)
        return OpenAICompatibleJudge(model or "", **kw)
    if provider == "callable":
        if not function:
            raise ValueError("callable judge needs --function module:function")
        return CallableJudge(function, judge_id=kw.get("judge_id"), prompt_version=kw.get("prompt_version"))
    raise ValueError(f"unknown judge provider {provider!r} (anthropic, openai, callable)")
