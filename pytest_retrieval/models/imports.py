"""Importing what a suite names: a ``module:function`` callable, and sentence-transformers
(an optional dependency, imported on first use); every failure is one :class:`ConfigError`
line."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Optional, Tuple

from ..errors import ConfigError


def import_function(spec: str, search_path: Optional[Path], what: str) -> Callable[..., Any]:
    """``module:function`` (dotted attributes allowed) imported with ``search_path`` (the
    suite's folder) on ``sys.path``; every failure is one :class:`ConfigError` line."""
    module_name, sep, attr = str(spec).partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{what}: expected 'module:function', got {spec!r}")
    try:
        module = _import_with_path(module_name, search_path)
    except Exception as exc:
        raise ConfigError(
            f"{what} {spec!r}: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigError(f"{what} {spec!r}: {module_name!r} has no {attr!r}")
    if not callable(target):
        raise ConfigError(f"{what} {spec!r}: {attr!r} is not callable")
    return target


def import_function_pair(
    function: str,
    query_function: Optional[str],
    search_path: Optional[Path],
    what: str,
    id: Optional[str],
    id_prefix: str,
) -> Tuple[Callable[..., Any], Callable[..., Any], str]:
    """A user's ``function`` and optional ``query_function`` (the same when not given), and the
    model id: ``id`` when given, else ``<id_prefix>:<names>:<source hashes>`` (so editing the
    source invalidates cached vectors). Shared by the callable embedder and sparse encoder."""
    from .digests import source_digest

    fn = import_function(function, search_path, what)
    query_fn = import_function(query_function, search_path, what) if query_function else fn
    if id:
        return fn, query_fn, id
    digest = source_digest(fn)
    if query_function:
        digest += "+" + source_digest(query_fn)
    name = function + (f"|{query_function}" if query_function else "")
    return fn, query_fn, f"{id_prefix}:{name}" + (f":{digest}" if digest.strip("+") else "")


def _import_with_path(module_name: str, search_path: Optional[Path]) -> ModuleType:
    """``module_name`` imported with ``search_path`` on ``sys.path`` for the import only."""
    added = False
    if search_path is not None and str(search_path) not in sys.path:
        sys.path.insert(0, str(search_path))
        added = True
    try:
        return importlib.import_module(module_name)
    finally:
        if added:
            try:
                sys.path.remove(str(search_path))
            except ValueError:  # pragma: no cover
                pass


def require_sentence_transformers(what: str) -> None:
    """A :class:`ConfigError` when the sentence-transformers package is not installed."""
    if "sentence_transformers" in sys.modules:
        return
    try:
        found = importlib.util.find_spec("sentence_transformers") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ConfigError(
            f"the sentence-transformers {what} needs the sentence-transformers "
            f"package: pip install pytest-retrieval[sentence-transformers]"
        )


def sentence_transformers_class(name: str) -> Any:
    """``sentence_transformers.<name>``, imported now; a failed import is a ConfigError."""
    try:
        module = importlib.import_module("sentence_transformers")
        return getattr(module, name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"cannot import sentence-transformers ({exc}); pip install pytest-retrieval[sentence-transformers]"
        ) from None
