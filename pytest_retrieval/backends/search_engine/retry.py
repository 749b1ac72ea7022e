"""The one retry policy of both engines: which failures are retried, how long to wait, when
to give up.

Retried: HTTP 429 (the engine sheds load: a full search thread pool, a circuit breaker),
502/503/504 (a proxy or a node restarting) and connection errors (refused, reset, and
timeouts when ``retry_on_timeout``). Anything else (a 4xx, a 500, an answer that is not
JSON, a failed shard inside a 200) is not transient and fails at once.

Waits grow exponentially with full jitter (a random wait in [0, min(cap, base * 2^n)],
"Exponential Backoff And Jitter", AWS Architecture Blog, 2015), so concurrent requests that
failed together do not retry together; a ``Retry-After`` header (seconds or an HTTP date,
RFC 9110 section 10.2.3) is a lower bound of the wait. At most ``max_retries`` retries, and
none that would start after ``deadline_s`` seconds from the first attempt.

The engine clients' own retries are switched off (``max_retries=0``), so a request is
retried here and only here.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, TypeVar

log = logging.getLogger("pytest_retrieval.backends")

__all__ = [
    "RETRY_STATUSES",
    "RetryCount",
    "RetryPolicy",
    "Retried",
    "describe_retries",
    "parse_retry_after",
    "retries_since",
    "retry_reason",
]

RETRY_STATUSES = frozenset({429, 502, 503, 504})

T = TypeVar("T")

# exc -> (retry it?, its Retry-After in seconds or None)
Classify = Callable[[BaseException], Tuple[bool, Optional[float]]]


def parse_retry_after(value: Any, now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` as seconds to wait: delay-seconds or an HTTP date; None when absent or
    unreadable (then the backoff alone decides)."""
    if value is None:
        return None
    text = str(value).strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class Retried(Exception):
    """Wraps the last failure of a request given up on; says how many retries it had."""

    def __init__(
        self,
        cause: BaseException,
        retries: int,
        elapsed_s: float,
        why: str,
        earlier: Tuple[BaseException, ...] = (),
    ):
        super().__init__(str(cause))
        self.cause = cause
        self.earlier = earlier  # the failures of the attempts before the last, in order
        self.retries = retries
        self.elapsed_s = elapsed_s
        self.why = why  # "" (not retryable), "retries exhausted", "deadline"

    def note(self) -> str:
        """'' or ' (after 3 retries in 7.1 s)' / ' (... ; the 120 s retry deadline is reached)'."""
        if not self.retries and self.why != "deadline":
            return ""
        text = f"after {self.retries} {'retry' if self.retries == 1 else 'retries'} in {self.elapsed_s:.1f} s"
        if self.why == "deadline":
            text += "; the retry deadline is reached"
        return f" ({text})"


def retry_reason(exc: BaseException) -> str:
    """Why a request was retried, in a few words: ``HTTP 429``, ``a timeout``, or the
    failure's ``retry_reason`` (``a lost connection``, ``a node left mid-search``)."""
    status = getattr(exc, "status", None)
    if isinstance(status, int):
        return f"HTTP {status}"
    if getattr(exc, "timeout", False) is True:
        return "a timeout"
    return str(getattr(exc, "retry_reason", "") or type(exc).__name__)


class RetryCount:
    """How many retries a policy made, by reason (issue #28: retries are part of the verdict's
    story, not only log lines). Thread-safe: the searches of a pass run concurrently."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter = Counter()

    def add(self, reason: str) -> None:
        with self._lock:
            self._counts[reason] += 1

    def snapshot(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._counts)


def retries_since(before: Mapping[str, int], now: Mapping[str, int]) -> Dict[str, int]:
    """The retries between two ``RetryCount.snapshot()`` s, by reason."""
    return {k: n - before.get(k, 0) for k, n in sorted(now.items()) if n > before.get(k, 0)}


def describe_retries(counts: Mapping[str, int]) -> str:
    """``3 retries (HTTP 429: 2, a node left mid-search: 1)``."""
    total = sum(counts.values())
    reasons = ", ".join(f"{k}: {n}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{total} {'retry' if total == 1 else 'retries'} ({reasons})"


@dataclass
class RetryPolicy:
    """Exponential backoff with full jitter, honouring Retry-After, bounded by ``max_retries``
    and a total ``deadline_s`` per request."""

    max_retries: int = 3
    deadline_s: float = 300.0
    base_s: float = 0.5
    cap_s: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    rand: Callable[[], float] = field(default=random.random, repr=False)
    count: RetryCount = field(default_factory=RetryCount, repr=False, compare=False)  # every retry made

    def delay(self, retry: int, retry_after: Optional[float]) -> float:
        """The wait before retry number ``retry`` (0-based)."""
        backoff = self.rand() * min(self.cap_s, self.base_s * (2**retry))
        return backoff if retry_after is None else max(float(retry_after), backoff)

    def call(
        self,
        attempt: Callable[[], T],
        classify: Classify,
        what: str = "request",
        describe: Callable[[BaseException], str] = str,
    ) -> T:
        """``attempt()`` until it succeeds or fails for good; a final failure is raised as
        :class:`Retried` (holding the cause). Exceptions ``classify`` does not know (returns
        (False, None)) are wrapped as well, with zero retries."""
        start = self.clock()
        retries = 0
        failures: list = []
        while True:
            try:
                return attempt()
            except Exception as exc:  # noqa: BLE001 - classified below
                retry, retry_after = classify(exc)
                elapsed = self.clock() - start
                earlier = tuple(failures)
                failures.append(exc)
                if not retry:
                    raise Retried(exc, retries, elapsed, "", earlier) from None
                if retries >= self.max_retries:
                    raise Retried(exc, retries, elapsed, "retries exhausted", earlier) from None
                wait = self.delay(retries, retry_after)
                if elapsed + wait > self.deadline_s:
                    raise Retried(exc, retries, elapsed, "deadline", earlier) from None
                log.warning(
                    "%s: %s; retry %d of %d in %.1f s",
                    what,
                    describe(exc),
                    retries + 1,
                    self.max_retries,
                    wait,
                )
                self.count.add(retry_reason(exc))
                self.sleep(wait)
                retries += 1
