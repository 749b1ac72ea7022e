"""``pytest-retrieval compare A.json B.json``: two JSON reports side by side, like
``pytest-benchmark compare``. Per suite, retriever and metric: both values, the difference,
the paired test over the queries both share (the regression gate's own statistics), and
won/lost/tied. A row regresses when non-inferiority within its margin is not shown (``--max-drop``,
else B's ``regression.max_drop`` for that metric, else 0.01), with B's regression confidence,
resamples and seed: the gate's own verdict.

Suites pair by name and file, never by name alone. What the comparison could not check (a suite
errored, missing, unpaired, a gated metric without per-query values in both) is a *problem*:
``--fail-on-regression`` fails on it, as the gates never pass on what they did not check."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .formats import delta, num, pval, text_table
from .view import SuiteView

DEFAULT_MAX_DROP = 0.01


@dataclass
class Row:
    suite: str
    retriever: str
    metric: str
    a: Optional[float]
    b: Optional[float]
    gated: bool
    max_drop: float
    comparison: Optional[Dict[str, Any]] = None  # significance.PairedResult.as_dict()
    note: str = ""

    @property
    def regressed(self) -> bool:
        return self.gated and self.comparison is not None and bool(self.comparison["regressed"])

    @property
    def unchecked(self) -> bool:
        """A gated row the paired test could not judge: a problem, never a pass."""
        return self.gated and self.comparison is None

    def verdict(self) -> str:
        c = self.comparison
        if c is None:
            return self.note or "not compared"
        from ..wording import word

        if c["regressed"]:
            said = f"{word('regressed')} (margin {self.max_drop:g})"
            return said if self.gated else said + ", not gated"
        if c["improved"]:
            return word("improved")
        return word("no_drop" if c["significant_drop"] is False else "dropped_within_margin")

    def as_dict(self) -> Dict[str, Any]:
        return {
            "suite": self.suite,
            "retriever": self.retriever,
            "metric": self.metric,
            "a": self.a,
            "b": self.b,
            "diff": None if self.a is None or self.b is None else self.b - self.a,
            "gated": self.gated,
            "max_drop": self.max_drop,
            "regressed": self.regressed,
            "verdict": self.verdict(),
            "comparison": self.comparison,
        }


@dataclass
class Comparison:
    names: Tuple[str, str]
    rows: List[Row] = field(default_factory=list)
    latency: List[Tuple[str, str, Optional[float], Optional[float]]] = field(default_factory=list)  # p95
    notes: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)  # what could not be checked (fails the gate)

    @property
    def regressions(self) -> List[Row]:
        return [r for r in self.rows if r.regressed]

    def unchecked(self) -> List[str]:
        """Everything the comparison could not check: its problems, then each gated row
        that has no paired test."""
        rows = [
            f"suite {r.suite}: {r.retriever} {r.metric} not compared ({r.verdict()})"
            for r in self.rows
            if r.unchecked
        ]
        return self.problems + rows

    def as_dict(self) -> Dict[str, Any]:
        return {
            "a": self.names[0],
            "b": self.names[1],
            "rows": [r.as_dict() for r in self.rows],
            "latency_p95_ms": [{"suite": s, "retriever": r, "a": a, "b": b} for s, r, a, b in self.latency],
            "regressions": len(self.regressions),
            "unchecked": self.unchecked(),
            "notes": self.notes,
        }


def _gated(v: SuiteView) -> Dict[Tuple[str, str], Optional[float]]:
    """(retriever, metric) gated in a report -> its regression margin (None for a floor). Only
    what the paired test judges: per-query quality metrics where higher is better (a latency
    ceiling, a ratio, a lift or abstention is not a per-query mean)."""
    out: Dict[Tuple[str, str], Optional[float]] = {}
    for g in _entries(v.s.get("gated")):
        m = str(g.get("metric"))
        if not _per_query_quality(m) or g.get("op", ">=") != ">=":
            continue
        key = (str(g.get("retriever")), m)
        if g.get("kind") == "regression":
            out[key] = g.get("max_drop")
        else:
            out.setdefault(key, None)
    for r in _entries(v.s.get("regressions")):
        out[(str(r.get("retriever")), str(r.get("metric")))] = r.get("max_drop")
    return out


def _per_query_quality(metric: str) -> bool:
    if (
        "[" in metric
        or metric.endswith(("_ms", "_ratio"))
        or metric.startswith("lift@")
        or metric == "abstention"
    ):
        return False
    return _mean_of_queries(metric)


def _mean_of_queries(metric: str) -> bool:
    """Whether a metric's figure is the mean of its per-query values, what the paired test
    compares: not a count (``num_ret``: the sum) nor ``gm_map`` (the geometric mean)."""
    from ..measures.metrics import gate_problem

    try:
        return gate_problem(metric, regression=True) is None
    except ValueError:  # a name the registry does not know: left to the checks above
        return True


def _entries(value: Any) -> List[Dict[str, Any]]:
    """The mappings of a list in a report (anything else in it is skipped)."""
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _paired_settings(v: SuiteView) -> Dict[str, Any]:
    """The paired test's confidence, resamples and seed as B's regression gates ran it."""
    for r in _entries(v.s.get("regressions")):
        c = r.get("comparison")
        if isinstance(c, dict):
            return {k: c[k] for k in ("confidence", "n_resamples", "seed") if c.get(k) is not None}
    return {}


@dataclass
class _Settings:
    """How ``compare_reports`` compares: the metrics asked for (else the gated ones), the
    margin, the paired test's confidence and resamples (None: B's regression settings, else
    0.95 and 10,000), and the reports' names."""

    metrics: Optional[Sequence[str]]
    max_drop: Optional[float]
    confidence: Optional[float]
    resamples: Optional[int]
    names: Tuple[str, str]

    def paired(self, vb: SuiteView) -> Dict[str, Any]:
        kw: Dict[str, Any] = {"confidence": 0.95, "n_resamples": 10_000, "seed": 0}
        kw.update(_paired_settings(vb))
        if self.confidence is not None:
            kw["confidence"] = self.confidence
        if self.resamples is not None:
            kw["n_resamples"] = self.resamples
        return kw


def compare_reports(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    *,
    metrics: Optional[Sequence[str]] = None,
    max_drop: Optional[float] = None,
    confidence: Optional[float] = None,
    resamples: Optional[int] = None,
    names: Tuple[str, str] = ("A", "B"),
) -> Comparison:
    from .pairing import pair_suites

    how = _Settings(metrics, max_drop, confidence, resamples, names)
    out = Comparison(names=names)
    out.problems += _session_problems(b, names[1])
    pairs = pair_suites(_suites(a, names[0], out.problems), _suites(b, names[1], out.problems), names)
    out.problems += pairs.problems
    for va, vb in pairs.pairs:
        if va.error or vb.error:
            which = names[1] if vb.error else names[0]
            out.problems.append(f"suite {vb.name}: did not run in {which} ({_short(vb.error or va.error)})")
        else:
            _compare_suite(va, vb, how, out)
    return out


def _suites(doc: Mapping[str, Any], name: str, problems: List[str]) -> List[SuiteView]:
    """The report's suites; an entry that is not one is a problem (never skipped quietly)."""
    out = []
    suites = doc.get("suites")
    for i, s in enumerate(suites if isinstance(suites, list) else []):
        try:
            out.append(_view(s))
        except (KeyError, TypeError, AttributeError, ValueError):
            problems.append(f"{name}: suites[{i}] is not a suite of a JSON report")
    return out


def _view(s: Any) -> SuiteView:
    """A suite entry as a view, checked: a mapping with a name and named retrievers."""
    v = SuiteView(s)
    if not isinstance(v.name, str) or not all(isinstance(n, str) for n in v.names):
        raise ValueError("not a suite")
    for r in v.retrievers:
        if not isinstance(r.get("per_query") or {}, dict) or not isinstance(r.get("metrics") or {}, dict):
            raise ValueError("not a suite")
    return v


def _session_problems(b: Mapping[str, Any], name: str) -> List[str]:
    """B's own report of what did not run or is not a number: never compared as a pass."""
    out = []
    if not _entries(b.get("suites")):
        out.append(f"{name} has no suite")
    session = b.get("session")
    for e in _entries(session.get("collection_errors") if isinstance(session, dict) else None):
        out.append(f"{name}: {e.get('nodeid', '?')} could not be collected ({_short(e.get('message', ''))})")
    errors = b.get("errors")
    out += [f"{name}: {_short(e)}" for e in (errors if isinstance(errors, list) else [])[:5]]
    return out


def _short(text: Any, chars: int = 160) -> str:
    """One line of at most ``chars`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= chars else line[: chars - 1] + "…"


def _compare_suite(va: SuiteView, vb: SuiteView, how: _Settings, out: Comparison) -> None:
    """One suite that ran in both reports: a row per retriever in both and compared metric; a
    gated retriever in one report only is a problem."""
    gated = _gated(vb)
    wanted = _wanted(vb, gated, how.metrics)
    kw = how.paired(vb)
    must = set(vb.names) | set(va.names) if how.metrics else {r for r, _ in gated} | _gated_names(va)
    for name in vb.names:
        if name in va.by_name:
            out.rows += [_compare_metric(va, vb, name, m, gated, how, kw) for m in wanted]
            _add_latency(out, va, vb, name)
        else:
            _only_in(out, vb.name, name, how.names[1], name in must)
    for name in va.names:
        if name not in vb.by_name:
            _only_in(out, vb.name, name, how.names[0], name in must)


def _add_latency(out: Comparison, va: SuiteView, vb: SuiteView, name: str) -> None:
    """A retriever's p95 in both reports (informational: two machines or moments)."""
    la, lb = _p95(va, name), _p95(vb, name)
    if la is not None or lb is not None:
        out.latency.append((vb.name, name, la, lb))


def _p95(v: SuiteView, name: str) -> Optional[float]:
    lat = v.by_name[name].get("latency_ms")
    x = lat.get("p95") if isinstance(lat, dict) else None
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _gated_names(v: SuiteView) -> set:
    return {r for r, _ in _gated(v)}


def _only_in(out: Comparison, suite: str, retriever: str, where: str, gated: bool) -> None:
    line = f"suite {suite}: retriever {retriever} only in {where}"
    (out.problems if gated else out.notes).append(line + (" (gated: not compared)" if gated else ""))


def _wanted(
    vb: SuiteView, gated: Mapping[Tuple[str, str], Any], metrics: Optional[Sequence[str]]
) -> List[str]:
    """The metrics compared: those asked for, else the gated ones, else every metric but judged@k."""
    if metrics:
        return list(metrics)
    wanted: List[str] = []
    for _, m in gated:
        if m not in wanted:
            wanted.append(m)
    return wanted or [m for m in vb.metrics if not m.startswith("judged@")]


def _compare_metric(
    va: SuiteView,
    vb: SuiteView,
    name: str,
    m: str,
    gated: Mapping[Tuple[str, str], Optional[float]],
    how: _Settings,
    kw: Mapping[str, Any],
) -> Row:
    """One retriever's metric in both reports, with the paired test over their shared queries
    (A the reference, B the current run: the gate's direction)."""
    from ..stats.paired import paired_comparison

    is_gated = bool(how.metrics) or (name, m) in gated
    margin = how.max_drop if how.max_drop is not None else gated.get((name, m))
    margin = DEFAULT_MAX_DROP if margin is None else margin  # a max_drop of 0 stays 0
    row = Row(vb.name, name, m, va.value(name, m), vb.value(name, m), is_gated, float(margin))
    pa, pb = _per_query(va, name, m), _per_query(vb, name, m)
    if pa is None or pb is None:
        row.note = "per-query values that are not finite numbers"
    elif not _per_query_quality(m):
        row.note = (
            "not a per-query quality metric"
            if _mean_of_queries(m)
            else "its figure is a sum or a geometric mean, not a mean of per-query values"
        )
    elif not pa or not pb:
        row.note = "no per-query values"
    elif not set(pa) & set(pb):
        row.note = "no query in common"
    else:
        row.comparison = paired_comparison(pa, pb, max_drop=float(margin), **kw).as_dict(worst=5)
    return row


def _per_query(v: SuiteView, retriever: str, metric: str) -> Optional[Dict[str, float]]:
    """qid -> a retriever's per-query value of ``metric``; None when one is not a finite number
    (a report's NaN is null: such a value is never compared as if it were a score)."""
    pq = (v.by_name.get(retriever) or {}).get("per_query") or {}
    out: Dict[str, float] = {}
    for q, values in pq.items():
        if not isinstance(values, dict) or metric not in values:
            continue
        x = values[metric]
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            return None
        out[str(q)] = float(x)
    return out


def _cells(r: Row) -> List[str]:
    c = r.comparison or {}
    return [
        r.retriever,
        r.metric,
        num(r.a),
        num(r.b),
        delta(None if r.a is None or r.b is None else r.b - r.a),
        f"[{delta(c.get('ci_low'))}, {delta(c.get('ci_high'))}]" if c else "–",
        f"{c['won']}/{c['lost']}/{c['tied']}" if c else "–",
        pval(c.get("p_randomization")) if c else "–",
        r.verdict(),
    ]


HEAD = ["retriever", "metric", "A", "B", "B − A", "95% bounds", "won/lost/tied", "p", "verdict"]


def render_compare_text(cmp: Comparison) -> str:
    lines = [f"A = {cmp.names[0]} (reference), B = {cmp.names[1]}"]
    for suite in dict.fromkeys(r.suite for r in cmp.rows):
        lines += _suite_text(cmp, suite)
    for n in cmp.notes:
        lines.append(f"note: {n}")
    for n in cmp.unchecked():
        lines.append(f"NOT CHECKED: {n}")
    lines.append("")
    lines.append(_headline(cmp))
    return "\n".join(lines)


def _suite_text(cmp: Comparison, suite: str) -> List[str]:
    """A suite's rows as plain text (ASCII minus signs), then its p95 latencies."""
    rows = [_cells(r) for r in cmp.rows if r.suite == suite]
    rows = [[c.replace("−", "-") for c in row] for row in rows]
    lines = ["", f"suite {suite}"] + ["  " + line for line in text_table(HEAD, rows, left=(0, 1, 8))]
    lat = [(r, x, y) for s, r, x, y in cmp.latency if s == suite]
    if lat:
        lines.append(
            "  p95 latency (informational, measured on two machines or moments): "
            + ", ".join(f"{r} {_ms_or_dash(x)} -> {_ms_or_dash(y)} ms" for r, x, y in lat)
        )
    return lines


def _ms_or_dash(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.1f}"


def _regression_count(n: int) -> str:
    return f"{n} gated regression{'s' if n != 1 else ''}" if n else "no gated regression"


def _headline(cmp: Comparison) -> str:
    """The regression count, and how much could not be checked (never "no regression" alone)."""
    text = _regression_count(len(cmp.regressions))
    n = len(cmp.unchecked())
    return text + (f"; {n} thing{'s' if n != 1 else ''} not checked" if n else "")


def render_compare_markdown(cmp: Comparison) -> str:
    from .markdown import esc

    unchecked = cmp.unchecked()
    icon = "❌" if cmp.regressions else ("⚠️" if unchecked else "✅")
    out = [f"## {icon} {esc(cmp.names[1])} against {esc(cmp.names[0])}: " + esc(_headline(cmp))]
    for suite in dict.fromkeys(r.suite for r in cmp.rows):
        out += _suite_markdown(cmp, suite)
    lines = [f"- **not checked**: {esc(x)}" for x in unchecked] + [f"- {esc(x)}" for x in cmp.notes]
    if lines:
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def _suite_markdown(cmp: Comparison, suite: str) -> List[str]:
    from .markdown import esc, table

    rows = [[esc(c) for c in _cells(r)] for r in cmp.rows if r.suite == suite]
    return [f"### {esc(suite)}", table([esc(h) for h in HEAD], rows, ["l", "l"] + ["r"] * 6 + ["l"])]
