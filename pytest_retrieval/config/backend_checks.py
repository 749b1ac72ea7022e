"""What a suite's ``backend`` section needs beyond its schema, checked when the suite loads:
a type some backend answers to (built in, registered, or declared by an installed package),
leaf retrievers that backend can answer, and an http request template whose placeholders all
have values."""

from __future__ import annotations

from typing import Any, Dict, Sequence, Set

from ..backends.http.config import REQUESTS, batch_problem
from ..backends.http.template import BUILT_IN_PLACEHOLDERS, placeholders_in
from ..backends.registry import backend_names
from .schema import ENGINE_TYPES, PIPELINE_TYPES, STAGE_TYPES

# the leaf types of the built-in engines (embedded, Elasticsearch, OpenSearch)
ENGINE_LEAVES = ("bm25", "knn", "template")


def check_backend(suite: Any) -> None:
    """The suite's backend type exists, answers each leaf retriever, and (http) has a value for
    every placeholder of its request. Raises ``suite.error`` (one line)."""
    backend = suite.model.backend
    if backend.type not in ENGINE_TYPES + PIPELINE_TYPES:
        _check_declared(suite, backend.type)
    for name, r in suite.model.retrievers.items():
        problem = _leaf_problem(backend.type, r.type)
        if problem:
            raise suite.error(("retrievers", name, "type"), problem)
    if backend.type == "http":
        _check_placeholders(suite)
    if backend.index.id_field is not None and backend.type not in ENGINE_TYPES:
        raise suite.error(
            ("backend", "index", "id_field"),
            f"index.id_field is read by the embedded, elasticsearch and opensearch backends, not by "
            f"{backend.type!r}"
            + (": the http backend reads a hit's id with response.id" if backend.type == "http" else "")
            + (": the function returns the ids the judgments use" if backend.type == "python" else ""),
        )


def _check_declared(suite: Any, kind: str) -> None:
    """A type no built-in has is one an installed package declares (or registered in-process)."""
    try:
        known = backend_names()
    except Exception as exc:  # noqa: BLE001 - a broken installed package's metadata
        raise suite.error(("backend", "type"), f"cannot list the installed backends: {exc}") from None
    if kind not in known:
        raise suite.error(("backend", "type"), f"unknown backend type {kind!r} (known: {', '.join(known)})")


def _leaf_problem(backend: str, leaf: str) -> str:
    """Why ``backend`` cannot answer a ``leaf`` retriever ('' when it can, or may: a third-party
    backend refuses what it cannot answer itself)."""
    if leaf in STAGE_TYPES:
        return ""
    if backend in PIPELINE_TYPES and leaf != "service":
        return (
            f"a {leaf} retriever on backend {backend}, which answers only 'type: service' "
            "retrievers (the service runs its own pipeline)"
        )
    if backend in ENGINE_TYPES and leaf == "service":
        return (
            "a service retriever asks a whole-pipeline backend (type http or python, or a "
            f"third-party one), not {backend} (which answers {', '.join(ENGINE_LEAVES)})"
        )
    return ""


def _check_placeholders(suite: Any) -> None:
    """Every ``{name}`` of the URL and body is a built-in placeholder or a param of every
    service retriever (a request with an unfilled placeholder would be sent as written)."""
    request = suite.model.backend.request
    services = {n: r for n, r in suite.model.retrievers.items() if r.type == "service"}
    for key, template in (("url", request.url), ("body", request.body)):
        for placeholder in sorted(placeholders_in(template) - set(BUILT_IN_PLACEHOLDERS)):
            problem = _unfilled(placeholder, services)
            if problem:
                raise suite.error(("backend", "request", key), problem)
    _unused_params(suite, services, placeholders_in(request.url) | placeholders_in(request.body))
    if suite.model.backend.batch is not None:
        _check_batch(suite, request, suite.model.backend.batch, services)


def _check_batch(suite: Any, request: Any, batch: Any, services: Dict[str, Any]) -> None:
    """A batch has the per-query body, no per-query placeholder, and a value for the others."""
    wrong = batch_problem(request, batch)
    if wrong:
        raise suite.error(("backend", *wrong[0].split(".")), wrong[1])
    for key, template in (("url", batch.url), ("body", batch.body)):
        for placeholder in sorted(placeholders_in(template) - {"k", REQUESTS}):
            problem = _unfilled(placeholder, services, ("k", REQUESTS))
            if problem:
                raise suite.error(("backend", "batch", key), problem)


def _unfilled(
    placeholder: str, services: Dict[str, Any], built_ins: Sequence[str] = BUILT_IN_PLACEHOLDERS
) -> str:
    """Why ``{placeholder}`` would go out unfilled ('' when every service retriever fills it)."""
    lacking = [n for n, r in services.items() if placeholder not in r.params]
    if services and not lacking:
        return ""
    whose = f"retriever {lacking[0]!r} has no such param" if lacking else "no service retriever"
    built_in = ", ".join("{" + p + "}" for p in built_ins)
    return f"placeholder {{{placeholder}}} has no value: {whose} (built in: {built_in})"


def _unused_params(suite: Any, services: Any, used: Set[str]) -> None:
    """A param no placeholder takes would be silently dropped: refused."""
    for name, r in services.items():
        for param in r.params:
            if param not in used:
                raise suite.error(
                    ("retrievers", name, "params", param),
                    f"param {param!r} is in no placeholder of backend.request (url, body): it would not be sent",
                )
