"""A JSON report read back by ``report`` and ``compare``: parsed, then checked where those
commands read it, so a tampered or damaged file is one line naming the file, the place in it
and what is wrong, never a ``TypeError`` from deep in a renderer (issue #28 section 5).

What is checked: the shape of every part the commands read (lists of mappings, mappings of
numbers), each metric value a finite number (``null``, the plugin's mark for a value that was
not finite, is refused where a value is compared: a number nobody can trust), nesting at most
``MAX_DEPTH`` deep, no ``NaN``/``Infinity`` and no number too large for a float."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterator, List, Tuple

from ..errors import RetrievalError
from ..fileio import read_regular_file

__all__ = ["MAX_DEPTH", "ReportFileError", "check_report", "load_report"]

MAX_DEPTH = 64  # a report is 8 levels deep; more is not a report, and would recurse in renderers

# a suite's parts that are lists of mappings
_LISTS_OF_MAPPINGS = ("retrievers", "stages", "gates", "regressions", "items", "gated")
# a suite's parts that are mappings (or null)
_MAPPINGS = ("backend", "query_details", "titles", "rankings", "latency_samples_ms", "unjudged_share")


class ReportFileError(RetrievalError):
    """A JSON report that cannot be read back: file, place, problem."""


def load_report(path: str) -> Dict[str, Any]:
    """A JSON report document, checked (:func:`check_report`), or one ``ReportFileError`` line."""
    doc = _parse(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("suites"), list):
        raise ReportFileError(f"{path}: not a pytest-retrieval JSON report (no 'suites' list)")
    _check_version(doc, path)
    check_report(doc, path)
    return doc


def _check_version(doc: Dict[str, Any], path: str) -> None:
    """Reports of every version up to this one are read (a version 1 report has no fingerprint
    and no run section, which nothing here needs); a newer one is refused, never misread."""
    from ..reports.json_report import REPORT_VERSION

    version = doc.get("version", 1)
    if isinstance(version, int) and not isinstance(version, bool) and version > REPORT_VERSION:
        raise ReportFileError(
            f"{path}: written by a newer pytest-retrieval (report version {version}, this version "
            f"reads up to {REPORT_VERSION}): upgrade pytest-retrieval"
        )


def _parse(path: str) -> Any:
    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        text = read_regular_file(path).decode("utf-8")
    except FileNotFoundError:
        raise ReportFileError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportFileError(f"{path}: not a JSON report ({exc})") from None
    try:
        doc = json.loads(text, parse_constant=refuse_constant)
    except RecursionError:
        raise ReportFileError(f"{path}: JSON nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, an integer of over 4,300 digits
        raise ReportFileError(f"{path}: not a JSON report ({exc})") from None
    if _too_deep(doc):
        raise ReportFileError(f"{path}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
    return doc


def _too_deep(doc: Any) -> bool:
    stack: List[Tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((c, depth + 1) for c in children)
    return False


def check_report(doc: Dict[str, Any], path: str) -> None:
    """Every suite of ``doc`` in the shape ``report`` and ``compare`` read; else one line."""
    for i, suite in enumerate(doc["suites"]):
        where = f"suites[{i}]"
        _CheckedSuite(path, where, _mapping(path, where, suite)).check()


def _fail(path: str, where: str, problem: str) -> ReportFileError:
    return ReportFileError(f"{path}: {where}: {problem}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _mapping(path: str, where: str, value: Any) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, where, f"expected a JSON object, got {_kind(value)}")
    return value


def _finite(path: str, where: str, value: Any, *, null: bool = False) -> None:
    """A finite JSON number (``null`` too when ``null``)."""
    if value is None and null:
        return
    if value is None:
        raise _fail(path, where, "is null (a value that was not a finite number): it cannot be compared")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(path, where, f"expected a number, got {_kind(value)}")
    try:
        ok = math.isfinite(float(value))
    except OverflowError:
        ok = False
    if not ok:
        raise _fail(path, where, "not a finite number (too large for a float)")


class _CheckedSuite:
    """One suite of a report, checked part by part."""

    def __init__(self, path: str, where: str, suite: Dict[str, Any]):
        self.path, self.where, self.suite = path, where, suite

    def check(self) -> None:
        self.parts()
        for j, r in enumerate(self.suite.get("retrievers", [])):
            self.retriever(f"{self.where}.retrievers[{j}]", r)
        for key in ("gated", "gates", "regressions"):
            for j, gate in enumerate(self.suite.get(key, [])):
                self.names(f"{self.where}.{key}[{j}]", gate)
        for j, reg in enumerate(self.suite.get("regressions", [])):
            _mapping(self.path, f"{self.where}.regressions[{j}].comparison", reg.get("comparison"))
            _finite(self.path, f"{self.where}.regressions[{j}].max_drop", reg.get("max_drop"), null=True)
        baseline = self.suite.get("baseline")
        if baseline is not None:
            self.baseline(f"{self.where}.baseline", baseline)

    def parts(self) -> None:
        for key in _LISTS_OF_MAPPINGS:
            if key in self.suite:
                self.list_of_mappings(f"{self.where}.{key}", self.suite[key])
        for key in _MAPPINGS:
            if key in self.suite:
                self.optional_mapping(f"{self.where}.{key}", self.suite[key])
        for key in ("metrics", "warnings"):
            if key in self.suite and not isinstance(self.suite[key], list):
                raise _fail(
                    self.path, f"{self.where}.{key}", f"expected a list, got {_kind(self.suite[key])}"
                )

    def names(self, where: str, gate: Dict[str, Any]) -> None:
        """A gate's retriever and metric: names (text)."""
        for key in ("retriever", "metric"):
            if not isinstance(gate.get(key), str):
                raise _fail(self.path, f"{where}.{key}", f"expected a name, got {_kind(gate.get(key))}")

    def list_of_mappings(self, where: str, value: Any) -> None:
        if not isinstance(value, list):
            raise _fail(self.path, where, f"expected a list, got {_kind(value)}")
        for j, item in enumerate(value):
            _mapping(self.path, f"{where}[{j}]", item)

    def optional_mapping(self, where: str, value: Any) -> None:
        if value is not None:
            _mapping(self.path, where, value)

    def retriever(self, where: str, r: Dict[str, Any]) -> None:
        if not isinstance(r.get("name"), str):
            raise _fail(self.path, f"{where}.name", f"expected a retriever name, got {_kind(r.get('name'))}")
        for key, value in _items(self.path, f"{where}.metrics", r.get("metrics", {})):
            _finite(
                self.path, f"{where}.metrics.{key}", value, null=True
            )  # an undefined mean is shown as such
        for key, value in _items(self.path, f"{where}.latency_ms", r.get("latency_ms")):
            if key != "environment":
                _finite(self.path, f"{where}.latency_ms.{key}", value, null=True)
        for qid, values in _items(self.path, f"{where}.per_query", r.get("per_query", {})):
            for m, value in _mapping(self.path, f"{where}.per_query.{qid}", values).items():
                _finite(self.path, f"{where}.per_query.{qid}.{m}", value)

    def baseline(self, where: str, baseline: Any) -> None:
        retrievers = _mapping(self.path, where, baseline).get("retrievers", {})
        for name, saved in _items(self.path, f"{where}.retrievers", retrievers):
            at = f"{where}.retrievers.{name}"
            saved = _mapping(self.path, at, saved)
            for m, value in _items(self.path, f"{at}.aggregate", saved.get("aggregate", {})):
                _finite(self.path, f"{at}.aggregate.{m}", value, null=True)
            for m, column in _items(self.path, f"{at}.per_query", saved.get("per_query", {})):
                self.column(f"{at}.per_query.{m}", column)
            for qid, top in _items(self.path, f"{at}.top", saved.get("top", {})):
                if not isinstance(top, list):
                    raise _fail(
                        self.path, f"{at}.top.{qid}", f"expected a list of document ids, got {_kind(top)}"
                    )

    def column(self, where: str, column: Any) -> None:
        """A saved per-query column: query id -> finite value, not empty."""
        values = list(_mapping(self.path, where, column).items())
        if not values:
            raise _fail(self.path, where, "an empty column (no query's value)")
        for qid, value in values:
            _finite(self.path, f"{where}.{qid}", value)


def _items(path: str, where: str, value: Any) -> Iterator[Tuple[str, Any]]:
    """The (key, value) pairs of a JSON object that may be absent (null)."""
    if value is None:
        return iter(())
    return iter(_mapping(path, where, value).items())
