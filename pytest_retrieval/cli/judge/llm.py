"""``judge llm``: grade annotation pairs with an LLM judge."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any, Optional

from ...errors import ConfigError, RetrievalError
from ..options import (
    add_progress_option,
    api_date,
    check_output_file,
    check_output_files,
    http_url,
    number,
    plain_text,
    positive,
)
from .console import say

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    from ...judge.annotations import read_pairs
    from ...judge.llm import JudgeCache, grade_pairs, make_judge, pairs_from_pool

    setup_logging()
    check_llm_outputs(args)
    check_before_asking(args)
    judge = make_judge(args.provider, model=args.model, function=args.function, **judge_options(args))
    pairs = pairs_from_pool(read_pairs(args.pairs))
    cache_path = Path(args.cache) if args.cache else default_cache()
    cache = JudgeCache(cache_path)
    prices = prices_of(args)
    say(f"judge {judge.id}, prompt {judge.prompt_version}; cache {cache_path} ({len(cache)} answer(s))")
    try:
        report = grade_pairs(pairs, judge, cache=cache, prices=prices, **grading_options(args))
    except KeyboardInterrupt:
        cache.close()
        say("interrupted: every answer received so far is in the cache; rerun to resume")
        return 130
    finally:
        cache.close()
    say(report.summary())
    if args.dry_run:
        return 0
    if prices is not None and report.cost is None:
        say("cost unknown: the judge reported no token usage")
    return _write_llm_results(args, report)


def check_before_asking(args: argparse.Namespace) -> None:
    """What would fail only once requests are out, refused before the first: a key variable
    that is not set, a failures file that cannot be written."""
    import os

    from ...errors import RetrievalError

    if args.api_key_env and args.provider != "callable" and not os.environ.get(args.api_key_env):
        raise RetrievalError(f"--api-key-env {args.api_key_env}: the variable is not set (or empty)")
    if args.failures:
        check_output_file(args.failures, "--failures")  # again: judge synth's check judge


def check_llm_outputs(args: argparse.Namespace, *outputs: Any) -> None:
    """The outputs of ``judge llm`` (and ``outputs`` of ``judge synth``): the qrels, the
    failures file and the answer cache (read, then appended to) are three files, none of them
    an input (the pairs, the prompt templates)."""
    from ...output_paths import Output

    own = [
        Output("--out", getattr(args, "out", None), "qrels"),
        Output("--failures", args.failures, "jsonl"),
        Output("--cache", args.cache, "jsonl"),
    ]
    inputs = [
        (what, getattr(args, attr, None))
        for what, attr in (
            ("the pairs file", "pairs"),
            ("--prompt-file", "prompt_file"),
            ("--check-prompt-file", "check_prompt_file"),
            ("--suite", "suite"),
            ("--corpus", "corpus"),
        )
    ]
    check_output_files([*outputs, *own[1:]] if outputs else own, inputs)


def default_cache() -> Path:
    from ...models.embedders import default_cache_dir

    return default_cache_dir().parent / "judge" / "llm-cache.jsonl"


def prices_of(args: argparse.Namespace) -> Optional[Any]:
    """``Prices`` when either ``--price-input`` or ``--price-output`` is given (the other is 0)."""
    from ...judge.llm import Prices

    if args.price_input is None and args.price_output is None:
        return None
    return Prices(args.price_input or 0.0, args.price_output or 0.0)


def read_template(path: str) -> str:
    """A prompt template file's UTF-8 text: a regular file (``fileio.read_regular_file``: a
    FIFO, folder or device is refused, never waited on); else one ``ConfigError`` naming it."""
    from ...fileio import read_regular_file

    try:
        return read_regular_file(path).decode("utf-8")
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path, or not UTF-8
        why = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"cannot read prompt template ({why})", file=path) from None


def prompt_of(args: argparse.Namespace) -> Any:
    """The prompt template: ``--prompt-file`` (versioned by ``--prompt-version`` or its
    hash) or a shipped version."""
    from ...judge.llm import prompt_template

    if not args.prompt_file:
        return prompt_template(args.prompt_version)
    text = read_template(args.prompt_file)
    try:
        return prompt_template(args.prompt_version, text)
    except ValueError as exc:
        raise ConfigError(str(exc), file=args.prompt_file) from None


def judge_options(args: argparse.Namespace, prompt: Any = None) -> dict:
    """``make_judge`` keywords from the command line (the HTTP judges' transport options);
    ``prompt``: the template to send (default: ``--prompt-file`` or ``--prompt-version``)."""
    prompt = prompt if prompt is not None else prompt_of(args)
    kw: dict = {"judge_id": args.judge_id}
    if args.provider != "callable":
        if not args.model:
            raise RetrievalError(f"--provider {args.provider} needs --model")
        kw.update(
            base_url=args.base_url,
            api_key_env=args.api_key_env,
            prompt=prompt,
            timeout=args.timeout,
            max_tokens=args.max_tokens,
        )
        if args.provider == "anthropic":
            kw["anthropic_version"] = args.anthropic_version
        else:
            kw["reasoning"] = {"auto": None, "yes": True, "no": False}[args.reasoning]
    return kw


def grading_options(args: argparse.Namespace) -> dict:
    """``grade_pairs`` keywords from the command line (pace, retries, limits)."""
    from ...judge.llm import RetryPolicy

    return {
        "concurrency": args.concurrency,
        "requests_per_minute": args.rpm,
        "retry": RetryPolicy(
            max_retries=args.max_retries, base_delay=args.backoff, max_delay=args.max_backoff
        ),
        "max_doc_chars": args.max_doc_chars,
        "progress": None if args.progress else False,
        "dry_run": args.dry_run,
    }


def _write_llm_results(args: argparse.Namespace, report: Any) -> int:
    """Report the failures, write them (``--failures``) and the qrels; the exit status."""
    from ...judge.files import write_qrels
    from ...judge.llm import write_failures

    for f in report.failures[:10]:
        say(f"  failed ({f.query_id}, {f.doc_id}): {f.error}")
    if len(report.failures) > 10:
        say(f"  ... and {len(report.failures) - 10} more")
    if args.failures and report.failures:
        write_failures(report, args.failures)
        say(f"failures written to {args.failures}")
    qrels = report.qrels()
    if qrels:
        n = write_qrels(qrels, args.out)
        say(f"wrote {n} label(s) to {args.out}")
    else:
        say("no labels to write")
    return 0 if report.complete else 1


def setup_logging() -> None:
    logger = logging.getLogger("pytest_retrieval.judge")
    if not logger.handlers and not logging.getLogger().handlers:
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("judge: %(message)s"))
        h.setLevel(logging.WARNING)
        logger.addHandler(h)
        logger.setLevel(logging.WARNING)


# -------------------------------------------------------------------- parser


def register(sub: Any) -> None:
    """``judge llm``: grade annotation pairs with an LLM judge."""
    parser = sub.add_parser("llm", help="grade (query, doc) pairs with an LLM judge -> qrels")
    parser.add_argument("pairs", help="pairs to grade: an annotation file from `judge pool` (.csv/.jsonl)")
    parser.add_argument("--out", required=True, help="qrels to write with the judge's grades")
    add_judge_options(parser)
    add_request_options(parser)
    add_cost_options(parser)
    add_progress_option(parser, run)


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """Which judge: provider, model or function, endpoint, key, prompt, answer cache."""
    parser.add_argument(
        "--provider",
        choices=("anthropic", "openai", "callable"),
        required=True,
        help="anthropic (Messages API), openai (any OpenAI-compatible endpoint), callable (module:function)",
    )
    parser.add_argument("--model", help="model name (anthropic, openai)")
    parser.add_argument(
        "--function", metavar="MODULE:FUNCTION", help="callable judge: (query, document) -> int | str"
    )
    parser.add_argument(
        "--base-url",
        type=http_url,
        help="API base URL (default: the provider's; for openai the part before /chat/completions)",
    )
    parser.add_argument(
        "--api-key-env",
        type=plain_text,
        metavar="VAR",
        help="environment variable holding the key (default ANTHROPIC_API_KEY / "
        "OPENAI_API_KEY); keys are never printed",
    )
    parser.add_argument("--anthropic-version", type=api_date, default="2023-06-01")
    parser.add_argument(
        "--judge-id", type=plain_text, help="cache identity of the judge (default provider:model)"
    )
    parser.add_argument(
        "--prompt-version",
        type=plain_text,
        help="shipped prompt version (default umbrela-int-v1), or the version name of --prompt-file",
    )
    parser.add_argument("--prompt-file", help="your own template with {query} and {document}")
    parser.add_argument(
        "--cache",
        help="JSONL answer cache (default: the user cache dir, pytest-retrieval/judge/llm-cache.jsonl)",
    )


def add_request_options(parser: argparse.ArgumentParser) -> None:
    """How the judge is asked: pace, retries, timeouts, answer and document sizes."""
    parser.add_argument(
        "--concurrency", type=number(int, ge=1), default=4, help="parallel requests (default 4)"
    )
    parser.add_argument("--rpm", type=positive, default=None, help="requests per minute (token bucket)")
    parser.add_argument(
        "--max-retries", type=number(int, ge=0), default=5, help="retries on 429/5xx/timeouts (default 5)"
    )
    parser.add_argument(
        "--backoff", type=number(float, ge=0), default=1.0, help="first backoff in seconds (default 1)"
    )
    parser.add_argument(
        "--max-backoff",
        type=number(float, ge=0),
        default=60.0,
        help="cap on a backoff or Retry-After wait (default 60)",
    )
    parser.add_argument("--timeout", type=positive, default=60.0, help="per-request timeout, s")
    parser.add_argument(
        "--max-tokens",
        type=number(int, ge=1),
        default=None,
        help="answer token limit (default 16; 2048 for an OpenAI reasoning model, whose limit "
        "also pays for its reasoning and is sent as max_completion_tokens)",
    )
    parser.add_argument(
        "--reasoning",
        choices=("auto", "yes", "no"),
        default="auto",
        help="openai: is the model a reasoning model (o1, o3, o4-mini, gpt-5...: max_completion_tokens, "
        "no temperature)? auto decides by the model name",
    )
    parser.add_argument(
        "--max-doc-chars",
        type=number(int, ge=1),
        default=4000,
        help="documents are cut to this many characters (default 4000)",
    )


def add_cost_options(parser: argparse.ArgumentParser) -> None:
    """The cost estimate, the failures file and the dry run."""
    parser.add_argument(
        "--price-input",
        type=number(float, ge=0),
        metavar="USD",
        help="USD per million input tokens, for the cost estimate",
    )
    parser.add_argument(
        "--price-output", type=number(float, ge=0), metavar="USD", help="USD per million output tokens"
    )
    parser.add_argument("--failures", metavar="FILE", help="write failed pairs here (JSONL)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="count cached and new pairs and estimate tokens/cost; ask nothing",
    )
