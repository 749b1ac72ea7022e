"""What every judge is: ``judge(query, document) -> Answer``, and how it fails.

A failure is a :class:`JudgeError` for this pair only, a :class:`TransientJudgeError` worth
retrying (rate limited, server error, timeout, dropped connection) or a
:class:`FatalJudgeError` after which every further request would fail the same way (bad
key, URL or model), which stops the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .prompts import DEFAULT_PROMPT_VERSION

__all__ = ["Answer", "FatalJudgeError", "Judge", "JudgeError", "TransientJudgeError"]


@dataclass
class Answer:
    text: str
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None


class JudgeError(Exception):
    """This pair could not be graded (not retried)."""


class TransientJudgeError(JudgeError):
    """Worth retrying: rate limited, server error, timeout, dropped connection."""

    def __init__(self, message: str, retry_after: Optional[float] = None):
        super().__init__(message)
        self.retry_after = retry_after


class FatalJudgeError(JudgeError):
    """Every further request would fail the same way (bad key, URL or model): stop."""


class Judge:
    """The judge interface: ``id``, ``prompt_version`` and ``judge(query, document) -> Answer``.

    ``id`` names the grader (provider and model); together with ``prompt_version`` it keys
    the cache, so change either when the answers would change."""

    id: str = "judge"
    prompt_version: str = DEFAULT_PROMPT_VERSION

    def judge(self, query: str, document: str) -> Answer:  # pragma: no cover - interface
        raise NotImplementedError
