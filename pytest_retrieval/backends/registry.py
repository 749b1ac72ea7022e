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

from importlib.metadata import entry_points
from typing import Any, Callable, Dict, List, Mapping, Optional

from ..errors import ConfigError
from .base import Backend

ENTRY_POINT_GROUP = "pytest_retrieval.backends"

BackendFactory = Callable[[Optional[Mapping[str, Any]], Mapping[str, Any]], Backend]


def _embedded(connection: Optional[Mapping[str, Any]], index: Mapping[str, Any]) -> Backend:
    from .embedded.backend import EmbeddedBackend

    return EmbeddedBackend()  # in process: no connection, the index is built from the corpus


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
    lists the known ones."""
    factory = BUILT_IN.get(name) or _registered.get(name)
    if factory is not None:
        return factory
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            loaded: BackendFactory = ep.load()
            return loaded
    raise ConfigError(f"unknown backend type {name!r} (known: {', '.join(backend_names())})")
