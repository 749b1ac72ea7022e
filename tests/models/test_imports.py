"""Importing a ``module:function`` a suite names (models/imports.py)."""

from __future__ import annotations

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.models.imports import import_function


def test_import_function():
    assert import_function("os.path:join", None, "thing") is __import__("os").path.join
    with pytest.raises(ConfigError, match="^thing: expected 'module:function'"):
        import_function("nocolon", None, "thing")
