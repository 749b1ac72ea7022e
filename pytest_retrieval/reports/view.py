"""One reading of a JSON report (the dict ``--retrieval-report`` writes) shared by the Markdown,
HTML and OpenMetrics renderers: the verdict, the gated cells, the worst-moved queries with
their ranking diffs, the strata. Pure: no I/O, no plotting, no pytest. How values are written
is :mod:`formats`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..gates.rankings import SHOWN, RankDiff, ranking_diff
from .formats import delta

# ------------------------------------------------------------------ verdict


@dataclass
class Verdict:
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    regressions: List[Tuple[str, str, str, float]] = field(
        default_factory=list
    )  # suite, retriever, metric, diff
    suite_errors: List[Tuple[str, str]] = field(default_factory=list)  # suite, message
    collection_errors: List[Tuple[str, str]] = field(default_factory=list)  # node id, message
    baselines: int = 0  # suites compared with a baseline
    gates: Optional[Dict[str, int]] = None  # the session's gate counts (``session.gates``), if known
    #: a ``--retrieval-baseline-update`` run: the baseline files written and not written
    baseline_update: Optional[Dict[str, List[str]]] = None

    @property
    def status(self) -> str:
        if self.failed or self.regressions:
            return "failed"
        if self.errored or self.suite_errors or self.collection_errors:
            return "error"
        update = self.baseline_update
        if update is not None and update.get("written") and not update.get("not_written"):
            return "baseline"  # its baseline gates are skipped by design: the headline says which ran
        return "partial" if self.partial else "passed"

    @property
    def partial(self) -> bool:
        """Not every gate of the session got a verdict (or none was run): never "passed"."""
        g = self.gates
        return g is not None and (g["ran"] < g["total"] or not g["total"])

    @property
    def icon(self) -> str:
        return {"failed": "❌", "error": "⚠️", "partial": "⏸️", "baseline": "📝", "passed": "✅"}[self.status]

    def headline(self, icon: bool = True) -> str:
        """The verdict as one line of plain text (no markup), led by an emoji unless ``icon``
        is false. A partial run says how many gates ran first, and never "no regression"."""
        from ..wording import HEADLINES

        word = HEADLINES[self.status]
        if self.status == "baseline":
            written = (self.baseline_update or {}).get("written") or []
            word += f" {', '.join(map(str, written[:3]))}{f' and {len(written) - 3} more' if len(written) > 3 else ''};"
        if self.partial:
            word += f" {_judged(self.gates or {})};"
        parts = self._tally()
        tally = f" {', '.join(parts)};" if parts else ""
        return f"{self.icon + ' ' if icon else ''}{word}{tally} {self._against_baseline()}"

    def _tally(self) -> List[str]:
        """``1 failed, 0 errored, 3 passed, 1 skipped, ...``; a partial run names only the counts
        that are not 0 (it never says "0 passed")."""
        counts = [(self.failed, "failed"), (self.errored, "errored"), (self.passed, "passed")]
        parts = [f"{n} {what}" for n, what in counts if n or not self.partial]
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        if self.collection_errors:
            parts.append(_plural(len(self.collection_errors), "collection error"))
        if self.suite_errors:
            parts.append(_plural(len(self.suite_errors), "suite") + " did not run")
        return parts

    def _against_baseline(self) -> str:
        if self.status == "baseline":
            return "the baseline gates compare with it from the next run"
        if self.regressions:
            worst = sorted(self.regressions, key=lambda r: r[3])[:3]
            named = ", ".join(f"{s}: {r} {m} {delta(d)}" for s, r, m, d in worst)
            more = f" and {len(self.regressions) - 3} more" if len(self.regressions) > 3 else ""
            return f"{_plural(len(self.regressions), 'regression')} against the baseline ({named}{more})"
        if self.partial:
            return "no verdict on the gates that did not run"
        return "no regression against the baseline" if self.baselines else "no baseline to compare with"


#: The gates not judged, by why (``session.gates``), as the headline names them.
_NOT_JUDGED = (
    ("errored", "errored"),
    ("skipped", "skipped"),
    ("deselected", "deselected"),
    ("not_reached", "not reached"),  # collected, the session stopped before them (-x, a crash)
    ("not_collected", "not collected"),
)


def _judged(gates: Mapping[str, int]) -> str:
    """``3 of 17 gates ran (14 not judged: 12 deselected, 2 errored)``; ``no gate ran`` when
    the session had none (only Python tests asked for suites without gates)."""
    total, ran = gates.get("total", 0), gates.get("ran", 0)
    if not total:
        return "no gate ran"
    why = [f"{gates[k]} {label}" for k, label in _NOT_JUDGED if gates.get(k)]
    rest = f" ({total - ran} not judged: {', '.join(why)})" if why else ""
    return f"{ran} of {_plural(total, 'gate')} ran{rest}"


def verdict(doc: Mapping[str, Any]) -> Verdict:
    session = doc.get("session") or {}
    v = Verdict(gates=session.get("gates"), baseline_update=session.get("baseline_update"))
    for s in doc.get("suites", []):
        _read_suite(v, s)
    if v.gates is not None:  # counted from every report of the session, a crashed worker's too
        g = v.gates
        v.passed, v.failed, v.errored, v.skipped = g["passed"], g["failed"], g["errored"], g["skipped"]
    for e in session.get("collection_errors", []):
        v.collection_errors.append((e.get("nodeid", "?"), e.get("message", "")))
    return v


def _read_suite(v: Verdict, s: Mapping[str, Any]) -> None:
    """A suite's part of the verdict: its items (without the session's gate counts), whether
    it ran, its regressions and whether it had a baseline."""
    if v.gates is None:
        _count_outcomes(v, s)
    if "error" in s and not (v.gates is not None and s["error"] == "not run"):
        # a suite none of whose gates ran is counted in the session's gates, not an error
        v.suite_errors.append((s.get("suite", "?"), str(s["error"])))
    v.regressions += [
        (s.get("suite", "?"), r["retriever"], r["metric"], r["comparison"].get("mean_diff") or 0.0)
        for r in s.get("regressions", [])
        if not r.get("passed")
    ]
    if (s.get("baseline") or {}).get("retrievers") is not None:
        v.baselines += 1


def _count_outcomes(v: Verdict, s: Mapping[str, Any]) -> None:
    """Count a suite's gate items by outcome; an older report without items counts its
    gates and baseline comparisons, passed or failed."""
    items = s.get("items") or []
    for it in items:
        setattr(v, _COUNT[it["outcome"]], getattr(v, _COUNT[it["outcome"]]) + 1)
    if items:
        return
    for g in list(s.get("gates", [])) + list(s.get("regressions", [])):
        if g.get("passed"):
            v.passed += 1
        else:
            v.failed += 1


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


_COUNT = {"passed": "passed", "failed": "failed", "error": "errored", "skipped": "skipped"}


# ------------------------------------------------------------------ one suite


class SuiteView:
    """Accessors over one suite entry of the JSON report."""

    def __init__(self, s: Mapping[str, Any], history: Optional[Mapping[str, Any]] = None):
        self.s = s
        self.name = s.get("suite", "?")
        self.error = s.get("error")
        self.retrievers: List[Dict[str, Any]] = list(s.get("retrievers", []))
        self.by_name = {r["name"]: r for r in self.retrievers}
        self.names = [r["name"] for r in self.retrievers]
        self.baseline = s.get("baseline") or {}
        self.base = self.baseline.get("retrievers") or {}
        self.queries: Dict[str, Dict[str, Any]] = s.get("query_details") or {}
        self.titles: Dict[str, str] = s.get("titles") or {}
        self.rankings: Dict[str, Dict[str, List[str]]] = s.get("rankings") or {}
        self.items: List[Dict[str, Any]] = list(s.get("items") or [])
        self.history = history if isinstance(history, Mapping) else {}  # the report's ``history``

    # ---- the run history
    def recent_last(self) -> int:
        """How many last runs the ``history`` section asked for (the longest series when it
        does not say, or says something that is not a count)."""
        last = self.history.get("last")
        if isinstance(last, int) and not isinstance(last, bool) and last > 0:
            return last
        return max((len(values) for _, _, values, _ in self.recent()), default=0)

    def recent(self) -> List[Tuple[str, str, List[float], Any]]:
        """(retriever, metric, the stored runs' values oldest first, this run's value) of every
        gated metric of this suite the report's ``history`` section has (the last runs of the
        run history, ``pytest_plugin/history_view.py``)."""
        out = []
        for x in self.history.get("series") or []:
            if not isinstance(x, Mapping) or x.get("suite") != self.name:
                continue
            raw = [r.get("value") for r in x.get("runs") or [] if isinstance(r, Mapping)]
            values = [float(v) for v in raw if isinstance(v, (int, float)) and not isinstance(v, bool)]
            retriever, metric = str(x.get("retriever")), str(x.get("metric"))
            if values:
                out.append((retriever, metric, values, self.value(retriever, metric)))
        return out

    # ---- metrics
    @property
    def metrics(self) -> List[str]:
        if self.s.get("metrics"):
            return list(self.s["metrics"])
        return list(self.retrievers[0]["metrics"]) if self.retrievers else []

    @property
    def headline(self) -> str:
        ms_ = self.metrics
        regs = [r["metric"] for r in self.s.get("regressions", [])]
        if "ndcg@10" in ms_:
            return "ndcg@10"
        return regs[0] if regs else (ms_[0] if ms_ else "ndcg@10")

    def columns(self) -> List[str]:
        """The gated metrics (floors and baseline comparisons), in the order the suite
        names them; every metric of the suite when nothing is gated."""
        cols: List[str] = []
        for g in self.s.get("gated", []):
            if g["metric"] not in cols and not g.get("team"):
                cols.append(g["metric"])
        for g in self.s.get("gates", []):
            name = gate_name(g)
            if name not in cols and not g.get("team"):  # a team's gates: ``team_gates``
                cols.append(name)
        for r in self.s.get("regressions", []):
            if r["metric"] not in cols:
                cols.append(r["metric"])
        return cols or self.metrics

    def gate(self, retriever: str, name: str) -> Optional[Dict[str, Any]]:
        for g in self.s.get("gates", []):
            if g["retriever"] == retriever and gate_name(g) == name and not g.get("team"):
                return g
        return None

    def item(self, retriever: str, gate: str, team: str = "") -> Optional[Dict[str, Any]]:
        for it in self.items:
            if it["retriever"] == retriever and it["gate"] == gate and (it.get("team") or "") == team:
                return it
        return None

    def team_gates(self) -> List[Tuple[str, List[Dict[str, Any]]]]:
        """(team, its gates) of every team threshold file, in the report's order (config/teams.py)."""
        out: Dict[str, List[Dict[str, Any]]] = {}
        for g in [*self.s.get("gates", []), *self.s.get("regressions", [])]:  # floors, then baseline gates
            if g.get("team"):
                out.setdefault(str(g["team"]), []).append(g)
        return list(out.items())

    def cell(self, retriever: str, col: str) -> Tuple[str, Any, Optional[Dict[str, Any]]]:
        """What a (retriever, metric) cell shows, for every renderer: ("error", None, None) when
        its gate item errored, ("gate", value, gate), ("value", value, None) or ("empty", ...)."""
        it = self.item(retriever, col)
        if it is not None and it["outcome"] == "error":
            return "error", None, None
        g, value = self.gate(retriever, col), self.value(retriever, col)
        if g is not None:
            return "gate", value, g
        return ("value" if value is not None else "empty"), value, None

    def regression(self, retriever: str, metric: str) -> Optional[Dict[str, Any]]:
        for r in self.s.get("regressions", []):
            if r["retriever"] == retriever and r["metric"] == metric and not r.get("team"):
                return r
        return None

    def is_gated(self, retriever: str, name: str) -> bool:
        return any(
            g["retriever"] == retriever and g["metric"] == name and not g.get("team")
            for g in self.s.get("gated", [])
        ) or bool(self.gate(retriever, name) or self.regression(retriever, name))

    def value(self, retriever: str, name: str) -> Any:
        g = self.gate(retriever, name)
        if g is not None:
            return g.get("value")
        r = self.by_name.get(retriever) or {}
        if name in r.get("metrics", {}):
            return r["metrics"][name]
        lat = r.get("latency_ms") or {}
        if name.endswith("_ms") and name[:-3] in lat:
            return lat[name[:-3]]
        return None

    def per_query(self, retriever: str, metric: str) -> Dict[str, float]:
        pq = (self.by_name.get(retriever) or {}).get("per_query") or {}
        return {q: v[metric] for q, v in pq.items() if metric in v}

    def base_per_query(self, retriever: str, metric: str) -> Dict[str, float]:
        return dict(((self.base.get(retriever) or {}).get("per_query") or {}).get(metric) or {})

    def base_aggregate(self, retriever: str, metric: str) -> Any:
        return ((self.base.get(retriever) or {}).get("aggregate") or {}).get(metric)

    # ---- problems
    def problems(self) -> List[Dict[str, Any]]:
        """Failed and errored items (errors first), with their messages."""
        bad = [it for it in self.items if it["outcome"] in ("error", "failed")]
        if not self.items:  # an older report without items: the failed gates and regressions
            bad = [
                {"retriever": g["retriever"], "gate": gate_name(g), "outcome": "failed", "message": ""}
                for g in self.s.get("gates", [])
                if not g.get("passed")
            ] + [
                {
                    "retriever": r["retriever"],
                    "gate": f"baseline:{r['metric']}",
                    "outcome": "failed",
                    "message": "",
                }
                for r in self.s.get("regressions", [])
                if not r.get("passed")
            ]
        return sorted(bad, key=lambda it: 0 if it["outcome"] == "error" else 1)

    # ---- ranking diffs
    def diff(self, retriever: str, qid: str) -> Optional[RankDiff]:
        before = ((self.base.get(retriever) or {}).get("top") or {}).get(qid)
        now = (self.rankings.get(retriever) or {}).get(qid)
        if before is None or now is None:
            return None
        grades = (self.queries.get(qid) or {}).get("judged") or {}
        return ranking_diff(before, now, grades, k=SHOWN)

    def moved(self, retriever: str, metric: str, n: int) -> List[Dict[str, Any]]:
        """The ``n`` queries whose ``metric`` dropped most against the baseline (largest
        drop first), each with its ranking diff; [] without a baseline."""
        before = self.base_per_query(retriever, metric)
        now = self.per_query(retriever, metric)
        drops = sorted(
            ((now[q] - before[q], q) for q in now if q in before and now[q] - before[q] < 0),
            key=lambda t: (t[0], t[1]),
        )
        out = []
        for d, q in drops[:n]:
            out.append(
                {
                    "qid": q,
                    "text": (self.queries.get(q) or {}).get("text", ""),
                    "before": before[q],
                    "now": now[q],
                    "diff": d,
                    "ranking": self.diff(retriever, q),
                    "hits": len((self.rankings.get(retriever) or {}).get(q) or ()),
                }
            )
        return out

    def n_dropped(self, retriever: str, metric: str) -> int:
        before = self.base_per_query(retriever, metric)
        now = self.per_query(retriever, metric)
        return sum(1 for q in now if q in before and now[q] < before[q])

    def moved_pairs(self) -> List[Tuple[str, str]]:
        """(retriever, metric) whose worst-moved queries a report shows: the regression
        comparisons (failed first, then by drop), else the headline metric of every
        retriever in the baseline."""
        regs = sorted(
            self.s.get("regressions", []),
            key=lambda r: (bool(r.get("passed")), r["comparison"].get("mean_diff") or 0.0),
        )
        pairs = [(r["retriever"], r["metric"]) for r in regs]
        if not pairs:
            pairs = [(n, self.headline) for n in self.names if n in self.base]
        return [p for p in pairs if self.base_per_query(*p)]

    # ---- strata
    def tags(self) -> Dict[str, List[str]]:
        out: Dict[str, List[str]] = {}
        for q, info in self.queries.items():
            for t in info.get("tags") or ():
                out.setdefault(str(t), []).append(q)
        return dict(sorted(out.items()))

    def stratum(
        self, retriever: str, metric: str, tag: str, qids: Sequence[str]
    ) -> Tuple[Optional[float], Optional[float], Optional[Dict[str, Any]]]:
        """A stratum's mean now and in the baseline, and its regression verdict when gated."""
        now, _ = self.stratum_mean(self.per_query(retriever, metric), qids)
        base, _ = self.stratum_mean(self.base_per_query(retriever, metric), qids)
        st = ((self.regression(retriever, metric) or {}).get("strata") or {}).get(tag)
        return now, base, st

    def stratum_mean(self, values: Mapping[str, float], qids: Sequence[str]) -> Tuple[Optional[float], int]:
        xs = [values[q] for q in qids if q in values]
        return (math.fsum(xs) / len(xs), len(xs)) if xs else (None, 0)

    # ---- latency
    def gated_percentiles(self, retriever: str) -> List[int]:
        out = set()
        for g in self.s.get("gated", []):
            m = g["metric"]
            if g["retriever"] == retriever and re.fullmatch(r"p\d\d_ms", m) and not g.get("team"):
                out.add(int(m[1:3]))
        return sorted(out)

    def ceiling(self, retriever: str, percentile: int) -> Optional[float]:
        for g in self.s.get("gated", []):
            if g["retriever"] == retriever and g["metric"] == f"p{percentile}_ms" and not g.get("team"):
                return g.get("threshold")
        return None

    def judged_at(self, retriever: str, upto: int = SHOWN) -> List[float]:
        """Mean share of judged documents in the top k, for k = 1..upto."""
        tops = self.rankings.get(retriever) or {}
        out = []
        for k in range(1, upto + 1):
            shares = []
            for q, docs in tops.items():
                judged = (self.queries.get(q) or {}).get("judged") or {}
                head = docs[:k]
                if head:
                    shares.append(sum(1 for d in head if d in judged) / len(head))
            out.append(math.fsum(shares) / len(shares) if shares else math.nan)
        return out


def owners_of(g: Mapping[str, Any]) -> List[str]:
    """A gate's or item's owners as the report has them (a report read from disk may hold
    anything there: only a list of names counts)."""
    owners = g.get("owners")
    return [str(o) for o in owners] if isinstance(owners, list) else []


def item_label(it: Mapping[str, Any]) -> str:
    """An item's id under its suite file: ``rrf::ndcg@10``, a team's ``ranking::rrf::ndcg@10``."""
    team = f"{it['team']}::" if it.get("team") else ""
    return f"{team}{it['retriever']}::{it['gate']}"


def gate_name(g: Mapping[str, Any]) -> str:
    """A gate's name as its item names it: the metric, with its stratum in brackets."""
    return f"{g['metric']}[{g['stratum']}]" if g.get("stratum") else g["metric"]
