"""The filters the ``history`` views share: ``--suite``, ``--branch``, ``--since``, ``--until``
and ``--limit``; a date that does not parse is one argparse line naming the option."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone
from typing import Any, Dict

from ..options import number

__all__ = ["add_filters", "filters_of", "since_date", "until_date"]


def _parse(text: str) -> datetime:
    value = str(text).strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        shown = str(text).encode("unicode_escape").decode("ascii")[:60]
        raise argparse.ArgumentTypeError(
            f"'{shown}' is not a date (YYYY-MM-DD or an ISO 8601 time, UTC unless it says)"
        ) from None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def since_date(text: str) -> datetime:
    """``YYYY-MM-DD`` (from the start of that day, UTC) or an ISO 8601 time."""
    return _parse(text)


def until_date(text: str) -> datetime:
    """``YYYY-MM-DD`` (up to the end of that day, UTC: the day is included) or an ISO 8601 time."""
    t = _parse(text)
    if len(str(text).strip()) == 10:  # a bare date: the whole day
        t = t + timedelta(days=1) - timedelta(microseconds=1)
    return t


def add_filters(p: argparse.ArgumentParser, *, limit_default: Any = None, limit_help: str = "") -> None:
    p.add_argument("--suite", metavar="NAME", default=None, help="only runs of this suite (its name:)")
    p.add_argument("--branch", metavar="NAME", default=None, help="only runs on this branch")
    p.add_argument("--since", metavar="DATE", type=since_date, default=None, help="runs from DATE (UTC)")
    p.add_argument(
        "--until", metavar="DATE", type=until_date, default=None, help="runs up to DATE, included (UTC)"
    )
    p.add_argument(
        "--limit",
        metavar="N",
        type=number(int, ge=1),
        default=limit_default,
        help=limit_help or "the newest N runs",
    )


def filters_of(args: argparse.Namespace) -> Dict[str, Any]:
    """The run filters of ``args`` as ``HistoryStore.runs`` takes them."""
    return {"suite": args.suite, "branch": args.branch, "since": args.since, "until": args.until}
