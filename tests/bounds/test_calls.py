"""A team's function with a timeout: sync in a worker thread, async cancelled."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pytest_retrieval.bounds.calls import CallTimedOut, await_with_timeout, call_with_timeout


def test_a_sync_call_in_time_returns_and_raises_as_itself() -> None:
    assert call_with_timeout(lambda a, b=0: a + b, (1,), {"b": 2}, 5.0) == 3

    def own_timeout() -> None:
        raise TimeoutError("the team's own")

    with pytest.raises(TimeoutError, match="the team's own"):
        call_with_timeout(own_timeout, (), {}, 5.0)


def test_a_hung_sync_call_times_out_and_its_thread_is_left() -> None:
    release = threading.Event()
    with pytest.raises(CallTimedOut, match=r"within 0.2 s \(its thread cannot be stopped"):
        call_with_timeout(release.wait, (30,), {}, 0.2)
    release.set()
    assert call_with_timeout(lambda: "next", (), {}, 5.0) == "next"  # another worker answers


@pytest.fixture
def loop():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def test_a_hung_coroutine_is_cancelled(loop) -> None:
    cancelled = threading.Event()

    async def hangs() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def answers() -> int:
        return 7

    assert await_with_timeout(loop, answers(), 5.0) == 7
    with pytest.raises(CallTimedOut, match=r"within 0.2 s \(it was cancelled\)"):
        await_with_timeout(loop, hangs(), 0.2)
    assert cancelled.wait(5)
