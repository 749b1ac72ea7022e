"""Write the threat table of ``docs/explanation/security.md`` (issue #32, section 6): the (surface,
threat class) pairs and generated examples per class and per surface kind, computed from the
declared kinds of ``tests/hostile/surface_kinds.py`` by ``tests/hostile/test_surface_threats.py``.

    python scripts/make_security_table.py            # rewrite the table between its markers
    python scripts/make_security_table.py --check    # exit 1 when it is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hostile.test_surface_threats import BEGIN, END, SECURITY_PAGE, figures  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the page is up to date")
    args = parser.parse_args(argv)
    page = SECURITY_PAGE.read_text(encoding="utf-8")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    wanted = f"{head}{BEGIN}\n{figures()}{END}{tail}"
    if wanted == page:
        return 0
    if args.check:
        print(f"{SECURITY_PAGE.relative_to(ROOT)} is stale: run python scripts/make_security_table.py")
        return 1
    SECURITY_PAGE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
