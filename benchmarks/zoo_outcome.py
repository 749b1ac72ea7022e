"""The regression zoo's verdicts: what one pytest run of a changed suite did (read from its JUnit
XML and its ``--retrieval-report``), and what that means for a harmful or a harmless change.

Outcomes of a run:

* ``error``: some item of the gate suite ended in an error (or the suite did not collect);
* ``failed``: some item failed (a baseline item or a floor);
* ``skipped``: no error, no failure, and a baseline item was skipped (``reason`` says why):
  *silent* unless the change is one that should be refused; a skip of the baseline items of a
  retriever the change added is expected (it has no baseline) and not counted;
* ``passed``: every item passed.

A harmful change is *caught* by ``error`` or ``failed``; a harmless one is *flagged* by them.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

GATE_FILE = "retrieval_gate.yaml"
FULL_FILE = "retrieval_full.yaml"
METRIC = "ndcg@10"


@dataclass
class Item:
    name: str  # e.g. "rrf baseline:ndcg@10"
    status: str  # passed | failed | error | skipped
    message: str = ""

    @property
    def is_baseline(self) -> bool:
        return "baseline:" in self.name

    @property
    def retriever(self) -> str:
        return self.name.split(" ", 1)[0]


@dataclass
class RunOutcome:
    outcome: str  # error | failed | skipped | passed
    items: List[Item] = field(default_factory=list)
    detail: str = ""


def read_items(junit: Path) -> List[Item]:
    """The gate suite's items (and collection errors) of one run."""
    if not junit.exists():
        return [Item("pytest", "error", "no JUnit XML written")]
    out: List[Item] = []
    for case in ET.parse(junit).iter("testcase"):
        classname = case.get("classname") or ""
        if classname.startswith(FULL_FILE):
            continue
        name = f"{classname.removeprefix(GATE_FILE + '.')} {case.get('name') or ''}".strip()
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = {"failure": "failed"}.get(child.tag, child.tag)
                message = child.get("message") or (child.text or "")
        out.append(Item(name, status, first_line(message)))
    return out


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""


def classify(items: Iterable[Item], added_retrievers: Tuple[str, ...] = ()) -> RunOutcome:
    items = list(items)
    for status in ("error", "failed"):
        hit = [i for i in items if i.status == status]
        if hit:
            names = sorted({i.name for i in hit})
            return RunOutcome(status, items, f"{', '.join(names)[:70]}: {hit[0].message[:90]}")
    skipped = [
        i for i in items if i.status == "skipped" and i.is_baseline and i.retriever not in added_retrievers
    ]
    if skipped:
        return RunOutcome(
            "skipped", items, f"{len(skipped)} baseline items skipped: {skipped[0].message[:100]}"
        )
    if not items:
        return RunOutcome("error", items, "no items ran")
    return RunOutcome("passed", items, "")


def verdict(outcome: str, harmful: bool, should_refuse: bool = False) -> str:
    """caught / missed (harmful), flagged / ok (harmless), silent, refused."""
    if outcome in ("error", "failed"):
        return "caught" if harmful else "flagged"
    if outcome == "skipped":
        return "refused" if should_refuse else "silent"
    return "missed" if harmful else "ok"


def read_metrics(report: Path) -> Dict[str, Dict[str, float]]:
    """``{suite file name: {retriever: ndcg@10}}`` from a ``--retrieval-report`` JSON."""
    if not report.exists():
        return {}
    data = json.loads(report.read_text(encoding="utf-8"))
    out: Dict[str, Dict[str, float]] = {}
    for suite in data.get("suites", []):
        name = Path(suite.get("file") or "").name
        out[name] = {
            r["name"]: r["metrics"][METRIC] for r in suite.get("retrievers", []) if METRIC in r["metrics"]
        }
    return out


def largest_drop(base: Dict[str, float], changed: Dict[str, float]) -> Tuple[Optional[str], Optional[float]]:
    """The retriever whose ndcg@10 fell most, and by how much (negative: it rose)."""
    drops = {r: base[r] - changed[r] for r in base if r in changed}
    if not drops:
        return None, None
    worst = max(drops, key=lambda r: drops[r])
    return worst, drops[worst]


def read_stability(report: Path, k: int = 10) -> Tuple[Optional[str], Optional[float]]:
    """(the retriever whose mean RBO@k against the baseline's rankings is lowest, that mean)
    over every query of the gate suite (canary and judged), from a ``--retrieval-report`` JSON;
    (None, None) without a stability section."""
    if not report.exists():
        return None, None
    data = json.loads(report.read_text(encoding="utf-8"))
    means: Dict[str, float] = {}
    for suite in data.get("suites", []):
        if Path(suite.get("file") or "").name != GATE_FILE:
            continue
        for name, r in ((suite.get("stability") or {}).get("retrievers") or {}).items():
            groups = [r.get(g) or {} for g in ("canary", "judged")]
            n = sum(g.get("queries") or 0 for g in groups)
            if n and not r.get("note"):
                means[name] = sum((g.get("queries") or 0) * (g.get(f"rbo@{k}") or 0.0) for g in groups) / n
    if not means:
        return None, None
    worst = min(means, key=lambda r: means[r])
    return worst, means[worst]
