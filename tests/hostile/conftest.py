"""Shared pieces of the hostile-input table (issue #11): a small valid suite to break, the
one-line check, and a time bound for every case."""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator

import pytest

BASE = """\
suite: t
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
    - {id: q2, text: "river floods", relevant: {d2: 1}}
  documents:
    - {id: d1, text: "solar panels in winter"}
    - {id: d2, text: "river flood defences"}
latency:
  warmup: 0
  repetitions: 1
retrievers:
  bm25:
    type: bm25
  text:
    type: bm25
    fields: [text]
  rrf:
    type: rrf
    of: [bm25, text]
"""

FLOORS = "floors:\n  bm25:\n    ndcg@10: 0.1\n"

# the passwords of issue #11 item 1, and more of the same classes
HOSTILE_PASSWORDS = [
    "90417733219",
    "007",
    "@Xq7pass",
    "%Zk9pass",
    "*Xq7pass",
    "!Yw3pass",
    "&Vb2pass",
    "Pw: [x9q",
    "12:30:45",
    "null",
    "~",
    "true",
    "0x1F",
    "1e3",
    "- Lz8pass",
    "{Mm1pass}",
    "#Nn2pass",
    "|Oo3pass",
    "> Qq5pass",
    "pa'ss\"word",
    "p\u00e4ss\u00e9\u202ew0rd",
    " Sp4ce ",
    "${NOT_EXPANDED_AGAIN}",
    "back\\slash\\n",
]


def one_line(message: str, *fragments: str) -> None:
    """One line, no traceback, every fragment in it."""
    assert "\n" not in message.strip(), message
    assert "Traceback" not in message, message
    for f in fragments:
        assert f in message, f"{f!r} not in {message!r}"


@contextlib.contextmanager
def bounded(seconds: int = 30) -> Iterator[None]:
    """Fail (never hang) when a case takes longer than ``seconds``."""

    def expire(signum, frame):  # pragma: no cover - only on a hang
        raise TimeoutError(f"case took longer than {seconds}s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def hostile_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for i, pw in enumerate(HOSTILE_PASSWORDS):
        monkeypatch.setenv(f"HOSTILE_PW_{i}", pw)
    return monkeypatch
