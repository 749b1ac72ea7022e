"""Write the metrics table generated from the measures' declarations
(``pytest_retrieval/measures/registry.py``, rendered by ``measures/tables.py``):
``docs/metrics.md``. With ``--readme`` also the table of the README's "Metrics" section
(the lines from its ``| metric | definition |`` header to the first blank line), when the
README has one: ``docs/metrics.md`` is the reference, the README a front page.

    python scripts/make_metrics_table.py            # write docs/metrics.md
    python scripts/make_metrics_table.py --check    # exit 1 when it is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_retrieval.measures.tables import docs_page, readme_table  # noqa: E402

README = ROOT / "README.md"
DOCS = ROOT / "docs" / "metrics.md"
HEADER = "| metric | definition |"


def with_readme_table(readme: str) -> str:
    """``readme`` with its metrics table replaced by the generated one."""
    lines = readme.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip("\n") == HEADER), None)
    if start is None:
        raise SystemExit(f"{README.name}: no line {HEADER!r}")
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "".join(lines[:start]) + readme_table() + "".join(lines[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the files are up to date")
    parser.add_argument("--readme", action="store_true", help="also the README's table, if it has one")
    args = parser.parse_args(argv)
    wanted = {DOCS: docs_page()}
    readme = README.read_text(encoding="utf-8")
    if args.readme and HEADER in readme.splitlines():
        wanted[README] = with_readme_table(readme)
    stale = [
        path for path, text in wanted.items() if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of date: run python scripts/make_metrics_table.py")
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
