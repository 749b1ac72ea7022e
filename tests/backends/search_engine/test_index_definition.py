"""An existing index's definition in the baseline fingerprint (issue #28): the concrete indexes
an alias points to, and one hash of their mappings and scoring settings that a blue/green
reindex with the same analyzers keeps and an analyzer change does not."""

from __future__ import annotations

from pytest_retrieval.backends.search_engine.facts import index_definition

from .fake import FakeEngine, engine_http

MAPPING = {"properties": {"text": {"type": "text", "analyzer": "english"}}}
SETTINGS = {"index.number_of_shards": "1", "index.analysis.analyzer.english.type": "english"}


def _definition(name: str, mapping=MAPPING, settings=SETTINGS, **physical):
    flat = dict(settings, **{f"index.{k}": v for k, v in physical.items()})
    engine = FakeEngine(
        {
            ("GET", "/live/_settings"): {name: {"settings": flat}},
            ("GET", "/live/_mapping"): {name: {"mappings": mapping}},
        }
    )
    return index_definition(engine_http(engine), "live")


def test_blue_green_keeps_the_hash_an_analyzer_change_does_not() -> None:
    blue = _definition(
        "live-blue", uuid="a1", creation_date="1", provided_name="live-blue", number_of_replicas="1"
    )
    green = _definition(
        "live-green", uuid="b2", creation_date="2", provided_name="live-green", number_of_replicas="0"
    )
    assert blue["index_target"] == "live-blue" and green["index_target"] == "live-green"
    assert blue["index_definition_sha256"] == green["index_definition_sha256"]
    other = _definition(
        "live-green", mapping={"properties": {"text": {"type": "text", "analyzer": "standard"}}}
    )
    assert other["index_definition_sha256"] != green["index_definition_sha256"]
    shards = _definition("live-green", settings=dict(SETTINGS, **{"index.number_of_shards": "3"}))
    assert shards["index_definition_sha256"] != green["index_definition_sha256"]


def test_an_unreadable_definition_is_left_out() -> None:
    from pytest_retrieval.backends.search_engine.http import EngineHTTPError

    engine = FakeEngine({("GET", "/live/_settings"): EngineHTTPError(403, "forbidden")})
    assert index_definition(engine_http(engine), "live") == {}
