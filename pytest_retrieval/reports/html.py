"""The HTML report of a JSON report: one self-contained file (inline CSS, inline SVG plots,
a few lines of plain JavaScript; no network, no CDN, no external fonts) that opens from a CI
artefact or on an air-gapped machine.

Per suite: the verdict, failed and errored gates with their messages, the gated metrics
against the baseline, the plots (:mod:`plots`, matplotlib as an optional extra), the stage
and strata tables, the stability against the baseline's rankings (:mod:`stability_html`), and a
sortable, filterable per-query table; choosing a query shows its top 10 now and in the baseline
side by side, with grades and document titles.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from html import escape
from importlib import resources
from typing import Any, Dict, List, Mapping, Optional

from ..gates.rankings import SHOWN
from ..wording import word
from .formats import (
    candidate_recall,
    count,
    delta,
    engine_line,
    mark,
    metric_value,
    not_a_number,
    num,
    percent_shares,
    pval,
    redact,
    sparse_fact_line,
    sparse_precisions,
    stage_head,
    stage_latency,
    stage_quality,
    stage_reference,
)
from .stability_html import stability_html
from .view import SuiteView, gate_name, item_label, owners_of, verdict


def _static(name: str) -> str:
    return (
        resources.files("pytest_retrieval.reports")
        .joinpath("static")
        .joinpath(name)
        .read_text(encoding="utf-8")
    )


def e(x: Any) -> str:
    """The HTML escape: every value from the report goes through it (text and attributes)."""
    return escape(str(x), quote=True)


def _json_script(data: Any) -> str:
    """JSON inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` left as they are,
    so no text closes the element or opens a comment in it (the HTML spec's script data states)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _table(head: List[str], rows: List[List[str]], cls: str = "", numeric_from: int = 1) -> str:
    h = "".join(f"<th>{c}</th>" for c in head)
    body = []
    for r in rows:
        cells = "".join(
            f'<td class="n">{c}</td>' if i >= numeric_from else f"<td>{c}</td>" for i, c in enumerate(r)
        )
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="{cls}"><thead><tr>{h}</tr></thead><tbody>{"".join(body)}</tbody></table>'


# ------------------------------------------------------------------ sections


def _problems(v: SuiteView) -> str:
    items = v.problems()
    if not items:
        return ""
    out = ["<h3>Failed and errored gates</h3>"]
    for it in items:
        err = it["outcome"] == "error"
        msg = redact(it.get("message") or "").strip()
        first = msg.splitlines()[0] if msg else ""
        label = f'<span class="{"err" if err else "fail"}">{"ERROR" if err else "FAIL"}</span> <code>{e(item_label(it))}</code>{_owners(it)} {e(first)}'
        if msg:
            out.append(f'<details class="problem"><summary>{label}</summary><pre>{e(msg)}</pre></details>')
        else:
            out.append(f"<p>{label}</p>")
    return "\n".join(out)


def _cell(v: SuiteView, retriever: str, col: str) -> str:
    parts = []
    kind, value, g = v.cell(retriever, col)
    if kind == "error":
        parts.append('<span class="err">error</span>')
    elif g is not None:
        cls = "pass" if g.get("passed") else "fail"
        parts.append(
            f'<span class="{cls}">{e(metric_value(col, value))}</span> '
            f'<span class="sub">{e(g["op"])} {e(metric_value(col, g["threshold"]))}</span>' + _origin(g)
        )
    elif kind == "value":
        parts.append(e(metric_value(col, value)))
    reg = v.regression(retriever, col)
    if reg is not None:
        c = reg["comparison"]
        m = mark(c)
        cls = "down" if m == "▼" else "up" if m == "▲" else ""
        verdict_ = "" if reg.get("passed") else f' <span class="fail">{word("regressed")}</span>'
        parts.append(
            f'<span class="{cls}">Δ {e(delta(c.get("mean_diff")))} {m}</span> '
            f'<span class="sub">[{e(delta(c.get("ci_low")))}, {e(delta(c.get("ci_high")))}] '
            f"{count(c.get('won'))}/{count(c.get('lost'))}/{count(c.get('tied'))} p={e(pval(c.get('p_randomization')))}</span>{verdict_}"
        )
    return "<br>".join(parts) or "–"


def _owners(g: Mapping[str, Any]) -> str:
    """`` (owner @org/search)``: a gate's CODEOWNERS names, as text."""
    owners = owners_of(g)
    return f' <span class="sub">(owner {e(" ".join(owners))})</span>' if owners else ""


def _origin(g: Mapping[str, Any]) -> str:
    """Where a floor was set (and the stricter value a later file replaced)."""
    where = str(g.get("origin") or "")
    if g.get("lowered_from"):
        where += f", lowered from {g['lowered_from']}"
    return f'<br><span class="sub">{e(where)}</span>' if where else ""


def _team_row(g: Dict[str, Any]) -> List[str]:
    """A team gate's row: a floor, or a baseline gate (its difference and the max_drop)."""
    css = "pass" if g.get("passed") else "fail"
    if "comparison" in g:  # a baseline gate (gates.regression.RegressionOutcome.as_dict)
        c = g["comparison"]
        return [
            f"<code>{e(g['retriever'])}::baseline:{e(g['metric'])}</code>",
            f'<span class="{css}">Δ {e(delta(c.get("mean_diff")))} [{e(delta(c.get("ci_low")))}, '
            f"{e(delta(c.get('ci_high')))}]</span>",
            f"max_drop {g['max_drop']:g}",
            e(g.get("origin") or "–"),
        ]
    return [
        f"<code>{e(g['retriever'])}::{e(gate_name(g))}</code>",
        f'<span class="{css}">{e(metric_value(g["metric"], g.get("value")))}</span>',
        f"{e(g['op'])} {e(metric_value(g['metric'], g.get('threshold')))}",
        e(g.get("origin") or "–") + _origin({"lowered_from": g.get("lowered_from")}),
    ]


def _teams(v: SuiteView) -> str:
    """Each team threshold file's gates over the suite's run, with its owners."""
    out = []
    for team, gates in v.team_gates():
        rows = [_team_row(g) for g in gates]
        out.append(
            f"<h3>Team <code>{e(team)}</code>{_owners(gates[0])}</h3>"
            + _table(["gate", "value", "floor", "set at"], rows)
        )
    return "".join(out)


def _metrics(v: SuiteView) -> str:
    cols = v.columns()
    rows = [[f"<code>{e(n)}</code>"] + [_cell(v, n, c) for c in cols] for n in v.names]
    return (
        "<h3>Gated metrics</h3>"
        + _table(["retriever"] + [e(c) for c in cols], rows)
        + '<p class="note">Value with its floor or ceiling; Δ: this run − baseline with its one-sided '
        "95% bounds, won/lost/tied queries and the randomization p; ▼/▲ a significant drop/gain.</p>"
        + _teams(v)
    )


def _recent(v: SuiteView) -> str:
    """The last runs of every gated metric (the run history) beside this run's value."""
    from ..history.views import sparkline
    from ..safe_names import one_line

    rows = []
    for retriever, metric, values, today in v.recent():
        now = [today] if isinstance(today, (int, float)) else []
        title = " → ".join(metric_value(metric, x) for x in values + now)
        rows.append(
            [
                f"<code>{e(one_line(retriever))}</code>",
                e(one_line(metric)),
                f'<span class="spark" title="{e(title)}">{e(sparkline(values + now))}</span>',
                e(" ".join(metric_value(metric, x) for x in values[-10:])),
                f"<strong>{e(metric_value(metric, today))}</strong>",
            ]
        )
    if not rows:
        return ""
    n = v.recent_last()
    return (
        f'<h3>The last {n} runs</h3><div class="recent">'
        + _table(["retriever", "metric", "trend", "last runs", "this run"], rows, numeric_from=3)
        + f'</div><p class="note">Gated metrics in the run history <code>{e(one_line(str(v.history.get("store", "?"))))}</code>, '
        "oldest first; the trend ends with this run.</p>"
    )


def _stages(v: SuiteView) -> str:
    st = v.s.get("stages", [])
    if not any(r.get("builds_on") for r in st):
        return ""
    reference = stage_reference(st)
    rows = [_stage_row(r, reference) for r in st]
    head = stage_head(e(st[0].get("metric", "")), e(reference) if reference is not None else None)
    verdicts = "".join(
        f"<li><code>{e(r['name'])}</code>: {e(r['verdict'])}</li>" for r in st if r.get("verdict")
    )
    return (
        "<h3>Stages</h3>" + _table(head, rows, numeric_from=2) + (f"<ul>{verdicts}</ul>" if verdicts else "")
    )


def _stage_row(r: Mapping[str, Any], reference: Optional[str]) -> List[str]:
    inputs = "+".join(map(str, r.get("builds_on") or [])) or "–"
    cells = [*stage_quality(r, reference), candidate_recall(r) or "–", *stage_latency(r)]
    return [f"<code>{e(r['name'])}</code>", e(inputs)] + [e(c) for c in cells]


def _strata(v: SuiteView) -> str:
    tags = v.tags()
    if not tags:
        return ""
    m = v.headline
    rows = [
        [e(tag), str(len(qids))] + [_stratum_cell(v, n, m, tag, qids) for n in v.names]
        for tag, qids in tags.items()
    ]
    return f"<h3>Strata ({e(m)})</h3>" + _table(
        ["stratum", "queries"] + [f"<code>{e(n)}</code>" for n in v.names], rows
    )


def _stratum_cell(v: SuiteView, retriever: str, metric: str, tag: str, qids: List[str]) -> str:
    now, base, st = v.stratum(retriever, metric, tag, qids)
    cell = e(num(now))
    if now is not None and base is not None:
        cell += f' <span class="sub">Δ {e(delta(now - base))}</span>'
    if st is not None:
        cell += (
            f' <span class="pass">{word("no_drop")}</span>'
            if st.get("passed")
            else f' <span class="fail">{word("regressed")}</span>'
        ) + (f' <span class="sub">Holm p {e(pval(st.get("p_drop_holm")))}</span>')
    return cell


def _notes(v: SuiteView) -> str:
    lines = []
    share = v.s.get("unjudged_share") or {}
    if share:
        lines.append("Unjudged in the top 10: " + percent_shares(share, e) + " (count as non-relevant).")
    if v.s.get("power"):
        lines.append(e(v.s["power"]))
    lines += _sparse_notes(v)
    for w in v.s.get("warnings") or []:
        lines.append("Warning: " + e(redact(w)))
    return "".join(f'<p class="note">{l}</p>' for l in lines)


def _sparse_notes(v: SuiteView) -> List[str]:
    """Each sparse retriever's efficiency facts and the precision the engine scored at."""
    lines = [
        f"Sparse <code>{e(r['name'])}</code>: " + e(sparse_fact_line(r["sparse"])) + "."
        for r in v.retrievers
        if isinstance(r.get("sparse"), dict)
    ]
    return lines + [
        f"Sparse scores of field <code>{e(f)}</code> ({e(kind)}): {e(how)}."
        for f, kind, how in sparse_precisions(v.s.get("backend") or {})
    ]


def _plots(v: SuiteView) -> str:
    try:
        from .plots import suite_plots

        plots = suite_plots(v)
    except ImportError:
        return (
            '<h3>Plots</h3><p class="note">Plots need matplotlib: '
            "<code>pip install 'pytest-retrieval[html]'</code>, then re-render with "
            "<code>pytest-retrieval report REPORT.json --html OUT.html</code>.</p>"
        )
    figs = []
    for title, svg, caption in plots:
        if svg:
            figs.append(
                f'<figure class="plot"><figcaption><strong>{e(title)}</strong>. {e(caption)}</figcaption>{svg}</figure>'
            )
        else:
            figs.append(
                f'<figure class="plot missing"><figcaption><strong>{e(title)}</strong>. {e(caption)}</figcaption></figure>'
            )
    return '<h3>Plots</h3><div class="plots">' + "".join(figs) + "</div>"


def _queries(v: SuiteView, idx: int) -> str:
    m = v.headline
    now_vals = {n: v.per_query(n, m) for n in v.names}
    base_vals = {n: v.base_per_query(n, m) for n in v.names}
    qids = list(v.queries) or sorted({q for vals in now_vals.values() for q in vals})
    diffs: Dict[str, Dict[str, List[str]]] = {}
    rows = [_query_row(v, q, now_vals, base_vals, diffs) for q in qids]
    head = _query_head(v.names, m, base_vals)
    has_base = any(base_vals.values())
    return f"""<h3>Queries</h3>
<div class="qbox" id="queries-{idx}">
<script type="application/json" class="qdata">{_json_script(_query_data(v, m, diffs))}</script>
<div class="toolbar">
<input type="search" placeholder="filter: id, text or tag" aria-label="filter queries">
<label><input type="checkbox" class="dropped"{"" if has_base else " disabled"}> only queries that dropped</label>
<label>retriever <select class="retriever">{_retriever_options(v)}</select></label>
<span class="count note"></span>
<span class="note">Click a column to sort, a query to see its top {SHOWN} now and in the baseline.</span>
</div>
<div class="qwrap">
<div class="qtable-box"><table class="queries"><thead><tr>{"".join(f"<th>{h}</th>" for h in head)}</tr></thead>
<tbody>{"".join(rows)}</tbody></table></div>
<div class="panel"><p class="note">Choose a query.</p></div>
</div>
</div>"""


def _query_head(names: List[str], metric: str, base_vals: Mapping[str, Any]) -> List[str]:
    """The per-query table's columns: id, text, tags, then each retriever's value (and its
    difference against the baseline, when the baseline has per-query values)."""
    head = ["query", "text", "tags"]
    for n in names:
        head.append(f"{e(n)} {e(metric)}")
        if base_vals[n]:
            head.append(f"{e(n)} Δ")
    return head


def _query_row(
    v: SuiteView,
    q: str,
    now_vals: Mapping[str, Dict[str, float]],
    base_vals: Mapping[str, Dict[str, float]],
    diffs: Dict[str, Dict[str, List[str]]],
) -> str:
    """One query's row; its ranking diffs (top changed against the baseline) go to ``diffs``."""
    info = v.queries.get(q) or {}
    attrs = [f'data-qid="{e(q)}"']
    cells = [
        f"<td>{e(q)}</td>",
        f"<td>{e(info.get('text', ''))}</td>",
        f"<td>{e(', '.join(info.get('tags') or []))}</td>",
    ]
    for i, n in enumerate(v.names):
        x = now_vals[n].get(q)
        cells.append(f'<td class="n" data-v="{_attr_number(x)}">{e(num(x))}</td>')
        if base_vals[n]:
            d = _difference(x, base_vals[n].get(q))
            cells.append(_delta_cell(d))
            if d is not None:
                attrs.append(f'data-d-{i}="{_attr_number(d)}"')
        rd = v.diff(n, q)
        if rd is not None and not rd.same:
            diffs.setdefault(n, {})[q] = rd.lines(titles=None, limit=10)
    return f"<tr {' '.join(attrs)}>{''.join(cells)}</tr>"


def _difference(now: Any, base: Any) -> Optional[float]:
    if now is None or base is None or not_a_number(now) or not_a_number(base):
        return None
    return float(now - base)


def _attr_number(x: Any) -> str:
    """A sort key attribute: the number, or empty (sorted last) for anything else."""
    return "" if x is None or not_a_number(x) else e(repr(float(x)))


def _delta_cell(d: Optional[float]) -> str:
    cls = "down" if d is not None and d < 0 else "up" if d is not None and d > 0 else ""
    text = delta(d) if d else ("0" if d == 0 else "–")
    return f'<td class="n {cls}" data-v="{_attr_number(d)}">{e(text)}</td>'


def _query_data(v: SuiteView, metric: str, diffs: Dict[str, Dict[str, List[str]]]) -> Dict[str, Any]:
    """What the page's script reads: the queries, the top lists now and in the baseline, the diffs."""
    names = v.names
    return {
        "retrievers": names,
        "k": SHOWN,
        "metric": metric,
        "queries": v.queries,
        "titles": v.titles,
        "now": {n: {q: docs[:SHOWN] for q, docs in (v.rankings.get(n) or {}).items()} for n in names},
        "base": {
            n: {q: docs[:SHOWN] for q, docs in ((v.base.get(n) or {}).get("top") or {}).items()}
            for n in names
            if (v.base.get(n) or {}).get("top")
        },
        "diff": diffs,
    }


def _retriever_options(v: SuiteView) -> str:
    """The retriever choice, on the one of the worst-moved queries first shown."""
    names = v.names
    default = next((i for i, n in enumerate(names) if any(p[0] == n for p in v.moved_pairs()[:1])), 0)
    return "".join(
        f'<option value="{i}"{" selected" if i == default else ""}>{e(n)}</option>'
        for i, n in enumerate(names)
    )


def _suite(v: SuiteView, idx: int) -> str:
    be = v.s.get("backend") or {}
    engine = engine_line(be)
    n = (v.s.get("queries") or {}).get("judged")
    parts = [f'<section class="suite" id="suite-{idx}"><h2>{e(v.name)}</h2>']
    if v.error is not None:
        parts.append(f'<p class="err">{_not_run(v.error)}</p>')
        parts.append(_problems(v))
        return "\n".join(parts) + "</section>"
    note = v.baseline.get("note") or "no baseline comparison for this suite"
    parts.append(
        f'<p class="note">{e(engine)} · {count(n)} judged queries · profile {e(v.s.get("profile", ""))} · baseline: {e(note)}</p>'
    )
    parts += [_problems(v), _metrics(v), _recent(v), _plots(v), _stages(v), _strata(v), _notes(v)]
    parts.append(stability_html(v.s.get("stability")))
    parts.append(_queries(v, idx))
    return "\n".join(p for p in parts if p) + "</section>"


def _not_run(error: Any) -> str:
    if str(error) == "not run":  # none of its gates ran: deselected, or the session stopped first
        return (
            "The suite did not run: none of its gates ran (deselected, or the session stopped before them)."
        )
    return f"The suite could not run: {e(redact(str(error)))}"


def render_html(doc: Mapping[str, Any]) -> str:
    vd = verdict(doc)
    views = [SuiteView(s, doc.get("history")) for s in doc.get("suites", [])]
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    coll = "".join(
        f'<p class="err">Collection error {e(n)}: {e(redact(msg))}</p>' for n, msg in vd.collection_errors
    )
    body = "\n".join(_suite(v, i) for i, v in enumerate(views))
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(vd.headline(icon=False))}</title>
<style>{_static("report.css")}</style>
</head>
<body>
<header>
<h1 class="verdict {vd.status}"><span class="badge {vd.status}">{vd.status.upper()}</span> {e(vd.headline(icon=False))}</h1>
<div class="meta">pytest-retrieval {e(doc.get("plugin_version", "?"))} · rendered {when} · {len(views)} suite(s)</div>
</header>
<main>
{coll}
{body}
</main>
<script>{_static("report.js")}</script>
</body>
</html>
"""
    return page  # messages, notes and warnings are redacted where they are written
