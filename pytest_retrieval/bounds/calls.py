"""A team's Python function, bounded in time: :func:`call_with_timeout` (a sync call, in a
worker thread) and :func:`await_with_timeout` (a coroutine, on an event loop's thread).

Python cannot stop a thread: a sync function still running at its deadline is reported
(:class:`CallTimedOut`) and left running in its worker, a daemon thread, which ends when the
function returns or with the process; the next call gets another worker. A coroutine is
cancelled at its deadline (``asyncio.wait_for``); one that ignores the cancellation is left on
its loop and reported all the same, a moment later.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Dict, Optional, Tuple

__all__ = ["CANCEL_GRACE_S", "CallTimedOut", "await_with_timeout", "call_with_timeout"]

CANCEL_GRACE_S = 1.0  # how long a cancelled coroutine gets to end before it is left behind


class CallTimedOut(Exception):
    """A call that did not return within its timeout."""

    def __init__(self, seconds: float, sync: bool):
        left = (
            "its thread cannot be stopped in Python and is left running in the background"
            if sync
            else "it was cancelled"
        )
        super().__init__(f"did not return within {seconds:g} s ({left})")
        self.seconds = seconds
        self.sync = sync


_Job = Tuple[Callable[..., Any], Tuple[Any, ...], Dict[str, Any], "Future[Any]"]


class _Workers:
    """Daemon threads that run sync calls; a worker stuck in a call that timed out is simply
    not waited for (a new one is started when no worker is idle)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._idle == 0:
                threading.Thread(target=self._work, name="pytest-retrieval-call", daemon=True).start()
            else:
                self._idle -= 1
        self._jobs.put((fn, args, kwargs, future))
        return future

    def _work(self) -> None:
        while True:
            fn, args, kwargs, future = self._jobs.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # noqa: BLE001 - handed to the caller, whatever it is
                    future.set_exception(exc)
            with self._lock:
                self._idle += 1


_WORKERS = _Workers()


def call_with_timeout(
    fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any], seconds: Optional[float]
) -> Any:
    """``fn(*args, **kwargs)``, or CallTimedOut after ``seconds`` (None: no limit, called
    here). What it raises is raised here; what it returns (a coroutine too) is returned."""
    if seconds is None:
        return fn(*args, **kwargs)
    future = _WORKERS.submit(fn, args, kwargs)
    try:
        return future.result(timeout=seconds)
    except FutureTimeout:
        if future.done():  # it ended in the same instant
            return future.result()
        raise CallTimedOut(seconds, sync=True) from None


def await_with_timeout(loop: asyncio.AbstractEventLoop, awaitable: Any, seconds: Optional[float]) -> Any:
    """``awaitable``'s result, awaited on ``loop`` (running on another thread); cancelled and
    CallTimedOut after ``seconds`` (None: no limit)."""

    async def wait() -> Any:
        if seconds is None:
            return await awaitable
        task = asyncio.ensure_future(awaitable)
        done, _ = await asyncio.wait({task}, timeout=seconds)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
            raise CallTimedOut(seconds, sync=False)
        return task.result()

    future = asyncio.run_coroutine_threadsafe(wait(), loop)
    try:
        return future.result(timeout=None if seconds is None else seconds + 2 * CANCEL_GRACE_S)
    except FutureTimeout:
        if future.done():  # what the coroutine itself raised
            return future.result()
        future.cancel()
        raise CallTimedOut(float(seconds or 0), sync=False) from None
