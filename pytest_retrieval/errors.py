"""The three kinds of trouble the plugin tells apart.

* ``ConfigError``: the user's input is wrong (YAML, judgment files, runs). Shown as
  one line naming the file, the key path / line and the problem, never a traceback.
* ``InfrastructureError``: the retrieval could not be carried out (engine down,
  timeout, a failed sub-search). A pytest *error*, never a failed gate, never a pass.
* A failed gate is not an exception class of ours: it is a pytest failure raised by
  the gate item with its measured value, floor and worst queries.
"""

from __future__ import annotations


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
            where = str(self.file)
            if self.line:
                where += f":{self.line}"
        if self.key:
            where = f"{where}: {self.key}" if where else self.key
        return f"{where}: {self.detail}" if where else self.detail


class InfrastructureError(RetrievalError):
    """The engine or a model could not answer; the gate cannot be judged."""
