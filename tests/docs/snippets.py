"""The fenced ```python and ```yaml blocks of the README and the documentation pages.

A block preceded (on the line right before its fence) by ``<!-- skip-snippet: reason -->`` is
not run; ``--8<-- "path"`` lines (pymdownx.snippets) are replaced by the file they include, as
the site shows them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ("python", "yaml")
SKIP = re.compile(r"^<!--\s*skip-snippet:\s*(?P<reason>\S.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)")
INCLUDE = re.compile(r'^\s*--8<--\s+"(?P<path>[^"]+)"\s*$')


@dataclass(frozen=True)
class Snippet:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    skip: Optional[str]  # the reason given by the marker, if any

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def pages() -> List[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _resolve_includes(code: str) -> str:
    out = []
    for line in code.splitlines(keepends=True):
        m = INCLUDE.match(line)
        out.append((ROOT / m["path"]).read_text(encoding="utf-8") if m else line)
    return "".join(out)


def snippets(page: Path) -> Iterator[Snippet]:
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), len(lines))
        if m["lang"] in LANGUAGES:
            indent = len(m["indent"])
            body = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
            marker = SKIP.match(lines[i - 1].strip()) if i else None
            yield Snippet(
                page, i + 1, m["lang"], _resolve_includes(body), marker["reason"] if marker else None
            )
        i = end + 1


def all_snippets() -> List[Snippet]:
    return [s for page in pages() for s in snippets(page)]
