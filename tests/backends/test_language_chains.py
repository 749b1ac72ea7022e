"""The embedded engine's newer language analyzers (#35) without an engine: terms OpenSearch
3.6.0's ``_analyze`` gave for these texts (the full comparison against the engines is
``tests/engines/test_language_analyzers.py``)."""

from __future__ import annotations

import pytest

from pytest_retrieval.backends.embedded.languages import ANALYZER_NAMES, named_analyzer
from tests.ci import unavailable

CASES = [
    (
        "french",
        "L'avion d'Air France: les chevaux nationaux, jusqu'à l'été; vérificateur institutrices",
        ["avion", "air", "franc", "cheval", "national", "été", "verifi", "institut"],
    ),
    (
        "italian",
        "Dall'aeroporto gl'italiani amano l'università e le città",
        ["aeroport", "italian", "amano", "universit", "città"],
    ),
    (
        "portuguese",
        "As nações europeias: pães, hotéis, papéis e a senhora portuguesa",
        ["naca", "europei", "pao", "hotel", "papel", "senhor", "portugues"],
    ),
    ("hindi", "लड़कियाँ ३ किताबें खरीदीं और क़िला", ["लडक", "3", "किताब", "खरिदिं", "किल"]),
    (
        "czech",
        "Petrův bratr a Janin otec pracují ve stejné továrně; čeští hokejisté",
        ["petr", "bratr", "janin", "otek", "pracuj", "stejn", "továrn", "česk", "hokejist"],
    ),
    (
        "bulgarian",
        "Студентите учат медицина в университета; кучетата и градовете",
        ["студент", "учат", "медицин", "университ", "куч", "град"],
    ),
]


@pytest.mark.parametrize("name, text, terms", CASES, ids=[c[0] for c in CASES])
def test_terms_as_the_engine_gives_them(name, text, terms):
    assert named_analyzer(name).tokens(text) == terms
    assert named_analyzer(name).tokens("") == []


def test_dutch_keeps_lucenes_stem_overrides():
    try:
        import Stemmer  # noqa: F401  # the [languages] extra
    except ImportError:
        unavailable("PyStemmer is not installed (pip install 'pytest-retrieval[languages]')")
    text = "De fietsen, mijn bromfiets, het kind en de eieren"
    assert named_analyzer("dutch").tokens(text) == ["fiets", "bromfiets", "kinder", "eier"]


def test_the_new_names_are_listed():
    assert {"french", "italian", "portuguese", "dutch", "hindi", "czech", "bulgarian"} <= set(ANALYZER_NAMES)
