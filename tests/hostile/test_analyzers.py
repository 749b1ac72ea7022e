"""Hostile values of ``retrievers.*.analyzer`` (#35): an unknown name, a field the retriever does
not search, stop words beside a language analyzer are one clear line naming the key; a field
without text, mixed scripts and texts whose token stream is empty run and are counted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytest_retrieval.backends.base import BM25Spec
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.backends.embedded.languages import UnknownAnalyzer, named_analyzer
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.plan import leaf_spec
from pytest_retrieval.types import Document, Query
from tests.ci import unavailable

from .conftest import BASE, FLOORS, one_line


def _suite(tmp_path: Path, retriever: dict):
    doc = yaml.safe_load(BASE + FLOORS)
    doc["retrievers"]["lang"] = {"type": "bm25", "fields": ["text"], **retriever}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    suite = load_suite(path)
    return suite, leaf_spec(suite, "lang")


@pytest.mark.parametrize(
    "retriever, fragments",
    [
        ({"analyzer": "klingon"}, ["retrievers.lang.analyzer", "no analyzer 'klingon'"]),
        ({"analyzer": "German"}, ["retrievers.lang.analyzer"]),
        ({"analyzer": "ge rman"}, ["retrievers.lang.analyzer"]),
        ({"analyzer": ""}, ["retrievers.lang.analyzer"]),
        ({"analyzer": {"title": "german"}}, ["retrievers.lang.analyzer", "'title'", "does not search"]),
        ({"analyzer": {"text": "\u202egerman"}}, ["retrievers.lang.analyzer"]),
        ({"analyzer": "german", "stopwords": "english"}, ["retrievers.lang.stopwords", "standard analyzer"]),
    ],
)
def test_bad_analyzers_are_one_line(tmp_path, retriever, fragments):
    with pytest.raises(ConfigError) as info:
        _suite(tmp_path, retriever)
    one_line(str(info.value), *fragments)


def test_named_analyzers_reach_the_spec(tmp_path):
    _, spec = _suite(tmp_path, {"analyzer": {"text": "german"}})
    assert spec.analyzer == (("text", "german"),) and "analyzer" in spec.index_options
    _, spec = _suite(tmp_path, {"analyzer": "standard", "stopwords": "english"})
    assert spec.analyzer_of("text") == "standard"


def test_unknown_name_in_python_is_one_line():
    with pytest.raises(UnknownAnalyzer) as info:
        named_analyzer("nope")
    one_line(str(info.value), "'nope'", "german")
    backend = EmbeddedBackend()
    backend.prepare([Document("d1", {"text": "x"})], None)
    with pytest.raises(ConfigError) as err:
        backend.search_batch(
            BM25Spec(fields=(("text", 1.0),), analyzer=(("text", "nope"),)), [Query("q", "x")], 5
        )
    one_line(str(err.value), "analyzer", "'nope'")


def test_field_without_text_mixed_scripts_and_empty_streams():
    docs = [
        Document("d1", {"text": "Die Straße 北京大学 Москва الكتاب"}),
        Document("d2", {"text": "und der die"}),  # only German stop words: no terms
        Document("d3", {"title": "only a title"}),  # no text field
        Document("d4", {"text": "!!! ..."}),
    ]
    backend = EmbeddedBackend()
    backend.prepare(docs, None)
    spec = BM25Spec(fields=(("text", 1.0),), analyzer=(("text", "german"),))
    run = backend.search_batch(
        spec, [Query("q1", "Straßen in Moskau"), Query("q2", "und die"), Query("q3", "")], 10
    )
    assert run["q1"].doc_ids == ["d1"]  # strass (normalised and stemmed) matches
    assert run["q2"].doc_ids == [] and run["q3"].doc_ids == []  # stop words only, empty text
    assert backend.analyzer_notes.shown() == {"text": "german"}
    assert named_analyzer("cjk").tokens("北京大学 abc") == ["北京", "京大", "大学", "abc"]
    assert named_analyzer("arabic").tokens("\u0640") == [""]  # Lucene keeps an empty term


def test_thai_mixed_scripts_empty_streams_and_a_field_without_text():
    """``thai`` (ICU's word breaks in Lucene's ThaiTokenizer loop): Thai beside Latin, digits and
    other scripts, a text of stop words or punctuation only, a lone combining mark (no word
    starts with a letter: no term), Thai digits (DecimalDigitFilter), a document without text."""
    try:
        import icu4py  # noqa: F401 - the [thai] extra, in the test extras
    except ImportError:
        unavailable("icu4py is not installed (pip install -e '.[test]' or '.[thai]')")
    thai = named_analyzer("thai")
    assert thai.tokens("ภาษาไทย ABC 123") == ["ภาษา", "ไทย", "abc", "123"]
    assert thai.tokens("๑๒๓") == ["123"]
    assert thai.tokens("Москва 北京 ภาษา") == ["москва", "北京", "ภาษา"]
    for empty in ("และ ที่ ของ", "!!! ...", "", None, "\u0e48", "   \n\t"):
        assert thai.tokens(empty) == [], repr(empty)
    docs = [
        Document("d1", {"text": "ภาษาไทย ABC"}),
        Document("d2", {"text": "และ ที่"}),  # only Thai stop words: no terms
        Document("d3", {"title": "ภาษา"}),  # no text field
    ]
    backend = EmbeddedBackend()
    backend.prepare(docs, None)
    spec = BM25Spec(fields=(("text", 1.0),), analyzer=(("text", "thai"),))
    run = backend.search_batch(spec, [Query("q1", "ภาษา"), Query("q2", "และ"), Query("q3", "")], 10)
    assert run["q1"].doc_ids == ["d1"] and run["q2"].doc_ids == [] and run["q3"].doc_ids == []
    assert backend.analyzer_notes.shown() == {"text": "thai"}


def test_thai_long_text_is_read_in_lucene_buffers():
    """SegmentingTokenizerBase reads 1024 characters at a time, cut after the last line break; a
    longer run without one is cut at 1024 (a word split in two, as Lucene splits it)."""
    from pytest_retrieval.backends.embedded.languages.thai import BUFFER, buffers

    text = "ก" * 1500
    assert [len(b) for b in buffers(text)] == [BUFFER, 1500 - BUFFER]
    lines = ("ภาษาไทย\n" * 200)[:-1]
    parts = list(buffers(lines))
    assert "".join(parts) == lines and all(len(p) <= BUFFER for p in parts)
    assert all(p.endswith("\n") for p in parts[:-1])
    assert list(buffers("")) == []


def test_thai_without_icu4py_is_one_line(tmp_path, monkeypatch):
    """No icu4py: the analyzer name is refused in one line naming the extra, in Python and in a
    suite on the embedded engine."""
    import sys

    from pytest_retrieval.backends.embedded.languages import thai

    thai.thai_analyzer.cache_clear()
    monkeypatch.setitem(sys.modules, "icu4py", None)
    try:
        with pytest.raises(UnknownAnalyzer) as info:
            named_analyzer("thai")
        one_line(str(info.value), "'thai'", "icu4py", "pytest-retrieval[thai]")
        with pytest.raises(ConfigError) as err:
            _suite(tmp_path, {"analyzer": "thai"})
        one_line(str(err.value), "retrievers.lang.analyzer", "icu4py", "pytest-retrieval[thai]")
    finally:
        thai.thai_analyzer.cache_clear()
