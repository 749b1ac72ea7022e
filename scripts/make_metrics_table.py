"""Write the metrics tables generated from the measures' declarations
(``pytest_retrieval/measures/registry.py``): ``docs/metrics.md``, and the table of
``docs/explanation/metrics.md`` ("How the metrics are computed": the lines from its
``| metric | definition |`` header to the first blank line).

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

EXPLAINED = ROOT / "docs" / "explanation" / "metrics.md"
DOCS = ROOT / "docs" / "metrics.md"
HEADER = "| metric | definition |"


def with_readme_table(page: str) -> str:
    """``page`` with its metrics table replaced by the generated one."""
    lines = page.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip("\n") == HEADER), None)
    if start is None:
        raise SystemExit(f"{EXPLAINED.name}: no line {HEADER!r}")
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "".join(lines[:start]) + readme_table() + "".join(lines[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the files are up to date")
    args = parser.parse_args(argv)
    wanted = {EXPLAINED: with_readme_table(EXPLAINED.read_text(encoding="utf-8")), DOCS: docs_page()}
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
