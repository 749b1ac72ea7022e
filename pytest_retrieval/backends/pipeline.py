"""What the whole-pipeline backends (``http``, ``python``) share: they answer only
``type: service`` retrievers, run the quality pass's queries ``max_concurrency`` at a time, and
turn what the team's code or service returned into a :class:`~..types.Ranking`, refusing
anything that is not one (an error item, never a zero-hit ranking)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, List, Optional, Sequence, Set, Tuple

import numpy as np

from ..errors import ConfigError
from ..io.numeric import external_float, value_text
from ..types import Query, Ranking, Run
from .base import Backend, LeafSpec, SearchResult, ServiceSpec

# the leaf types a suite may give a whole-pipeline backend
SERVICE_ONLY = "answers only 'type: service' retrievers (the service runs its own pipeline)"


class PipelineBackend(Backend):
    """A backend that asks a team's own search (a function, an HTTP endpoint) for whole
    rankings. Subclasses implement :meth:`ask` (one query, one request or call)."""

    name = "pipeline"

    def __init__(self, max_concurrency: int = 1) -> None:
        if max_concurrency < 1:
            raise ConfigError(f"{self.name} backend: max_concurrency must be >= 1")
        self.max_concurrency = int(max_concurrency)

    # --- what a subclass gives
    def ask(self, spec: ServiceSpec, query: Query, k: int) -> Tuple[Ranking, Optional[float]]:
        """(the ranking of one query, the service's own time in ms when it tells)."""
        raise NotImplementedError

    # --- the Backend protocol
    def prepare(self, documents: Any, doc_vectors: Any) -> None:
        """Nothing to index: the service searches its own index."""
        return None

    def close(self) -> None:
        """Nothing of this backend's to delete (subclasses release their connections)."""
        return None

    def search_batch(self, spec: LeafSpec, queries: Sequence[Query], k: int) -> Run:
        service = self.service_spec(spec)
        if self.max_concurrency == 1 or len(queries) < 2:
            return {q.qid: self.ask(service, q, k)[0] for q in queries}
        with ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix=self.name) as pool:
            answers = list(pool.map(lambda q: self.ask(service, q, k)[0], queries))
        return {q.qid: r for q, r in zip(queries, answers)}

    def search_one(self, spec: LeafSpec, query: Query, k: int) -> SearchResult:
        ranking, took = self.ask(self.service_spec(spec), query, k)
        return SearchResult(ranking, server_took_ms=took)

    def service_spec(self, spec: LeafSpec) -> ServiceSpec:
        if isinstance(spec, ServiceSpec):
            return spec
        kind = type(spec).__name__.removesuffix("Spec").lower()
        raise ConfigError(f"backend {self.name!r} {SERVICE_ONLY}; got a {kind} retriever")


def ranking_of(
    pairs: Any,
    k: int,
    where: str,
    fail: Callable[[str], Exception],
) -> Ranking:
    """The top ``k`` of ``pairs`` ((doc_id, score), best first) as a Ranking. ``where`` names
    the query and source in the message of ``fail``: a doc id that is not text or an integer,
    a score that is not a finite number, or a document listed twice is refused, never guessed."""
    if isinstance(pairs, (str, bytes, dict)) or not isinstance(pairs, (list, tuple)):
        raise fail(f"{where}: expected a list of (doc_id, score) pairs, got {_kind(pairs)}")
    doc_ids: List[str] = []
    scores: List[float] = []
    seen: Set[str] = set()
    for i, pair in enumerate(pairs[:k]):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise fail(f"{where}: hit {i} is {_kind(pair)}, expected a (doc_id, score) pair")
        doc_id = doc_id_of(pair[0])
        if doc_id is None:
            raise fail(f"{where}: hit {i} has doc id {_kind(pair[0])}, expected text or an integer")
        try:
            score = external_float(pair[1])
        except ValueError as exc:
            raise fail(
                f"{where}: hit {i} ({doc_id!r}) has score {_kind(pair[1])}, expected a finite number ({exc})"
            ) from None
        if doc_id in seen:
            raise fail(f"{where}: document {doc_id!r} is listed twice")
        seen.add(doc_id)
        doc_ids.append(doc_id)
        scores.append(score)
    return Ranking(doc_ids, scores)


def doc_id_of(value: Any) -> Optional[str]:
    """A hit's id as text: a non-empty string, or an integer's decimal (never a bool/float)."""
    if isinstance(value, np.integer):
        value = value.item()
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def score_of(value: Any) -> Optional[float]:
    """A hit's score as a float: a finite int or float (never a bool, a string, NaN, an
    integer too large for a float); None otherwise (:func:`~..io.numeric.external_float` says why)."""
    try:
        return external_float(value)
    except ValueError:
        return None


def _kind(value: Any) -> str:
    """A value in a message: its type and a short repr (a huge integer by its digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return f"int ({value_text(value)})"
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"
