"""Rankings out: a suite's qrels and every retriever's run exactly as scored, as TREC files
(``pytest --retrieval-runs DIR``) and as Python objects convertible to ``ranx`` and
``ir_measures`` structures.

``pytest-retrieval evaluate`` on the files reproduces the suite's numbers: the command is in
``DIR/<suite>/evaluate.sh``. ``ranx`` and ``ir_measures`` order each ranking by score (ties by
document id, as trec_eval does), so they agree with a suite evaluated with ``ties: trec``;
with ``ties: engine`` they may differ where the engine returned tied scores.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple, Union

from ..errors import ConfigError
from ..fileio import atomic_write
from ..types import Ranking

__all__ = ["Qrels", "Run", "suite_runs", "write_suite_runs"]


def _check_id(value: str, what: str) -> str:
    if not value or any(c.isspace() for c in value):
        raise ConfigError(f"{what} {value!r} contains whitespace: it cannot be written as a TREC file")
    return value


@dataclass
class Qrels:
    """Judgments as scored: query id -> {doc id: grade}."""

    data: Dict[str, Dict[str, int]]

    def to_dict(self) -> Dict[str, Dict[str, int]]:
        """The plain dict (pytrec_eval's and ``ranx.Qrels.from_dict``'s format)."""
        return {q: dict(d) for q, d in self.data.items()}

    def to_ranx(self) -> Any:
        from ranx import Qrels as RanxQrels

        return RanxQrels.from_dict(self.to_dict())

    def to_ir_measures(self) -> List[Any]:
        """A list of ``ir_measures.Qrel`` (query_id, doc_id, relevance)."""
        import ir_measures

        return [ir_measures.Qrel(q, d, int(g)) for q, docs in self.data.items() for d, g in docs.items()]

    def write(self, path: Union[str, Path]) -> None:
        """TREC qrels: ``qid 0 docid grade``."""
        lines = [
            f"{_check_id(q, 'query id')} 0 {_check_id(d, 'document id')} {g}\n"
            for q, docs in self.data.items()
            for d, g in docs.items()
        ]
        atomic_write(path, lambda fh: fh.writelines(lines), fsync=False)


@dataclass
class Run:
    """One retriever's rankings as scored: query id -> Ranking (in the order scored)."""

    name: str
    rankings: Dict[str, Ranking]

    def to_dict(self) -> Dict[str, Dict[str, float]]:
        """query id -> {doc id: score} (pytrec_eval's and ``ranx.Run.from_dict``'s format)."""
        return {q: dict(zip(r.doc_ids, r.scores)) for q, r in self.rankings.items()}

    def to_ranx(self) -> Any:
        from ranx import Run as RanxRun

        return RanxRun.from_dict(self.to_dict(), name=self.name)

    def to_ir_measures(self) -> List[Any]:
        """A list of ``ir_measures.ScoredDoc`` (query_id, doc_id, score)."""
        import ir_measures

        return [
            ir_measures.ScoredDoc(q, d, float(s))
            for q, r in self.rankings.items()
            for d, s in zip(r.doc_ids, r.scores)
        ]

    def write(self, path: Union[str, Path], tag: str = "") -> None:
        """TREC run: ``qid Q0 docid rank score tag``, ranks in the order scored, scores exact
        (``repr``: they read back to the same float)."""
        tag = _check_id(re.sub(r"\s+", "_", tag or self.name), "run tag")
        lines = []
        for q, r in self.rankings.items():
            _check_id(q, "query id")
            for i, (d, s) in enumerate(zip(r.doc_ids, r.scores), 1):
                lines.append(f"{q} Q0 {_check_id(d, 'document id')} {i} {float(s)!r} {tag}\n")
        atomic_write(path, lambda fh: fh.writelines(lines), fsync=False)


def suite_runs(result_or_path: Any, **load_options: Any) -> Tuple[Qrels, Dict[str, Run]]:
    """The qrels and every retriever's run of a suite, exactly as scored.

    Pass a ``SuiteResult`` (e.g. from the ``retrieval_suite`` fixture) or the path of a suite
    file (it is then loaded and run without the latency pass; ``load_options`` go to
    ``load_suite``)."""
    result = result_or_path
    if isinstance(result_or_path, (str, Path)):
        from ..config.load import load_suite
        from .runner import SuiteRunner

        cli = dict(load_options.pop("cli", None) or {})
        cli.setdefault("latency.enabled", False)
        suite = load_suite(Path(result_or_path), cli=cli, **load_options)
        result = SuiteRunner(suite).run()
    qrels = Qrels({q: dict(d) for q, d in result.judgments.qrels.items()})
    runs = {name: Run(name, scored_run(r)) for name, r in result.retrievers.items()}
    return qrels, runs


def scored_run(r: Any) -> Dict[str, Ranking]:
    """A ``RetrieverResult``'s run cut at the depth it was scored at."""
    depth = getattr(r, "depth", None)
    return {q: (rk if depth is None else rk.top(depth)) for q, rk in r.run.items()}


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "suite"


def evaluate_command(result: Any, qrels_file: str, run_file: str) -> List[str]:
    """The ``pytest-retrieval evaluate`` arguments that score ``run_file`` as the suite did."""
    model = result.suite.model
    args = ["pytest-retrieval", "evaluate", qrels_file, run_file]
    args += ["--profile", model.evaluation.profile, "--ties", model.evaluation.ties]
    args += ["--relevance-threshold", str(model.judgments.relevance_threshold)]
    for m in result.suite.metrics:
        args += ["-m", m]
    return args


def write_suite_runs(result: Any, folder: Union[str, Path]) -> Path:
    """``folder/<suite>/``: ``qrels.txt``, ``<retriever>.run`` per retriever and
    ``evaluate.sh`` with the commands that reproduce the suite's numbers."""
    out = Path(folder) / _slug(result.suite.name)
    out.mkdir(parents=True, exist_ok=True)
    qrels, runs = suite_runs(result)
    qrels.write(out / "qrels.txt")
    script = ["#!/bin/sh", f"# {result.suite.name}: reproduce the suite's numbers", 'cd "$(dirname "$0")"']
    for name, run in runs.items():
        file = f"{_slug(name)}.run"
        run.write(out / file)
        script.append(shlex.join(evaluate_command(result, "qrels.txt", file)))
    atomic_write(out / "evaluate.sh", lambda fh: fh.write("\n".join(script) + "\n"), fsync=False)
    return out


def runs_as_mapping(runs: Mapping[str, Run]) -> Dict[str, Dict[str, Dict[str, float]]]:
    """retriever -> the run's plain dict."""
    return {n: r.to_dict() for n, r in runs.items()}
