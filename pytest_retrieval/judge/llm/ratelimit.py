"""How fast and how often the judge is asked: a token bucket spreads requests
(``requests_per_minute``), and a retry policy spaces out retries of transient failures
(exponential backoff, full jitter, capped, honouring ``Retry-After``)."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

__all__ = ["RetryPolicy", "TokenBucket"]


class TokenBucket:
    """Requests per minute, as a token bucket of ``burst`` tokens; thread-safe."""

    def __init__(
        self,
        requests_per_minute: float,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be > 0")
        if burst < 1:
            raise ValueError("burst must be >= 1")
        self.rate = requests_per_minute / 60.0
        self.capacity = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Take one token, waiting as needed; returns the seconds waited."""
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return waited
                need = (1.0 - self._tokens) / self.rate
            self._sleep(need)
            waited += need


@dataclass
class RetryPolicy:
    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: bool = True

    def delay(self, attempt: int, retry_after: Optional[float] = None) -> float:
        """Seconds to wait before retry number ``attempt + 1``: the server's Retry-After if
        it sent one, else ``base * 2**attempt`` (full jitter), both capped at ``max_delay``."""
        if retry_after is not None:
            return min(self.max_delay, max(0.0, retry_after))
        d = min(self.max_delay, self.base_delay * (2**attempt))
        return random.uniform(0.0, d) if self.jitter else d
