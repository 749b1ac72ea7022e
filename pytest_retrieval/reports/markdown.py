"""The Markdown summary of a JSON report: what a reviewer reads on the pull request page
(GitHub step summary, a PR/MR comment).

First line: the verdict. Then per suite: failed and errored gates with their messages; the
retrievers x gated metrics table (value, difference against the baseline with its bounds, a
marker for a significant change); the stage table; strata; the unjudged share; and, folded in
``<details>``, the worst-moved queries with their ranking diffs. It stays under ``limit``
characters (a GitHub comment holds 65,536) and says what it left out, and where to find it.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..gates.rankings import RankDiff
from .formats import (
    candidate_recall,
    clip,
    count,
    delta,
    engine_line,
    mark,
    metric_value,
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
from .stability_view import stability_lines
from .view import SuiteView, gate_name, item_label, owners_of, verdict

LIMIT = 60_000
NAME_CHARS = 80  # a suite, retriever, metric, tag or id as shown; texts get TEXT_CHARS
TEXT_CHARS = 300
RECENT_SHOWN = 5  # the last runs' values a Markdown history row writes (its sparkline has them all)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# "@" not after a letter or digit (not ``ndcg@10``) would be a mention (html-pipeline's
# MentionFilter): a zero-width space after it notifies no one (Renovate's way of quoting)
_MENTION = re.compile(r"(?<![A-Za-z0-9])@")
# GitHub's extended autolinks (GFM spec, "Autolinks (extension)"): ``scheme://``, ``www.`` and
# ``user@host.tld`` in text become links; a zero-width space (as an entity: the inline parser
# decodes it into the text, so the autolink scan no longer sees ``://``, ``www.`` or an e-mail
# domain after ``@``) keeps a URL from a query text a plain, unclickable text
_SCHEME = re.compile(r"(?<=[A-Za-z0-9]):(?=//)")
_WWW = re.compile(r"(?i)\b(www)(?=\.)")
_EMAIL_AT = re.compile(r"(?<=[A-Za-z0-9._+-])@(?=[A-Za-z0-9-]+\.[A-Za-z0-9])")
_ZWSP = "&#8203;"


def esc(text: Any, limit: int = TEXT_CHARS) -> str:
    """The Markdown escape: inline text safe in GitHub Markdown and in a table cell, on one
    line, at most ``limit`` characters: HTML-escaped, Markdown punctuation backslash-escaped,
    ``@mentions`` and autolinks (``https://``, ``www.``, e-mail addresses) neutralised."""
    s = clip(redact(" ".join(str(text or "").split())), limit)  # before the link breaks split a URL
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # a "(" after a "]" (escaped above) is escaped too: no "](" of a link destination stays raw
    s = _MENTION.sub("@" + _ZWSP, _MD_SPECIAL.sub(r"\\\1", s).replace("](", "]\\("))
    s = _EMAIL_AT.sub("@" + _ZWSP, s)
    return _WWW.sub(r"\1" + _ZWSP, _SCHEME.sub(":" + _ZWSP, s))


def code(text: Any, limit: int = NAME_CHARS) -> str:
    """A name as code (a code span notifies no one), capped; escaped text when it is not plain."""
    s = clip(text, limit)
    if re.fullmatch(r"[\w.:/@=-]+", s):
        return f"`{s}`"
    return esc(s, limit)


def name(text: Any) -> str:
    """A name in running text: escaped and capped at ``NAME_CHARS``."""
    return esc(text, NAME_CHARS)


def fence(text: str, info: str = "text") -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    f = "`" * max(3, longest + 1)
    return f"{f}{info}\n{text.rstrip()}\n{f}"


def table(header: List[str], rows: List[List[str]], align: Optional[List[str]] = None) -> str:
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------ pieces of a suite


def _heading(v: SuiteView) -> str:
    s = v.s
    be = s.get("backend") or {}
    n = (s.get("queries") or {}).get("judged")
    parts = [f"### {name(v.name)}"]
    if v.error is None:
        parts.append(f" · {esc(engine_line(be))} · {count(n)} judged queries")
    return "".join(parts)


def _baseline_line(v: SuiteView) -> str:
    note = v.baseline.get("note")
    if note:
        return f"<sub>Baseline: {esc(note, 1000)}</sub>"
    return "<sub>No baseline comparison for this suite.</sub>"


def _problems(v: SuiteView, message_chars: int) -> str:
    items = v.problems()
    if not items:
        return ""
    heads = [_problem_head(it) for it in items]
    bodies = [_problem_body(it, message_chars) for it in items]
    bodies = [b for b in bodies if b]
    out = "**Failed and errored gates**\n\n" + "\n".join(heads)
    if bodies:
        out += (
            f"\n\n<details><summary>Their messages ({len(bodies)})</summary>\n\n"
            + "\n\n".join(bodies)
            + "\n\n</details>"
        )
    return out


def _problem_message(it: Mapping[str, Any]) -> str:
    return redact(it.get("message") or "").strip()


def _problem_head(it: Mapping[str, Any]) -> str:
    """One line per failed or errored item: its icon, the gate and its message's first line."""
    word = "errored" if it["outcome"] == "error" else "failed"
    icon = "⚠️" if it["outcome"] == "error" else "❌"
    msg = _problem_message(it)
    first = msg.splitlines()[0] if msg else ""
    gate = code(item_label(it))
    return f"- {icon} **{word}** {gate}{_owners(it)}: {esc(first, 200)}"


def _owners(g: Mapping[str, Any]) -> str:
    """`` (owner `@org/search`)``: CODEOWNERS names as code, which notifies no one, or as live
    @mentions when the file asked for it (``mention: true``) and each name is one
    (``config/ownership.OWNER_PATTERN``: a report read from disk is checked again)."""
    from ..config.ownership import OWNER_PATTERN

    owners = owners_of(g)
    if not owners:
        return ""
    live = g.get("mention") is True and all(OWNER_PATTERN.fullmatch(o) for o in owners)
    shown = [o if live else code(o) for o in owners]
    return f" (owner {' '.join(shown)})"


def _origin(g: Mapping[str, Any]) -> str:
    """Where a floor was set, and the stricter value a later file replaced, as a footnote."""
    where = esc(g.get("origin") or "", 200)
    if g.get("lowered_from"):
        where += f", lowered from {esc(g['lowered_from'], 200)}"
    return f"<sub>{where}</sub>" if where else ""


def _problem_body(it: Mapping[str, Any], message_chars: int) -> str:
    """The item's message, fenced, cut at ``message_chars``; "" without one."""
    msg = _problem_message(it)
    if not (msg and message_chars > 0):
        return ""
    if len(msg) > message_chars:
        msg = msg[:message_chars] + f"\n… ({len(msg) - message_chars} more characters in the JSON report)"
    return fence(msg)


def _cell(v: SuiteView, retriever: str, col: str) -> str:
    kind, value, g = v.cell(retriever, col)
    parts = [_value_part(col, kind, value, g), _delta_part(v, retriever, col, value)]
    return "<br>".join(p for p in parts if p is not None) or "–"


def _value_part(col: str, kind: str, value: Any, g: Optional[Mapping[str, Any]]) -> Optional[str]:
    """A cell's value: with its gate's verdict and floor or ceiling when gated."""
    if kind == "error":
        return "⚠️ error"
    if g is not None:
        icon = "✅" if g.get("passed") else "❌"
        floor = (
            f"{icon} {metric_value(col, value)} <sub>{esc(g['op'])} {metric_value(col, g['threshold'])}</sub>"
        )
        return floor + (f"<br>{_origin(g)}" if g.get("origin") else "")
    if kind == "value":
        return metric_value(col, value)
    return None


def _delta_part(v: SuiteView, retriever: str, col: str, value: Any) -> Optional[str]:
    """A cell's difference against the baseline: the regression comparison with its bounds
    when gated, else the plain difference of two quality aggregates."""
    reg = v.regression(retriever, col)
    if reg is not None:
        c = reg["comparison"]
        icon = "" if reg.get("passed") else "❌ "
        cell = f"{icon}Δ {delta(c.get('mean_diff'))} [{delta(c.get('ci_low'))}, {delta(c.get('ci_high'))}] {mark(c)}".rstrip()
        cell += _judged_part(reg.get("judged@10")) + _judged_only_part(reg.get("judged_only"))
        return cell + (f"<br>{_origin(reg)}" if reg.get("origin") else "")
    if col.endswith(("_ms", "_ratio")) or "[" in col or col.startswith("lift@"):
        return None
    base = v.base_aggregate(retriever, col)
    if base is None or value is None:
        return None
    return f"Δ {delta(value - base)}"


def _judged_part(judged: Any) -> str:
    """The change of judged@10 beside a baseline verdict (unjudged documents that entered the top
    10 count as not relevant: a drop there may be a better pipeline judged on less)."""
    if not isinstance(judged, dict) or judged.get("current") is None or judged.get("baseline") is None:
        return ""
    return f" · judged@10 Δ {delta(judged['current'] - judged['baseline'])}"


def _judged_only_part(judged_only: Any) -> str:
    """The metric on judged documents only, baseline and now, when judged@10 fell
    (``gates/judged_only.py``): its change, or that the baseline cannot tell."""
    if not isinstance(judged_only, dict):
        return ""
    name = code(judged_only.get("metric", ""))
    before, now = judged_only.get("baseline"), judged_only.get("current")
    if not isinstance(before, (int, float)) or not isinstance(now, (int, float)):
        return f" · {name} n/a"
    return f" · {name} Δ {delta(now - before)}"


def _metrics_table(v: SuiteView) -> str:
    cols = v.columns()
    rows = [[code(n)] + [_cell(v, n, c) for c in cols] for n in v.names]
    legend = (
        "<sub>✅/❌ gate passed/failed (with its floor or ceiling). Δ: this run − baseline, "
        "with its one-sided 95% lower and upper bounds; ▼ significant drop, ▲ significant gain "
        "(a bound beyond 0).</sub>"
    )
    return table(["retriever"] + [name(c) for c in cols], rows) + "\n\n" + legend


def _teams(v: SuiteView) -> str:
    """Each team threshold file's gates over the suite's run: gate, value, floor, where it was
    set, and the team's owners."""
    blocks = []
    for team, gates in v.team_gates():
        rows = [_team_row(g) for g in gates]
        head = f"**Team {code(team)}**{_owners(gates[0])}"
        blocks.append(head + "\n\n" + table(["gate", "value", "floor", "set at"], rows, ["l", "r", "r", "l"]))
    return "\n\n".join(blocks)


def _team_row(g: Mapping[str, Any]) -> List[str]:
    """A team gate's row: a floor (value, floor) or a baseline gate (its difference against the
    suite's baseline and the bound, the max_drop)."""
    icon = "✅ " if g.get("passed") else "❌ "
    if "comparison" in g:  # a baseline gate (gates.regression.RegressionOutcome.as_dict)
        c = g["comparison"]
        return [
            code(f"{g['retriever']}::baseline:{g['metric']}"),
            f"{icon}Δ {delta(c.get('mean_diff'))} [{delta(c.get('ci_low'))}, {delta(c.get('ci_high'))}]",
            f"max_drop {g['max_drop']:g}",
            _origin(g) or "–",
        ]
    return [
        code(f"{g['retriever']}::{gate_name(g)}"),
        icon + metric_value(g["metric"], g.get("value")),
        f"{esc(g['op'])} {metric_value(g['metric'], g.get('threshold'))}",
        _origin(g) or "–",
    ]


def _stages(v: SuiteView) -> str:
    all_st = v.s.get("stages", [])
    if not any(r.get("builds_on") for r in all_st):
        return ""
    metric = all_st[0].get("metric", v.headline)
    reference = stage_reference(all_st)
    rows = [
        [code(r["name"]), name("+".join(map(str, r.get("builds_on") or [])) or "–")]
        + stage_quality(r, reference)
        + [candidate_recall(r, name) or "–"]
        + stage_latency(r)
        for r in all_st
    ]
    verdicts = [f"- {code(r['name'])}: {esc(r['verdict'])}" for r in all_st if r.get("verdict")]
    return (
        "**Stages**\n\n"
        + table(
            stage_head(name(metric), name(reference) if reference is not None else None),
            rows,
            ["l", "l"] + ["r"] * (len(rows[0]) - 2),
        )
        + ("\n\n" + "\n".join(verdicts) if verdicts else "")
    )


def _strata(v: SuiteView) -> str:
    tags = v.tags()
    if not tags:
        return ""
    metric = v.headline
    head = ["stratum", "queries"] + [code(n) for n in v.names]
    rows = [
        [name(tag), str(len(qids))] + [_stratum_cell(v, n, metric, tag, qids) for n in v.names]
        for tag, qids in tags.items()
    ]
    return f"**Strata** ({name(metric)} per query tag)\n\n" + table(head, rows)


def _stratum_cell(v: SuiteView, retriever: str, metric: str, tag: str, qids: List[str]) -> str:
    now, base, st = v.stratum(retriever, metric, tag, qids)
    cell = num(now)
    if now is not None and base is not None:
        cell += f" (Δ {delta(now - base)})"
    if st is not None:
        cell += (" ✅" if st.get("passed") else " ❌") + f" <sub>Holm p {pval(st.get('p_drop_holm'))}</sub>"
    return cell


def _unjudged(v: SuiteView) -> str:
    share = v.s.get("unjudged_share") or {}
    lines = []
    if share:
        lines.append(
            "Unjudged in the top 10: "
            + percent_shares(share, code)
            + " (unjudged documents count as non-relevant; `--retrieval-export-unjudged` writes them out for annotation)."
        )
    if v.s.get("power"):
        lines.append(esc(v.s["power"].removeprefix("power: ").strip()).capitalize() + ".")
    no_rel = (v.s.get("queries") or {}).get("no_relevant") or []
    if no_rel:
        lines.append(f"{len(no_rel)} queries without a relevant judgment are left out of the averages.")
    lines += _sparse_notes(v)
    for w in v.s.get("warnings") or []:
        lines.append(f"Warning: {esc(redact(w), 300)}")
    return "\n\n".join(lines)


def _sparse_notes(v: SuiteView) -> List[str]:
    """Each sparse retriever's efficiency facts and the precision the engine scored at."""
    lines = [
        f"Sparse {code(r['name'])}: {esc(sparse_fact_line(r['sparse']), 300)}."
        for r in v.retrievers
        if isinstance(r.get("sparse"), dict)
    ]
    return lines + [
        f"Sparse scores of field {code(f)} ({esc(kind)}): {esc(how, 300)}."
        for f, kind, how in sparse_precisions(v.s.get("backend") or {})
    ]


def _diff_lines(v: SuiteView, q: Dict[str, Any], metric: str) -> str:
    head = (
        f"**{code(q['qid'])}** {esc(q['text'], 120)} — {name(metric)} "
        f"{num(q['before'])} → {num(q['now'])} ({delta(q['diff'])})"
    )
    d = q.get("ranking")
    if q.get("hits") == 0:  # an empty ranking says so, not an empty list of changes
        lost = _left_line(v, d) if d is not None and not d.same else ""
        return head + "\n- no hits" + (f"\n{lost}" if lost else "")
    if d is None:
        return head + "\n- no baseline ranking for this query (the baseline predates ranking diffs)"
    if d.same:
        return head + f"\n- top {d.k} unchanged (the change is below rank {d.k})"
    return "\n".join([head] + _ranking_changes(v, d))


def _ranking_changes(v: SuiteView, d: RankDiff) -> List[str]:
    """What left the top k, what entered it and what moved within it."""
    lines = [_left_line(v, d), _entered_line(v, d), _moved_line(v, d)]
    return [line for line in lines if line]


def _doc(v: SuiteView, doc_id: str) -> str:
    t = v.titles.get(doc_id)
    return code(doc_id) + (f" *{esc(t, 70)}*" if t else "")


def _left_line(v: SuiteView, d: RankDiff) -> str:
    if not (d.left or d.left_other):
        return ""
    parts = [f"{_doc(v, x)} ({_grade(g)}, was #{r})" for x, g, r in d.left[:5]] + _more(d.left)
    if not parts:
        parts = ["no relevant document"]
    if d.left_other:
        parts.append(f"{d.left_other} non-relevant or unjudged")
    return f"- left the top {d.k}: " + "; ".join(parts)


def _entered_line(v: SuiteView, d: RankDiff) -> str:
    if not d.entered:
        return ""
    parts = [f"{_doc(v, x)} ({_grade(g)}, now #{r})" for x, g, r in d.entered[:5]] + _more(d.entered)
    return "- entered: " + "; ".join(parts)


def _moved_line(v: SuiteView, d: RankDiff) -> str:
    if not (d.moved or d.moved_other):
        return ""
    parts = [f"{_doc(v, x)} ({_grade(g)}) #{a} → #{b}" for x, g, a, b in d.moved[:5]] + _more(d.moved)
    if d.moved_other:
        parts.append(f"{d.moved_other} unjudged moved")
    return "- moved: " + "; ".join(parts)


def _grade(g: Optional[int]) -> str:
    return "unjudged" if g is None else f"grade {esc(g, 12)}"


def _more(items: List[Any], n: int = 5) -> List[str]:
    return [f"{len(items) - n} more"] if len(items) > n else []


def _details(v: SuiteView, retriever: str, metric: str, queries: List[Dict[str, Any]], dropped: int) -> str:
    summary = (
        f"Worst-moved queries: {name(retriever)} {name(metric)} "
        f"({len(queries)} of {dropped} that dropped against the baseline)"
    )
    body = "\n\n".join(_diff_lines(v, q, metric) for q in queries)
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


# ------------------------------------------------------------------ assembly


def render_markdown(
    doc: Mapping[str, Any], *, limit: int = LIMIT, worst: int = 5, full_report: Optional[str] = None
) -> str:
    """The summary as GitHub-flavoured Markdown, at most ``limit`` characters.

    ``full_report``: where the rest is (e.g. ``"the HTML report (report.html, a CI artefact)"``),
    named in the note that says what was left out."""
    views = [SuiteView(s, doc.get("history")) for s in doc.get("suites", [])]
    v = verdict(doc)
    where = full_report or "the JSON report (`--retrieval-report`) and the HTML report (`--retrieval-html`)"
    reserve = 1500  # the note on what was left out
    for level in range(5):  # less and less detail until it fits
        blocks, left = _essentials(v, views, level)
        text = "\n\n".join(blocks)
        if len(text) + reserve <= limit:
            break
    for label, block in _moved_details(views, worst):  # worst-moved queries, folded, while they fit
        if len(text) + len(block) + 2 + reserve <= limit:
            text += "\n\n" + block
        else:
            left.append(f"the worst-moved queries of {label}")
    if left:
        shown = left[:8] + ([f"{len(left) - 8} more"] if len(left) > 8 else [])
        note = f"\n\n> **Left out to stay under {limit:,} characters:** {esc('; '.join(shown), 1200)}. Find them in {where}."
        text += note[: reserve - 10]
    text = redact(text)
    if len(text) > limit:  # cannot happen short of a pathological report; never exceed the limit
        cut = f"\n\n> **Truncated to {limit:,} characters.** The full summary is in {where}."
        text = text[: limit - len(cut)] + cut
    return text + "\n"


def _essentials(v: Any, views: List[SuiteView], level: int) -> Tuple[List[str], List[str]]:
    """(blocks, what was left out). level 0: everything; 1: shorter messages; 2: no stage/strata
    tables; 3: only the failed suites' problems and tables; 4: the verdict and one line per suite."""
    blocks = [f"## {esc(v.headline(), 1000)}"]
    left: List[str] = []
    for node, msg in v.collection_errors:
        blocks.append(f"⚠️ **collection error** {code(node)}: {esc(redact(msg), 300)}")
    for sv in views:
        failing = bool(sv.problems()) or sv.error is not None
        if level >= 4 or (level >= 3 and not failing):
            blocks.append(f"{'❌' if failing else '✅'} **{name(sv.name)}**: details left out")
            left.append(f"the tables of suite {sv.name}")
            continue
        blocks += _suite_blocks(sv, level, left)
    return blocks, left


def _suite_blocks(sv: SuiteView, level: int, left: List[str]) -> List[str]:
    blocks = [_heading(sv)]
    if sv.error is not None:
        blocks.append(_not_run(sv.error))
    blocks.append(_baseline_line(sv))
    probs = _problems(sv, 2500 if level == 0 else 400)
    if probs:
        blocks.append(probs)
    if level >= 1 and any(len(it.get("message") or "") > 400 for it in sv.problems()):
        left.append(f"the full failure messages of {sv.name}")
    if sv.error is None:
        blocks += _result_blocks(sv, level, left)
    return blocks


def _not_run(error: Any) -> str:
    why = str(error)
    if why == "not run":
        why = "not run: none of its gates ran (deselected, or the session stopped before them)"
    return f"⚠️ **the suite did not run**: {esc(redact(why), 500)}"


def _result_blocks(sv: SuiteView, level: int, left: List[str]) -> List[str]:
    """The tables of a suite that ran (stages and strata only below level 2) and its notes."""
    blocks = [_metrics_table(sv)] + [t for t in (_teams(sv),) if t]  # each team's gates
    recent = _recent(sv)
    if recent and level < 3:
        blocks.append(recent)
    elif recent:
        left.append(f"the last runs of {sv.name}")
    if level < 2:
        blocks += [extra for extra in (_stages(sv), _strata(sv)) if extra]
    elif _stages(sv) or _strata(sv):
        left.append(f"the stage and strata tables of {sv.name}")
    u = _unjudged(sv)
    if u:
        blocks.append(u)
    return blocks + _stability(sv)


def _stability(sv: SuiteView) -> List[str]:
    """The stability section (issue #33) in the terminal summary's words, one bullet a line."""
    lines = stability_lines(sv.s.get("stability"))
    return ["\n".join(f"- {esc(line.strip(), 400)}" for line in lines)] if lines else []


def _recent(sv: SuiteView) -> str:
    """The last runs of every gated metric (the run history) beside this run's value: a
    sparkline of them and this run, and the last values."""
    from ..history.views import sparkline
    from ..safe_names import one_line

    rows = []
    for retriever, metric, values, today in sv.recent():
        now = [today] if isinstance(today, (int, float)) else []
        shown = " ".join(metric_value(metric, x) for x in values[-RECENT_SHOWN:])
        rows.append(
            [
                code(one_line(retriever)),
                esc(one_line(metric)),
                f"`{sparkline(values + now)}`",
                shown,
                f"**{metric_value(metric, today)}**",
            ]
        )
    if not rows:
        return ""
    n = sv.recent_last()
    head = f"**The last {n} runs** of the gated metrics (run history {code(one_line(str(sv.history.get('store', '?'))))}; the trend ends with this run):"
    return head + "\n\n" + table(["retriever", "metric", "trend", "last runs", "this run"], rows)


def _moved_details(views: List[SuiteView], worst: int) -> List[Tuple[str, str]]:
    details: List[Tuple[str, str]] = []
    for sv in views:
        if sv.error is not None:
            continue
        for retriever, metric in sv.moved_pairs():
            qs = sv.moved(retriever, metric, worst)
            if qs:
                block = _details(sv, retriever, metric, qs, sv.n_dropped(retriever, metric))
                details.append((f"{sv.name}: {retriever} {metric}", block))
    return details
