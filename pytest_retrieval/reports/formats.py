"""How the reports write values: numbers, differences, latencies and p-values, the stage table's
cells, aligned plain-text tables, and the redaction every rendered output goes through. One
formatter per thing shown, shared by the terminal summary, ``compare`` and the Markdown, HTML and
OpenMetrics renderers; ``plain`` is the terminal's ASCII spelling (``-`` for a missing value
and for a minus sign). Pure: no I/O."""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Collection, List, Mapping, Optional, Sequence, Tuple

from ..safe_names import one_line

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@'\"]+:[^/\s@'\"]+@")
_SECRET_KV = re.compile(
    r"(?i)\b(password|passwd|api[_-]?key|token|secret|authorization)(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;]+)"
)


def redact(text: str) -> str:
    """A last line of defence on every rendered output: every registered secret
    (``redaction``), URL credentials and ``password=...`` style pairs are masked (the plugin
    never puts credentials in a report to begin with)."""
    from ..redaction import redact as registered

    text = _USERINFO.sub(r"\1***@", registered(text))
    return _SECRET_KV.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)


INVALID = "invalid"


def missing(x: Any) -> bool:
    """No value to show: None (null in the JSON report) or NaN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def not_a_number(x: Any) -> bool:
    """Where a number belongs, something else (a report file edited by hand, or hostile): the
    formatters below write ``invalid``, never the text itself, so no output format has to
    escape a number."""
    return isinstance(x, bool) or not isinstance(x, (int, float))


def num(x: Any, digits: int = 4) -> str:
    if missing(x):
        return "–"
    if not_a_number(x):
        return INVALID
    return f"{x:.{digits}f}"


def count(x: Any) -> str:
    """A count (queries, won/lost/tied): an integer, ``–`` when missing, else ``invalid``."""
    if x is None:
        return "–"
    return INVALID if isinstance(x, bool) or not isinstance(x, int) else str(x)


def delta(x: Any, digits: int = 4, *, plain: bool = False) -> str:
    """A signed difference: ``+0.0123``, ``−0.0123`` (``-0.0123`` when ``plain``)."""
    if missing(x):
        return "-" if plain else "–"
    if not_a_number(x):
        return INVALID
    s = f"{x:+.{digits}f}"
    return s if plain else s.replace("-", "−")


def ms(x: Any) -> str:
    if missing(x):
        return "–"
    if not_a_number(x):
        return INVALID
    return f"{x:.1f} ms" if x >= 1 else f"{x:.2f} ms"


def pval(p: Any) -> str:
    if missing(p):
        return "n/a"
    if not_a_number(p):
        return INVALID
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def is_latency(metric: str) -> bool:
    return metric.endswith("_ms")


def metric_value(metric: str, x: Any) -> str:
    if metric.endswith("_ms"):
        return ms(x)
    if metric.endswith("_ratio"):
        return "–" if x is None else INVALID if not_a_number(x) else f"{x:.3f}×"
    return num(x)


def stage_reference(rows: Sequence[Mapping[str, Any]]) -> Optional[str]:
    """The BM25 retriever a stage table's "vs" column compares with (the one the rows name;
    ``bm25`` for a report that predates the name); None: no such column."""
    named = next((r.get("reference") for r in rows if r.get("reference")), None)
    if named is None and any(r.get("delta_vs_bm25") is not None for r in rows):
        return "bm25"
    return named


def stage_quality(r: Mapping[str, Any], reference: Optional[str] = "bm25") -> List[str]:
    """A stage row's value and its differences against the BM25 ``reference`` (left out when
    None) and against its best input."""
    against = [delta(r.get("delta_vs_bm25"))] if reference is not None else []
    return [num(r.get("value")), *against, delta(r.get("delta_vs_input"))]


def stage_latency(r: Mapping[str, Any]) -> List[str]:
    """A stage row's p95 latency (ms) and its difference against its input."""
    return [num(r.get("p95_ms"), 1), delta(r.get("delta_p95_ms"), 1)]


def candidate_recall(r: Mapping[str, Any], name: Callable[[str], str] = str) -> str:
    """A stage row's recall of its inputs' candidates, ``input@window=recall`` each."""
    return " ".join(
        f"{name(k)}@{num(r.get('window'), 0)}={num(x, 3)}"
        for k, x in (r.get("candidate_recall") or {}).items()
    )


def stage_head(metric: str, reference: Optional[str] = "bm25") -> List[str]:
    """The stage table's columns (``metric`` and ``reference`` as the renderer escapes them)."""
    against = [f"vs {reference}"] if reference is not None else []
    return ["stage", "builds on", metric, *against, "vs input", "recall of inputs", "p95 ms", "p95 vs input"]


def engine_line(info: Mapping[str, Any]) -> str:
    """The backend, its engine and version, named once: ``elasticsearch 8.19.21 (client 8.15.1)``,
    ``embedded (bm25s 0.3.16 + numpy)`` (an engine named as its backend is not said twice)."""
    backend = str(info.get("backend") or "?")
    engine, version = info.get("engine"), info.get("version")
    if engine and str(engine).lower() == backend.lower():
        head, inner = " ".join(str(x) for x in (backend, version) if x), []
    else:
        head, inner = backend, [" ".join(str(x) for x in (engine, version) if x)] if engine or version else []
    if info.get("client"):
        inner.append(f"client {info['client']}")
    inner = [x for x in inner if x]
    return f"{head} ({', '.join(inner)})" if inner else head


def analyzer_lines(info: Mapping[str, Any]) -> List[str]:
    """The analyzer of each text field BM25 searched (``describe()["analyzers"]``): what the suite
    named on a throwaway index or the embedded engine, what the mapping holds on an existing index."""
    analyzers = info.get("analyzers")
    if not isinstance(analyzers, Mapping) or not analyzers:
        return []
    return ["analyzers: " + ", ".join(f"{field} {name}" for field, name in sorted(analyzers.items()))]


def sparse_precisions(info: Mapping[str, Any]) -> List[Tuple[str, str, str]]:
    """(field, type, precision) of each sparse field an engine scored (``describe()["sparse"]``):
    an engine that cannot score exactly says so beside the figures (Lucene FeatureField keeps 9
    significant bits of each document weight, search_engine/sparse.py)."""
    fields = info.get("sparse")
    if not isinstance(fields, Mapping):
        return []
    return [
        (str(field), str(facts.get("type", "?")), str(facts.get("score_precision", "?")))
        for field, facts in fields.items()
        if isinstance(facts, Mapping)
    ]


def sparse_precision_lines(info: Mapping[str, Any]) -> List[str]:
    """:func:`sparse_precisions` as plain lines."""
    return [f"sparse scores of field {f} ({kind}): {how}" for f, kind, how in sparse_precisions(info)]


def sparse_fact_line(facts: Mapping[str, Any]) -> str:
    """A sparse retriever's efficiency facts as the JSON report has them (``retrievers[].sparse``):
    non-zero terms per document and per query, the expected FLOPS, the empty vectors."""

    def show(x: Any, fmt: str) -> str:
        return "?" if x is None or not_a_number(x) else format(float(x), fmt)

    line = (
        f"{show(facts.get('sparse_doc_nnz'), '.1f')} non-zero terms per document, "
        f"{show(facts.get('sparse_query_nnz'), '.1f')} per query, FLOPS {show(facts.get('flops'), '.4g')} "
        f"({facts.get('encoder', '?')}, idf: {facts.get('idf', '?')})"
    )
    if facts.get("empty_documents"):
        line += (
            f"; {facts['empty_documents']} of {facts.get('documents', '?')} documents have an empty vector"
        )
    if facts.get("empty_queries"):
        line += f"; {facts['empty_queries']} of {facts.get('queries', '?')} queries have an empty vector (zero hits)"
    return line


def percent_shares(shares: Mapping[str, float], name: Callable[[str], str] = str) -> str:
    """``bm25 12%, dense 30%``: each retriever's share (the unjudged share of its top 10)."""
    return ", ".join(
        f"{name(n)} {INVALID if not_a_number(x) else format(x, '.0%')}" for n, x in shares.items()
    )


def text_table(header: List[str], rows: List[List[str]], left: Collection[int] = (0,)) -> List[str]:
    """Aligned plain-text columns under a header and a rule; the ``left`` columns are
    left-aligned, the others (numbers) right-aligned. A cell is kept on one line (a name's
    newline spelled out, :func:`~pytest_retrieval.safe_names.one_line`) before it is measured."""
    header = [one_line(h) for h in header]
    rows = [[one_line(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: List[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )

    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def clip(text: Any, n: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _number_or_nan(x: Any) -> float:
    return math.nan if x is None or not_a_number(x) else float(x)


def mark(comparison: Mapping[str, Any]) -> str:
    """▼ a significant drop (the upper bound of the difference is below 0), ▲ a significant
    gain (the lower bound above 0), nothing otherwise."""
    lo, hi = (_number_or_nan(comparison.get(k)) for k in ("ci_low", "ci_high"))
    if hi < 0:
        return "▼"
    if lo > 0:
        return "▲"
    return ""
