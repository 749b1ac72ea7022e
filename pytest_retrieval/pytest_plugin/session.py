"""The plugin's state for one pytest session: every suite file's ``SuiteState``, loaded once with
the command line's settings, and what the session does with them at its end (baselines, run
files, reports). pytest-benchmark's ``BenchmarkSession`` is the model: made in
``pytest_configure``, kept in ``config.stash``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

from .options import suite_overrides
from .state import SuiteState

__all__ = ["RetrievalSession"]

_SESSION = pytest.StashKey["RetrievalSession"]()


class RetrievalSession:
    """Every suite of the session, by resolved file path, in the order they were first loaded."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.suites: Dict[str, SuiteState] = {}

    @classmethod
    def start(cls, config: pytest.Config) -> RetrievalSession:
        """The session of ``config``, kept in its stash; ``retrieval_queries()`` reads a suite's
        judgments through it, as this run does, and shares them with it."""
        from ..execution import queries

        session = config.stash[_SESSION] = cls(config)
        queries.push_suite_loader(session.judgments)
        return session

    @classmethod
    def of(cls, config: pytest.Config) -> RetrievalSession:
        return config.stash[_SESSION]

    @classmethod
    def stop(cls, config: pytest.Config) -> None:
        """``retrieval_queries()`` no longer reads through the session of ``config`` (if it started)."""
        from ..execution import queries

        session = config.stash.get(_SESSION, None)
        if session is not None:
            queries.pop_suite_loader(session.judgments)

    @property
    def states(self) -> List[SuiteState]:
        return list(self.suites.values())

    def load(self, path: Path) -> SuiteState:
        """The suite at ``path``, loaded the first time with ``--retrieval-override`` files and
        the other command-line settings."""
        from ..config.load import load_suite

        key = str(Path(path).resolve())
        if key not in self.suites:
            config = self.config
            overrides = tuple(Path(p) for p in config.getoption("retrieval_override"))
            suite = load_suite(Path(path), overrides=overrides, cli=suite_overrides(config))
            if config.getoption("retrieval_no_latency"):
                # not a file override: the file stays valid, its latency items are skipped
                suite.model.latency.enabled = False
            self.suites[key] = SuiteState(suite)
        return self.suites[key]

    def judgments(self, path: Path) -> Any:
        """The judgments of the suite at ``path``, as its run reads them (``retrieval_queries``)."""
        return self.load(path).shared.judgments()

    def for_test(self, path: Any, caller: str) -> SuiteState:
        """The suite at ``path`` asked for by a test in file ``caller``: as given, else beside the
        calling test file, else under rootdir."""
        p = Path(path)
        if not p.is_absolute() and not p.exists():
            beside = Path(caller).resolve().parent / p
            p = beside if beside.exists() else Path(self.config.rootpath) / p
        return self.load(p)

    def close(self) -> None:
        """Every suite's shared backend is closed (its throwaway index deleted) once the session ends."""
        for state in self.suites.values():
            state.close()

    # ------------------------------------------------------------ the end of the session

    def write_summary(self, terminalreporter: Any) -> None:
        """The ``retrieval summary`` section: each suite that ran, its gates and golden queries."""
        states = [s for s in self.suites.values() if s.result is not None]
        if not states:
            return
        from ..reports.terminal import expectation_lines, render_summary

        terminalreporter.section("retrieval summary")
        for state in states:
            for line in render_summary(state.result, state.outcomes, state.regressions, state.baseline_note):
                terminalreporter.write_line(line)
            if state.runs > 1:  # pytest-xdist with a --dist mode that split the suite's items
                terminalreporter.write_line(
                    f"  note: the suite ran {state.runs} times, on {state.runs} xdist workers (a Python test "
                    "outside its folder asked for it, or a --dist mode split its items; the default `-n N` "
                    "keeps a folder of suites and its Python tests on one worker)"
                )
            for line in expectation_lines(state.expectations):
                terminalreporter.write_line(line)

    def write_outputs(self, session: pytest.Session) -> None:
        """Baselines (``--retrieval-baseline-update``), run files, the unjudged queue and the
        reports, each on its own: one that cannot be written is one line, the others are written."""
        from ..reports.outputs import OutputWriter, terminal_say, write_outputs

        writer = OutputWriter(terminal_say(self.config), session)
        if self.config.getoption("retrieval_baseline_update", False):
            self._update_baselines(writer)
        unjudged = self.config.getoption("retrieval_export_unjudged", None)
        if unjudged:
            from ..reports.unjudged import write_unjudged

            writer.write(
                f"--retrieval-export-unjudged {unjudged}", lambda: write_unjudged(Path(unjudged), self.states)
            )
        write_outputs(session, self.states, writer)  # run files, JSON, Markdown, HTML, ...

    def _update_baselines(self, writer: Any) -> None:
        from ..gates.baseline import baseline_path, update_baseline

        for state in self.suites.values():
            if state.result is not None:
                if writer.write(
                    f"--retrieval-baseline-update {baseline_path(state.suite)}",
                    lambda s=state: update_baseline(s.suite, s.result),
                ):
                    writer.say(f"baseline written: {baseline_path(state.suite)}")
