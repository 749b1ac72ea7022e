"""What the HTTP judges share, without a server: Retry-After, redaction, usage counts,
and the judge factory."""

from __future__ import annotations

import email.utils
import time

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.judge.llm import (
    AnthropicJudge,
    CallableJudge,
    OpenAICompatibleJudge,
    make_judge,
)
from pytest_retrieval.judge.llm.transport import parse_retry_after, redact, usage_int


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert parse_retry_after("3") == 3.0 and parse_retry_after("-2") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("") is None
    assert parse_retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after(later) <= 31
    assert parse_retry_after(email.utils.formatdate(time.time() - 30, usegmt=True)) == 0.0


def test_redact_hides_every_secret_of_four_characters_or_more() -> None:
    text = "key sk-123456 and abc in sk-123456"
    assert redact(text, ["sk-123456", None, "abc"]) == "key *** and abc in ***"


def test_usage_counts_are_ints_or_none() -> None:
    assert usage_int(12) == 12
    assert usage_int(True) is None and usage_int("12") is None and usage_int(None) is None


def test_make_judge_by_provider(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    a = make_judge("anthropic", model="m", anthropic_version="2024-01-01")
    assert isinstance(a, AnthropicJudge) and a.id == "anthropic:m" and a.anthropic_version == "2024-01-01"
    o = make_judge("openai-compatible", model="m", anthropic_version="ignored", base_url="http://x/v1/")
    assert isinstance(o, OpenAICompatibleJudge) and o.base_url == "http://x/v1"
    c = make_judge("callable", function="os.path:join", judge_id="mine")
    assert isinstance(c, CallableJudge) and c.id == "mine" and c.prompt_version == "callable"
    with pytest.raises(ValueError, match="needs --function"):
        make_judge("callable")
    with pytest.raises(ValueError, match="unknown judge provider"):
        make_judge("bard", model="m")
    with pytest.raises(ValueError, match="needs a model name"):
        make_judge("anthropic")
    with pytest.raises(ConfigError, match="no_such_module"):
        make_judge("callable", function="no_such_module:fn")
