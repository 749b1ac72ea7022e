"""The words of every verdict, one phrase per kind (issue #36): the failure messages, the
terminal summary, JUnit, Markdown, HTML and ``compare`` all take them from this table, so a
failed baseline comparison reads "regressed" wherever it is shown, never "regressed by more
than 0.01" in one place and "significantly worse; a drop larger than 0.01 is not ruled out" in
another. Pure constants and formatting, no imports: the core (``stats``, ``gates``) and the
reports both read it."""

from __future__ import annotations

from typing import Dict, NamedTuple

__all__ = ["HEADLINES", "VERDICTS", "Phrase", "phrase", "word"]


class Phrase(NamedTuple):
    passed: bool  # whether the gate passes with this verdict
    word: str  # the verdict in one or two words (a table cell, a stratum, ``compare``)
    text: str  # the verdict as a phrase ({margin}: the allowed drop), in messages and summaries


#: Every verdict kind of a gate, and how it reads.
VERDICTS: Dict[str, Phrase] = {
    # a floor or ceiling (gates/verdicts.py; stats/latency.py for a latency interval or A/B ratio)
    "met": Phrase(True, "ok", "ok"),
    "below_floor": Phrase(False, "below the floor", "below the floor"),
    "above_ceiling": Phrase(False, "above the ceiling", "above the ceiling"),
    # a paired comparison with a baseline or a reference run (stats/paired.py, reports/compare.py):
    # it fails when a drop larger than the margin is not ruled out (non-inferiority not shown)
    "regressed": Phrase(False, "regressed", "regressed: a drop larger than {margin:g} is not ruled out"),
    "dropped_within_margin": Phrase(
        True, "dropped within the margin", "dropped within the margin of {margin:g}"
    ),
    "improved": Phrase(True, "improved", "improved"),
    "no_drop": Phrase(True, "ok", "no drop larger than {margin:g}"),
}

#: The session's verdict, the first line of the terminal summary, the Markdown and the HTML
#: (reports/view.py). ``baseline``: a ``--retrieval-baseline-update`` run that wrote its
#: baselines (its baseline gates are not compared, by design: not a partial run).
HEADLINES: Dict[str, str] = {
    "failed": "Retrieval gates failed:",
    "error": "Retrieval gates errored:",
    "partial": "Partial retrieval run:",
    "baseline": "Baseline written:",
    "passed": "Retrieval gates passed:",
}


def word(kind: str) -> str:
    """A verdict kind's word (``regressed``)."""
    return VERDICTS[kind].word


def phrase(kind: str, margin: float = 0.0) -> str:
    """A verdict kind's phrase, with its margin filled in."""
    return VERDICTS[kind].text.format(margin=margin)
