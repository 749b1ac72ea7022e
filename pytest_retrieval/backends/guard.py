"""The one boundary to code the plugin does not own: a team's Python function (the ``python``
backend, callable embedders and sparse encoders), a backend another package declares in the
entry point group ``pytest_retrieval.backends`` (or ``registry.register``-ed by a conftest).

Every call goes through :func:`call_foreign`: any exception the code raises, ``SystemExit``,
``GeneratorExit`` and ``asyncio.CancelledError`` included (``BaseException``s a bare
``except Exception`` lets through, so a ``sys.exit()`` in a team's function ended the pytest
session), is one line naming the caller's ``what`` (the backend and the query) and the
exception, its text made one line (:func:`~..safe_names.one_line`). Only ``KeyboardInterrupt``
passes: Ctrl-C still stops the run. A :class:`~..errors.RetrievalError` the code raises
(a third-party backend's ``ConfigError`` for a setting it refuses) is its own message.

What comes back is checked against the :class:`~.base.Backend` protocol by
:class:`GuardedBackend`: ``search_batch`` answers a ranking for every asked query and no other
(a batch that left a query out was scored as an empty ranking, and a floor passed on it), a
ranking is a :class:`~..types.Ranking` of non-empty string ids, each once, with finite scores
(:func:`~..io.numeric.external_float`: NaN, infinities and integers too large for a float are
refused), ``search_one`` a :class:`~.base.SearchResult`, ``describe`` a mapping. Anything else
is a :class:`~..errors.ConfigError` line naming the backend, the query and what was wrong.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set

from ..errors import ConfigError, InfrastructureError, RetrievalError
from ..io.numeric import external_float, value_text
from ..safe_names import one_line
from ..types import Query, Ranking, Run
from .base import Backend, KnnSpec, LeafSpec, SearchResult

__all__ = ["GuardedBackend", "call_foreign", "check_ranking", "check_run", "exception_text", "guarded"]

# the methods a backend must have; the others of the protocol get Backend's defaults
REQUIRED = ("prepare", "search_batch", "search_one")


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of an exception from foreign code, on one line (a multi-line message,
    control characters and escape sequences spelled out), at most 400 characters."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a third party's __str__
        message = ""
    text = one_line(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)
    return text if len(text) <= 400 else text[:397] + "..."


def call_foreign(fn: Callable[..., Any], what: str, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``: code the plugin does not own. Whatever it raises but
    ``KeyboardInterrupt`` is an ``InfrastructureError`` "``what`` raised ``Type: message``"
    (one line); a ``RetrievalError`` it raises keeps its class, its text made one line."""
    try:
        return fn(*args, **kwargs)
    except KeyboardInterrupt:
        raise
    except RetrievalError as exc:
        raise one_line_error(exc) from None
    except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit... from foreign code
        raise InfrastructureError(f"{what} raised {exception_text(exc)}") from None


def one_line_error(exc: RetrievalError) -> RetrievalError:
    """``exc`` with its message on one line (a ConfigError keeps its file, key and line)."""
    if isinstance(exc, ConfigError):
        if exc.detail != one_line(exc.detail):
            return ConfigError(one_line(exc.detail), file=exc.file, key=exc.key, line=exc.line)
        return exc
    text = str(exc)
    return exc if text == one_line(text) else type(exc)(one_line(text))


def check_ranking(value: Any, k: int, where: str) -> Ranking:
    """``value`` as the protocol's ``Ranking`` (its top ``k``): ids non-empty strings, each
    once, scores finite numbers; a ``ConfigError`` naming ``where`` and the hit otherwise."""
    if not isinstance(value, Ranking):
        raise ConfigError(f"{where}: expected a Ranking, got {value_text(value)}")
    doc_ids, raw = list(value.doc_ids)[:k], list(value.scores)[:k]
    if len(value.doc_ids) != len(value.scores):
        raise ConfigError(f"{where}: the Ranking has {len(value.doc_ids)} ids but {len(value.scores)} scores")
    seen: Set[str] = set()
    scores: List[float] = []
    for i, (doc_id, score) in enumerate(zip(doc_ids, raw)):
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ConfigError(f"{where}: hit {i} has doc id {value_text(doc_id)}, expected non-empty text")
        if doc_id in seen:
            raise ConfigError(f"{where}: document {one_line(doc_id)!r} is listed twice")
        seen.add(doc_id)
        try:
            scores.append(external_float(score))
        except ValueError as exc:
            raise ConfigError(
                f"{where}: hit {i} ({one_line(doc_id)!r}) has a score that is not a finite number: {exc}"
            ) from None
    return Ranking(doc_ids, scores)


def check_run(value: Any, queries: Sequence[Query], k: int, where: str) -> Run:
    """``value`` as a ``Run`` answering exactly ``queries``: a mapping query id -> Ranking
    with every asked query (one left out is an error, never an empty ranking) and no other."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a mapping query id -> Ranking, got {value_text(value)}")
    asked = [q.qid for q in queries]
    missing = [qid for qid in asked if qid not in value]
    if missing:
        more = f" (+{len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ConfigError(
            f"{where}: no ranking for query {one_line(missing[0])!r}{more} of the {len(asked)} asked "
            "(a query with no hits is an empty Ranking, never a left-out one)"
        )
    extra = [qid for qid in value if qid not in set(asked)]
    if extra:
        raise ConfigError(f"{where}: a ranking for query {one_line(str(extra[0]))!r}, which was not asked")
    return {qid: check_ranking(value[qid], k, f"{where} for query {one_line(qid)!r}") for qid in asked}


class GuardedBackend(Backend):
    """A backend the plugin does not own, every call guarded and every answer checked (see
    the module's text). ``name`` is the suite's ``backend.type``."""

    def __init__(self, inner: Any, name: str) -> None:
        self.inner = inner
        self.name = name
        self.what = f"backend {one_line(name)!r}"
        # the optional capabilities, present only when the backend has them
        self.prepare_sparse: Optional[Callable[[Any], None]] = (
            self._prepare_sparse if callable(getattr(inner, "prepare_sparse", None)) else None
        )
        self.retries: Optional[Callable[[], Dict[str, int]]] = (
            self._retries if callable(getattr(inner, "retries", None)) else None
        )

    def __repr__(self) -> str:
        return f"GuardedBackend({self.name!r})"

    def _call(self, method: str, what: str, *args: Any) -> Any:
        return call_foreign(getattr(self.inner, method), f"{self.what} {what}", *args)

    def prepare(self, documents: Any, doc_vectors: Any) -> None:
        self._call("prepare", "prepare", documents, doc_vectors)

    def _prepare_sparse(self, doc_sparse: Any) -> None:
        self._call("prepare_sparse", "prepare_sparse", doc_sparse)

    def _retries(self) -> Dict[str, int]:
        counted = self._call("retries", "retries")
        if not isinstance(counted, Mapping):
            return {}
        return {str(k): int(v) for k, v in counted.items() if isinstance(v, int) and not isinstance(v, bool)}

    def search_batch(self, spec: LeafSpec, queries: Sequence[Query], k: int) -> Run:
        first = f" (from query {one_line(queries[0].qid)!r})" if queries else ""
        run = self._call("search_batch", f"search_batch of {len(queries)} queries{first}", spec, queries, k)
        return check_run(run, queries, k, f"{self.what} search_batch")

    def search_one(self, spec: LeafSpec, query: Query, k: int) -> SearchResult:
        where = f"{self.what} search_one for query {one_line(query.qid)!r}"
        out = self._call("search_one", f"search_one for query {one_line(query.qid)!r}", spec, query, k)
        if not isinstance(out, SearchResult):
            raise ConfigError(f"{where}: expected a SearchResult, got {value_text(out)}")
        took = out.server_took_ms
        if took is not None:
            try:
                took = external_float(took)
            except ValueError as exc:
                raise ConfigError(f"{where}: server_took_ms is not a finite number: {exc}") from None
            if took < 0:
                raise ConfigError(f"{where}: server_took_ms is negative ({took!r})")
        return SearchResult(check_ranking(out.ranking, k, where), server_took_ms=took)

    def existing_ids(self, doc_ids: Sequence[str]) -> Optional[Set[str]]:
        if not callable(getattr(self.inner, "existing_ids", None)):
            return None
        found = self._call("existing_ids", "existing_ids", doc_ids)
        if found is None:
            return None
        if isinstance(found, (str, bytes, Mapping)) or not hasattr(found, "__iter__"):
            raise ConfigError(
                f"{self.what} existing_ids: expected a set of ids or None, got {value_text(found)}"
            )
        ids = set(found)
        if not all(isinstance(i, str) for i in ids):
            raise ConfigError(f"{self.what} existing_ids: every id must be a string")
        return ids

    def exact_knn(self, spec: KnnSpec, queries: Sequence[Query], k: int) -> Optional[Run]:
        if not callable(getattr(self.inner, "exact_knn", None)):
            return None
        run = self._call("exact_knn", "exact_knn", spec, queries, k)
        return None if run is None else check_run(run, queries, k, f"{self.what} exact_knn")

    def describe(self) -> Dict[str, Any]:
        if not callable(getattr(self.inner, "describe", None)):
            return {"backend": self.name}
        facts = self._call("describe", "describe")
        if not isinstance(facts, Mapping):
            raise ConfigError(f"{self.what} describe: expected a mapping, got {value_text(facts)}")
        return {str(k): v for k, v in facts.items()}

    def close(self) -> None:
        if callable(getattr(self.inner, "close", None)):
            self._call("close", "close")


def guarded(factory: Callable[..., Any], name: str, *args: Any) -> GuardedBackend:
    """``factory(*args)`` (a backend's factory the plugin does not own) guarded: a factory that
    raises, returns None or returns something without the protocol's required methods is one
    line naming the backend."""
    what = f"backend {one_line(name)!r}"
    made = call_foreign(factory, f"{what}: its factory", *args)
    if made is None:
        raise ConfigError(f"{what}: its factory {_name(factory)} returned None, not a backend")
    lacking = [m for m in REQUIRED if not callable(getattr(made, m, None))]
    if lacking:
        raise ConfigError(
            f"{what}: its factory {_name(factory)} returned {value_text(made)}, which has no "
            f"{', '.join(lacking)} method (the Backend protocol, docs/how-to/custom-backends.md)"
        )
    return GuardedBackend(made, name)


def _name(fn: Any) -> str:
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return f"{module}:{qualname}" if module and qualname else value_text(fn)
