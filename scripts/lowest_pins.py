"""Print the lowest versions ``pyproject.toml`` allows for the core dependencies, one
``name==version`` a line (issue #32: the floors are tested; scripts/test installs these into
.venv-lowest/ and runs the example suite there).

Every core dependency must have a floor (``>=``); one without is an error, so a new dependency
declares the oldest version it works with. Only ``>=`` (with an optional ``<`` cap) is read.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
FLOOR = re.compile(r"^([A-Za-z0-9_.\[\]-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*(,\s*<\s*[0-9][0-9A-Za-z.]*)?$")


def lowest_pins(pyproject: Path = ROOT / "pyproject.toml") -> list:
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = []
    for dep in deps:
        m = FLOOR.match(dep.split(";")[0].strip())
        if m is None:
            raise SystemExit(f"lowest_pins.py: {dep!r} has no floor (write it as name>=version)")
        pins.append(f"{m.group(1)}=={m.group(2)}")
    return pins


if __name__ == "__main__":
    print("\n".join(lowest_pins(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "pyproject.toml")))
