"""``pytest-retrieval schema``: the JSON Schema of suite files."""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    from ..config.schema import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def register(sub: Any) -> None:
    s = sub.add_parser("schema", help="print the JSON Schema of suite files")
    s.set_defaults(func=run)
