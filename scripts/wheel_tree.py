"""Copy this checkout, without the package's sources, to a folder where the tests run against the
installed wheel (scripts/test, pass 1; issue #26).

From the copy, ``import pytest_retrieval`` cannot find ``./pytest_retrieval`` (pytest's rootdir,
``python -m``'s current folder and the tests' subprocesses all start there), so every import is
the installed wheel's, and a file the wheel lacks (package data: the suite schema, the HTML
report's static assets, ``py.typed``) fails the tests that need it. The files copied are git's:
tracked and untracked-but-not-ignored ones that exist (a built ``dist/``, ``.venv-*`` stay behind).

    python scripts/wheel_tree.py DEST
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "pytest_retrieval/"


def checkout_files(root: Path = ROOT) -> list:
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "surrogateescape")
    return sorted({p for p in listed.split("\0") if p and not p.startswith(PACKAGE) and (root / p).is_file()})


def copy_tree(dest: Path, root: Path = ROOT) -> int:
    files = checkout_files(root)
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    return len(files)


def main(argv: list) -> int:
    if len(argv) != 1:
        print("usage: python scripts/wheel_tree.py DEST", file=sys.stderr)
        return 2
    dest = Path(argv[0])
    if dest.exists() and any(dest.iterdir()):
        print(f"scripts/wheel_tree.py: {dest} is not empty", file=sys.stderr)
        return 2
    n = copy_tree(dest)
    print(f"scripts/wheel_tree.py: {n} files copied to {dest} (without {PACKAGE})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
