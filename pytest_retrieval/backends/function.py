"""``backend: {type: python, function: "mymodule:search"}``: any Python function as the search.

``function(query_text, k, query_id, **params) -> [(doc_id, score), ...]`` (best first), sync or
``async`` (awaited on one event loop the backend keeps on its own thread for the run, so an async
client the team's module holds is reused, and a caller already inside a loop is fine); ``params`` are the ``service`` retriever's, passed only when it has some. The
optional ``batch_function(query_texts, k, query_ids, **params)`` answers the quality pass in one
call: a list of rankings in the queries' order, or a mapping query id -> ranking. The latency
pass always times ``function``, one call per query.

An import that fails, a name that is not callable, or an answer of the wrong shape is one
``ConfigError`` line naming the function; an exception the function raises (its service is
down) is an ``InfrastructureError`` naming it and the query, and so is a call that does not
return within ``timeout`` seconds (``bounds/calls.py``: a sync function runs in a worker thread,
which Python cannot stop, so a hung one is left running there; a coroutine is cancelled).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..bounds import calls
from ..bounds.calls import CallTimedOut, await_with_timeout, call_with_timeout
from ..errors import ConfigError, InfrastructureError, RetrievalError
from ..models.imports import import_function
from ..types import Query, Ranking, Run
from .base import LeafSpec, ServiceSpec
from .guard import call_foreign, exception_text
from .pipeline import PipelineBackend, ranking_of

__all__ = ["DEFAULT_TIMEOUT_S", "FunctionBackend"]

DEFAULT_TIMEOUT_S = 60.0  # per call of function or batch_function (backend.timeout)


class FunctionBackend(PipelineBackend):
    """The suite's ``backend.function`` (and ``batch_function``), imported from the suite's
    folder or ``sys.path``."""

    name = "python"

    def __init__(
        self,
        function: str,
        batch_function: Optional[str] = None,
        max_concurrency: int = 1,
        base_dir: Optional[Path] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT_S,
    ) -> None:
        super().__init__(max_concurrency)
        self.timeout = timeout
        self.function_name = function
        self.batch_name = batch_function
        self.function = import_function(function, base_dir, "backend.function")
        self.batch = (
            import_function(batch_function, base_dir, "backend.batch_function") if batch_function else None
        )
        self._loop = _EventLoop()

    def __repr__(self) -> str:
        return f"FunctionBackend({self.function_name!r})"

    def ask(self, spec: ServiceSpec, query: Query, k: int) -> Tuple[Ranking, Optional[float]]:
        what = f"backend.function {self.function_name!r} for query {query.qid!r}"
        answer = self._call(self.function, what, query.text, k, query.qid, **dict(spec.params))
        return ranking_of(answer, k, what, ConfigError), None

    def search_batch(self, spec: LeafSpec, queries: Sequence[Query], k: int) -> Run:
        service = self.service_spec(spec)
        if self.batch is None or not queries:
            return super().search_batch(service, queries, k)
        what = f"backend.batch_function {self.batch_name!r}"
        texts, ids = [q.text for q in queries], [q.qid for q in queries]
        answer = self._call(self.batch, what, texts, k, ids, **dict(service.params))
        return {
            q.qid: ranking_of(r, k, f"{what} for query {q.qid!r}", ConfigError)
            for q, r in _per_query(answer, queries, what)
        }

    def close(self) -> None:
        """Stops the event loop ``async`` answers ran on (nothing of the team's is closed)."""
        self._loop.close()

    def _call(self, fn: Callable[..., Any], what: str, *args: Any, **kwargs: Any) -> Any:
        """The team's function called (its awaitable awaited) through the one guard
        (``guard.call_foreign``): anything it raises, ``SystemExit`` included, is one line."""
        try:
            sync_limit = None if inspect.iscoroutinefunction(fn) else self.timeout
            out = call_with_timeout(fn, args, kwargs, sync_limit)
            if inspect.isawaitable(out):
                out = self._loop.run(out, self.timeout)
        except CallTimedOut as exc:
            raise InfrastructureError(f"{what} {exc} (backend.timeout)") from None
        except RetrievalError:
            raise
        except TypeError as exc:
            if _is_signature_error(exc, fn):
                raise ConfigError(f"{what}: cannot be called as documented ({exception_text(exc)})") from None
            raise InfrastructureError(f"{what} raised {exception_text(exc)}") from None
        except _Raised as raised:  # what the coroutine raised, carried off the loop's thread
            return call_foreign(_reraise, what, raised.exc)
        except BaseException as exc:  # noqa: BLE001 - the team's code; KeyboardInterrupt passes
            return call_foreign(_reraise, what, exc)
        return out

    def describe(self) -> Dict[str, Any]:
        # the function stands as the "version": a baseline made with another one says so
        out: Dict[str, Any] = {
            "backend": self.name,
            "engine": "python",
            "version": self.function_name,
            "function": self.function_name,
        }
        if self.batch_name:
            out["batch_function"] = self.batch_name
        return out


def _per_query(answer: Any, queries: Sequence[Query], what: str) -> List[Tuple[Query, Any]]:
    """The batch answer matched to the queries: a list in their order, or a map by query id."""
    if isinstance(answer, Mapping):
        missing = [q.qid for q in queries if q.qid not in answer]
        if missing:
            raise ConfigError(f"{what}: no ranking for query {missing[0]!r} (+{len(missing) - 1} more)")
        return [(q, answer[q.qid]) for q in queries]
    if isinstance(answer, (list, tuple)) and len(answer) == len(queries):
        return list(zip(queries, answer))
    size = f"{len(answer)} rankings" if isinstance(answer, (list, tuple)) else type(answer).__name__
    raise ConfigError(
        f"{what}: expected one ranking per query ({len(queries)}, in order, or a mapping by query id), got {size}"
    )


class _EventLoop:
    """The one event loop every ``async`` answer of a backend is awaited on, on a thread of its
    own: it outlives each call, so a client the team's module keeps (an ``httpx.AsyncClient``,
    an aiohttp session) is reused across queries instead of meeting a closed loop; the quality
    pass's worker threads share it, so their coroutines overlap on it; and it works when the
    caller's thread already runs a loop (pytest-asyncio, a notebook), where ``asyncio.run``
    refuses."""

    def __init__(self) -> None:
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()

    def run(self, awaitable: Any, timeout: Optional[float] = None) -> Any:
        async def guarded() -> Any:
            try:
                return await awaitable
            except (asyncio.CancelledError, GeneratorExit):
                raise  # the timeout's cancellation (bounds/calls.py), the coroutine closed
            except BaseException as exc:  # noqa: BLE001 - a SystemExit would stop the loop: carried over
                raise _Raised(exc) from None

        return await_with_timeout(self._started(), guarded(), timeout)

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=loop.run_forever, name="pytest-retrieval-python-backend", daemon=True
                )
                self._thread.start()
                self._loop = loop
            return self._loop

    def close(self) -> None:
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


_CALLERS = {__file__, calls.__file__}  # the frames that call the team's function


class _Raised(Exception):
    """A ``BaseException`` a coroutine raised on the loop's thread, carried to the caller (a
    ``SystemExit`` or ``KeyboardInterrupt`` left to the loop would end its thread, and the
    caller would wait forever)."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(str(exc))
        self.exc = exc


def _reraise(exc: BaseException) -> Any:
    raise exc


def _is_signature_error(exc: TypeError, fn: Callable[..., Any]) -> bool:
    """Whether a TypeError is the call not matching ``fn``'s parameters (not one raised inside):
    its innermost frame is the caller's."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename in _CALLERS and "argument" in str(exc)
