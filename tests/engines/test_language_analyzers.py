"""Token agreement (#35): the embedded engine's language analyzers give the terms OpenSearch's
built-in analyzers of the same name give (``_analyze``, the ``analysis-common`` module that
``scripts/engines`` installs), on every corpus sentence, title and query of each XQuAD-R
language of ../shared, and on the hand-written sentences of ``tests/data/languages/<lang>.txt``
for the languages XQuAD-R lacks (elisions, accents, digits, mixed case and scripts): 100% of
texts identical (measured on OpenSearch 2.19.6 and 3.6.0), except ``thai``, whose word breaks
are ICU's, not the JDK's (the share is recorded as a property)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_retrieval.backends.base import BM25Spec
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.backends.embedded.languages import named_analyzer
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.types import Document, Query
from tests.ci import unavailable

from .analyze_batches import engine_tokens, xquad_texts
from .conftest import backend_class, http, random_name

SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED") or Path(__file__).resolve().parents[3] / "shared")
XQUAD = SHARED / "data" / "xquad-r"

# (language, analyzer) -> share of texts with identical terms at least
CASES = {
    ("ar", "arabic"): 1.0,
    ("de", "german"): 1.0,
    ("en", "english"): 1.0,
    ("es", "spanish"): 1.0,
    ("ru", "russian"): 1.0,
    ("zh", "cjk"): 1.0,
    ("th", "standard"): 1.0,
    # ICU's Thai dictionary breaks (icu4py), not the JDK's BreakIterator: 17.4% measured
    # (2,090 texts, ICU 78); the floor leaves room for another ICU version's dictionary
    ("th", "thai"): 0.15,
}


# language -> analyzer, on tests/data/languages/<lang>.txt (all texts identical)
WRITTEN = {
    "fr": "french",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
    "hi": "hindi",
    "cs": "czech",
    "bg": "bulgarian",
}
WRITTEN_DIR = Path(__file__).resolve().parents[1] / "data" / "languages"


def _need_pystemmer() -> None:
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        unavailable("PyStemmer is not installed (pip install 'pytest-retrieval[languages]')")


def _need_icu4py(analyzer: str) -> None:
    if analyzer != "thai":
        return
    try:
        import icu4py  # noqa: F401
    except ImportError:
        unavailable("icu4py is not installed (pip install 'pytest-retrieval[thai]')")


@pytest.mark.parametrize("lang, analyzer", sorted(CASES))
def test_embedded_terms_equal_the_engines(os_instance, lang, analyzer, record_property):
    if not (XQUAD / lang).is_dir():
        unavailable(f"{XQUAD / lang} is missing (the shared data beside the checkout)")
    _need_pystemmer()
    _need_icu4py(analyzer)
    floor = CASES[lang, analyzer]
    texts = xquad_texts(XQUAD / lang)
    engine = engine_tokens(os_instance.url, analyzer, texts)
    ours = named_analyzer(analyzer)
    differing = [(t, e, o) for t, e, o in zip(texts, engine, (ours.tokens(t) for t in texts)) if e != o]
    share = 1 - len(differing) / len(texts)
    record_property(f"{lang}_{analyzer}_identical_share", round(share, 4))
    shown = "; ".join(f"{t[:60]!r}: engine {e[:8]} embedded {o[:8]}" for t, e, o in differing[:3])
    assert share >= floor, f"{analyzer}: {share:.4f} of {len(texts)} texts identical (< {floor}); {shown}"


def test_written_texts_agree(os_instance):
    """Every language of ``WRITTEN`` in one ``_analyze`` batch each: all texts identical."""
    _need_pystemmer()
    for lang, analyzer in sorted(WRITTEN.items()):
        texts = (WRITTEN_DIR / f"{lang}.txt").read_text("utf-8").splitlines()
        engine = engine_tokens(os_instance.url, analyzer, texts)
        ours = named_analyzer(analyzer)
        differing = [(t, e, o) for t, e, o in zip(texts, engine, map(ours.tokens, texts)) if e != o]
        shown = "; ".join(f"{t[:60]!r}: engine {e[:8]} embedded {o[:8]}" for t, e, o in differing[:3])
        assert not differing, f"{analyzer}: {len(differing)} of {len(texts)} texts differ; {shown}"


def test_mixed_scripts_and_empty_streams(os_instance):
    """Mixed scripts in one text, a text of only stop words or punctuation (an empty token
    stream), an Arabic tatweel alone (an empty term, which Lucene keeps)."""
    _need_pystemmer()
    texts = [
        "Die Straße 北京大学 Москва الكتاب 123",
        "und der die",
        "!!! ...",
        "",
        "ـ",
        "東京タワー ソウル 서울 ｶﾀｶﾅ ＡＢＣ",
        "L'été d'Ａｉｒ FRANCE: ३ किताबें, Ελλάδα, het kind's eieren",
    ]
    for analyzer in ("german", "cjk", "arabic", "russian", "spanish", "standard", *sorted(WRITTEN.values())):
        engine = engine_tokens(os_instance.url, analyzer, texts)
        assert engine == [named_analyzer(analyzer).tokens(t) for t in texts], analyzer


def test_thai_mixed_scripts_and_empty_streams(os_instance):
    """``thai`` on Thai beside Latin, Cyrillic, Han and digits (Thai digits folded), stop words
    only, punctuation only, a lone combining mark: the engine's terms. (Han and kana runs differ:
    ICU breaks them with its CJ dictionary, the JDK keeps a run of Han whole.)"""
    _need_icu4py("thai")
    texts = ["ภาษาไทย ABC 123", "๑๒๓", "Москва 北京 ภาษา", "และ ที่ ของ", "!!! ...", "\u0e48", ""]
    assert engine_tokens(os_instance.url, "thai", texts) == [named_analyzer("thai").tokens(t) for t in texts]


DOCS = [
    Document("d1", {"title": "Häuser", "text": "Die Häuser der Straße sind alt"}),
    Document("d2", {"title": "Bäume", "text": "Der Baum steht vor dem Haus"}),
    Document("d3", {"title": "Autos", "text": "Autos fahren auf den Straßen"}),
]
QUERIES = [Query("q1", "Strassen und Hauser"), Query("q2", "Bäume"), Query("q3", "und der")]
GERMAN = BM25Spec(fields=(("title", 1.0), ("text", 1.0)), analyzer=(("text", "german"),))


def test_a_throwaway_index_maps_the_named_analyzer(os_instance):
    backend = backend_class(os_instance)({"hosts": [os_instance.url]}, {"suite": "languages"})
    try:
        backend.prepare(DOCS, None)
        run = backend.search_batch(GERMAN, QUERIES, 10)
        _, mapping = http(os_instance.url, "GET", f"/{backend.index_name}/_mapping")
        props = next(iter(mapping.values()))["mappings"]["properties"]
        assert props["text"]["analyzer"] == "german" and props["title"]["analyzer"] != "german"
        assert backend.analyzer_notes.shown() == {"title": "standard", "text": "german"}
    finally:
        backend.close()
    embedded = EmbeddedBackend()
    embedded.prepare(DOCS, None)
    mine = embedded.search_batch(GERMAN, QUERIES, 10)
    assert {q: r.doc_ids for q, r in run.items()} == {q: r.doc_ids for q, r in mine.items()}
    assert run["q3"].doc_ids == []  # German stop words only


def test_an_existing_index_reports_its_analyzers_and_refuses_others(os_instance):
    url, name = os_instance.url, random_name("languages")
    mappings = {"properties": {"title": {"type": "text"}, "text": {"type": "text", "analyzer": "german"}}}
    status, body = http(url, "PUT", f"/{name}", {"mappings": mappings})
    assert status == 200, body
    try:
        http(url, "PUT", f"/{name}/_doc/d1?refresh=true", DOCS[0].fields)
        backend = backend_class(os_instance)({"hosts": [url]}, {"name": name})
        try:
            backend.prepare(None, None)
            assert backend.search_batch(GERMAN, QUERIES[:1], 10)["q1"].doc_ids == ["d1"]
            assert backend.analyzer_notes.shown() == {"title": "standard", "text": "german"}
            other = BM25Spec(fields=(("text", 1.0),), analyzer=(("text", "english"),))
            with pytest.raises(ConfigError) as info:
                backend.search_batch(other, QUERIES[:1], 10)
            assert "analyzer" in str(info.value) and "german" in str(info.value)
        finally:
            backend.close()
    finally:
        http(url, "DELETE", f"/{name}")
