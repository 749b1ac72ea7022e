"""The token bucket and the retry policy of the LLM judge (no threads, no clock)."""

from __future__ import annotations

from typing import List

import pytest

from pytest_retrieval.judge.llm.ratelimit import RetryPolicy, TokenBucket


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: List[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def test_token_bucket_spaces_requests_per_minute() -> None:
    t = FakeTime()
    bucket = TokenBucket(120, burst=2, clock=t.clock, sleep=t.sleep)
    times = []
    for _ in range(6):
        bucket.acquire()
        times.append(t.now)
    # two at once (the burst), then one every 0.5 s (120 per minute)
    assert times == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.5, 2.0])


def test_token_bucket_reports_the_wait_and_refills_up_to_the_burst() -> None:
    t = FakeTime()
    bucket = TokenBucket(60, burst=3, clock=t.clock, sleep=t.sleep)
    assert [bucket.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.acquire() == pytest.approx(1.0)  # 60 per minute: one a second
    t.now += 3600  # an hour idle refills the bucket, but never beyond its burst
    assert [bucket.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.acquire() == pytest.approx(1.0)


@pytest.mark.parametrize("rpm,burst", [(0, 1), (-5, 1), (60, 0)])
def test_token_bucket_rejects_nonsense(rpm: float, burst: int) -> None:
    with pytest.raises(ValueError):
        TokenBucket(rpm, burst=burst)


def test_retry_policy_backoff_and_retry_after() -> None:
    p = RetryPolicy(base_delay=1.0, max_delay=10.0, jitter=False)
    assert [p.delay(a) for a in range(5)] == [1.0, 2.0, 4.0, 8.0, 10.0]
    assert p.delay(0, retry_after=3.0) == 3.0 and p.delay(0, retry_after=99) == 10.0
    assert p.delay(2, retry_after=-1.0) == 0.0
    j = RetryPolicy(base_delay=1.0, max_delay=10.0)
    assert all(0 <= j.delay(3) <= 8.0 for _ in range(50))
