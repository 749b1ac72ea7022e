"""The plugin's state for one pytest session: every suite file's ``SuiteState``, loaded once with
the command line's settings, and what the session does with them at its end (baselines, run
files, reports). pytest-benchmark's ``BenchmarkSession`` is the model: made in
``pytest_configure``, kept in ``config.stash``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from .coverage import GateCoverage
from .ini import option_label
from .options import suite_overrides
from .stability import StabilityInputs
from .state import SuiteState
from .suite_files import gate_count

__all__ = ["RetrievalSession"]

_SESSION = pytest.StashKey["RetrievalSession"]()


class RetrievalSession:
    """Every suite of the session, by resolved file path, in the order they were first loaded."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.suites: Dict[str, SuiteState] = {}
        self.coverage = GateCoverage()  # which gates got a verdict (a partial run says so)
        self.document: Optional[Dict[str, Any]] = None  # the JSON report, made once at the end

    @classmethod
    def start(cls, config: pytest.Config) -> RetrievalSession:
        """The session of ``config``, kept in its stash; ``retrieval_queries()`` reads a suite's
        judgments through it, as this run does, and shares them with it."""
        from ..execution import queries

        session = config.stash[_SESSION] = cls(config)
        queries.push_suite_loader(session.judgments)
        config.pluginmanager.register(session.coverage, "pytest_retrieval.pytest_plugin.coverage")
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
        key = str(Path(path).resolve())
        if key not in self.suites:
            suite = self._read(Path(path))
            if self.config.getoption("retrieval_no_latency"):
                # not a file override: the file stays valid, its latency items are skipped
                suite.model.latency.enabled = False
            state = self.suites[key] = SuiteState(suite)
            against = self.config.getoption("retrieval_stability_against", None)
            if against is not None:  # issue #33: the stability measures against a stored run
                state.stability = StabilityInputs(against, self.config.getoption("retrieval_history", None))
        return self.suites[key]

    def _read(self, path: Path) -> Any:
        from ..config.load import load_suite

        overrides = tuple(Path(p) for p in self.config.getoption("retrieval_override"))
        return load_suite(path, overrides=overrides, cli=suite_overrides(self.config))

    def gates(self) -> Dict[str, int]:
        """The session's gate counts (``GateCoverage.as_dict``), every suite's gates defined:
        those loaded, and those of suite files collection reached but skipped (``--lf``), read
        here; a file that cannot be read was a collection error already."""
        for key, state in self.suites.items():
            self.coverage.define(key, gate_count(state.suite))
        reached = {str((self.config.rootpath / n).resolve()) for n in self.coverage.suite_files}
        for key in sorted(reached - set(self.suites)):
            try:
                self.coverage.define(key, gate_count(self._read(Path(key))))
            except Exception:  # noqa: BLE001 - said when it was collected, if it was
                continue
        return self.coverage.as_dict()

    def handed_coverage(self) -> Dict[str, Any]:
        """An xdist worker's part of the gate count, for the controller (``xdist.hand_over``)."""
        self.gates()
        return self.coverage.handed()

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
        """The ``retrieval summary`` section, rendered from the session's JSON report document
        (``reports/terminal.py``): the verdict (with the gates not judged), then each suite
        that ran, its gates and golden queries."""
        gates = self.gates()
        if not (any(s.result is not None for s in self.states) or gates["total"]):
            return
        from ..reports.terminal import summary_lines

        terminalreporter.section("retrieval summary")
        write = self._relative_lines(terminalreporter.write_line)
        doc = self.document
        if doc is None:  # said where it was made (``the report document: not written``)
            write("the summary cannot be rendered: the report document could not be made")
            return
        for line in summary_lines(doc):
            write(line)

    def _relative_lines(self, write: Callable[[str], Any]) -> Callable[[str], Any]:
        """``write`` with the paths under the rootdir made relative, as in the reports, and each
        line kept one line (a name's newline or escape sequence spelled out)."""
        from ..redaction import redact
        from ..reports.paths import relative_text
        from ..safe_names import one_line

        root = self.config.rootpath
        return lambda line: write(one_line(relative_text(redact(line), root)))

    def write_outputs(self, session: pytest.Session) -> None:
        """Baselines (``--retrieval-baseline-update``), run files, the unjudged queue and the
        reports, each on its own: one that cannot be written is one line, the others are written."""
        from ..reports.outputs import OutputWriter, terminal_say, write_outputs

        writer = OutputWriter(self._relative_lines(terminal_say(self.config)), session)
        baselines = None
        if self.config.getoption("retrieval_baseline_update", False):
            baselines = self._update_baselines(writer)
        unjudged = self.config.getoption("retrieval_export_unjudged", None)
        if unjudged:
            from ..reports.unjudged import write_unjudged

            writer.write(
                f"{self._label('export_unjudged')} {unjudged}",
                lambda: write_unjudged(Path(unjudged), self.states),
            )
        # the report document (the run record): the terminal summary, every rendering and the
        # run history read it; then run files, JSON, Markdown, HTML, ..., then the run history
        from ..reports.outputs import session_document
        from .history import run_of, write_history
        from .history_view import recent_history

        gates = self.gates()
        ran = bool(self.states or gates["total"])
        if ran:
            run = run_of(self.config, gates, int(session.exitstatus))
            self.document = session_document(writer, session, self.states, gates, run, baselines)
        write_outputs(
            session,
            self.states,
            writer,
            gates=gates,
            label=self._label,
            doc=self.document,
            recent=lambda w, doc: recent_history(w, self.config, doc),
            history=(lambda w, doc: write_history(w, self.config, doc)) if ran else None,
        )

    def _label(self, name: str) -> str:
        """``--retrieval-<name>``, or ``retrieval_<name> in pyproject.toml`` for an ini value."""
        return option_label(self.config, f"retrieval_{name}")

    def _update_baselines(self, writer: Any) -> Dict[str, List[str]]:
        """Every suite that ran writes its baseline; the files written and those not (the
        report's headline reads "Baseline written", ``reports/view.py``)."""
        from ..gates.baseline import baseline_path, update_baseline

        done: Dict[str, List[str]] = {"written": [], "not_written": []}
        for state in self.suites.values():
            if state.result is not None:
                path = baseline_path(state.suite)
                if writer.write(
                    f"{self._label('baseline_update')} {path}",
                    lambda s=state: update_baseline(s.suite, s.result),
                ):
                    writer.say(f"baseline written: {path}")
                    done["written"].append(str(path))
                else:
                    done["not_written"].append(str(path))
        return done
