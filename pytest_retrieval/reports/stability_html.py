"""The stability section of a suite's JSON report in the HTML report (issue #33): per retriever,
the canary and judged queries compared with the baseline's rankings (the share whose top 10 is
unchanged, the mean of each measure the section holds), the documents that entered the top 10
unjudged, the stability gates' verdicts, and the most changed queries with what came and went.
The words are the summary's and the Markdown's (:mod:`stability_view`, :mod:`..wording`). Pure:
reads the report; every string from it is escaped, every number written by :mod:`formats`."""

from __future__ import annotations

from html import escape
from typing import Any, List, Mapping, Optional, Tuple

from ..wording import word
from .formats import INVALID, count, missing, not_a_number, num, redact

__all__ = ["stability_html"]

#: what a query group holds besides its measures' means
_GROUP_KEYS = ("queries", "unchanged")


def _e(x: Any) -> str:
    return escape(str(x), quote=True)


def stability_html(section: Optional[Mapping[str, Any]]) -> str:
    """The section's HTML (a heading, tables, notes), empty without a section."""
    if not isinstance(section, Mapping) or not section:
        return ""
    k = count(section.get("k", 10))  # the cut-off, or "invalid"
    against = redact(str(section.get("against") or "the baseline"))
    parts = [f"<h3>Stability against {_e(against)}'s rankings (top {_e(k)})</h3>"]
    note = str(section.get("note") or "")
    retrievers = _compared(section)
    if note:
        parts.append(f'<p class="note">Not compared: {_e(redact(note))}</p>')
    parts.append(_retrievers(retrievers, k))
    parts.append(_gates(section.get("outcomes") or []))  # the verdicts, then what moved
    parts += [_most_changed(n, r, k) for n, r in retrievers.items()]
    return "".join(p for p in parts if p)


def _compared(section: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    """Each retriever's entry, none when the section says why nothing was compared."""
    retrievers = section.get("retrievers")
    if section.get("note") or not isinstance(retrievers, Mapping):
        return {}
    return {str(n): r for n, r in retrievers.items() if isinstance(r, Mapping)}


def _table(head: List[str], rows: List[str]) -> str:
    """A table of escaped header cells and ready rows (``<tr>...</tr>``)."""
    h = "".join(f"<th>{c}</th>" for c in head)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _percent(x: Any) -> str:
    if missing(x):
        return "n/a"
    return INVALID if not_a_number(x) else f"{x:.0%}"


def _groups(retrievers: Mapping[str, Mapping[str, Any]]) -> List[Tuple[str, str, Mapping[str, Any]]]:
    """(retriever, group, its figures) of each query group (canary, judged) that holds queries."""
    out = []
    for n, r in retrievers.items():
        for g in ("canary", "judged"):
            v = r.get(g)
            if isinstance(v, Mapping) and v.get("queries"):
                out.append((n, g, v))
    return out


def _retrievers(retrievers: Mapping[str, Mapping[str, Any]], k: Any) -> str:
    """One row per retriever and query group, then each retriever's counts."""
    groups = _groups(retrievers)
    measures = sorted({m for _, _, v in groups for m in v if m not in _GROUP_KEYS})
    head = ["retriever", "queries compared", f"top {_e(k)} unchanged"] + [f"mean {_e(m)}" for m in measures]
    rows = [
        f'<tr><td><code>{_e(n)}</code></td><td class="n">{_e(count(v.get("queries")))} {_e(g)}</td>'
        f'<td class="n">{_e(_percent(v.get("unchanged")))}</td>'
        + "".join(f'<td class="n">{_e(num(v.get(m)))}</td>' for m in measures)
        + "</tr>"
        for n, g, v in groups
    ]
    table = _table(head, rows) if rows else ""
    return table + "".join(f'<p class="note">{_counts(n, r, k)}</p>' for n, r in retrievers.items())


def _counts(name: str, r: Mapping[str, Any], k: Any) -> str:
    """``rrf: 37 documents entered the top 10 unjudged; 1 left out ...``, as the summary says it."""
    head = f"<code>{_e(name)}</code>: "
    if r.get("note"):
        return head + f"not compared: {_e(redact(str(r['note'])))}"
    if not any(isinstance(r.get(g), Mapping) and r[g].get("queries") for g in ("canary", "judged")):
        head += "no query compared; "
    text = f"{_e(count(r.get('entered_unjudged', 0)))} documents entered the top {_e(k)} unjudged"
    if r.get("left_out"):
        text += f"; {_e(count(r['left_out']))} left out (text changed or no longer in the set)"
    if r.get("new"):
        text += f"; {_e(count(r['new']))} new since the baseline"
    system = r.get("system")
    if system and isinstance(system, list):
        text += f"; system changes, compared: {_e(redact('; '.join(map(str, system))))}"
    return head + text


def _gates(outcomes: Any) -> str:
    """The stability gates' verdicts: value, threshold, the verdict's word, by query group."""
    rows = []
    for o in outcomes if isinstance(outcomes, list) else []:
        if not isinstance(o, Mapping):
            continue
        passed = bool(o.get("passed"))
        kind = "met" if passed else "below_floor" if o.get("op") == ">=" else "above_ceiling"
        cls = "pass" if passed else "fail"
        rows.append(
            f"<tr><td><code>{_e(o.get('retriever'))}::stability:{_e(o.get('measure'))}</code></td>"
            f'<td class="n"><span class="{cls}">{_e(num(o.get("value")))}</span></td>'
            f'<td class="n">{_e(o.get("op"))} {_e(num(o.get("threshold")))}</td>'
            f'<td><span class="{cls}">{"PASS" if passed else "FAIL"}</span> {_e(word(kind))}</td>'
            f'<td class="n">{_group_value(o.get("canary"))}</td>'
            f'<td class="n">{_group_value(o.get("judged"))}</td>'
            f"<td>{_e(o.get('origin') or '–')}</td></tr>"
        )
    if not rows:
        return ""
    head = ["gate", "value", "threshold", "verdict", "canary queries", "judged queries", "set at"]
    return _table(head, rows)


def _group_value(g: Any) -> str:
    """``0.9902 (300)``: a gate's value over one query group and how many queries it holds."""
    if not isinstance(g, Mapping) or not g.get("queries"):
        return "–"
    return f'{_e(num(g.get("value")))} <span class="sub">({_e(count(g.get("queries")))})</span>'


def _most_changed(name: str, r: Mapping[str, Any], k: Any) -> str:
    """The most changed queries of a retriever (folded): RBO, the query, what left and entered."""
    listed = r.get("most_changed")
    changed = [c for c in listed if isinstance(c, Mapping)] if isinstance(listed, list) else []
    if not changed:
        return ""
    rows = [
        f'<tr><td class="n">{_e(num(c.get("rbo")))}</td>'
        f'<td><code>{_e(c.get("query"))}</code> <span class="sub">({_e(c.get("kind"))})</span></td>'
        f"<td>{_e(c.get('text') or '')}</td>"
        f"<td>{_docs(c.get('left'), _left)}</td><td>{_docs(c.get('entered'), _entered)}</td></tr>"
        for c in changed
    ]
    head = ["rbo", "query", "text", f"left the top {_e(k)}", "entered"]
    return (
        f'<details class="stability"><summary>The {len(changed)} most changed queries of '
        f"<code>{_e(name)}</code></summary>{_table(head, rows)}</details>"
    )


def _docs(docs: Any, one: Any) -> str:
    items: List[str] = [one(d) for d in docs if isinstance(d, Mapping)] if isinstance(docs, list) else []
    return "<br>".join(items) or "–"


def _titled(d: Mapping[str, Any]) -> str:
    title = d.get("title")
    return f"<code>{_e(d.get('doc'))}</code>" + (f' "{_e(title)}"' if title else "")


def _left(d: Mapping[str, Any]) -> str:
    return f'{_titled(d)} <span class="sub">(was #{_e(count(d.get("was")))})</span>'


def _entered(d: Mapping[str, Any]) -> str:
    grade = d.get("grade")
    judged = "unjudged" if grade is None else f"grade {count(grade)}"
    return f'{_titled(d)} <span class="sub">(#{_e(count(d.get("rank")))}, {_e(judged)})</span>'
