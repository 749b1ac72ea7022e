"""``pytest-retrieval judge clicks|llm|pool|import|agree``: author and check judgments.

``register(subparsers)`` adds the ``judge`` command family to the ``pytest-retrieval``
parser (``pytest_retrieval.cli.app``), one ``_add_*_parser`` per command. Every command reports to stderr and writes files atomically; mistakes in input files are
one line naming the file and line.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError, RetrievalError
from .app import number  # numeric options validated like their YAML twins (issue #11)

__all__ = ["register"]


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _ranged(text: str):
    from ..judge.annotations import parse_grade_range

    try:
        return parse_grade_range(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not in [0, 1]")
    return v


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return v


# --------------------------------------------------------------------- clicks


def _clicks(args: argparse.Namespace) -> int:
    from ..io.queries import load_queries
    from ..judge.clicks import ClickGrading, grade_clicks, write_click_judgments

    try:
        g0, g1, g2 = (int(x) for x in args.grades.split(","))
    except ValueError:
        raise RetrievalError(
            f"--grades {args.grades!r}: expected three integers 'impression,click,long-click' such as 0,1,2"
        ) from None
    columns = {}
    for spec in args.column or []:
        role, eq, name = spec.partition("=")
        if not eq or not role.strip() or not name.strip():
            raise RetrievalError(f"--column {spec!r}: expected ROLE=NAME, e.g. query=search_term")
        columns[role.strip()] = name.strip()
    same = (
        "long_dwell",
        "position_bias",
        "click_rate",
        "long_click_rate",
        "min_impressions",
        "min_examinations",
    )
    grading = ClickGrading(
        grade_impression=g0,
        grade_click=g1,
        grade_long_click=g2,
        position_base=0 if args.positions_from_zero else 1,
        **{name: getattr(args, name) for name in same},
    )
    texts = load_queries(Path(args.query_texts)) if args.query_texts else None
    result = grade_clicks(
        args.log, grading, columns=columns, query_texts=texts, progress=None if args.progress else False
    )
    if not result.qrels:
        raise RetrievalError(f"{args.log}: no (query, doc) pair was graded; nothing written")
    if result.generated_ids and not args.queries_out:
        raise RetrievalError(
            "the log names queries by text: give --queries-out FILE for the "
            "queries file with the generated ids"
        )
    write_click_judgments(result, args.qrels_out, args.queries_out, args.stats_out)
    _say(result.summary())
    wrote = [f"qrels {args.qrels_out}"]
    wrote += [f"queries {args.queries_out}"] if args.queries_out else []
    wrote += [f"evidence {args.stats_out}"] if args.stats_out else []
    _say("wrote " + ", ".join(wrote))
    return 0


# ----------------------------------------------------------------------- pool


def _pool(args: argparse.Namespace) -> int:
    from ..judge.annotations import write_annotation_file
    from ..judge.pool import pool_suites
    from ..progress import progress_bar

    outs = [Path(o) for o in args.out]
    for o in outs:
        if o.suffix.lower() not in (".csv", ".tsv", ".jsonl"):
            raise RetrievalError(f"--out {o}: annotation files are .csv, .tsv or .jsonl")
    bar = progress_bar(None, "pooling", unit="step", enabled=None if args.progress else False)

    def progress(msg: str) -> None:
        bar.set_description(msg[:60])
        bar.update(1)
        if args.verbose:
            _say(msg)

    retrievers = [r.strip() for r in args.retrievers.split(",") if r.strip()] if args.retrievers else None
    try:
        pool = pool_suites(
            args.suites,
            depth=args.depth,
            retrievers=retrievers,
            judged=args.judged,
            corpus=args.corpus,
            include_judged=args.include_judged,
            shuffle=args.shuffle,
            progress=progress,
        )
    finally:
        bar.close()
    _say(pool.summary())
    for o in outs:
        n = write_annotation_file(pool, o)
        _say(
            f"wrote {n} pair(s) to {o}: fill the 'grade' column "
            f"(integers {args.scale}; leave blank to skip), then `pytest-retrieval judge import {o} "
            f"--qrels QRELS`"
        )
    _say_formula_ids(pool, outs)
    return 0


def _say_formula_ids(pool: Any, outs: list) -> None:
    """Ids a spreadsheet would run as formulas are written with a leading quote; a
    spreadsheet may drop it on save, so import then needs the pooled set (issue #11 item 5)."""
    from ..judge.files import is_formula_shaped

    shaped = {i for p in pool.pairs for i in (p.query_id, p.doc_id) if is_formula_shaped(i)}
    if not shaped or not any(o.suffix.lower() in (".csv", ".tsv") for o in outs):
        return
    keep = next((o for o in outs if o.suffix.lower() == ".jsonl"), None)
    _say(
        f"note: {len(shaped)} id(s) start like a spreadsheet formula (e.g. {sorted(shaped)[0]!r}); "
        f"they are written with a leading ' . Keep {keep or 'an untouched copy of the file'} and pass "
        f"it to `judge import --pool` so those ids are accepted back"
    )


# --------------------------------------------------------------------- import


def _import(args: argparse.Namespace) -> int:
    from ..io.qrels import load_qrels
    from ..judge.annotations import read_pooled_pairs
    from ..judge.files import write_qrels
    from ..judge.merge import import_annotations

    existing = {}
    qrels_path = Path(args.qrels)
    if qrels_path.exists() and qrels_path.stat().st_size > 0:
        existing = load_qrels(qrels_path)
        _say(f"existing labels: {sum(len(d) for d in existing.values())} in {qrels_path}")
    else:
        _say(f"{qrels_path} does not exist yet: starting from no labels")
    pooled = read_pooled_pairs(args.pool) if args.pool else None
    result = import_annotations(
        args.files, existing, policy=args.policy, grade_range=args.grades, pooled=pooled
    )
    _say(result.summary())
    out = Path(args.out) if args.out else qrels_path
    if not any(result.qrels.values()):
        raise RetrievalError("no labels to write (every row blank?)")
    n = write_qrels(result.qrels, out)
    _say(f"wrote {n} label(s) to {out}")
    return 0


# ------------------------------------------------------------------------ llm


def _default_cache() -> Path:
    from ..models.embedders import default_cache_dir

    return default_cache_dir().parent / "judge" / "llm-cache.jsonl"


def _llm(args: argparse.Namespace) -> int:
    from ..judge.annotations import read_pairs
    from ..judge.llm import JudgeCache, Prices, grade_pairs, make_judge, pairs_from_pool

    _setup_logging()
    judge = make_judge(args.provider, model=args.model, function=args.function, **_judge_options(args))
    pairs = pairs_from_pool(read_pairs(args.pairs))
    cache_path = Path(args.cache) if args.cache else _default_cache()
    cache = JudgeCache(cache_path)
    prices = (
        Prices(args.price_input or 0.0, args.price_output or 0.0)
        if args.price_input is not None or args.price_output is not None
        else None
    )
    _say(f"judge {judge.id}, prompt {judge.prompt_version}; cache {cache_path} ({len(cache)} answer(s))")
    try:
        report = grade_pairs(pairs, judge, cache=cache, prices=prices, **_grading_options(args))
    except KeyboardInterrupt:
        cache.close()
        _say("interrupted: every answer received so far is in the cache; rerun to resume")
        return 130
    finally:
        cache.close()
    _say(report.summary())
    if prices is not None and report.cost is None and not args.dry_run:
        _say("cost unknown: the judge reported no token usage")
    if args.dry_run:
        return 0
    return _write_llm_results(args, report)


def _prompt(args: argparse.Namespace) -> Any:
    """The prompt template: ``--prompt-file`` (versioned by ``--prompt-version`` or its
    hash) or a shipped version."""
    from ..judge.llm import prompt_template

    if not args.prompt_file:
        return prompt_template(args.prompt_version)
    try:
        text = Path(args.prompt_file).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read prompt template ({exc.strerror})", file=args.prompt_file) from None
    try:
        return prompt_template(args.prompt_version, text)
    except ValueError as exc:
        raise ConfigError(str(exc), file=args.prompt_file) from None


def _judge_options(args: argparse.Namespace) -> dict:
    """``make_judge`` keywords from the command line (the HTTP judges' transport options)."""
    prompt = _prompt(args)
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


def _grading_options(args: argparse.Namespace) -> dict:
    """``grade_pairs`` keywords from the command line (pace, retries, limits)."""
    from ..judge.llm import RetryPolicy

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
    from ..judge.files import write_qrels
    from ..judge.llm import write_failures

    for f in report.failures[:10]:
        _say(f"  failed ({f.query_id}, {f.doc_id}): {f.error}")
    if len(report.failures) > 10:
        _say(f"  ... and {len(report.failures) - 10} more")
    if args.failures and report.failures:
        write_failures(report, args.failures)
        _say(f"failures written to {args.failures}")
    qrels = report.qrels()
    if qrels:
        n = write_qrels(qrels, args.out)
        _say(f"wrote {n} label(s) to {args.out}")
    else:
        _say("no labels to write")
    return 0 if report.complete else 1


# ---------------------------------------------------------------------- agree


def _agree(args: argparse.Namespace) -> int:
    from ..judge.agreement import compare_qrels
    from ..judge.annotations import load_labels

    lo_hi = args.labels or (0, 3)
    big = (min(lo_hi[0], -(10**6)), max(lo_hi[1], 10**6))
    a = load_labels(args.a, grade_range=big)
    b = load_labels(args.b, grade_range=big)
    names = args.names.split(",", 1) if args.names else [Path(args.a).name, Path(args.b).name]
    if len(names) != 2:
        raise RetrievalError("--names: expected two names, e.g. human,llm")
    labels = list(range(args.labels[0], args.labels[1] + 1)) if args.labels else None
    try:
        ag = compare_qrels(
            a.grades, b.grades, a_name=names[0], b_name=names[1], labels=labels, binarize=args.binarize
        )
    except ValueError as exc:
        raise RetrievalError(f"--labels: {exc}") from None
    rec = ag.recommendation(args.min_kappa)
    if args.json:
        d = ag.to_dict()
        d["recommendation"] = rec
        print(json.dumps(d, indent=2))
    else:
        print(ag.format())
        print(rec)
    below = ag.n == 0 or not (ag.kappa_linear >= args.min_kappa)
    return 1 if (args.strict and below) else 0


# -------------------------------------------------------------------- parser


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``judge`` and its five commands to a ``pytest-retrieval`` subparsers object."""

    j = subparsers.add_parser(
        "judge",
        help="author judgments: clicks, LLM grading, pooling, import, agreement",
        description="Author judgment sets: grade from click logs (clicks), with an LLM judge "
        "(llm), pool the top-k of your retrievers for people to grade (pool, "
        "import), and measure agreement between two label sources (agree).",
    )
    sub = j.add_subparsers(dest="judge_command", required=True, metavar="{clicks,llm,pool,import,agree}")
    _add_clicks_parser(sub)
    _add_llm_parser(sub)
    _add_pool_parser(sub)
    _add_import_parser(sub)
    _add_agree_parser(sub)
    return j


def _with_progress_option(parser: argparse.ArgumentParser, func: Any) -> None:
    """The last option of a long-running command (``--no-progress``) and its handler."""
    parser.add_argument("--no-progress", dest="progress", action="store_false")
    parser.set_defaults(func=func)


def _add_clicks_parser(sub: Any) -> None:
    """``judge clicks``: a click log -> graded qrels and a queries file."""
    c = sub.add_parser("clicks", help="click log -> graded qrels + queries file")
    c.add_argument(
        "log", help="click log: .csv, .tsv, .jsonl or .parquet (needs pyarrow), one row per impression"
    )
    c.add_argument("--qrels-out", required=True, help="qrels to write (TREC; .tsv/.jsonl by extension)")
    c.add_argument("--queries-out", help='queries JSONL to write ({"_id", "text"})')
    c.add_argument(
        "--query-texts", metavar="FILE", help="queries file giving the texts when the log has query ids only"
    )
    c.add_argument("--stats-out", metavar="FILE", help="per-pair evidence TSV (impressions, clicks, rates)")
    c.add_argument(
        "--long-dwell",
        type=float,
        default=30.0,
        help="seconds; a click with dwell above this is a long click (default 30)",
    )
    c.add_argument(
        "--grades", default="0,1,2", help="grades for impression-only, click, long click (default 0,1,2)"
    )
    c.add_argument(
        "--position-bias",
        type=float,
        metavar="ETA",
        help="correct for position bias with examination propensity (1/position)^ETA (try 1.0)",
    )
    c.add_argument(
        "--click-rate",
        type=_fraction,
        help="minimum (corrected) click rate for the click grade (default 0, or 0.2 with --position-bias)",
    )
    c.add_argument(
        "--long-click-rate",
        type=_fraction,
        help="minimum (corrected) long-click rate for the top grade (default 0, or 0.2 with --position-bias)",
    )
    c.add_argument(
        "--min-impressions", type=int, default=1, help="pairs shown fewer times stay unjudged (default 1)"
    )
    c.add_argument(
        "--min-examinations",
        type=float,
        default=1.0,
        help="with --position-bias: unclicked pairs with fewer expected examinations "
        "stay unjudged (default 1.0)",
    )
    c.add_argument("--positions-from-zero", action="store_true", help="the log's positions start at 0")
    c.add_argument(
        "--column",
        action="append",
        metavar="ROLE=NAME",
        help="name a column: roles query_id, query, doc_id, clicked, dwell, position",
    )
    _with_progress_option(c, _clicks)


def _add_llm_parser(sub: Any) -> None:
    """``judge llm``: grade annotation pairs with an LLM judge."""
    l = sub.add_parser("llm", help="grade (query, doc) pairs with an LLM judge -> qrels")
    l.add_argument("pairs", help="pairs to grade: an annotation file from `judge pool` (.csv/.jsonl)")
    l.add_argument("--out", required=True, help="qrels to write with the judge's grades")
    l.add_argument(
        "--provider",
        choices=("anthropic", "openai", "callable"),
        required=True,
        help="anthropic (Messages API), openai (any OpenAI-compatible endpoint), callable (module:function)",
    )
    l.add_argument("--model", help="model name (anthropic, openai)")
    l.add_argument(
        "--function", metavar="MODULE:FUNCTION", help="callable judge: (query, document) -> int | str"
    )
    l.add_argument(
        "--base-url",
        help="API base URL (default: the provider's; for openai the part before /chat/completions)",
    )
    l.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the key (default ANTHROPIC_API_KEY / "
        "OPENAI_API_KEY); keys are never printed",
    )
    l.add_argument("--anthropic-version", default="2023-06-01")
    l.add_argument("--judge-id", help="cache identity of the judge (default provider:model)")
    l.add_argument(
        "--prompt-version",
        help="shipped prompt version (default umbrela-int-v1), or the version name of --prompt-file",
    )
    l.add_argument("--prompt-file", help="your own template with {query} and {document}")
    l.add_argument(
        "--cache",
        help="JSONL answer cache (default: the user cache dir, pytest-retrieval/judge/llm-cache.jsonl)",
    )
    l.add_argument("--concurrency", type=number(int, ge=1), default=4, help="parallel requests (default 4)")
    l.add_argument("--rpm", type=_positive, default=None, help="requests per minute (token bucket)")
    l.add_argument(
        "--max-retries", type=number(int, ge=0), default=5, help="retries on 429/5xx/timeouts (default 5)"
    )
    l.add_argument(
        "--backoff", type=number(float, ge=0), default=1.0, help="first backoff in seconds (default 1)"
    )
    l.add_argument(
        "--max-backoff", type=float, default=60.0, help="cap on a backoff or Retry-After wait (default 60)"
    )
    l.add_argument("--timeout", type=_positive, default=60.0, help="per-request timeout, s")
    l.add_argument(
        "--max-tokens",
        type=number(int, ge=1),
        default=None,
        help="answer token limit (default 16; 2048 for an OpenAI reasoning model, whose limit "
        "also pays for its reasoning and is sent as max_completion_tokens)",
    )
    l.add_argument(
        "--reasoning",
        choices=("auto", "yes", "no"),
        default="auto",
        help="openai: is the model a reasoning model (o1, o3, o4-mini, gpt-5...: max_completion_tokens, "
        "no temperature)? auto decides by the model name",
    )
    l.add_argument(
        "--max-doc-chars",
        type=int,
        default=4000,
        help="documents are cut to this many characters (default 4000)",
    )
    l.add_argument(
        "--price-input",
        type=float,
        metavar="USD",
        help="USD per million input tokens, for the cost estimate",
    )
    l.add_argument("--price-output", type=float, metavar="USD", help="USD per million output tokens")
    l.add_argument("--failures", metavar="FILE", help="write failed pairs here (JSONL)")
    l.add_argument(
        "--dry-run",
        action="store_true",
        help="count cached and new pairs and estimate tokens/cost; ask nothing",
    )
    _with_progress_option(l, _llm)


def _add_pool_parser(sub: Any) -> None:
    """``judge pool``: the unjudged top-k of suites' retrievers, for annotation."""
    p = sub.add_parser("pool", help="pool the unjudged top-k of suites' retrievers for annotation")
    p.add_argument("suites", nargs="+", help="suite files (candidate systems)")
    p.add_argument(
        "-o",
        "--out",
        action="append",
        required=True,
        help="annotation file to write: .csv, .tsv or .jsonl (repeatable)",
    )
    p.add_argument("--depth", type=number(int, ge=1), default=20, help="top-k per retriever (default 20)")
    p.add_argument(
        "--retrievers",
        help="comma-separated retrievers to pool (default: all; suite:name picks from one suite)",
    )
    p.add_argument(
        "--judged",
        action="append",
        metavar="QRELS",
        help="more labels counting as judged (beyond the suites' own qrels)",
    )
    p.add_argument("--corpus", help="corpus JSONL for document texts (suites on an existing index)")
    p.add_argument(
        "--include-judged", action="store_true", help="export judged pairs too (to measure agreement on them)"
    )
    p.add_argument(
        "--shuffle",
        type=int,
        metavar="SEED",
        help="shuffle documents within each query (default: best rank first)",
    )
    p.add_argument("--scale", default="0-3", help="grade scale shown in the instructions")
    p.add_argument("-v", "--verbose", action="store_true")
    _with_progress_option(p, _pool)


def _add_import_parser(sub: Any) -> None:
    """``judge import``: filled annotation files -> merged qrels."""
    i = sub.add_parser("import", help="filled annotation files -> merged qrels")
    i.add_argument(
        "files",
        nargs="+",
        help="filled annotation files (.csv/.tsv/.jsonl) or qrels files (e.g. from `judge llm`)",
    )
    i.add_argument("--qrels", required=True, help="existing qrels to merge into (created if missing)")
    i.add_argument("--out", help="where to write the merged qrels (default: --qrels, in place)")
    i.add_argument(
        "--policy",
        choices=("keep-existing", "prefer-new", "error"),
        default="keep-existing",
        help="when a new grade differs from an existing label (default keep-existing)",
    )
    i.add_argument(
        "--grades", type=_ranged, default=(0, 3), metavar="MIN-MAX", help="allowed grades (default 0-3)"
    )
    i.add_argument(
        "--pool",
        action="append",
        metavar="FILE",
        help="the annotation file(s) as `judge pool` wrote them: ids that look like spreadsheet "
        "formulas (=, +, -, @) are accepted only for these pairs (repeatable)",
    )
    i.set_defaults(func=_import)


def _add_agree_parser(sub: Any) -> None:
    """``judge agree``: agreement of two label sources."""
    a = sub.add_parser("agree", help="agreement of two label sources (kappa, confusion matrix)")
    a.add_argument("a", help="qrels or filled annotation file (e.g. people)")
    a.add_argument("b", help="qrels or filled annotation file (e.g. the LLM judge)")
    a.add_argument("--names", help="names for the two sources, e.g. human,llm")
    a.add_argument(
        "--labels",
        type=_ranged,
        metavar="MIN-MAX",
        help="the grade scale (default: the observed range)",
    )
    a.add_argument("--binarize", type=int, metavar="T", help="compare relevant (grade >= T) against not")
    a.add_argument(
        "--min-kappa",
        type=float,
        default=0.6,
        help="recommend human backstopping below this linear-weighted kappa (default 0.6)",
    )
    a.add_argument("--strict", action="store_true", help="exit 1 when below --min-kappa")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=_agree)


def _setup_logging() -> None:
    logger = logging.getLogger("pytest_retrieval.judge")
    if not logger.handlers and not logging.getLogger().handlers:
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("judge: %(message)s"))
        h.setLevel(logging.WARNING)
        logger.addHandler(h)
        logger.setLevel(logging.WARNING)
