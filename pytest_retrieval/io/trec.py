"""TREC run files (``qid Q0 docid rank score tag``), read line by line and written."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Mapping, Set, Tuple

from ..errors import ConfigError
from ..types import Ranking, Run
from .lines import read_lines
from .numeric import external_float


def load_trec_run(path: Path) -> Run:
    """TREC run file: ``qid Q0 docid rank score tag``, ordered by score as trec_eval does it
    later; here we keep the file's order per query, sorted by the rank column."""
    path = Path(path)
    rows: Dict[str, List[Tuple[int, int, str, float]]] = {}
    for n, line in read_lines(path):
        qid, did, r, s = _run_line(line, path, n)
        rows.setdefault(qid, []).append((r, n, did, s))
    if not rows:
        raise ConfigError("no lines in run file", file=str(path))
    return {qid: _ranking(qid, items, path) for qid, items in rows.items()}


def _run_line(line: str, path: Path, n: int) -> Tuple[str, str, int, float]:
    """(qid, docid, rank, score) of one line; a malformed line is a ConfigError naming it."""
    parts = line.split()
    if len(parts) < 6:  # columns after the tag are ignored, as trec_eval's get_trec_results.c does
        raise ConfigError(
            f"expected 'qid Q0 docid rank score tag', got {len(parts)} column(s)", file=str(path), line=n
        )
    qid, _q0, did, rank, score = parts[:5]
    try:
        r = int(rank)
    except ValueError:
        raise ConfigError(f"rank {rank!r} is not an integer", file=str(path), line=n) from None
    try:
        s = external_float(score, text=True, infinite=True)  # trec_eval's atof reads inf
    except ValueError as exc:
        raise ConfigError(f"score {exc}", file=str(path), line=n) from None
    return qid, did, r, s


def _ranking(qid: str, items: List[Tuple[int, int, str, float]], path: Path) -> Ranking:
    """One query's lines by rank, then file order; a document twice is an error (trec_eval's
    ``form_res_rels.c``, "duplicate docs")."""
    items.sort(key=lambda t: (t[0], t[1]))
    seen: Set[str] = set()
    for _r, n, did, _s in items:
        if did in seen:
            raise ConfigError(f"document {did!r} appears twice for query {qid!r}", file=str(path), line=n)
        seen.add(did)
    return Ranking([t[2] for t in items], [t[3] for t in items])


def write_trec_run(run: Mapping[str, Ranking], out, tag: str = "pytest-retrieval") -> None:
    """Write ``run`` to the text stream ``out`` as a TREC run (``qid Q0 docid rank score tag``),
    scores with full precision (``repr``), ranks in the run's order."""
    for qid, ranking in run.items():
        for i, (did, s) in enumerate(zip(ranking.doc_ids, ranking.scores), 1):
            out.write(f"{qid} Q0 {did} {i} {s!r} {tag}\n")
