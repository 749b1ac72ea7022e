"""One attempt's total deadline and an answer's size cap (pure: no I/O).

A per-read timeout does not bound a request: a service that drips one byte every half second
answers every read in time and never ends. :class:`Deadline` is the attempt's wall-clock
budget, from the connection to the answer's last byte. :func:`read_capped` stops reading at
``cap`` bytes of the *decoded* answer (after ``Content-Encoding``: a 400 KB gzip bomb is a
1 GB answer), and :class:`CappedDecoder` inflates gzip/deflate with its output bounded per call
(``zlib``'s ``max_length``), so a bomb is never inflated past the cap.
"""

from __future__ import annotations

import time
import zlib
from typing import Iterable, Optional

__all__ = [
    "CHUNK_BYTES",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "AnswerTooLarge",
    "CappedDecoder",
    "Deadline",
    "DeadlineExceeded",
    "UnexpectedEncoding",
    "describe_bytes",
    "read_capped",
]

DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # a ranking's answer is kilobytes; a batch's, megabytes
CHUNK_BYTES = 64 * 1024  # read (and inflated) at a time


def describe_bytes(n: int) -> str:
    """``67108864`` -> ``64 MiB (67108864 bytes)``."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:g} {unit} ({n} bytes)"
    return f"{n} bytes"


class DeadlineExceeded(Exception):
    """The attempt's deadline passed before the answer's last byte."""

    def __init__(self, seconds: float):
        super().__init__(f"no complete answer within the deadline of {seconds:g} s")
        self.seconds = seconds


class AnswerTooLarge(Exception):
    """The answer's decoded bytes passed the cap; reading stopped there."""

    def __init__(self, cap: int):
        super().__init__(
            f"the answer is larger than the cap of {describe_bytes(cap)}, counted after decompression; "
            "reading stopped there"
        )
        self.cap = cap


class UnexpectedEncoding(Exception):
    """The answer's ``Content-Encoding`` is one the request did not accept (it asks for
    ``identity``) and that cannot be inflated here with a bound."""

    @staticmethod
    def message(encoding: str) -> str:
        return (
            f"the answer is in Content-Encoding {encoding!r}, which the request did not accept "
            "(it asks for identity; gzip and deflate are inflated)"
        )


class Deadline:
    """The total time of one attempt, started when made."""

    def __init__(self, seconds: float):
        self.seconds = float(seconds)
        self.at = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def left(self, timeout: Optional[float] = None) -> float:
        """The time one socket operation may take: what is left of the deadline (at most
        ``timeout``); DeadlineExceeded when nothing is."""
        left = self.remaining()
        if left <= 0:
            raise DeadlineExceeded(self.seconds)
        return left if timeout is None else min(float(timeout), left)


def read_capped(chunks: Iterable[bytes], cap: int, deadline: Optional[Deadline] = None) -> bytes:
    """The chunks joined; AnswerTooLarge as soon as they pass ``cap`` bytes (the rest is never
    read), DeadlineExceeded when the deadline passes between two chunks."""
    out = bytearray()
    for chunk in chunks:
        if len(out) + len(chunk) > cap:
            raise AnswerTooLarge(cap)
        out += chunk
        if deadline is not None:
            deadline.left()
    return bytes(out)


class CappedDecoder:
    """``Content-Encoding: gzip`` or ``deflate`` inflated chunk by chunk, never more than
    ``cap + 1`` bytes in all (the caller's :func:`read_capped` then refuses the answer).
    ``deflate`` is zlib-wrapped per RFC 9110 section 8.4.1.2, raw deflate accepted as
    servers send both."""

    def __init__(self, encoding: str, cap: int):
        self.cap = cap
        self.produced = 0
        gzip = encoding.strip().lower() in ("gzip", "x-gzip")
        self._wbits = 16 + zlib.MAX_WBITS if gzip else zlib.MAX_WBITS
        self._inflate = zlib.decompressobj(self._wbits)
        self._first = not gzip

    def decode(self, data: bytes) -> Iterable[bytes]:
        while data and self.produced <= self.cap:
            try:
                out = self._inflate.decompress(data, max(1, min(CHUNK_BYTES, self.cap + 1 - self.produced)))
            except zlib.error:
                if not self._first:
                    raise
                self._inflate, self._first = zlib.decompressobj(-zlib.MAX_WBITS), False  # raw deflate
                continue
            self._first = False
            self.produced += len(out)
            if out:
                yield out
            data = self._inflate.unconsumed_tail
            if not out and not data:
                break
