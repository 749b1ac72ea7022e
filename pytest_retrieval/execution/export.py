"""Rankings out: a suite's qrels and every retriever's run exactly as scored, as TREC files
(``pytest --retrieval-runs DIR``) and as Python objects convertible to ``ranx`` and
``ir_measures`` structures.

``pytest-retrieval evaluate`` on the files reproduces the suite's numbers: the command is in
``DIR/<suite>/evaluate.sh``. ``ranx`` and ``ir_measures`` re-order each ranking by score and
break ties their own way: trec_eval (and ir_measures' pytrec_eval provider) by document id
descending, ir_measures' msmarco provider (its ``RR@k``) and judged provider by document id
ascending. On rankings without tied scores they agree with a suite evaluated with
``ties: trec``; where scores tie, only the pytrec_eval-backed measures are sure to. A metric's
name in each tool: ``parse_metric(m).external_names()`` (``docs/metrics.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ConfigError
from ..fileio import atomic_write
from ..safe_names import file_name, shell_comment, shell_line, unique_file_names
from ..types import Ranking

__all__ = ["Qrels", "Run", "run_folder_names", "suite_runs", "write_suite_runs"]


def _check_id(value: str, what: str) -> str:
    if not value or any(c.isspace() for c in value):
        shown = value if len(value) <= 80 else value[:80] + "..."
        why = "is empty" if not value else "contains whitespace"
        raise ConfigError(f"{what} {shown!r} {why}: it cannot be written as a TREC file")
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

    def lines(self) -> List[str]:
        """TREC qrels: ``qid 0 docid grade``; an id a TREC file cannot hold raises ``ConfigError``."""
        return [
            f"{_check_id(q, 'query id')} 0 {_check_id(d, 'document id')} {g}\n"
            for q, docs in self.data.items()
            for d, g in docs.items()
        ]

    def write(self, path: Union[str, Path]) -> None:
        lines = self.lines()
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

    def lines(self, tag: str = "") -> List[str]:
        """TREC run: ``qid Q0 docid rank score tag``, ranks in the order scored, scores exact
        (``repr``: they read back to the same float)."""
        tag = _check_id(re.sub(r"\s+", "_", tag or self.name), "run tag")
        lines = []
        for q, r in self.rankings.items():
            _check_id(q, "query id")
            for i, (d, s) in enumerate(zip(r.doc_ids, r.scores), 1):
                lines.append(f"{q} Q0 {_check_id(d, 'document id')} {i} {float(s)!r} {tag}\n")
        return lines

    def write(self, path: Union[str, Path], tag: str = "") -> None:
        lines = self.lines(tag)
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


def evaluate_command(result: Any, qrels_file: str, run_file: str) -> List[str]:
    """The ``pytest-retrieval evaluate`` arguments that score ``run_file`` as the suite did."""
    model = result.suite.model
    args = ["pytest-retrieval", "evaluate", qrels_file, run_file]
    args += ["--profile", model.evaluation.profile, "--ties", model.evaluation.ties]
    args += ["--relevance-threshold", str(model.judgments.relevance_threshold)]
    for m in result.suite.metrics:
        args += ["-m", m]
    return args


def run_folder_names(results: Sequence[Any]) -> List[str]:
    """Each suite's folder under ``--retrieval-runs``: its name made safe, one per suite file
    (two files with one suite name get the hash of their path)."""
    names = unique_file_names({str(r.suite.path): r.suite.name for r in results}, fallback="suite")
    return [names[str(r.suite.path)] for r in results]


def write_suite_runs(result: Any, folder: Union[str, Path], name: Optional[str] = None) -> Path:
    """``folder/<name>/`` (``name``: the suite's name made safe): ``qrels.txt``,
    ``<retriever>.run`` per retriever and ``evaluate.sh`` with the commands that reproduce the
    suite's numbers. Every file is checked before the first is written."""
    qrels, runs = suite_runs(result)
    files = {"qrels.txt": qrels.lines()}
    script = ["#!/bin/sh", shell_comment(f"{result.suite.name}: reproduce the suite's numbers")]
    script.append('cd "$(dirname "$0")" || exit 1')
    run_files = unique_file_names({n: n for n in runs}, fallback="retriever")
    for retriever, run in runs.items():
        file = f"{run_files[retriever]}.run"
        files[file] = run.lines()
        script.append(shell_comment(f"retriever {retriever}"))
        script.append(shell_line(evaluate_command(result, "qrels.txt", file)))
    files["evaluate.sh"] = ["\n".join(script) + "\n"]
    out = Path(folder) / (name or file_name(result.suite.name, fallback="suite"))
    out.mkdir(parents=True, exist_ok=True)
    for file, lines in files.items():
        atomic_write(out / file, partial(_write_lines, lines), fsync=False)
    return out


def _write_lines(lines: List[str], fh: Any) -> None:
    fh.writelines(lines)


def runs_as_mapping(runs: Mapping[str, Run]) -> Dict[str, Dict[str, Dict[str, float]]]:
    """retriever -> the run's plain dict."""
    return {n: r.to_dict() for n, r in runs.items()}
