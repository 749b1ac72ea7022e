"""The judges: Anthropic's Messages API and any OpenAI-compatible chat endpoint through the
providers' official SDKs (optional extras ``pytest-retrieval[anthropic]``,
``pytest-retrieval[openai]``), and your own callable; :func:`make_judge` picks one by
provider name.

* Anthropic: ``anthropic.Anthropic(...).messages.create`` at ``{base_url}/v1/messages``, key
  from ``ANTHROPIC_API_KEY``, the ``anthropic-version`` header you choose.
* OpenAI-compatible: ``openai.OpenAI(...).chat.completions.create`` at
  ``{base_url}/chat/completions``, key from ``OPENAI_API_KEY`` or the variable you name; no
  ``Authorization`` header when it is unset, for local servers (vLLM, Ollama, llama.cpp).
  Reasoning models (``o1``, ``o3``, ``o4-mini``, ``gpt-5``...) reject ``max_tokens`` and
  ``temperature``: they get ``max_completion_tokens`` (which also pays for the hidden
  reasoning, so its default is larger) and no temperature
  (https://platform.openai.com/docs/guides/reasoning).
* Callable: any ``module:function`` ``(query, document) -> int | str``.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Callable, Optional, Union

from ...errors import ConfigError
from .base import Answer, FatalJudgeError, Judge, JudgeError
from .parsing import snippet
from .transport import MAX_ANSWER_BYTES, SDKJudge, bounded_http_client, usage_int

__all__ = ["AnthropicJudge", "CallableJudge", "OpenAICompatibleJudge", "is_reasoning_model", "make_judge"]

# OpenAI's reasoning families, with or without a router prefix ("openai/o3-mini")
_REASONING_MODEL = re.compile(r"(?:^|/)(?:o\d+|gpt-5)(?:$|[-.:_])", re.IGNORECASE)
REASONING_MAX_TOKENS = 2048  # the answer plus the reasoning before it


def is_reasoning_model(model: str) -> bool:
    """True for OpenAI's reasoning models (o1, o3, o4-mini, gpt-5, gpt-5-mini, ...)."""
    return bool(_REASONING_MODEL.search(model))


class AnthropicJudge(SDKJudge):
    """Anthropic's Messages API through the ``anthropic`` SDK."""

    provider = "anthropic"
    sdk = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"

    def __init__(self, model: str, *, anthropic_version: str = "2023-06-01", **kw: Any):
        super().__init__(model, **kw)
        self.anthropic_version = anthropic_version

    def _make_client(self, module: Any, key: Optional[str]) -> Any:
        return module.Anthropic(
            api_key=key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # one retry layer: grade_pairs' (see transport)
            default_headers={"anthropic-version": self.anthropic_version},
            http_client=bounded_http_client(module, self.timeout, MAX_ANSWER_BYTES, self.base_url),
        )

    def complete(self, prompt: str) -> Answer:
        key = self._key()
        if key is None:
            raise FatalJudgeError(f"${self.api_key_env} is not set (the Anthropic API key)")
        client = self._client(key)
        message = self._call(
            client.messages.create,
            key,
            model=self.model,
            max_tokens=self.max_tokens,
            messages=[{"role": "user", "content": prompt}],
        )
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise JudgeError(
                f"anthropic judge: unexpected response (no 'content' list): {snippet(repr(message))!r}"
            )
        text = "".join(
            str(getattr(b, "text", "") or "") for b in content if getattr(b, "type", None) == "text"
        )
        usage = getattr(message, "usage", None)
        return Answer(
            text,
            usage_int(getattr(usage, "input_tokens", None)),
            usage_int(getattr(usage, "output_tokens", None)),
        )


def _omit(module: Any) -> Any:
    """The SDK's marker for a header it must not send (``openai.omit``; older: ``Omit()``)."""
    omit = getattr(module, "omit", None)
    if omit is None:
        omit = importlib.import_module(f"{module.__name__}._types").Omit()
    return omit


class OpenAICompatibleJudge(SDKJudge):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, Azure-style proxies, vLLM,
    Ollama, llama.cpp server, ...) through the ``openai`` SDK: ``base_url`` is the part
    before ``/chat/completions``. ``reasoning``: None decides by the model name."""

    provider = "openai"
    sdk = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"

    def __init__(self, model: str, *, reasoning: Optional[bool] = None, **kw: Any):
        self.reasoning = is_reasoning_model(model) if reasoning is None else bool(reasoning)
        if self.reasoning and kw.get("max_tokens") is None:
            kw["max_tokens"] = REASONING_MAX_TOKENS
        super().__init__(model, **kw)

    @property
    def estimated_output_tokens(self) -> int:
        return self.max_tokens if self.reasoning else 2  # reasoning: an upper bound

    def _make_client(self, module: Any, key: Optional[str]) -> Any:
        return module.OpenAI(
            api_key=key or "unused",
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # one retry layer: grade_pairs' (see transport)
            http_client=bounded_http_client(module, self.timeout, MAX_ANSWER_BYTES, self.base_url),
        )

    def request(self, prompt: str) -> dict:
        """The chat request: ``max_completion_tokens`` and no temperature for a reasoning
        model, ``max_tokens`` and ``temperature`` for the others."""
        body: dict = {"model": self.model, "messages": [{"role": "user", "content": prompt}]}
        if self.reasoning:
            body["max_completion_tokens"] = self.max_tokens
        else:
            body.update(max_tokens=self.max_tokens, temperature=self.temperature)
        return body

    def complete(self, prompt: str) -> Answer:
        key = self._key()
        client = self._client(key)
        request = self.request(prompt)
        if not key:  # a local server without a key: no Authorization header at all
            request["extra_headers"] = {"Authorization": _omit(importlib.import_module(self.sdk))}
        completion = self._call(client.chat.completions.create, key, **request)
        try:
            choice = completion.choices[0]
            text = choice.message.content
        except (AttributeError, IndexError, TypeError):
            raise JudgeError(
                f"openai judge: unexpected response (no choices[0].message.content): {snippet(repr(completion))!r}"
            ) from None
        usage = getattr(completion, "usage", None)
        if not text and getattr(choice, "finish_reason", None) == "length":
            raise JudgeError(
                f"openai judge: {self.model} used all {self.max_tokens} completion tokens before "
                "answering (a reasoning model thinks first); raise --max-tokens"
            )
        return Answer(
            str(text or ""),
            usage_int(getattr(usage, "prompt_tokens", None)),
            usage_int(getattr(usage, "completion_tokens", None)),
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
        kw.pop("reasoning", None)
        return AnthropicJudge(model or "", **kw)
    if provider in ("openai", "openai-compatible"):
        kw.pop("anthropic_version", None)
        return OpenAICompatibleJudge(model or "", **kw)
    if provider == "callable":
        if not function:
            raise ValueError("callable judge needs --function module:function")
        return CallableJudge(function, judge_id=kw.get("judge_id"), prompt_version=kw.get("prompt_version"))
    raise ValueError(f"unknown judge provider {provider!r} (anthropic, openai, callable)")
