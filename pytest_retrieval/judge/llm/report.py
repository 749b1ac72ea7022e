"""What a grading run reports: grades, failures, requests, tokens and the cost estimate."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, TextIO, Tuple, Union

from ...fileio import atomic_write

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["Failure", "GradingReport", "Prices", "write_failures"]


@dataclass(frozen=True)
class Prices:
    """USD per million tokens, for the cost estimate."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


@dataclass
class Failure:
    query_id: str
    doc_id: str
    error: str
    raw: Optional[str] = None


@dataclass
class GradingReport:
    judge_id: str
    prompt_version: str
    total: int = 0
    cached: int = 0
    new: int = 0
    failed: int = 0
    not_asked: int = 0  # left when the run stopped early
    requests: int = 0  # HTTP/judge calls made, retries included
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usage_reported: bool = False
    cost: Optional[float] = None
    estimated_input_tokens: int = 0  # dry run: prompt characters / 4
    aborted: Optional[str] = None
    elapsed: float = 0.0
    # (query id, doc id) -> grade 0-3 (or the value a custom ``parse`` read, e.g. questions)
    grades: Dict[Tuple[str, str], Any] = field(default_factory=dict)
    failures: List[Failure] = field(default_factory=list)
    dry_run: bool = False

    def qrels(self) -> Dict[str, Dict[str, int]]:
        out: Dict[str, Dict[str, int]] = {}
        for (q, d), g in self.grades.items():
            out.setdefault(q, {})[d] = g
        return out

    @property
    def complete(self) -> bool:
        return not self.failed and not self.not_asked and not self.aborted

    def summary(self) -> str:
        if self.dry_run:
            return self._dry_run_summary()
        s = (
            f"{self.judge_id} (prompt {self.prompt_version}): {self.total} pairs: "
            f"{self.cached} cached, {self.new} new, {self.failed} failed"
        )
        if self.not_asked:
            s += f", {self.not_asked} not asked"
        s += f"; {self.requests} request(s), {self.retries} retr{'y' if self.retries == 1 else 'ies'}"
        s += self._usage_summary()
        s += f"; {self.elapsed:.1f} s"
        if self.aborted:
            s += f"\nstopped early: {self.aborted}"
        if self.failed or self.not_asked or self.aborted:
            s += (
                "\nrerun the same command to ask the failed/remaining pairs again; cached "
                "answers are not asked twice"
            )
        return s

    def _dry_run_summary(self) -> str:
        s = (
            f"dry run, {self.judge_id} (prompt {self.prompt_version}): {self.total} pairs, "
            f"{self.cached} cached, {self.not_asked} to ask (~{self.estimated_input_tokens:,} "
            f"input tokens"
        )
        s += f", est. ${self.cost:.2f})" if self.cost is not None else ")"
        return s

    def _usage_summary(self) -> str:
        """Tokens and cost, as far as the API reported them."""
        s = ""
        if self.usage_reported:
            s += f"; tokens in {self.input_tokens:,} / out {self.output_tokens:,}"
        if self.cost is not None:
            s += f"; est. cost ${self.cost:.4f}"
        return s


def write_failures(report: GradingReport, path: PathLike) -> None:
    """The failed pairs as JSONL ``{"query_id", "doc_id", "error", "raw"}``."""

    def write(fh: TextIO) -> None:
        for f in report.failures:
            fh.write(
                json.dumps(
                    {"query_id": f.query_id, "doc_id": f.doc_id, "error": f.error, "raw": f.raw},
                    ensure_ascii=False,
                )
                + "\n"
            )

    atomic_write(Path(path), write)
