"""One suite's backend, built once and shared: the YAML items of the suite and every fixture
that asks for one of its retrievers search the same index (a throwaway index is created and
filled once per session, never twice), with the same embedder and judgments.

The plugin keeps one :class:`SharedBackend` per suite file on its session state and closes it
at the end of the session (a throwaway index is deleted then); outside pytest a
``SuiteRunner`` without one builds and closes its own backend, as before.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Optional, Tuple

from ..backends.base import Backend
from ..config.load import Suite, vector_leaves
from ..io.judgment_set import JudgmentSet
from .plan import load_judgments, make_backend


def needs_vectors(suite: Suite) -> bool:
    """Whether any leaf of the suite sends query vectors (so its documents need them too)."""
    return bool(vector_leaves(suite))


class SharedBackend:
    """The suite's judgments, embedder and prepared backend, each made on first use and kept.

    A failure to prepare is kept too: every later user gets the same error, and the backend is
    not built a second time."""

    def __init__(self, suite: Suite):
        self.suite = suite
        self._lock = threading.Lock()
        self._backend: Optional[Backend] = None
        self._info: Dict[str, Any] = {}
        self._error: Optional[BaseException] = None
        self._judgments: Optional[JudgmentSet] = None
        self._embedder: Any = None
        self._sparse: Any = None
        self.prepared = 0  # how many times an index was built or attached (at most once)

    def judgments(self) -> JudgmentSet:
        if self._judgments is None:
            self._judgments = load_judgments(self.suite)
        return self._judgments

    def embedder(self, make: Callable[[], Any]) -> Any:
        """The suite's embedder (``make()`` the first time)."""
        if self._embedder is None:
            self._embedder = make()
        return self._embedder

    def sparse(self, make: Callable[[], Any]) -> Any:
        """The suite's sparse retrievers' state (``make()`` the first time): documents encoded
        once per session, queries once per encoder."""
        if self._sparse is None:
            self._sparse = make()
        return self._sparse

    def backend(self, prepare: Callable[[Backend], Dict[str, Any]]) -> Tuple[Backend, Dict[str, Any]]:
        """(the prepared backend, its engine facts); ``prepare(backend)`` builds or attaches the
        index the first time and returns the facts."""
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._backend is None:
                backend = None
                try:
                    backend = make_backend(self.suite)
                    self._info = prepare(backend)
                except BaseException as exc:
                    self._error = exc
                    if backend is not None:
                        backend.close()
                    raise
                self.prepared += 1
                self._backend = backend
            return self._backend, self._info

    @property
    def is_open(self) -> bool:
        return self._backend is not None

    def close(self) -> None:
        """Release the backend (a throwaway index is deleted); later use is an error."""
        backend, self._backend = self._backend, None
        if self._error is None:
            from ..errors import InfrastructureError

            self._error = InfrastructureError(f"{self.suite.name}: the suite's backend is closed")
        if backend is not None:
            backend.close()
