"""Secrets, round 2 (issue #28 section 4): a suite error about a ``${VAR}`` value names the
variable in every message (``fields``, ``of``, ``latency.baseline``, ``regression.retrievers``,
messages of the gates), and redaction covers an API key's decoded forms, percent-encoded
credentials in host URLs (decoded before they are sent) and short passwords."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import List

import pytest

from pytest_retrieval.backends.search_engine.http import ConnectionSettings
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError

from .conftest import BASE, FLOORS, HOSTILE_PASSWORDS, bounded, one_line

# (where the variable goes, the key the error names): each an error whatever the value
PLACES = {
    "fields": (
        BASE.replace("fields: [text]", 'fields: ["x^-1${V}"]') + FLOORS,
        "retrievers.text.fields[0]",
    ),
    "of": (BASE.replace("of: [bm25, text]", 'of: [bm25, "x${V}"]') + FLOORS, "retrievers.rrf.of[1]"),
    "latency.baseline": (
        BASE.replace("  repetitions: 1\n", '  repetitions: 1\n  baseline: "x${V}"\n') + FLOORS,
        "latency.baseline",
    ),
    "regression.retrievers": (
        BASE + FLOORS + 'regression:\n  retrievers: ["x${V}"]\n  max_drop: {ndcg@10: 0.1}\n',
        "regression.retrievers[0]",
    ),
    "expectations.retrievers": (
        BASE + FLOORS + 'expectations:\n  - {query: "solar panels", contains: [d1], retrievers: ["x${V}"]}\n',
        "expectations",
    ),
    "reranker": (
        BASE.replace(
            "retrievers:\n", 'retrievers:\n  rr:\n    type: rerank\n    of: [bm25]\n    reranker: "x${V}"\n'
        )
        + FLOORS,
        "retrievers.rr",
    ),
}

SECRETS = [p for p in HOSTILE_PASSWORDS if len(p.strip()) >= 3]


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("secret", SECRETS, ids=[repr(p) for p in SECRETS])
def test_an_error_about_an_interpolated_value_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str, secret: str
) -> None:
    text, key = PLACES[place]
    monkeypatch.setenv("V", secret)
    p = tmp_path / "retrieval_x.yaml"
    p.write_text(text)
    with bounded(10), pytest.raises(ConfigError) as info:
        load_suite(p)
    msg = str(info.value)
    one_line(msg, key, "${V}")
    assert "x" + secret not in msg and repr("x" + secret) not in msg


def _settings(**connection) -> ConnectionSettings:
    return ConnectionSettings({"max_retries": 0, **connection})


KEY_ID, KEY = "VuaCfGcBCdbkQm-e5aOx", "ui2lp2axTNmsyakw9tvNnw"
ENCODED = base64.b64encode(f"{KEY_ID}:{KEY}".encode()).decode()


@pytest.mark.parametrize(
    "api_key", [ENCODED, [KEY_ID, KEY], (KEY_ID, KEY)], ids=["encoded", "list-pair", "tuple-pair"]
)
def test_every_form_of_an_api_key_is_redacted(api_key) -> None:
    redact = _settings(api_key=api_key).redact
    for form in (ENCODED, f"{KEY_ID}:{KEY}", KEY_ID, KEY, f"ApiKey {ENCODED}"):
        with bounded(5):
            out = redact(f"failed: {form} (sent)")
        one_line(out, "failed: ", "(sent)")
        for part in (ENCODED, KEY_ID, KEY):
            assert part not in out


@pytest.mark.parametrize("secret", SECRETS, ids=[repr(p) for p in SECRETS])
def test_percent_encoded_url_credentials_are_decoded_and_redacted(secret: str) -> None:
    from urllib.parse import quote

    encoded = quote(secret, safe="")
    conn = _settings(hosts=[f"http://us%40er:{encoded}@search.example:9200/"])
    assert conn.hosts == ["http://search.example:9200"]
    assert (conn.username, conn.password) == ("us@er", secret)  # what is sent: the decoded text
    out = conn.redact(f"login {encoded} / {secret} refused")
    one_line(out, "login", "refused")
    assert secret.strip() not in out and encoded not in out


def test_url_credentials_keep_an_ipv6_host() -> None:
    assert _settings(hosts=["http://u:p%3Aw@[::1]:9200"]).hosts == ["http://[::1]:9200"]


@pytest.mark.parametrize(
    "password,text,kept",
    [
        ("pw", "login pw refused", ["login", "refused"]),
        ("pw", "u:pw@host", ["u:", "@host"]),
        ("pw", "'password': 'pw'", ["'password'"]),
        ("007", "took 1007 ms; password 007", ["took 1007 ms"]),
        ("x", "auth x failed", ["auth", "failed"]),
    ],
    ids=["word", "in-url", "in-json", "inside-a-number-kept", "one-char"],
)
def test_a_short_password_is_redacted_where_it_stands_alone(
    password: str, text: str, kept: List[str]
) -> None:
    out = _settings(username="u", password=password).redact(text)
    one_line(out, "***", *kept)
    words = out.replace("'", " ").replace(":", " ").replace("@", " ").split()
    assert password not in words
