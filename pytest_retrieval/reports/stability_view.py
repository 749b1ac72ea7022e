"""The stability section of a suite's JSON report in words (issue #33), for the terminal summary
and the Markdown: "1,000 canary queries: 94% top 10 unchanged", per retriever, with the documents
that entered the top 10 unjudged and the stability gates' verdicts. Pure: reads the report."""

from __future__ import annotations

from typing import Any, List, Mapping, Optional

__all__ = ["stability_lines"]


def stability_lines(section: Optional[Mapping[str, Any]]) -> List[str]:
    """Plain lines (no indent of their own beyond the nesting), empty without a section."""
    if not section:
        return []
    k = section.get("k", 10)
    head = f"stability against {section.get('against') or 'the baseline'}'s rankings (top {k})"
    note = str(section.get("note") or "")
    if note:
        return [f"{head}: not compared: {note}"] + _gate_lines(section)
    lines = [f"{head}:"]
    for name, r in (section.get("retrievers") or {}).items():
        if r.get("note"):
            lines.append(f"  {name}: not compared: {r['note']}")
            continue
        lines.append(f"  {name}: {_retriever(r, k)}")
        if r.get("system"):
            lines.append(f"    system changes, compared: {'; '.join(r['system'])}")
    return lines + _gate_lines(section)


def _retriever(r: Mapping[str, Any], k: int) -> str:
    parts = []
    for group in ("canary", "judged"):
        g = r.get(group) or {}
        n = g.get("queries") or 0
        if not n:
            continue
        unchanged = g.get("unchanged")
        rbo = g.get(f"rbo@{k}")
        shown = f"{unchanged:.0%}" if unchanged is not None else "n/a"
        rbo_text = f", mean rbo@{k} {rbo:.4f}" if rbo is not None else ""
        parts.append(f"{n:,} {group} queries: {shown} top {k} unchanged{rbo_text}")
    text = "; ".join(parts) or "no query compared"
    text += f"; {r.get('entered_unjudged', 0):,} documents entered the top {k} unjudged"
    if r.get("left_out"):
        text += f"; {r['left_out']:,} left out (text changed or no longer in the set)"
    if r.get("new"):
        text += f"; {r['new']:,} new since the baseline"
    return text


def _gate_lines(section: Mapping[str, Any]) -> List[str]:
    out = []
    for o in section.get("outcomes") or []:
        mark = "PASS" if o.get("passed") else "FAIL"
        value = o.get("value")
        shown = f"{value:.4f}" if isinstance(value, (int, float)) else "n/a"
        out.append(
            f"  {mark}  {o['retriever']} stability:{o['measure']} = {shown} ({o['op']} {o['threshold']:.4f})"
        )
    return out
