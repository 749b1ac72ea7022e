"""Grading many pairs: the cache first, then a thread pool of rate-limited, retried requests.

Pairs whose (judge, prompt, query text, document text) are cached are not asked, and pairs
with identical texts are asked once (:func:`_plan`). The rest go to ``concurrency``
workers (:class:`_Asker`: token bucket, retries with backoff, the stop rules), and each
answer is written to the cache as it arrives (:func:`_settle`). A fatal error (bad key,
URL or model) or ``max_consecutive_failures`` failures in a row stop the run; the pairs not
asked then are counted, and a rerun asks them.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ...progress import progress_bar
from .base import FatalJudgeError, Judge, JudgeError, TransientJudgeError
from .cache import JudgeCache, PathLike
from .pairs import JudgePair
from .parsing import GradeParseError, parse_grade
from .ratelimit import RetryPolicy, TokenBucket
from .report import Failure, GradingReport, Prices

log = logging.getLogger("pytest_retrieval.judge")

__all__ = ["grade_pairs"]


def grade_pairs(
    pairs: Sequence[JudgePair],
    judge: Judge,
    *,
    cache: Union[JudgeCache, PathLike],
    concurrency: int = 4,
    requests_per_minute: Optional[float] = None,
    retry: Optional[RetryPolicy] = None,
    prices: Optional[Prices] = None,
    max_doc_chars: Optional[int] = 4000,
    max_consecutive_failures: int = 25,
    progress: Optional[bool] = None,
    dry_run: bool = False,
    sleep: Optional[Callable[[float], None]] = None,
    parse: Optional[Callable[[str], Any]] = None,
) -> GradingReport:
    """Grade every pair with ``judge``, through the cache (see the module docstring).

    Pairs whose (judge, prompt, query text, document text) are cached are not asked; pairs
    with identical texts are asked once. Returns a :class:`GradingReport` with the grades of
    every pair that has one (cached or new) and the failures; it never raises for a pair
    that failed. ``KeyboardInterrupt`` stops the run after saving what has arrived.

    ``parse`` reads an answer (default :func:`~.parsing.parse_grade`, a grade 0-3); another
    reader (``judge synth`` reads a list of questions) raises ``ValueError`` for an answer
    it cannot read, and its values are cached under ``value`` instead of ``grade``."""
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    store = cache if isinstance(cache, JudgeCache) else JudgeCache(cache)
    report = GradingReport(judge.id, judge.prompt_version, total=len(pairs), dry_run=dry_run)
    t0 = time.monotonic()
    try:
        plan = _plan(pairs, judge, store, report, max_doc_chars)
        if dry_run:
            _estimate(plan, judge, prices, report)
            return report
        asker = _Asker.limited(judge, retry, requests_per_minute, sleep, max_consecutive_failures)
        if parse is not None:
            asker.parse = parse
        _ask_all(plan, asker, store, report, concurrency, progress)
        return report
    finally:
        report.elapsed = time.monotonic() - t0
        if not dry_run:
            _price(report, prices)
        if store is not cache:
            store.close()


def _price(report: GradingReport, prices: Optional[Prices]) -> None:
    """The cost of the tokens the API reported using."""
    if prices is not None and report.usage_reported:
        report.cost = prices.cost(report.input_tokens, report.output_tokens)


@dataclass
class _Plan:
    """What is left to ask: one request per distinct cache key, and the pairs that share it."""

    todo: Dict[str, Tuple[JudgePair, str]]  # key -> (first pair, document as sent)
    waiting: Dict[str, List[JudgePair]]  # key -> every pair with that key


def _plan(
    pairs: Sequence[JudgePair],
    judge: Judge,
    store: JudgeCache,
    report: GradingReport,
    max_doc_chars: Optional[int],
) -> _Plan:
    """Take the cached grades into ``report``; group the rest by cache key."""
    plan = _Plan({}, {})
    for p in pairs:
        doc = p.document if max_doc_chars is None else p.document[:max_doc_chars]
        key = JudgeCache.key(judge.id, judge.prompt_version, p.query, doc)
        hit = store.get(key)
        if hit is not None:
            report.cached += 1
            value = hit.get("grade")
            report.grades[(p.query_id, p.doc_id)] = hit.get("value") if value is None else int(value)
            continue
        plan.waiting.setdefault(key, []).append(p)
        plan.todo.setdefault(key, (p, doc))
    return plan


def _estimate(plan: _Plan, judge: Judge, prices: Optional[Prices], report: GradingReport) -> None:
    """Dry run: what would be asked, its input tokens (prompt characters / 4) and cost."""
    report.not_asked = sum(len(v) for v in plan.waiting.values())
    chars = 0
    for p, doc in plan.todo.values():
        prompt = getattr(judge, "prompt", None)
        rendered = prompt.render(p.query, doc) if prompt is not None else p.query + doc
        chars += len(rendered)
    report.estimated_input_tokens = chars // 4
    if prices is not None:
        per_answer = int(getattr(judge, "estimated_output_tokens", 2))  # reasoning models: an upper bound
        report.cost = prices.cost(report.estimated_input_tokens, per_answer * len(plan.todo))


@dataclass
class _Outcome:
    key: str
    grade: Any = None  # the parsed answer: a grade, or what ``parse`` read
    raw: Optional[str] = None
    error: Optional[str] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    requests: int = 0
    retries: int = 0
    fatal: bool = False
    skipped: bool = False


@dataclass
class _Asker:
    """Asks the judge about one pair (in a worker thread): waits for the rate limit,
    retries transient failures, and stops every worker on a fatal error or a run of
    failures."""

    judge: Judge
    retry: RetryPolicy
    bucket: Optional[TokenBucket]
    sleep: Optional[Callable[[float], None]]
    max_consecutive_failures: int
    parse: Callable[[str], Any] = parse_grade
    stop: threading.Event = field(default_factory=threading.Event)
    reason: Optional[str] = None
    _consecutive: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def limited(
        cls,
        judge: Judge,
        retry: Optional[RetryPolicy],
        requests_per_minute: Optional[float],
        sleep: Optional[Callable[[float], None]],
        max_consecutive_failures: int,
    ) -> _Asker:
        """An asker under the rate limit (none when ``requests_per_minute`` is not set)."""
        bucket = TokenBucket(requests_per_minute, sleep=sleep or time.sleep) if requests_per_minute else None
        return cls(judge, retry or RetryPolicy(), bucket, sleep, max_consecutive_failures)

    def ask(self, key: str, pair: JudgePair, doc: str) -> _Outcome:
        out = self._attempts(key, pair, doc)
        if not out.skipped:
            self._count(out)
        return out

    def _count(self, out: _Outcome) -> None:
        # decided here, in the worker, so no other worker starts a request after the stop
        with self._lock:
            if out.grade is not None:
                self._consecutive = 0
                return
            self._consecutive += 1
            if out.fatal and self.reason is None:
                self.reason = out.error
                self.stop.set()
            n = self._consecutive
            limit = self.max_consecutive_failures
            if limit and n >= limit and self.reason is None:
                self.reason = f"{n} failures in a row (last: {out.error})"
                self.stop.set()

    def _attempts(self, key: str, pair: JudgePair, doc: str) -> _Outcome:
        out = _Outcome(key)
        attempt = 0
        while True:
            if self.stop.is_set():
                out.skipped = True
                return out
            if self.bucket is not None:
                self.bucket.acquire()
            out.requests += 1
            try:
                answer = self.judge.judge(pair.query, doc)
            except TransientJudgeError as exc:
                if attempt >= self.retry.max_retries:
                    out.error = f"{exc} (gave up after {attempt + 1} attempt(s))"
                    return out
                self._back_off(attempt, exc, pair)
                attempt += 1
                out.retries += 1
                continue
            except FatalJudgeError as exc:
                out.error = str(exc)
                out.fatal = True
                return out
            except JudgeError as exc:
                out.error = str(exc)
                return out
            except Exception as exc:  # a callable judge's own bug: this pair fails, loudly
                out.error = f"{type(exc).__name__}: {exc}"
                return out
            out.raw = answer.text
            out.input_tokens = answer.input_tokens
            out.output_tokens = answer.output_tokens
            try:
                out.grade = self.parse(answer.text)
            except (GradeParseError, ValueError) as exc:
                out.error = str(exc)
            return out

    def _back_off(self, attempt: int, exc: TransientJudgeError, pair: JudgePair) -> None:
        wait_s = self.retry.delay(attempt, exc.retry_after)
        log.info("retrying (%s, %s) in %.2f s: %s", pair.query_id, pair.doc_id, wait_s, exc)
        if self.sleep is None:
            self.stop.wait(wait_s)  # a stopped run does not sit out its backoff
        else:
            self.sleep(wait_s)


def _ask_all(
    plan: _Plan,
    asker: _Asker,
    store: JudgeCache,
    report: GradingReport,
    concurrency: int,
    progress: Optional[bool],
) -> None:
    """Every planned request through a thread pool; answers are settled as they arrive."""
    bar = progress_bar(len(plan.todo), f"judging ({asker.judge.id})", unit="pair", enabled=progress)
    bar.set_postfix(cached=report.cached, new=0, failed=0)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judge")
    try:
        futures = [pool.submit(asker.ask, key, pair, doc) for key, (pair, doc) in plan.todo.items()]
        crash = _drain(futures, asker, plan, store, report, bar)
        if crash is not None:
            raise crash
    except BaseException:
        # Ctrl-C (or a bug): every answer that arrived is already in the cache
        asker.stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        report.aborted = report.aborted or asker.reason
        bar.close()


def _drain(
    futures: List[Future],
    asker: _Asker,
    plan: _Plan,
    store: JudgeCache,
    report: GradingReport,
    bar: Any,
) -> Optional[BaseException]:
    """Settle outcomes as they complete; returns what a worker raised, if anything."""
    pending = set(futures)
    crash: Optional[BaseException] = None
    while pending:
        done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
        for fut in done:
            try:
                out = fut.result()
            except BaseException as exc:  # KeyboardInterrupt/SystemExit inside a judge:
                crash = crash or exc  # stop, but save every answer that did arrive
                asker.stop.set()
                continue
            _settle(out, plan.waiting[out.key], asker.judge, store, report, bar)
    return crash


def _settle(
    out: _Outcome, group: List[JudgePair], judge: Judge, store: JudgeCache, report: GradingReport, bar: Any
) -> None:
    """Count one outcome into the report and append it to the cache (failures too)."""
    report.requests += out.requests
    report.retries += out.retries
    if out.input_tokens is not None or out.output_tokens is not None:
        report.usage_reported = True
        report.input_tokens += out.input_tokens or 0
        report.output_tokens += out.output_tokens or 0
    if out.skipped:
        report.not_asked += len(group)
        return
    bar.update(1)
    first = group[0]
    record = _record(out, judge, first)
    if out.grade is not None and not isinstance(out.grade, int):
        record["grade"], record["value"] = None, out.grade
    if out.grade is not None:
        store.put(record)
        report.new += len(group)
        for p in group:
            report.grades[(p.query_id, p.doc_id)] = out.grade
    else:
        record["error"] = out.error
        store.put(record)
        report.failed += len(group)
        for p in group:
            report.failures.append(Failure(p.query_id, p.doc_id, out.error or "", out.raw))
        log.warning("judge failed for (%s, %s): %s", first.query_id, first.doc_id, out.error)
    bar.set_postfix(cached=report.cached, new=report.new, failed=report.failed)


def _record(out: _Outcome, judge: Judge, first: JudgePair) -> Dict[str, Any]:
    """The cache line of one answer (or failure)."""
    return {
        "v": 1,
        "key": out.key,
        "judge": judge.id,
        "prompt_version": judge.prompt_version,
        "query_id": first.query_id,
        "doc_id": first.doc_id,
        "grade": out.grade,
        "raw": None if out.raw is None else out.raw[:500],
        "input_tokens": out.input_tokens,
        "output_tokens": out.output_tokens,
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
