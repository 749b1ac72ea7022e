"""Backends by name: the built-in ones, those registered in this process, and those other
packages declare in the entry point group ``pytest_retrieval.backends``::

    [project.entry-points."pytest_retrieval.backends"]
    vespa = "my_package.vespa:VespaBackend"

A suite names one with ``backend: {type: vespa}``; the name is checked when the suite loads
(built in, registered, or declared by an installed package).

The contract of a factory (docs/how-to/custom-backends.md): it is called as
``factory(connection, index)`` and returns a :class:`~.base.Backend`.

* ``connection``: the suite's ``backend.connection`` as plain values (secrets revealed,
  ``ca_certs`` resolved against the suite file), or None when the suite gives none;
* ``index``: the suite's ``backend.index`` values, ``suite`` (the suite's name), and for a
  backend that is not built in ``options`` (the suite's ``backend.options``, a mapping, empty
  when not given) and ``base_dir`` (the folder of the suite file, for relative paths).

A factory or backend raises ``ConfigError`` for a setting or a retriever it cannot take (one
line, shown with the suite file and ``backend``) and ``InfrastructureError`` when its engine
cannot answer. The built-in ``http`` and ``python`` backends get their own sections as
``connection`` (``execution.plan.pipeline_values``).

Nothing is imported before it is asked for: the built-ins' modules load on their first use,
and the entry points are read only for a name that is neither built in nor registered.
"""

from __future__ import annotations

import warnings
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Dict, List, Mapping, Optional

from ..errors import ConfigError
from .base import Backend

ENTRY_POINT_GROUP = "pytest_retrieval.backends"

BackendFactory = Callable[[Optional[Mapping[str, Any]], Mapping[str, Any]], Backend]


def _embedded(connection: Optional[Mapping[str, Any]], index: Mapping[str, Any]) -> Backend:
    from .embedded.backend import EmbeddedBackend

    # in process: no connection, the index is built from the corpus
    return EmbeddedBackend(id_field=index.get("id_field"))


def _elasticsearch(connection: Optional[Mapping[str, Any]], index: Mapping[str, Any]) -> Backend:
    from .elasticsearch import ElasticsearchBackend

    return ElasticsearchBackend(connection, index)


def _opensearch(connection: Optional[Mapping[str, Any]], index: Mapping[str, Any]) -> Backend:
    from .opensearch import OpenSearchBackend

    return OpenSearchBackend(connection, index)


def _http(connection: Optional[Mapping[str, Any]], index: Mapping[str, Any]) -> Backend:
    from .http.backend import HttpBackend
    from .http.config import HttpBatchConfig, HttpRequestConfig, HttpResponseConfig

    values = dict(connection or {})
    batch = values.get("batch")
    return HttpBackend(
        HttpRequestConfig.model_validate(values["request"]),
        HttpResponseConfig.model_validate(values["response"]),
        max_concurrency=int(values.get("max_concurrency") or 4),
        secrets=tuple(values.get("secrets") or ()),
        batch=HttpBatchConfig.model_validate(batch) if batch else None,
    )


def _python(connection: Optional[Mapping[str, Any]], index: Mapping[str, Any]) -> Backend:
    from pathlib import Path

    from .function import FunctionBackend

    values = dict(connection or {})
    base_dir = values.get("base_dir")
    return FunctionBackend(
        values["function"],
        values.get("batch_function"),
        max_concurrency=int(values.get("max_concurrency") or 1),
        base_dir=Path(base_dir) if base_dir else None,
        **({"timeout": float(values["timeout"])} if values.get("timeout") is not None else {}),
    )


BUILT_IN: Dict[str, BackendFactory] = {
    "embedded": _embedded,
    "elasticsearch": _elasticsearch,
    "opensearch": _opensearch,
    "http": _http,
    "python": _python,
}

_registered: Dict[str, BackendFactory] = {}


def register(name: str, factory: BackendFactory) -> None:
    """Make ``factory`` the backend called ``name`` in this process (a built-in name is refused)."""
    if name in BUILT_IN:
        raise ValueError(f"{name!r} is a built-in backend")
    _registered[name] = factory


def unregister(name: str) -> None:
    """Forget a backend :func:`register` added (nothing happens for a name it did not add)."""
    _registered.pop(name, None)


def backend_names() -> List[str]:
    """Every backend name: built-in, registered, then declared by installed packages."""
    names = [*BUILT_IN, *_registered]
    return names + sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)} - set(names))


def backend_factory(name: str) -> BackendFactory:
    """The factory of the backend called ``name``; an unknown name is a ``ConfigError`` that
    lists the known ones. A built-in name wins over a package's entry point of that name, with
    a :class:`ShadowedBackendWarning` naming the package; an entry point that cannot be loaded
    (a missing module, a module that raises at import, a missing or non-callable attribute) and
    a name two packages declare differently are one ``ConfigError`` line each."""
    factory = BUILT_IN.get(name)
    if factory is not None:
        _warn_if_declared(name)
        return factory
    factory = _registered.get(name)
    if factory is not None:
        return factory
    declared = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if len({ep.value for ep in declared}) > 1:
        shown = ", ".join(f"{ep.value!r} ({_package(ep)})" for ep in declared)
        raise ConfigError(f"backend type {name!r} is declared by more than one installed package: {shown}")
    if declared:
        return load_entry_point(declared[0])
    raise ConfigError(f"unknown backend type {name!r} (known: {', '.join(backend_names())})")


def build_backend(
    name: str,
    connection: Optional[Mapping[str, Any]],
    index: Mapping[str, Any],
    factory: Optional[BackendFactory] = None,
) -> Backend:
    """The backend called ``name``, made by its factory (``factory``, else looked up). One the
    plugin does not own (an entry point, a registered one) is made and wrapped by
    :func:`~.guard.guarded`: every call into it is guarded and every answer checked against the
    protocol."""
    factory = factory or backend_factory(name)
    if name in BUILT_IN:
        return factory(connection, index)
    from .guard import guarded

    return guarded(factory, name, connection, index)


class ShadowedBackendWarning(UserWarning):
    """An installed package declares a backend under a built-in's name; the built-in runs."""


def _warn_if_declared(name: str) -> None:
    """A package cannot take a built-in's name: the built-in runs (the suite's connection and
    credentials were written for it, and an installed dependency must not receive them by
    declaring ``elasticsearch``), and the warning says so, so nobody believes the package ran."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            warnings.warn(
                ShadowedBackendWarning(
                    f"backend type {name!r} is built in; the entry point {ep.name} = {ep.value!r} of "
                    f"{_package(ep)} declares the same name and is ignored (the built-in runs)"
                ),
                stacklevel=3,
            )


def load_entry_point(ep: EntryPoint) -> BackendFactory:
    """The factory an entry point names, loaded; every failure one ``ConfigError`` line naming
    the entry point and its package (an exception at import, ``SystemExit`` included)."""
    where = f"backend type {ep.name!r}: entry point {ep.value!r} of {_package(ep)}"
    module = ep.value.partition(":")[0].strip()
    try:
        loaded = ep.load()
    except KeyboardInterrupt:
        raise
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        raise ConfigError(f"{where}: module {missing!r} is not installed") from None
    except AttributeError:
        raise ConfigError(
            f"{where}: module {module!r} has no {ep.value.partition(':')[2].strip()!r}"
        ) from None
    except BaseException as exc:  # noqa: BLE001 - a package's import may raise anything, sys.exit included
        from .guard import exception_text

        raise ConfigError(f"{where}: importing it raised {exception_text(exc)}") from None
    if not callable(loaded):
        raise ConfigError(f"{where}: is a {type(loaded).__name__}, not a callable factory(connection, index)")
    factory: BackendFactory = loaded
    return factory


def _package(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return f"package {name!r}" if name else "an installed package"
