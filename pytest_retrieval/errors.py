"""The three kinds of trouble the plugin tells apart.

* ``ConfigError``: the user's input is wrong (YAML, judgment files, runs). Shown as
  one line naming the file, the key path / line and the problem, never a traceback.
* ``InfrastructureError``: the retrieval could not be carried out (engine down,
  timeout, a failed sub-search). A pytest *error*, never a failed gate, never a pass.
* A failed gate is not an exception class of ours: it is a pytest failure raised by
  the gate item with its measured value, floor and worst queries.
"""

from __future__ import annotations

from typing import Any, Callable


class RetrievalError(Exception):
    """Base class for errors the plugin reports as one readable line."""


class ConfigError(RetrievalError):
    """Bad input: one line naming the file, the line and the key path, and what is wrong."""

    def __init__(
        self, message: str, *, file: str | None = None, key: str | None = None, line: int | None = None
    ):
        self.file = file
        self.key = key
        self.line = line
        self.detail = message
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.file:
            from .safe_names import one_line  # a path holding a newline stays one line

            where = one_line(str(self.file))
            if self.line:
                where += f":{self.line}"
        if self.key:
            where = f"{where}: {self.key}" if where else self.key
        return f"{where}: {self.detail}" if where else self.detail


class InfrastructureError(RetrievalError):
    """The engine or a model could not answer; the gate cannot be judged."""


def cleanup_after_failure(cleanup: Callable[[], Any], primary: BaseException) -> None:
    """Run ``cleanup`` (e.g. delete the throwaway index) while ``primary`` is being raised.
    A clean-up that fails too does not replace the cause: its failure is appended to
    ``primary``'s message, second ("...; clean-up also failed: ..."), and ``primary`` is what
    the caller re-raises. (A hung engine times out the search, then the index delete: the
    report must name the search.)"""
    try:
        cleanup()
    except Exception as failure:  # noqa: BLE001 - reported as the secondary failure
        note = f"clean-up also failed: {failure}"
        if isinstance(primary, ConfigError):
            primary.detail = f"{primary.detail}; {note}"
            primary.args = (primary.format(),)
        elif primary.args and isinstance(primary.args[0], str):
            primary.args = (f"{primary.args[0]}; {note}",) + tuple(primary.args[1:])
        else:
            primary.args = (f"{primary}; {note}",)


class QueryRefused(InfrastructureError):
    """The engine refused one retriever's query as it is written (HTTP 400, a query error in a
    search answer, a field the index does not have or of the wrong type): a problem of that
    retriever, not of the engine. A suite run keeps its other retrievers and errors only this
    one's gates (``execution/passes.py``); anywhere else it is an ``InfrastructureError``."""


class RetrieverFailed(InfrastructureError):
    """A retriever of a suite run failed (its own error, or one of the retrievers it builds on):
    its gates are errors, the other retrievers' gates are judged. ``first`` names where the
    error was shown in full (its other gates point there)."""


class HistoryError(RetrievalError):
    """The run history (issue #37) could not be read or written: a store written by a newer
    schema, a corrupt or locked file, an unreachable cluster. One line naming the store (never
    a credential) and what is wrong; a failed write leaves the gates' verdict alone."""
