"""What the commands' options share: the one-line-error parser, numbers validated like their
YAML twins (issue #11), the judge commands' ranges and fractions, ``--no-progress``, and the
joining of a negative value to its option."""

from __future__ import annotations

import argparse
import math
import re
from typing import Any, List, NoReturn, Optional

from ..numbers import INT64_MAX, fits_int64


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line (``prog: error: ...``), not the usage block too."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def number(
    kind: type = float,
    *,
    ge: Optional[float] = None,
    gt: Optional[float] = None,
    le: Optional[float] = None,
    lt: Optional[float] = None,
) -> Any:
    """An argparse ``type=`` that validates a number option like its YAML twin: ``kind`` (int
    or float), finite, within the bounds. Used by every numeric option of the command."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer no float holds (a 400-digit --depth)
            raise argparse.ArgumentTypeError(
                f"{text[:20]!r}... ({len(text)} characters) is too large"
            ) from None
        if not finite:
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if kind is int:
            try:
                fits_int64(value)  # numpy and the engines hold no more (a 29-digit --windows)
            except ValueError:
                shown = repr(text) if len(text) <= 30 else f"{text[:20]!r}... ({len(text)} characters)"
                raise argparse.ArgumentTypeError(f"{shown} is too large (at most {INT64_MAX})") from None
        for bound, ok, word in (
            (ge, lambda b: value >= b, ">="),
            (gt, lambda b: value > b, ">"),
            (le, lambda b: value <= b, "<="),
            (lt, lambda b: value < b, "<"),
        ):
            if bound is not None and not ok(bound):
                raise argparse.ArgumentTypeError(f"{text!r}: must be {word} {bound:g}")
        return value

    parse.__name__ = "integer" if kind is int else "number"
    return parse


def number_list(kind: type = float, *, ge: Optional[float] = None) -> Any:
    """A comma-separated list of ``number(kind, ge=...)`` (``--weights 0.3,0.7``)."""
    one = number(kind, ge=ge)

    def parse(text: str) -> tuple:
        parts = [p.strip() for p in text.split(",")]
        if not parts or any(not p for p in parts):
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers")
        return tuple(one(p) for p in parts)

    parse.__name__ = "list"
    return parse


def grade_range(text: str):
    """``MIN-MAX`` grades (``judge import --grades``, ``judge agree --labels``)."""
    from ..judge.annotations import parse_grade_range

    try:
        return parse_grade_range(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def fraction(text: str) -> float:
    """A number in [0, 1]."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not in [0, 1]")
    return v


def positive(text: str) -> float:
    """A finite number > 0 (NaN compares false with everything, so it is refused by name)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return v


def plain_text(text: str) -> str:
    """A name written into files and caches: not empty, no control or format characters (a
    right-to-left override would make what is shown differ from what is stored)."""
    import unicodedata

    if not text.strip():
        raise argparse.ArgumentTypeError("empty: give a name")
    bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cf")]
    if bad:
        raise argparse.ArgumentTypeError(f"{text!r} holds the control or format character {bad[0]!r}")
    return text


def run_tag(text: str) -> str:
    """A TREC run tag: the run file's sixth column, so one token (no white space)."""
    plain_text(text)
    if any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r}: a run tag is one column of a TREC run: no white space")
    return text


def http_url(text: str) -> str:
    """An ``http://`` or ``https://`` URL with a host and no credentials: a user part
    (``user:pass@``) is refused, never silently dropped, and never echoed (issue #32): every
    message shows the URL without what stands before its last ``@``."""
    from urllib.parse import urlsplit

    from ..redaction import split_user_info

    shown = _without_user_part(text)
    try:
        plain_text(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace(repr(text), repr(shown))) from None
    bare, credentials = split_user_info(text)
    if credentials is not None:
        raise argparse.ArgumentTypeError(
            f"{bare!r} carries credentials (user:password@), which the provider's SDK would send "
            "as basic auth in place of the API key: give the key in the variable --api-key-env names"
        )
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"{shown!r} is not an http(s) URL")
    return text


def _without_user_part(text: str) -> str:
    """``text`` as a message may show it: what stands before its last ``@`` (a user part, as
    far as a malformed URL has one) written ``***``."""
    if "@" not in text:
        return text
    scheme, sep, rest = text.partition("://")
    host = (rest if sep else text).rsplit("@", 1)[1]
    return f"{scheme}{sep}***@{host}" if sep else f"***@{host}"


def api_date(text: str) -> str:
    """An API version written as a date (``2023-06-01``)."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an API version date (YYYY-MM-DD)")
    return text


def metric_name(text: str) -> str:
    """A metric of a report: a measure the registry knows (``ndcg@10``), or a latency figure
    (``p95_ms``, ``p95_ratio``) as the JSON report names them."""
    from ..measures.metrics import parse_metric

    if re.fullmatch(r"p\d+(\.\d+)?_(ms|ratio)", text):
        return text
    try:
        parse_metric(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_progress_option(parser: argparse.ArgumentParser, func: Any) -> None:
    """The last option of a long-running command (``--no-progress``) and its handler."""
    parser.add_argument("--no-progress", dest="progress", action="store_false")
    parser.set_defaults(func=func)


# options whose value may start with "-" (a negative number or a list of them): argparse would
# read "--weights -1,1" as two options, so such a value is joined to its option first
_NUMERIC_VALUE_OPTIONS = ("--weights", "--rank-constants", "--windows", "--rank-constant", "--window", "-k")
_NEGATIVE = re.compile(r"-(\d|\.\d|inf|nan)", re.IGNORECASE)


def join_negative_values(argv: List[str]) -> List[str]:
    """``argv`` with every numeric option followed by a negative value written ``--opt=-1``."""
    out: List[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _NUMERIC_VALUE_OPTIONS and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def check_output_file(value: str, option: str) -> None:
    """An output file a command will write, checked before the work: its folder is created when
    missing (as ``report``, ``compare`` and the plugin's outputs do); a folder that cannot be
    (a file in the way, no permission) or a directory given as the file is one line naming the
    option, not a traceback after the work is done."""
    from pathlib import Path

    from ..errors import RetrievalError

    path = Path(value)
    if path.is_dir():
        raise RetrievalError(
            f"{option} {value}: is a directory (a folder, not a regular file); expected a file path"
        )
    folder = path.parent if str(path.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RetrievalError(
            f"{option} {value}: cannot create the folder {folder} ({exc.strerror or exc})"
        ) from None


def check_output_files(outputs: Any, inputs: Any = ()) -> None:
    """Every output of a command, checked before any work or paid request: none is an input,
    no two are one file, each extension names what is written (``output_paths.check_outputs``),
    and each folder can be made (:func:`check_output_file`). ``outputs``: ``Output`` s;
    ``inputs``: ``(what names it, path)`` pairs."""
    from ..output_paths import check_outputs

    check_outputs(outputs, inputs)
    for out in outputs:
        if out.path:
            check_output_file(str(out.path), out.option)
