"""The history page (``pytest-retrieval history trend --html PATH``): one self-contained HTML
file (inline CSS and SVG; no script, no network) with a chart per gated metric of the stored
runs: the value and its confidence band per run, each point coloured by its gate's verdict,
a marker where the suite's fingerprint says the system or the judgments changed, a hover
(``<title>``) naming the run, its commit and verdict, and a click (``<a>``) reaching the run's
commit (``--commit-url``) or else its row in the page's table of runs.

The charts are drawn here as plain SVG rather than with matplotlib (``plots.py``): each point
needs its own link and tooltip, which a few SVG elements give without an optional extra."""

from __future__ import annotations

import math
from html import escape
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from ..safe_names import one_line

__all__ = ["render_history_page", "series_svg"]

WIDTH, HEIGHT = 760, 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 16, 40
_VERDICT_COLOUR = {"passed": "#1e8449", "failed": "#c0392b", "error": "#d35400", "skipped": "#8a8f98"}
_BLUE, _BAND, _MARK = "#2c6fbb", "#cfe0f3", "#8e44ad"


def e(x: Any) -> str:
    """Escaped for HTML text and attributes, kept on one line (a control character spelled out)."""
    return escape(one_line(str(x)), quote=True)


def render_history_page(
    location: str, runs: Sequence[Any], series: Sequence[Any], *, commit_url: Optional[str] = None
) -> str:
    """The page: a header, one chart per series (``history.views.Series``), the runs' table."""
    from ..history.views import fingerprint_changes, run_verdict

    by_id = {r.id: r for r in runs}
    changes: Dict[str, Dict[str, List[str]]] = {}
    charts = []
    for s in series:
        if s.suite not in changes:
            changes[s.suite] = fingerprint_changes(runs, s.suite)
        charts.append(_chart(s, by_id, changes[s.suite], commit_url))
    body = "".join(charts) or '<p class="note">No gated metric in these runs.</p>'
    rows = "".join(
        f'<tr id="run-{e(r.id)}"><td><code>{e(r.id[:12])}</code></td><td>{e(f"{r.time:%Y-%m-%d %H:%M}")}</td>'
        f"<td>{e(r.branch or '-')}</td><td>{_commit_cell(r, commit_url)}</td><td>{e(r.pull_request or '-')}</td>"
        f'<td class="v-{e(run_verdict(r).split()[0])}">{e(run_verdict(r))}</td><td>{e(", ".join(r.tags) or "-")}</td></tr>'
        for r in reversed(list(runs))
    )
    span = f"{runs[0].time:%Y-%m-%d} to {runs[-1].time:%Y-%m-%d}" if runs else "no runs"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>Retrieval quality over time</title>"
        f"<style>{_CSS}</style></head><body>"
        f'<h1>Retrieval quality over time</h1><p class="note">{e(location)}: {len(runs)} runs, {e(span)}. '
        "Each point is a run (hover for its commit and verdict, click for the commit); the band is the "
        "95% interval of the mean over the queries; a dashed line marks a change of the suite's "
        "fingerprint (the system or the judgments).</p>"
        f'<div id="charts">{body}</div>'
        "<h2>Runs</h2><table><thead><tr><th>run</th><th>time (UTC)</th><th>branch</th><th>commit</th>"
        f"<th>PR</th><th>verdict</th><th>tags</th></tr></thead><tbody>{rows}</tbody></table>"
        "</body></html>\n"
    )


def _commit_cell(run: Any, commit_url: Optional[str]) -> str:
    if not run.commit:
        return "-"
    link = _commit_link(run, commit_url)
    text = f"<code>{e(run.commit[:12])}</code>"
    return f'<a href="{e(link)}">{text}</a>' if link.startswith("http") else text


def _commit_link(run: Any, commit_url: Optional[str]) -> str:
    """Where a point's click goes: the commit's page, else the run's row of the table."""
    if commit_url and run.commit:
        return commit_url.replace("{commit}", quote(str(run.commit), safe=""))
    return f"#run-{run.id}"


def _chart(s: Any, by_id: Dict[str, Any], changed: Dict[str, List[str]], commit_url: Optional[str]) -> str:
    title = f"{s.suite} · {s.retriever} · {s.metric}"
    return (
        f'<section class="chart" data-suite="{e(s.suite)}" data-retriever="{e(s.retriever)}" '
        f'data-metric="{e(s.metric)}"><h2>{e(title)}</h2>{series_svg(s, by_id, changed, commit_url)}</section>'
    )


def _scale(points: Sequence[Any]) -> Tuple[float, float]:
    ys = [v for p in points for v in (p.value, p.lo, p.hi) if v is not None and math.isfinite(v)]
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if hi == lo:
        lo, hi = lo - 0.5 * (abs(lo) or 1.0) * 0.1, hi + 0.5 * (abs(hi) or 1.0) * 0.1
    pad = (hi - lo) * 0.08
    return lo - pad, hi + pad


def series_svg(
    s: Any, by_id: Dict[str, Any], changed: Dict[str, List[str]], commit_url: Optional[str]
) -> str:
    """One series as an SVG chart (see the module doc)."""
    from ..history.views import run_verdict

    pts = s.points
    lo, hi = _scale(pts)
    n = len(pts)
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM

    def x(i: int) -> float:
        return _LEFT + (plot_w * (i + 0.5) / n)

    def y(v: float) -> float:
        return _TOP + plot_h * (1 - (v - lo) / (hi - lo))

    parts = [_axes(lo, hi, y, pts, x)]
    band = [(x(i), p) for i, p in enumerate(pts) if p.lo is not None and p.hi is not None]
    if len(band) > 1:
        upper = " ".join(f"{bx:.1f},{y(p.hi):.1f}" for bx, p in band)
        lower = " ".join(f"{bx:.1f},{y(p.lo):.1f}" for bx, p in reversed(band))
        parts.append(f'<polygon class="band" points="{upper} {lower}" fill="{_BAND}"/>')
    for i, p in enumerate(pts):
        if p.run_id in changed:
            what = "; ".join(changed[p.run_id])
            parts.append(
                f'<g class="marker"><title>{e("fingerprint changed: " + what)}</title>'
                f'<line x1="{x(i) - plot_w / n / 2:.1f}" x2="{x(i) - plot_w / n / 2:.1f}" y1="{_TOP}" '
                f'y2="{_TOP + plot_h}" stroke="{_MARK}" stroke-dasharray="4 3"/></g>'
            )
    line = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in enumerate(pts))
    parts.append(f'<polyline points="{line}" fill="none" stroke="{_BLUE}" stroke-width="1.5"/>')
    for i, p in enumerate(pts):
        run = by_id.get(p.run_id)
        colour = _VERDICT_COLOUR.get(p.verdict or "", _BLUE)
        tip = _tooltip(p, run, run_verdict(run) if run else "?")
        href = _commit_link(run, commit_url) if run else "#"
        parts.append(
            f'<a class="point" href="{e(href)}" data-verdict="{e(p.verdict or "")}"><title>{e(tip)}</title>'
            f'<circle cx="{x(i):.1f}" cy="{y(p.value):.1f}" r="4" fill="{colour}"/></a>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{e(s.metric)} per run">{"".join(parts)}</svg>'
    )


def _tooltip(p: Any, run: Any, run_verdict: str) -> str:
    band = f" [{p.lo:.4f}, {p.hi:.4f}]" if p.lo is not None and p.hi is not None else ""
    where = ""
    if run is not None:
        where = f" · {run.branch or 'no branch'} @ {(run.commit or 'no commit')[:12]}"
    gate = f" · gate {p.verdict}" if p.verdict else ""
    return f"run {p.run_id[:12]} · {p.time:%Y-%m-%d %H:%M}{where} · {p.value:.4f}{band}{gate} · run {run_verdict}"


def _axes(lo: float, hi: float, y: Any, pts: Sequence[Any], x: Any) -> str:
    """The y ticks (5, plain numbers) and a date under the first, middle and last run."""
    out = []
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        out.append(
            f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e5e7eb"/>'
            f'<text x="{_LEFT - 6}" y="{y(v) + 3:.1f}" text-anchor="end" class="tick">{v:.4g}</text>'
        )
    for i in sorted({0, len(pts) // 2, len(pts) - 1}):
        out.append(
            f'<text x="{x(i):.1f}" y="{HEIGHT - _BOTTOM + 16}" text-anchor="middle" class="tick">'
            f"{pts[i].time:%Y-%m-%d}</text>"
        )
    return "".join(out)


_CSS = (
    "body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1f2328}"
    "h1{font-size:20px}h2{font-size:15px;margin:18px 0 6px}.note{color:#57606a}"
    ".chart svg{border:1px solid #e5e7eb;border-radius:4px;background:#fff}"
    ".tick{font-size:10px;fill:#57606a}.point circle{stroke:#fff;stroke-width:1}"
    ".point:hover circle{r:6}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:3px 8px}"
    "tr:target{background:#fff8c5}.v-passed{color:#1e8449}.v-failed{color:#c0392b}.v-error{color:#d35400}"
    ".v-partial{color:#8a8f98}"
)
