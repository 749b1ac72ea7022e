"""Rankings out: a suite's qrels and every retriever's run exactly as scored, as TREC files
(``pytest --retrieval-runs DIR``) and as Python objects convertible to ``ranx`` and
``ir_measures`` structures.

``pytest-retrieval evaluate`` on the files reproduces the suite's numbers: the command is in
``DIR/<suite>/evaluate.sh`` (with ``--ties`` and ``--average-over`` as the suite's).

Ties (equal scores) are where the tools differ; each re-sorts a ranking by score and breaks
ties its own way (checked with ranx 0.3 and ir_measures 0.3; docs/explanation/trec-eval-parity.md):

* trec_eval, pytrec_eval, and ir_measures' measures that go to its pytrec_eval provider (AP,
  nDCG@k, P@k, R@k, RR without a cutoff): document id descending (trec_eval's ``comp_sim_docno``);
* ir_measures' ``RR@k`` goes to its msmarco provider: document id ascending;
* ranx: insertion order (a stable sort by score), i.e. the order exported.

So ``to_dict``/``to_ranx``/``to_ir_measures`` take ``ties``: ``None`` (default) exports the
scores as returned (every tool applies its own rule above: exact only where no two scores of
a ranking are equal); ``"engine"`` or ``"trec"`` exports the ranking in that order with its
scores replaced by ``n - i`` (the i-th document of n, 0-based): no ties are left, every tool
scores that exact order, the suite's numbers under the same ``ties`` setting are reproduced.

A metric's name in each tool: ``parse_metric(m).external_names()`` (``docs/metrics.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ConfigError
from ..fileio import atomic_write
from ..redaction import redact
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

    def to_dict(self, ties: Optional[str] = None) -> Dict[str, Dict[str, float]]:
        """query id -> {doc id: score} (pytrec_eval's and ``ranx.Run.from_dict``'s format).
        ``ties``: None (scores as returned), ``"engine"`` or ``"trec"`` (the ranking in that
        order, scores ``n - i``: no ties left; see the module docstring)."""
        return {q: dict(_ordered(r, ties)) for q, r in self.rankings.items()}

    def to_ranx(self, ties: Optional[str] = None) -> Any:
        from ranx import Run as RanxRun

        return RanxRun.from_dict(self.to_dict(ties), name=self.name)

    def to_ir_measures(self, ties: Optional[str] = None) -> List[Any]:
        """A list of ``ir_measures.ScoredDoc`` (query_id, doc_id, score); ``ties`` as
        :meth:`to_dict`."""
        import ir_measures

        return [
            ir_measures.ScoredDoc(q, d, float(s))
            for q, r in self.rankings.items()
            for d, s in _ordered(r, ties)
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


def _ordered(ranking: Ranking, ties: Optional[str]) -> List[Tuple[str, float]]:
    """(doc, score) pairs: as returned (``ties=None``), or in the ``engine``'s or trec_eval's
    order (float32 score descending, then doc id descending, as ``measures.columnar``) with
    scores ``n - i``."""
    pairs = list(zip(ranking.doc_ids, (float(s) for s in ranking.scores)))
    if ties is None:
        return pairs
    if ties not in ("engine", "trec"):
        raise ValueError(f"ties must be None, 'engine' or 'trec'; got {ties!r}")
    first: Dict[str, float] = {}
    for d, s in pairs:
        first.setdefault(d, s)  # a repeated id counts once, at its first occurrence
    order = list(first.items())
    if ties == "trec":
        import numpy as np

        s32 = np.asarray([s for _, s in order], dtype=np.float64).astype(np.float32).tolist()
        idx = sorted(range(len(order)), key=lambda i: (s32[i], order[i][0]), reverse=True)
        order = [order[i] for i in idx]
    n = len(order)
    return [(d, float(n - i)) for i, (d, _s) in enumerate(order)]


def suite_runs(result_or_path: Any, **load_options: Any) -> Tuple[Qrels, Dict[str, Run]]:
    """The qrels and every retriever's run of a suite, exactly as scored.

    Pass a ``SuiteResult`` (e.g. from the ``retrieval_suite`` fixture) or the path of a suite
    file (it is then loaded and run without the latency pass; ``load_options`` go to
    ``load_suite``)."""
    result = result_or_path
    if isinstance(result_or_path, (str, Path)):
        from ..config.load import load_suite
        from .runner import SuiteRunner

        suite = load_suite(Path(result_or_path), **load_options)
        # as `--retrieval-no-latency` does: the file stays valid (its latency floors are
        # checked as written), only the timing pass is left out
        suite.model.latency.enabled = False
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
    from ..measures.aggregate import average_over_of

    model = result.suite.model
    args = ["pytest-retrieval", "evaluate", qrels_file, run_file]
    args += ["--profile", model.evaluation.profile, "--ties", model.evaluation.ties]
    args += ["--relevance-threshold", str(model.judgments.relevance_threshold)]
    args += ["--average-over", average_over_of(model.evaluation)]
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
    script.append(shell_comment(_ties_note(result.suite.model.evaluation.ties)))
    script.append('cd "$(dirname "$0")" || exit 1')
    run_files = unique_file_names({n: n for n in runs}, fallback="retriever")
    for retriever, run in runs.items():
        file = f"{run_files[retriever]}.run"
        files[file] = run.lines()
        script.append(shell_comment(f"retriever {retriever}"))
        script.append(shell_line(evaluate_command(result, "qrels.txt", file)))
    files["evaluate.sh"] = [redact("\n".join(script)) + "\n"]
    out = Path(folder) / (name or file_name(result.suite.name, fallback="suite"))
    out.mkdir(parents=True, exist_ok=True)
    for file, lines in files.items():
        atomic_write(out / file, partial(_write_lines, lines), fsync=False)
    return out


def _ties_note(ties: str) -> str:
    """What the run files' equal scores mean to the tools that read them (module docstring)."""
    how = (
        "the rank column, the engine's order (--ties engine)"
        if ties == "engine"
        else "score descending, then doc id descending (--ties trec, trec_eval's rule)"
    )
    return (
        f"ties: {ties}: the suite ranked by {how}. trec_eval, pytrec_eval and most ir_measures "
        "measures break equal scores by doc id descending, ir_measures RR@k by doc id ascending, "
        "ranx by file order: exact where no two scores of a ranking are equal; "
        "Run.to_ir_measures(ties=...) / to_ranx(ties=...) export the suite's order exactly"
    )


def _write_lines(lines: List[str], fh: Any) -> None:
    fh.writelines(lines)


def runs_as_mapping(runs: Mapping[str, Run]) -> Dict[str, Dict[str, Dict[str, float]]]:
    """retriever -> the run's plain dict."""
    return {n: r.to_dict() for n, r in runs.items()}
