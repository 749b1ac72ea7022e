"""What a judge command says: one line on stderr, flushed (a long run shows it at once)."""

from __future__ import annotations

import sys

__all__ = ["say"]


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
