"""The ``pytest-retrieval`` command: ``app`` builds the parser and dispatches; one module per command."""

from .app import main

__all__ = ["main"]
