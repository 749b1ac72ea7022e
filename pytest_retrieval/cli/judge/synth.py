"""``judge synth``: LLM-written questions for sampled documents, checked by a second judge ->
queries, qrels, tags and a provenance file."""

from __future__ import annotations

import argparse
import copy
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from ...errors import ConfigError, RetrievalError
from ..options import fraction, http_url, number, plain_text
from .console import say
from .llm import (
    add_cost_options,
    add_judge_options,
    add_request_options,
    check_before_asking,
    check_llm_outputs,
    default_cache,
    grading_options,
    judge_options,
    prices_of,
    read_template,
    setup_logging,
)

__all__ = ["register", "run"]

_CHECK_OPTIONS = ("provider", "model", "function", "base_url", "api_key_env", "judge_id", "prompt_version")


def run(args: argparse.Namespace) -> int:
    from ...judge.llm import JudgeCache, write_failures
    from ...judge.synth import Asking, synthesize, write_synth

    setup_logging()
    _check_outputs(args)
    check_before_asking(args)
    check_args = _check_args(args)
    check_before_asking(check_args)
    documents, existing, embedder = _inputs(args)
    prompt = _generation_prompt(args)
    generator, checker = _judges(args, check_args, prompt)
    cache_path = Path(args.cache) if args.cache else default_cache()
    cache = JudgeCache(cache_path)
    options = grading_options(args)
    options.pop("max_doc_chars")
    options.pop("dry_run")
    say(
        f"generator {generator.id} (prompt {prompt.version}), check {checker.id} (prompt {checker.prompt_version})"
    )
    say(f"cache {cache_path} ({len(cache)} answer(s))")
    try:
        result = synthesize(
            documents,
            generator,
            checker,
            prompt,
            Asking(cache, options, prices_of(args)),
            _spec(args),
            existing=existing,
            embedder=embedder,
            dry_run=args.dry_run,
            on_plan=lambda r: say(r.plan()),
        )
    except KeyboardInterrupt:
        say("interrupted: every answer received so far is in the cache; rerun to resume")
        return 130
    finally:
        cache.close()
    say(result.summary())
    if args.dry_run:
        return 0
    for report in result.reports:
        if args.failures and report.failures:
            write_failures(report, args.failures)
    n = write_synth(result, args.out, args.qrels_out, args.tags_out, args.provenance)
    say(f"wrote {n} synthetic queries to {args.out}, qrels to {args.qrels_out}" + _also(args))
    return 0 if result.complete else 1


def _also(args: argparse.Namespace) -> str:
    parts = [f"tags to {args.tags_out}"] if args.tags_out else []
    parts += [f"provenance to {args.provenance}"] if args.provenance else []
    return (", " + ", ".join(parts)) if parts else ""


def _check_outputs(args: argparse.Namespace) -> None:
    if bool(args.suite) == bool(args.corpus):
        raise RetrievalError("give one of --suite SUITE or --corpus CORPUS")
    from ...output_paths import Output

    check_llm_outputs(
        args,
        Output("--out", args.out, "queries"),
        Output("--qrels-out", args.qrels_out, "qrels"),
        Output("--tags-out", args.tags_out, "tags"),
        Output("--provenance", args.provenance, "json"),
    )


def _check_args(args: argparse.Namespace) -> argparse.Namespace:
    """The check judge's options: ``--check-*`` where given, else the generator's (its
    prompt: ``--check-prompt-file``, else the shipped UMBRELA grading prompt)."""
    out = copy.copy(args)
    for name in _CHECK_OPTIONS:
        value = getattr(args, f"check_{name}")
        if value is not None:
            setattr(out, name, value)
    if args.check_provider is not None and args.check_provider != args.provider:
        out.model = args.check_model
        out.function = args.check_function
    out.judge_id = args.check_judge_id  # the generator's --judge-id names the generator only
    out.prompt_file = args.check_prompt_file
    out.prompt_version = args.check_prompt_version
    out.max_tokens = args.check_max_tokens
    _check_names_its_judge(args, out)
    return out


def _check_names_its_judge(args: argparse.Namespace, out: argparse.Namespace) -> None:
    """The check judge has a model (or a function); the error names the option to give."""
    if out.provider != "callable" and not out.model:
        if args.check_provider is None and args.check_model is None:
            raise RetrievalError(f"--provider {out.provider} needs --model")
        raise RetrievalError(f"--check-provider {out.provider} needs --check-model")
    if out.provider == "callable" and not out.function:
        raise RetrievalError("a callable check judge needs --check-function MODULE:FUNCTION")


def _judges(args: argparse.Namespace, check_args: argparse.Namespace, prompt: Any) -> Tuple[Any, Any]:
    from ...judge.llm import make_judge
    from ...judge.synth import Verbatim

    gen_kw = judge_options(args, prompt=Verbatim(prompt.version, "{query}"))
    if args.provider != "callable" and args.max_tokens is None:
        gen_kw["max_tokens"] = 1024
    if args.provider == "callable":
        gen_kw["prompt_version"] = prompt.version
    generator = make_judge(args.provider, model=args.model, function=args.function, **gen_kw)
    try:
        checker = make_judge(
            check_args.provider,
            model=check_args.model,
            function=check_args.function,
            **judge_options(check_args),
        )
    except (ValueError, RetrievalError) as exc:
        raise RetrievalError(f"check judge: {exc}") from None
    if generator.id == checker.id and generator.prompt_version == checker.prompt_version:
        raise RetrievalError("the check judge must differ from the generator (another model or prompt)")
    return generator, checker


def _generation_prompt(args: argparse.Namespace) -> Any:
    from ...judge.synth import generation_prompt

    if not args.prompt_file:
        return generation_prompt(version=args.prompt_version)
    text = read_template(args.prompt_file)
    try:
        return generation_prompt(text, args.prompt_version)
    except ValueError as exc:
        raise ConfigError(str(exc), file=args.prompt_file) from None


def _inputs(args: argparse.Namespace) -> Tuple[Any, Dict[str, str], Any]:
    """(documents, the suite's queries, the embedder for near-duplicates or None)."""
    from ...io.corpus import load_corpus

    embedder = _onnx(args.embedder_model) if args.embedder_model else None
    if args.corpus:
        return load_corpus(Path(args.corpus)), {}, embedder
    from ...config.load import load_suite
    from ...execution.plan import load_judgments

    suite = load_suite(Path(args.suite))
    js = _suite_judgments(suite, load_judgments)
    if not js.corpus:
        raise RetrievalError(
            f"--suite {args.suite}: the suite has no corpus file to sample documents from; give --corpus"
        )
    if embedder is None:
        embedder = _suite_embedder(suite)
    return js.corpus, dict(js.queries), embedder


def _suite_judgments(suite: Any, load_judgments: Any) -> Any:
    """The suite's judgment set; a qrels or queries file that does not exist yet is none."""
    import dataclasses

    j = suite.model.judgments
    update: Dict[str, Any] = {}
    for key in ("qrels", "queries"):
        value = getattr(j, key, None)
        if value and not suite.resolve_path(("judgments", key), value).exists():
            update[key] = None
    if update:
        model = suite.model.model_copy(update={"judgments": j.model_copy(update=update)})
        suite = dataclasses.replace(suite, model=model)
    return load_judgments(suite)


def _suite_embedder(suite: Any) -> Optional[Any]:
    """The suite's embedder when it can embed new text (not ``precomputed``)."""
    from ...models.embedders.factory import make_embedder

    cfg = suite.model.embedder
    if cfg is None or getattr(cfg, "type", "precomputed") == "precomputed":
        return None
    return make_embedder(cfg, suite.path.parent)


def _onnx(folder: str) -> Any:
    from ...models.embedders.factory import make_embedder

    if not Path(folder).is_dir():
        raise RetrievalError(f"--embedder-model {folder}: not a folder (an ONNX sentence-embedding model)")
    return make_embedder({"type": "onnx", "model": folder})


def _spec(args: argparse.Namespace) -> Any:
    from ...judge.synth import SynthSpec

    return SynthSpec(
        per_doc=args.per_doc,
        max_docs=args.max_docs,
        max_calls=args.max_calls,
        seed=args.seed,
        stratify=args.stratify,
        min_words=args.min_words,
        min_grade=args.min_grade,
        grade=None if args.grade == "check" else int(args.grade),
        max_verbatim_words=args.max_verbatim_words,
        max_ngram_overlap=args.max_ngram_overlap,
        dup_cosine=args.dup_cosine,
        max_doc_chars=args.max_doc_chars,
    )


def _grade(text: str) -> str:
    if text == "check" or text in ("1", "2", "3"):
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: a grade 1-3, or 'check' (the check judge's grade)")


# -------------------------------------------------------------------- parser


def register(sub: Any) -> None:
    """``judge synth``: LLM-written, checked questions -> queries, qrels, tags, provenance."""
    p = sub.add_parser("synth", help="LLM-written questions for sampled documents, checked by a second judge")
    p.add_argument("--suite", help="suite whose corpus to sample (its queries are not duplicated)")
    p.add_argument("--corpus", help="corpus JSONL to sample ({_id, title, text, ...})")
    p.add_argument("--out", required=True, help="queries file to write (.jsonl, or .tsv)")
    p.add_argument("--qrels-out", required=True, help="qrels to write (TREC; .tsv/.jsonl by extension)")
    p.add_argument("--tags-out", help="tags file to write: every query tagged 'synthetic'")
    p.add_argument(
        "--provenance", metavar="FILE", help="provenance JSON to write (models, prompt hashes, seed, reasons)"
    )
    _add_sampling_options(p)
    _add_screen_options(p)
    add_judge_options(p)
    _add_check_options(p)
    add_request_options(p)
    add_cost_options(p)
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.set_defaults(func=run)


def _add_sampling_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--per-doc", type=number(int, ge=1, le=20), default=3, help="questions per document (default 3)"
    )
    p.add_argument(
        "--max-docs", type=number(int, ge=1), default=100, help="documents to sample (default 100)"
    )
    p.add_argument(
        "--max-calls",
        type=number(int, ge=1),
        help="at most this many new requests (generation + check; retries aside)",
    )
    p.add_argument("--seed", type=number(int, ge=0), default=0, help="document sample seed (default 0)")
    p.add_argument(
        "--stratify",
        type=plain_text,
        metavar="FIELD",
        help="stratify documents by 'length' or a document field",
    )
    p.add_argument(
        "--min-words",
        type=number(int, ge=0),
        default=20,
        help="documents shorter than this are not sampled (default 20)",
    )


def _add_screen_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--min-grade",
        type=number(int, ge=0, le=3),
        default=2,
        help="check grade a question needs (default 2)",
    )
    p.add_argument(
        "--grade",
        type=_grade,
        default="check",
        help="qrels grade of the source document: 1-3, or check (default)",
    )
    p.add_argument(
        "--max-verbatim-words",
        type=number(int, ge=1),
        default=10,
        help="longest run of document words allowed (default 10)",
    )
    p.add_argument(
        "--max-ngram-overlap",
        type=fraction,
        default=0.75,
        help="share of word 3-grams from the document allowed (default 0.75)",
    )
    p.add_argument(
        "--dup-cosine",
        type=number(float, ge=-1, le=1),
        default=0.95,
        help="embedding near-duplicate threshold (default 0.95)",
    )
    p.add_argument(
        "--embedder-model", metavar="DIR", help="ONNX sentence-embedding model for near-duplicates"
    )


def _add_check_options(p: argparse.ArgumentParser) -> None:
    """The second judge: defaults to the generator's provider and model with the grading prompt."""
    p.add_argument(
        "--check-provider", choices=("anthropic", "openai", "callable"), help="default: --provider"
    )
    p.add_argument("--check-model", help="default: --model")
    p.add_argument("--check-function", metavar="MODULE:FUNCTION", help="callable check judge")
    p.add_argument("--check-base-url", type=http_url, help="default: --base-url")
    p.add_argument("--check-api-key-env", type=plain_text, metavar="VAR", help="default: --api-key-env")
    p.add_argument("--check-judge-id", type=plain_text, help="cache identity of the check judge")
    p.add_argument(
        "--check-prompt-version", type=plain_text, help="grading prompt version (default umbrela-int-v1)"
    )
    p.add_argument("--check-prompt-file", help="grading template with {query} and {document}")
    p.add_argument("--check-max-tokens", type=number(int, ge=1), help="check answer token limit (default 16)")
