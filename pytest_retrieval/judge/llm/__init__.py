"""LLM-assisted grading: a judge reads (query, document) and answers a grade 0-3.

One module per job:

* :mod:`.prompts`: the versioned prompt (UMBRELA 0-3 by default, or your own template);
* :mod:`.parsing`: strict reading of the grade in an answer (never a silent 0);
* :mod:`.base`: the judge interface and its three kinds of failure;
* :mod:`.transport` and :mod:`.judges`: Anthropic's Messages API and any OpenAI-compatible
  endpoint through the official ``anthropic`` / ``openai`` SDKs (optional extras; keys read
  from the environment at request time, never shown; ``max_completion_tokens`` for
  reasoning models), and any ``module:function`` callable;
* :mod:`.cache`: the append-only, resumable JSONL answer cache;
* :mod:`.ratelimit`: the token bucket (``requests_per_minute``) and the retry backoff;
* :mod:`.pairs` and :mod:`.report`: what is asked, and what a run reports;
* :mod:`.grading`: :func:`grade_pairs`, which ties them together over a thread pool.

Every name below is importable from ``pytest_retrieval.judge.llm``.
"""

from __future__ import annotations

from .base import Answer, FatalJudgeError, Judge, JudgeError, TransientJudgeError
from .cache import JudgeCache
from .grading import grade_pairs
from .judges import AnthropicJudge, CallableJudge, OpenAICompatibleJudge, is_reasoning_model, make_judge
from .pairs import JudgePair, document_text, pairs_from_pool
from .parsing import GradeParseError, parse_grade
from .prompts import DEFAULT_PROMPT_VERSION, PROMPTS, PromptTemplate, prompt_template
from .ratelimit import RetryPolicy, TokenBucket
from .report import Failure, GradingReport, Prices, write_failures

__all__ = [
    "DEFAULT_PROMPT_VERSION",
    "PROMPTS",
    "AnthropicJudge",
    "Answer",
    "CallableJudge",
    "Failure",
    "FatalJudgeError",
    "GradeParseError",
    "GradingReport",
    "Judge",
    "JudgeCache",
    "JudgeError",
    "JudgePair",
    "OpenAICompatibleJudge",
    "Prices",
    "PromptTemplate",
    "RetryPolicy",
    "TokenBucket",
    "TransientJudgeError",
    "document_text",
    "grade_pairs",
    "is_reasoning_model",
    "make_judge",
    "pairs_from_pool",
    "parse_grade",
    "prompt_template",
    "write_failures",
]
