"""Importing what a suite names: a ``module:function`` callable, and sentence-transformers
(an optional dependency, imported on first use); every failure is one :class:`ConfigError`
line."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Optional, Tuple

from ..backends.guard import exception_text
from ..errors import ConfigError


def import_function(spec: str, search_path: Optional[Path], what: str) -> Callable[..., Any]:
    """``module:function`` (dotted attributes allowed): a module beside the suite
    (``search_path``) is loaded from its file (:func:`import_from_folder`), any other imported
    as usual; every failure is one :class:`ConfigError` line."""
    module_name, sep, attr = str(spec).partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{what}: expected 'module:function', got {spec!r}")
    try:
        module = import_from_folder(module_name, search_path, f"{what} {spec!r}")
    except ConfigError:
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the team's module may raise anything at import, sys.exit too
        raise ConfigError(f"{what} {spec!r}: cannot import {module_name!r}: {exception_text(exc)}") from None
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


def import_from_folder(module_name: str, folder: Optional[Path], what: str) -> ModuleType:
    """``module_name`` (``svc`` or ``pkg.svc``): when its top-level module is a file (``svc.py``)
    or package (``svc/__init__.py``) in ``folder`` (the suite's), loaded from there under a
    name of its own per folder (``svc__suite_<hash of the folder>``), so two suites whose
    ``function: svc:search`` sit in different folders each run their own ``svc`` (an ordinary
    import would hand the second suite the first one's module from ``sys.modules``). The folder
    is on ``sys.path`` while the module runs, so its own imports of sibling files work (those
    are ordinary imports, shared by name in the process). A file there named like a standard
    library module (``json.py``, ``queue.py``) is refused by name: beside the team's service it
    shadows the standard library. A module not in ``folder`` is imported as usual."""
    top, _, rest = module_name.partition(".")
    location = _location(top, folder)
    if location is None:
        return _import_with_path(module_name, folder)
    if top in sys.stdlib_module_names:
        raise ConfigError(
            f"{what}: {location.name} beside the suite has the name of the standard library's "
            f"module {top!r}, which it would shadow; rename it"
        )
    assert folder is not None
    unique = f"{top}__suite_{hashlib.sha256(str(folder.resolve()).encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    module = sys.modules.get(unique) or _load_file(unique, location, folder)
    return importlib.import_module(f"{unique}.{rest}") if rest else module


def _location(top: str, folder: Optional[Path]) -> Optional[Path]:
    """The file that defines the top-level module ``top`` in ``folder`` (None: not there)."""
    if folder is None or not top.isidentifier():
        return None
    for candidate in (folder / top / "__init__.py", folder / f"{top}.py"):
        if candidate.is_file():
            return candidate
    return None


def _load_file(unique: str, location: Path, folder: Path) -> ModuleType:
    """The module in ``location`` executed as ``unique`` (a package keeps its folder as its path)."""
    package = [str(location.parent)] if location.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(unique, location, submodule_search_locations=package)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise ImportError(f"cannot load {location}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[unique] = module
    try:
        with _on_path(folder):
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(unique, None)
        raise
    return module


def _import_with_path(module_name: str, search_path: Optional[Path]) -> ModuleType:
    """``module_name`` imported with ``search_path`` on ``sys.path`` for the import only."""
    with _on_path(search_path):
        return importlib.import_module(module_name)


@contextmanager
def _on_path(search_path: Optional[Path]) -> Iterator[None]:
    added = search_path is not None and str(search_path) not in sys.path
    if added:
        sys.path.insert(0, str(search_path))
    try:
        yield
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
