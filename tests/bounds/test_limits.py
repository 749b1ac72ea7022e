"""The pure pieces of the bounds: the deadline, the capped reader, the bounded inflater."""

from __future__ import annotations

import time
import zlib

import pytest

from pytest_retrieval.bounds.limits import (
    AnswerTooLarge,
    CappedDecoder,
    Deadline,
    DeadlineExceeded,
    describe_bytes,
    read_capped,
)


def test_a_deadline_gives_what_is_left_and_then_refuses() -> None:
    deadline = Deadline(3600)
    assert deadline.left(5.0) == 5.0 and 0 < deadline.left() <= 3600
    past = Deadline(0.001)
    time.sleep(0.01)
    with pytest.raises(DeadlineExceeded, match="within the deadline of 0.001 s"):
        past.left(5.0)


def test_read_capped_stops_at_the_cap_and_never_reads_on() -> None:
    consumed = []

    def chunks():
        for i in range(100):
            consumed.append(i)
            yield b"x" * 10

    assert read_capped(iter([b"ab", b"cd"]), 4) == b"abcd"
    with pytest.raises(AnswerTooLarge, match="larger than the cap of 25 bytes"):
        read_capped(chunks(), 25)
    assert len(consumed) == 3


@pytest.mark.parametrize(
    "encoding, pack",
    [
        ("gzip", lambda d: zlib.compress(d, wbits=16 + zlib.MAX_WBITS)),
        ("deflate", zlib.compress),  # zlib-wrapped, as RFC 9110 says
        ("deflate", lambda d: zlib.compress(d, wbits=-zlib.MAX_WBITS)),  # raw, as servers send too
    ],
)
def test_the_decoder_inflates_small_answers_whole(encoding: str, pack) -> None:
    data = b'{"results": []}' * 1000
    packed = pack(data)
    decoder = CappedDecoder(encoding, 10**6)
    pieces = [packed[i : i + 7] for i in range(0, len(packed), 7)]
    assert b"".join(out for piece in pieces for out in decoder.decode(piece)) == data


def test_the_decoder_stops_a_bomb_just_past_the_cap() -> None:
    bomb = zlib.compress(b"\0" * (64 * 2**20), 9)  # 64 MiB in about 64 KB
    decoder = CappedDecoder("deflate", 2**20)
    with pytest.raises(AnswerTooLarge):
        read_capped(decoder.decode(bomb), 2**20)
    assert decoder.produced <= 2**20 + 1


def test_sizes_are_named_in_units_and_bytes() -> None:
    assert describe_bytes(64 * 2**20) == "64 MiB (67108864 bytes)"
    assert describe_bytes(1500) == "1.46484 KiB (1500 bytes)"
    assert describe_bytes(12) == "12 bytes"
