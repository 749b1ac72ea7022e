"""Loading a suite file: includes and overrides merged, validated against the schema, floors
parsed, the retriever graph ordered. Every mistake is one ``ConfigError`` line: file, key path,
line, problem."""

from __future__ import annotations

import dataclasses
import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from pydantic import ValidationError

from ..errors import ConfigError
from ..gates.floors import BaselineGate, Floor, ReferenceGate, parse_floors
from ..safe_names import one_line
from .backend_checks import check_backend
from .lowering import FloorGuard
from .ownership import owners_of
from .problems import pydantic_error
from .regression import parse_reference, parse_regression
from .schema import (
    FUSION_TYPES,
    SCALAR_RULES,
    BM25RetrieverConfig,
    LinearRetrieverConfig,
    RerankRetrieverConfig,
    RRFRetrieverConfig,
    SuiteFile,
    WeightedRetrieverConfig,
)
from .stability import parse_stability
from .teams import Team, load_teams
from .yamlio import (
    Interpolated,
    KeyPath,
    LoadCount,
    Positions,
    conceal,
    format_path,
    interpolated_values,
    load_with_includes,
    locate,
    register_secrets,
)

# ------------------------------------------------------------------ loaded suite


@dataclass
class Suite:
    """A validated suite: the parsed model plus where things came from."""

    name: str
    path: Path
    model: SuiteFile
    positions: Positions
    floors: List[Floor]
    order: List[str]  # retrievers in dependency order
    metrics: List[str]  # canonical metrics to evaluate (summary + floors)
    regression: List[BaselineGate] = field(default_factory=list)  # (retriever, metric, max_drop)
    reference: List[ReferenceGate] = field(default_factory=list)  # against a pinned run of the history
    stability: List[Any] = field(default_factory=list)  # gates.stability.StabilityGate
    expectations: List[Any] = field(default_factory=list)  # gates.expectations.Expectation
    files: List[str] = field(default_factory=list)  # every file that went into it
    teams: List[Team] = field(default_factory=list)  # team threshold files (config/teams.py)
    interpolated: List[Interpolated] = field(default_factory=list)  # ${VAR} values: never echoed
    built_encoders: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def shown(self, value: Any) -> str:
        """``repr(value)``, or the variable's name when the value came from ``${VAR}``."""
        return conceal(repr(value), self.interpolated)

    @property
    def stability_metrics(self) -> List[str]:
        """The stability gates' measures (``rbo@10``, ...): the depth the baseline keeps
        (gates/rankings.py ``ranking_depth``)."""
        return [g.measure for g in self.stability]

    @property
    def reference_run(self) -> str:
        """``regression.reference.run``: the stored run the reference gates compare with."""
        reg = self.model.regression
        return reg.reference.run if reg is not None and reg.reference is not None else ""

    def resolve_path(self, key: KeyPath, value: str) -> Path:
        """A relative path is relative to the file where it was written."""
        p = Path(value).expanduser()
        if p.is_absolute():
            return p
        file, _ = locate(self.positions, key)
        base = Path(file).parent if file else self.path.parent
        return base / p

    def fusion(self, name: str, depth: int):
        """The ``fusion.FusionConfig`` of a fusion retriever; window defaults to ``depth``."""
        r = self.model.retrievers[name]
        assert isinstance(r, (RRFRetrieverConfig, WeightedRetrieverConfig, LinearRetrieverConfig))
        try:
            return _fusion_config(r, self.model.backend.type, r.window or depth)
        except ValueError as exc:
            key: KeyPath = ("retrievers", name)
            for attr in ("weights", "rank_constant", "window", "semantics", "normalization"):
                if attr in str(exc) and key + (attr,) in self.positions:
                    key = key + (attr,)
                    break
            raise self.error(key, str(exc)) from None

    def scoring(self) -> Dict[str, Any]:
        """How this suite scores a run: the keyword options of ``measures.metrics.evaluate``
        (the nDCG gain of ``evaluation.profile``, the tie rule, the relevance threshold and
        ``average_over``), one place for the gates, the baseline's side lines and the sweep."""
        from ..measures.aggregate import average_over_of

        ev = self.model.evaluation
        return {
            "gain": "exp" if ev.profile == "exp" else "linear",
            "ties": ev.ties,
            "relevance_threshold": self.model.judgments.relevance_threshold,
            "average_over": average_over_of(ev),
        }

    def inputs(self, name: str) -> List[str]:
        """The retrievers ``name`` builds on (its ``of``; empty for a leaf)."""
        return list(getattr(self.model.retrievers[name], "of", None) or [])

    def with_inputs(self, names: Sequence[str]) -> List[str]:
        """``names`` and every retriever they build on, in dependency order."""
        wanted: Set[str] = set()
        stack = list(names)
        while stack:
            n = stack.pop()
            if n not in self.model.retrievers:
                raise ConfigError(
                    f"{self.path}: no retriever {self.shown(n)} (defined: {', '.join(self.model.retrievers)})"
                )
            if n not in wanted:
                wanted.add(n)
                stack.extend(self.inputs(n))
        return [n for n in self.order if n in wanted]

    def rerank_config(self, name: str) -> RerankRetrieverConfig:
        """The configuration of the ``rerank`` retriever ``name``."""
        r = self.model.retrievers[name]
        assert isinstance(r, RerankRetrieverConfig)
        return r

    def reranker(self, name: str):
        """The reranker of a ``rerank`` retriever (``rerankers.make_reranker``); relative model
        paths and callables resolve against the folder of the file that names them."""
        from ..errors import RetrievalError
        from ..models.rerankers import make_reranker

        key = ("retrievers", name, "reranker")
        file, _ = locate(self.positions, key)
        base = Path(file).parent if file else self.path.parent
        try:
            return make_reranker(self.rerank_config(name).reranker, base)
        except RetrievalError as exc:
            raise self.error(key, _model_problem(exc)) from None

    def sparse_encoder(self, name: str):
        """The sparse encoder of a ``sparse`` retriever (``models.sparse``), built once; relative
        paths and callables resolve against the folder of the file that names them."""
        from ..errors import RetrievalError
        from ..models.sparse import make_sparse_encoder

        if name not in self.built_encoders:
            key = ("retrievers", name, "sparse_encoder")
            file, _ = locate(self.positions, key)
            base = Path(file).parent if file else self.path.parent
            try:
                config = self.model.retrievers[name].sparse_encoder  # type: ignore[union-attr]
                self.built_encoders[name] = make_sparse_encoder(config, base)
            except RetrievalError as exc:
                raise self.error(key, _model_problem(exc)) from None
        return self.built_encoders[name]

    def bm25_fields(self, name: str) -> Tuple[Tuple[str, float], ...]:
        """``['title^2', 'text']`` or ``{title: 2, text: 1}`` -> ((field, boost), ...)."""
        r = self.model.retrievers[name]
        assert isinstance(r, BM25RetrieverConfig)
        fields = r.fields
        if isinstance(fields, dict):
            return tuple((f, float(w)) for f, w in fields.items())
        out = []
        for i, text in enumerate(fields):
            field_, _, boost = text.partition("^")
            try:
                value = float(boost) if boost else 1.0
            except ValueError:
                value = -1.0
            if not field_ or not math.isfinite(value) or value < 0:
                raise self.error(
                    ("retrievers", name, "fields", i),
                    f"bad field {self.shown(text)} (expected name or name^boost, boost a finite number >= 0)",
                )
            out.append((field_, value))
        if not out:
            raise self.error(("retrievers", name, "fields"), "no fields to search")
        return tuple(out)

    def error(self, key: KeyPath, message: str) -> ConfigError:
        file, line = locate(self.positions, key)
        message = conceal(message, self.interpolated)
        return ConfigError(message, file=file or str(self.path), key=format_path(key), line=line)


def _model_problem(exc: Exception) -> str:
    """A model's error (its detail and file) as one line of a suite's message: a model path
    holding a newline stays one line (``safe_names.one_line``)."""
    detail = str(getattr(exc, "detail", None) or exc)
    file_ = getattr(exc, "file", None)
    return one_line(f"{detail} ({file_})" if file_ else detail)


def _fusion_config(
    r: Union[RRFRetrieverConfig, WeightedRetrieverConfig, LinearRetrieverConfig], engine: str, window: int
):
    """A fusion retriever's ``fusion.FusionConfig`` (which checks its parameters: ValueError)."""
    from ..fusion.config import FusionConfig

    if isinstance(r, RRFRetrieverConfig):
        # OpenSearch's rounding on OpenSearch; Elasticsearch's float32 sums elsewhere
        # (embedded included, so a suite ranks alike on embedded and Elasticsearch)
        semantics = r.semantics or ("opensearch" if engine == "opensearch" else "elasticsearch")
        return FusionConfig(method="rrf", semantics=semantics, rank_constant=r.rank_constant, window=window)
    weights = tuple(r.weights) if r.weights else None
    if isinstance(r, WeightedRetrieverConfig):
        return FusionConfig(
            method="weighted",
            normalization=r.normalization,
            combination=r.combination,
            weights=weights,
            window=window,
        )
    return FusionConfig(method="linear", normalization=r.normalizer, weights=weights, window=window)


def load_suite(
    path: Path, *, overrides: Tuple[Path, ...] = (), cli: Optional[Dict[str, Any]] = None
) -> Suite:
    """Load, merge, interpolate and validate a suite file. Raises ``ConfigError``."""
    path = Path(path)
    guard = FloorGuard()
    data, positions, files = _merged(path, overrides, cli, guard)
    register_secrets(interpolated_values(data))  # before any message can quote one
    try:
        model = SuiteFile.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error(exc, data, positions, path) from None

    name = model.suite or path.name
    suite = Suite(
        name=name, path=path, model=model, positions=positions, floors=[], order=[], metrics=[], files=files
    )
    suite.interpolated = interpolated_values(data)
    _check_judgments(suite)
    check_backend(suite)
    _check_retrievers(suite)
    suite.order = _topological(model.retrievers, suite)
    metrics = _parse_metrics(suite)
    suite.floors = [_stamped(suite, f, guard) for f in parse_floors(model, suite, metrics)]
    suite.teams, team_floors, team_regression = load_teams(suite, metrics)  # after the suite's own
    suite.floors += team_floors
    _check_references(suite)
    owners, mention = owners_of(suite.model.owner), suite.model.mention
    suite.regression = [g._replace(owners=owners, mention=mention) for g in parse_regression(suite, metrics)]
    suite.regression += team_regression  # a team's gates: under its team (items)
    suite.reference = parse_reference(suite, metrics)
    suite.expectations = _parse_expectations(suite)
    suite.stability = parse_stability(suite)
    if not suite.floors and not suite.regression and not suite.expectations and not suite.stability:
        raise suite.error(
            ("floors",),
            "no floors: a suite must gate at least one retriever metric (or golden query, or stability measure)",
        )
    suite.metrics = metrics
    return suite


def _merged(
    path: Path, overrides: Tuple[Path, ...], cli: Optional[Dict[str, Any]], guard: FloorGuard
) -> Tuple[Any, Positions, List[str]]:
    """The suite file with its includes, then each override file, then the ``cli`` values
    (``{"backend.type": "opensearch"}``) merged over it: (data, positions, files read)."""
    loads = LoadCount()  # the suite and its overrides share one bound on the files read
    loads.before_merge = guard.check  # a floor a later file lowers: named, or refused (may_lower)
    data, positions = load_with_includes(path, rules=SCALAR_RULES, loads=loads)
    files = sorted({f for f, _ in positions.values()})
    for ov in overrides:
        ov_data, ov_pos = load_with_includes(Path(ov), rules=SCALAR_RULES, loads=loads)
        data, positions = loads.merge(data, ov_data, positions, ov_pos)
        files.append(str(ov))
    if cli:
        for dotted, value in cli.items():
            node = data
            keys = dotted.split(".")
            for k in keys[:-1]:
                node = node.setdefault(k, {})
            node[keys[-1]] = value
    return data, positions, files


def _stamped(suite: Suite, floor: Floor, guard: FloorGuard) -> Floor:
    """A suite floor with its owners and, when a later file lowered it, the value it replaced."""
    lowered = guard.lowered(floor.retriever, floor.metric, floor.stratum, floor.op, floor.threshold)
    model = suite.model
    return dataclasses.replace(floor, owners=owners_of(model.owner), mention=model.mention, lowered=lowered)


def _check_judgments(suite: Suite) -> None:
    j = suite.model.judgments
    if not (j.beir or j.qrels or j.inline):
        raise suite.error(("judgments",), "needs one of: beir, qrels (+ queries), inline")
    if j.canary is not None and not j.canary.strip():
        raise suite.error(("judgments", "canary"), "name the canary queries file (JSONL or TSV, as queries)")
    if j.qrels and not (j.queries or j.beir):
        raise suite.error(("judgments", "qrels"), "qrels given without queries (add judgments.queries)")


def _check_retrievers(suite: Suite) -> None:
    """The retriever graph's references, and each retriever's options that the schema cannot
    check (fusion parameters, reranker options, bm25 fields, knn without an embedder)."""
    for name in suite.model.retrievers:
        _check_inputs(suite, name)
        _check_options(suite, name)


def _check_inputs(suite: Suite, name: str) -> None:
    """A stage's ``of``: defined retrievers, not itself, each once, one weight each."""
    retrievers = suite.model.retrievers
    of = suite.inputs(name)
    for i, ref in enumerate(of):
        if ref not in retrievers:
            raise suite.error(
                ("retrievers", name, "of", i),
                f"unknown retriever {suite.shown(ref)}{_did_you_mean(ref, retrievers)}; "
                f"defined: {', '.join(retrievers)}",
            )
        if ref == name:
            raise suite.error(("retrievers", name, "of", i), "a retriever cannot build on itself")
    if len(set(of)) != len(of):
        raise suite.error(("retrievers", name, "of"), "lists the same retriever twice")
    weights = getattr(retrievers[name], "weights", None)
    if weights is not None and len(weights) != len(of):
        raise suite.error(
            ("retrievers", name, "weights"),
            f"{len(weights)} weight(s) for {len(of)} retrievers in 'of'",
        )


def _check_options(suite: Suite, name: str) -> None:
    """A retriever's options, built now (at collection) to be checked."""
    model = suite.model
    kind = model.retrievers[name].type
    if kind in FUSION_TYPES:
        suite.fusion(name, model.evaluation.depth)
    if kind == "rerank":
        suite.reranker(name)  # validates type and options
    if kind == "bm25":
        suite.bm25_fields(name)
    if kind == "sparse":
        suite.sparse_encoder(name)  # validates type and options
    if kind == "knn" and model.embedder is None and model.backend.type == "embedded":
        raise suite.error(("retrievers", name), "a knn retriever needs an 'embedder' section")


def _parse_metrics(suite: Suite) -> List[str]:
    """The canonical names of ``evaluation.metrics``."""
    from ..measures.metrics import parse_metric

    metrics: List[str] = []
    for i, m in enumerate(suite.model.evaluation.metrics):
        try:
            metrics.append(str(parse_metric(m)))
        except ValueError as exc:
            raise suite.error(("evaluation", "metrics", i), str(exc)) from None
    return metrics


def _check_references(suite: Suite) -> None:
    """Retrievers named outside ``retrievers`` (the A/B latency baseline, abstention thresholds)
    exist."""
    model = suite.model
    retrievers = model.retrievers
    baseline = model.latency.baseline
    if baseline is not None and baseline not in retrievers:
        raise suite.error(
            ("latency", "baseline"),
            f"unknown retriever {suite.shown(baseline)}{_did_you_mean(baseline, retrievers)}",
        )
    if model.unanswerable is not None:
        for r_name in model.unanswerable.threshold:
            if r_name not in retrievers:
                raise suite.error(("unanswerable", "threshold", r_name), f"unknown retriever {r_name!r}")


def _parse_expectations(suite: Suite) -> List[Any]:
    """The golden queries (``gates.expectations``); which retrievers send query vectors."""
    from ..gates.expectations import parse_expectations

    vector = [n for n in suite.order if set(suite.with_inputs([n])) & vector_leaves(suite)]
    return parse_expectations(suite, vector)


def vector_leaves(suite: Suite) -> Set[str]:
    """The leaves of the suite that send query vectors (kNN, a template with a query vector)."""
    out: Set[str] = set()
    for name, r in suite.model.retrievers.items():
        if r.type == "knn" or (r.type == "template" and "{{query_vector}}" in repr(getattr(r, "body", None))):
            out.add(name)
    return out


def _did_you_mean(name: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _topological(retrievers: Dict[str, Any], suite: Suite) -> List[str]:
    order: List[str] = []
    state: Dict[str, int] = {}

    def visit(n: str, chain: List[str]) -> None:
        if state.get(n) == 2:
            return
        if state.get(n) == 1:
            cycle = chain[chain.index(n) :] + [n]
            raise suite.error(("retrievers", n, "of"), f"cyclic retrievers: {' -> '.join(cycle)}")
        state[n] = 1
        for ref in suite.inputs(n):
            visit(ref, chain + [n])
        state[n] = 2
        order.append(n)

    for n in retrievers:
        visit(n, [])
    return order
