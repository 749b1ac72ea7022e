"""The engine's own ``_rank_eval`` beside the plugin's scoring (``evaluation.rank_eval``,
``--retrieval-rank-eval``; issue #34): each leaf retriever's query bodies and the suite's
judgments sent to ``_rank_eval``, its per-query values mapped onto the plugin's definitions
(:mod:`..measures.rank_eval`) and compared, query by query and measure by measure.

What cannot be one ``_rank_eval`` request is named and skipped: stages fused or reranked
client-side, backends without the API (embedded, http, python), a search pipeline, an alias
over several indices (ratings name one index), ``ties: trec`` and ``exclude_self_hits`` (the
plugin's ranking is then not the engine's). An engine without the module is one line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import quote

from ..config.load import Suite
from ..config.schema import FUSION_TYPES
from ..errors import InfrastructureError
from ..measures import rank_eval as mapping
from ..measures.metrics import parse_metric
from ..types import Query

__all__ = ["RankEvalCheck", "rank_eval_pass", "compare"]

BATCH = 100  # rated requests per _rank_eval call
TOLERANCE = 1e-9  # double arithmetic on both sides; log2 computed two ways
SHOWN = 10  # disagreements named in the summary (the JSON report has them all)


@dataclass
class RankEvalCheck:
    """What ``_rank_eval`` answered, then (``compare``) where it disagrees with the plugin."""

    unavailable: str = ""  # the suite's one line when nothing could be checked
    measures: List[str] = field(default_factory=list)  # the measures sent
    not_expressible: List[str] = field(default_factory=list)  # measures with the reason
    skipped: Dict[str, str] = field(default_factory=dict)  # retriever -> why not checked
    # retriever -> measure -> qid -> (the plugin's value from _rank_eval's answer, its hit ids)
    answers: Dict[str, Dict[str, Dict[str, Tuple[Optional[float], List[str]]]]] = field(default_factory=dict)
    compared: Dict[str, int] = field(default_factory=dict)  # retriever -> values compared
    disagreements: List[Dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> Dict[str, Any]:
        return {
            "unavailable": self.unavailable or None,
            "measures": list(self.measures),
            "not_expressible": list(self.not_expressible),
            "skipped": dict(self.skipped),
            "compared": dict(self.compared),
            "disagreements": list(self.disagreements),
            "lines": self.lines(),
        }

    def lines(self) -> List[str]:
        """The summary's lines: what was compared, every disagreement by query and measure."""
        if self.unavailable:
            return [f"_rank_eval cross-check not run: {self.unavailable}"]
        out = []
        for name, n in self.compared.items():
            bad = [d for d in self.disagreements if d["retriever"] == name]
            verdict = f"{len(bad)} disagree" if bad else "all agree"
            out.append(f"_rank_eval cross-check, {name}: {n} values of {', '.join(self.measures)}: {verdict}")
            for d in bad[:SHOWN]:
                out.append(f"  {_disagreement_text(d)}")
            if len(bad) > SHOWN:
                out.append(f"  ... and {len(bad) - SHOWN} more (the JSON report lists them all)")
        out += [f"_rank_eval cross-check, {n}: not checked ({why})" for n, why in self.skipped.items()]
        out += [f"_rank_eval cross-check: {why}" for why in self.not_expressible]
        return out


def _disagreement_text(d: Mapping[str, Any]) -> str:
    hits = "" if d["same_hits"] else "; _rank_eval ranked other hits"
    return f"query {d['query']!r} {d['measure']}: plugin {d['plugin']!r}, _rank_eval {d['rank_eval']!r}{hits}"


def _suite_reason(suite: Suite, backend: Any) -> str:
    """Why no retriever of the suite can be checked, or ''."""
    ev = suite.model.evaluation
    if not hasattr(backend, "build_body"):
        return f"the {backend.name} backend has no _rank_eval API (Elasticsearch and OpenSearch have)"
    if ev.ties == "trec":
        return "evaluation.ties is trec: the plugin re-orders ties, _rank_eval keeps the engine's order"
    if ev.exclude_self_hits:
        return "evaluation.exclude_self_hits drops hits that _rank_eval keeps"
    return ""


def _retriever_reason(suite: Suite, backend: Any, plan: Any, name: str) -> str:
    kind = suite.model.retrievers[name].type
    if kind in FUSION_TYPES:
        return "fused client-side: no single search body"
    if kind == "rerank":
        return "reranked client-side: no single search body"
    spec = plan.leaves.get(name)
    if spec is None or type(spec).__name__ == "ServiceSpec":
        return f"a {kind} retriever has no search body"
    from ..backends.search_engine.backend import search_options

    if "search_pipeline" in search_options(backend, spec):
        return "a search pipeline: _rank_eval takes none"
    return ""


def rank_eval_pass(
    suite: Suite, backend: Any, plan: Any, queries: Sequence[Query], qrels: Mapping[str, Mapping[str, int]]
) -> RankEvalCheck:
    """``_rank_eval`` over every leaf retriever that one request expresses, every measure of
    the suite it has, the judged queries of ``queries``, ratings from ``qrels`` (as scored)."""
    check = RankEvalCheck()
    ready = _ready(suite, backend, plan, qrels, check)
    if ready is None:
        return check
    metrics, leaves, index = ready
    judged = [q for q in queries if qrels.get(q.qid)]
    try:
        check.answers = {
            name: {
                str(m): _answers(backend, plan, name, judged, qrels, index, m, body) for m, body in metrics
            }
            for name in leaves
        }
    except _NoModule as exc:
        check.unavailable = str(exc)
    return check


def _ready(
    suite: Suite, backend: Any, plan: Any, qrels: Any, check: RankEvalCheck
) -> Optional[Tuple[Any, Any, str]]:
    """(the measures, the retrievers, the concrete index) to ask about, or None with the reason
    in ``check``."""
    why = _suite_reason(suite, backend)
    if why:
        check.unavailable = why
        return None
    metrics = _metrics(suite, qrels, check)
    leaves = _leaves(suite, backend, plan, check)
    if not metrics:
        check.unavailable = "no measure of evaluation.metrics has a _rank_eval form"
    if not metrics or not leaves:
        return None
    index, why = _concrete_index(backend)
    if not index:
        check.unavailable = why
        return None
    return metrics, leaves, index


def _leaves(suite: Suite, backend: Any, plan: Any, check: RankEvalCheck) -> List[str]:
    """The retrievers one ``_rank_eval`` request expresses; the others go to ``check.skipped``."""
    out = []
    for name in plan.order:
        reason = _retriever_reason(suite, backend, plan, name)
        if reason:
            check.skipped[name] = reason
        else:
            out.append(name)
    return out


def _metrics(
    suite: Suite, qrels: Mapping[str, Mapping[str, int]], check: RankEvalCheck
) -> List[Tuple[Any, Any]]:
    grades = [g for per_q in qrels.values() for g in per_q.values()]
    scoring = suite.scoring()
    options = mapping.RankEvalOptions(
        relevance_threshold=scoring["relevance_threshold"],
        gain=scoring["gain"],
        max_grade=max(grades, default=0),
        custom_gains=bool(getattr(suite.model.judgments, "gains", None)),
    )
    out = []
    for text in suite.metrics:
        metric = parse_metric(text)
        if metric.name not in mapping.MEASURES:
            continue  # a measure _rank_eval does not have: nothing to say about it
        body, why = mapping.metric_body(metric, options)
        if body is None:
            check.not_expressible.append(why)
        else:
            out.append((metric, body))
            check.measures.append(str(metric))
    return out


class _NoModule(Exception):
    """The engine answered that it has no ``_rank_eval`` endpoint."""


def _concrete_index(backend: Any) -> Tuple[str, str]:
    """(the one concrete index the retrievers search, why there is none): ratings name it."""
    target = backend.index_name
    from ..backends.search_engine.backend import engine_request

    found = engine_request(
        backend, "GET", f"/{quote(target, safe=',*')}/_settings/index.uuid", what="_settings"
    )
    names = sorted(found) if isinstance(found, Mapping) else []
    if len(names) != 1:
        return "", (
            f"index {target!r} names {len(names)} indices: _rank_eval rates a document of one index "
            "(name that index in backend.index.name to cross-check)"
        )
    return names[0], ""


def _answers(
    backend: Any,
    plan: Any,
    name: str,
    judged: Sequence[Query],
    qrels: Any,
    index: str,
    metric: Any,
    body: Any,
) -> Dict[str, Tuple[Optional[float], List[str]]]:
    """qid -> (the plugin's value mapped from _rank_eval's answer, the hit ids it rated)."""
    spec, queries, depth = plan.leaves[name], plan.with_sparse(name, judged), plan.leaf_depth
    from ..backends.search_engine.backend import engine_request, search_options
    from ..backends.search_engine.http import EngineHTTPError

    out: Dict[str, Tuple[Optional[float], List[str]]] = {}
    # search_type goes along (dfs_query_then_fetch changes BM25 scores); preference cannot
    params = {k: v for k, v in search_options(backend, spec).items() if k == "search_type"}
    for i in range(0, len(queries), BATCH):
        # the body the quality pass sent (a kNN clause's k at the run's depth); size: the metric's k
        batch = [(q.qid, backend.build_body(spec, q, depth), qrels[q.qid]) for q in queries[i : i + BATCH]]
        what = f"_rank_eval of {len(batch)} queries (first {batch[0][0]!r}, {metric})"
        answer = engine_request(
            backend,
            "POST",
            f"/{quote(index, safe='')}/_rank_eval",
            params=params or None,
            body=mapping.request_body(batch, index, body),
            what=what,
            ok_status=(400, 404, 405),
        )
        if isinstance(answer, EngineHTTPError):
            raise _NoModule(_no_module_line(backend, answer)) from None
        _read(answer, batch, metric, out, what)
    return out


def _no_module_line(backend: Any, error: Any) -> str:
    engine, version = backend.engine_info()
    reason = ""
    if isinstance(error.body, Mapping):
        err = error.body.get("error")
        reason = str(err.get("reason") if isinstance(err, Mapping) else err or "")[:200]
    return (
        f"{engine} {version} answered _rank_eval with HTTP {error.status}"
        f"{f' ({reason})' if reason else ''}: the rank-eval module is missing or refused the request"
    )


def _read(answer: Any, batch: List[Any], metric: Any, out: Dict[str, Any], what: str) -> None:
    details = answer.get("details") if isinstance(answer, Mapping) else None
    failures = answer.get("failures") if isinstance(answer, Mapping) else None
    if not isinstance(details, Mapping):
        raise InfrastructureError(f"{what}: the answer has no details")
    if failures:
        first = next(iter(failures.items()))
        raise InfrastructureError(
            f"{what}: {len(failures)} searches failed (first {first[0]!r}: {first[1]!r:.300})"
        )
    for qid, _body, grades in batch:
        d = details.get(qid)
        if isinstance(d, Mapping):
            out[qid] = (mapping.plugin_value(metric, d, grades), mapping.ranked_ids(d))


def compare(check: RankEvalCheck, results: Mapping[str, Any]) -> RankEvalCheck:
    """Each answer against the plugin's per-query value (the queries the plugin evaluated);
    a query ``_rank_eval`` did not answer is a disagreement too."""
    for name, per_metric in check.answers.items():
        rr = results[name]
        n = 0
        for measure, answers in per_metric.items():
            k = parse_metric(measure).k or 0
            for qid, value in rr.evaluation.per_query.get(measure, {}).items():
                n += 1
                got, ids = answers.get(qid, (None, []))
                ranking = rr.run.get(qid)
                same = ranking is not None and list(ranking.doc_ids[:k]) == ids
                if got is None or abs(got - value) > TOLERANCE:
                    check.disagreements.append(
                        {
                            "retriever": name,
                            "query": qid,
                            "measure": measure,
                            "plugin": value,
                            "rank_eval": got,
                            "same_hits": same,
                        }
                    )
        check.compared[name] = n
    return check
