"""Which suite of report A is which suite of report B (``compare``): paired by name *and* file,
never by name alone, so that two teams' suites that share a name are never compared with
each other. Pure: no I/O.

Two reports are usually written from different checkouts (``/builds/main/...`` and
``/builds/pr/...``), so a file matches by the longest run of trailing path parts the two paths
share (at least the file name): ``tests/search/retrieval_s.yaml`` pairs with the same path
under another root, and wins over ``tests/ads/retrieval_s.yaml``. A tie, a suite without a
file, or two suites of B claiming the same suite of A cannot be paired: each is a problem."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Dict, List, Optional, Sequence, Tuple

from .view import SuiteView

__all__ = ["Pairing", "pair_suites", "shared_tail"]


@dataclass
class Pairing:
    pairs: List[Tuple[SuiteView, SuiteView]] = field(default_factory=list)  # (A's, B's)
    problems: List[str] = field(default_factory=list)


def _parts(file: object) -> Tuple[str, ...]:
    """A report's ``file`` as path parts (either separator), () when there is none."""
    if not isinstance(file, str) or not file.strip():
        return ()
    return PurePosixPath(file.replace("\\", "/")).parts


def shared_tail(a: object, b: object) -> int:
    """How many trailing path parts two files share (0: not even the file name)."""
    pa, pb = _parts(a), _parts(b)
    n = 0
    while n < min(len(pa), len(pb)) and pa[-1 - n] == pb[-1 - n]:
        n += 1
    return n


def _label(v: SuiteView) -> str:
    file = v.s.get("file")
    shown = str(file) if isinstance(file, str) and file else "no file"
    shown = shown if len(shown) <= 120 else "…" + shown[-119:]
    return f"suite {v.name} ({shown})"


def _best(vb: SuiteView, suites_a: Sequence[SuiteView]) -> Tuple[Optional[int], str]:
    """The index of B's suite's partner in A, or None and why not ("" when it has none)."""
    if not _parts(vb.s.get("file")):
        return None, "has no file: suites pair by name and file, never by name alone"
    scores = _scores(vb, suites_a)
    if not scores:
        return None, ""
    top = max(scores.values())
    best = [i for i, n in scores.items() if n == top]
    if len(best) > 1:
        return None, f"matches {len(best)} suites of the reference equally well: cannot be paired"
    return best[0], ""


def _scores(vb: SuiteView, suites_a: Sequence[SuiteView]) -> Dict[int, int]:
    """A's suites of B's suite's name whose file shares at least its file name -> how much."""
    tails = {
        i: shared_tail(va.s.get("file"), vb.s.get("file"))
        for i, va in enumerate(suites_a)
        if va.name == vb.name
    }
    return {i: n for i, n in tails.items() if n > 0}


def pair_suites(
    suites_a: Sequence[SuiteView], suites_b: Sequence[SuiteView], names: Tuple[str, str] = ("A", "B")
) -> Pairing:
    out = Pairing()
    claims: Dict[int, List[SuiteView]] = {}
    for vb in suites_b:
        i, why = _best(vb, suites_a)
        if i is not None:
            claims.setdefault(i, []).append(vb)
        else:
            out.problems.append(f"{_label(vb)}: " + (why or f"only in {names[1]}"))
    for i, va in enumerate(suites_a):
        claimed = claims.get(i, [])
        if len(claimed) == 1:
            out.pairs.append((va, claimed[0]))
        elif claimed:
            out.problems.append(
                f"{_label(va)}: {len(claimed)} suites of {names[1]} pair with it: cannot be paired"
            )
        else:
            out.problems.append(f"{_label(va)}: only in {names[0]} (missing from {names[1]})")
    order = {id(vb): n for n, vb in enumerate(suites_b)}
    out.pairs.sort(key=lambda p: order[id(p[1])])
    return out
