"""Stability against a stored run of the history (issue #33): ``--retrieval-stability-against RUN``
(a run id or a unique prefix, a tag, a commit, or ``latest``: the newest stored run of the suite)
reads that run's rankings from the ``--retrieval-history`` store, once per suite, and lines this
run's up with them as with the baseline's (:func:`.stability.line_up`). The never-silent rules are
the baseline's: a changed corpus, index or engine is compared and named; a query whose text
changed is left out and counted; a run that kept no rankings of the suite, of the retriever or of
the canary queries is an error of one line, never a pass. The I/O edge: the store is read here."""

from __future__ import annotations

from typing import Any, Dict, List

from ..errors import ConfigError, HistoryError
from ..gates.stability import REWRITE_HINT, Compared, compare_rankings

__all__ = ["OPTION", "RUN_HINT", "read_stored_run", "run_label", "compare_with_run", "line_up"]

OPTION = "--retrieval-stability-against"
#: what to do about a stored run that cannot serve the stability gates
RUN_HINT = f"name another stored run with {OPTION} (pytest-retrieval history list shows them)"


def read_stored_run(location: str, ref: str, suite: Any) -> Any:
    """The rankings of ``suite`` in the stored run ``ref`` (``history.rankings.StoredRankings``).
    ``HistoryError`` for a store that cannot be read or no such run, ``ConfigError`` for a run
    without the suite's rankings: one line each, naming the option."""
    from ..history import open_store
    from ..history.rankings import load_rankings

    if not location:
        raise ConfigError(
            f"{OPTION} {ref}: no run history to read it from; give --retrieval-history PATH|URL"
        )
    try:
        store = open_store(location)
    except HistoryError as exc:
        raise HistoryError(f"{OPTION} {ref}: {exc}") from None
    try:
        return load_rankings(store, ref, suite.name)
    except HistoryError as exc:
        raise HistoryError(f"{OPTION} {ref}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{OPTION} {ref}: {exc}; {RUN_HINT}", file=str(suite.path)) from None
    finally:
        store.close()


def run_label(stored: Any, ref: str) -> str:
    """``stored run 3f2a1b9c0d1e (v1.4)``: the run id, short, and the name it was given by."""
    short = str(stored.run_id)[:12]
    named = "" if str(stored.run_id).startswith(ref) else f" ({ref})"
    return f"stored run {short}{named}"


def compare_with_run(stored: Any, ref: str, result: Any, retriever: str) -> Compared:
    """This run's rankings of ``retriever`` lined up with the stored run's; ``ConfigError`` (one
    line) when the run kept none of them, or none of the canary queries while this run has some."""
    label = run_label(stored, ref)
    if retriever not in stored.by_retriever:
        names = ", ".join(sorted(stored.by_retriever)) or "none"
        raise ConfigError(
            f"{label} kept no rankings of {retriever!r} (it has {names}; added since?); {RUN_HINT}"
        )
    rankings: Dict[str, List[str]] = dict(stored.by_retriever[retriever])
    if result.canary:
        canary = (stored.canary or {}).get(retriever)
        if canary is None:
            raise ConfigError(
                f"{label} kept no rankings of the canary queries (stored before judgments.canary was set, "
                f"or by an older pytest-retrieval); {RUN_HINT}"
            )
        rankings.update(canary)
    return line_up(
        rankings, stored.depth, stored.fingerprint, result, retriever, against=label, hint=RUN_HINT
    )


def line_up(
    stored: Dict[str, List[str]],
    depth: int,
    old_fp: Dict[str, Any],
    result: Any,
    retriever: str,
    *,
    against: str = "the baseline",
    hint: str = REWRITE_HINT,
) -> Compared:
    """This run's rankings of ``retriever`` (judged and canary queries, cut at ``depth``) lined up
    with the ``stored`` ones, whose suite had the fingerprint ``old_fp``: the queries whose text
    changed left out and counted, the system changes named (``gates.stability.compare_rankings``)."""
    from ..gates.fingerprint import CANARY_HASHES, compare_fingerprints, fingerprint_from_result, text_hashes

    rr = result.retrievers[retriever]
    current = {q: list(rr.run[q].doc_ids[:depth]) if q in rr.run else [] for q in rr.evaluation.evaluated}
    canary_run = result.canary_runs.get(retriever, {})
    current.update({q: list(canary_run[q].doc_ids[:depth]) if q in canary_run else [] for q in result.canary})
    now_fp = fingerprint_from_result(result)
    old_texts = _texts(old_fp.get("query_hashes") or {})
    old_texts.update(old_fp.get(CANARY_HASHES) or {})
    new_texts = _texts(now_fp.get("query_hashes") or {})
    new_texts.update(text_hashes(result.canary))
    diff = compare_fingerprints(old_fp, now_fp)
    return compare_rankings(
        stored,
        current,
        canary=set(result.canary),
        old_texts=old_texts,
        new_texts=new_texts,
        depth=depth,
        system=diff.system + diff.invalidating,  # what changed is named; rankings are compared anyway
        against=against,
        hint=hint,
    )


def _texts(query_hashes: Dict[str, str]) -> Dict[str, str]:
    """``{qid: text hash}`` of a fingerprint's ``query_hashes`` (``text:judgments``)."""
    return {q: str(h).split(":")[0] for q, h in query_hashes.items()}
