"""``pytest-retrieval history prune --keep-last N / --before DATE``: delete old runs."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from typing import Any

from ..options import number
from .store import add_store_option, open_from_args

__all__ = ["NAME", "register", "run"]

NAME = "prune"


def _date(text: str) -> datetime:
    """``YYYY-MM-DD`` or an ISO 8601 time; without a zone it is UTC."""
    try:
        t = datetime.fromisoformat(
            text.strip()[:-1] + "+00:00" if text.strip().endswith("Z") else text.strip()
        )
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD or an ISO 8601 time)") from None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def run(args: argparse.Namespace) -> int:
    if args.keep_last is None and args.before is None:
        print(
            "pytest-retrieval: error: history prune: give --keep-last N, --before DATE or both",
            file=sys.stderr,
        )
        return 2
    store = open_from_args(args)
    try:
        deleted = store.prune(keep_last=args.keep_last, before=args.before)
        left = len(store.runs())
    finally:
        store.close()
    print(f"history {store.location}: {deleted} run{'s' if deleted != 1 else ''} deleted, {left} kept")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(NAME, help="delete old runs: all but the newest N, or those before a date")
    add_store_option(p)
    p.add_argument(
        "--keep-last", metavar="N", type=number(int, ge=0), default=None, help="keep the newest N runs"
    )
    p.add_argument(
        "--before",
        metavar="DATE",
        type=_date,
        default=None,
        help="delete the runs before DATE (YYYY-MM-DD, UTC)",
    )
    p.set_defaults(func=run)
