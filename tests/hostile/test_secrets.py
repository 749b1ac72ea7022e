"""Secrets through a whole run (issue #11 item 1): hostile passwords interpolated into suite
files never appear, nor any transformation of them, in the terminal output, the JSON report,
the JUnit XML, the baseline file or the captured logs: on a passing run (embedded backend, the
connection configured but unused) and on an unreachable engine (every item an ERROR)."""

from __future__ import annotations

import base64
import textwrap
import urllib.parse
from pathlib import Path
from typing import Dict, List

import pytest

from .conftest import BASE, HOSTILE_PASSWORDS

# distinctive enough to scan for (``null`` and ``~`` are checked in test_suite_yaml)
SCANNED = [(i, p) for i, p in enumerate(HOSTILE_PASSWORDS) if len(p.strip()) >= 5]


def _forms(pw: str) -> List[str]:
    """The secret and the shapes it takes on the way to a server or a log."""
    forms = {
        pw,
        pw.strip(),
        urllib.parse.quote(pw, safe=""),
        base64.b64encode(f"u:{pw}".encode()).decode(),
        repr(pw)[1:-1],
    }
    if pw == "12:30:45":
        forms.add("45045")  # YAML 1.1 sexagesimal
    return sorted(f for f in forms if len(f) >= 5)


def _suite(i: int, backend: str) -> str:
    conn = (
        "  connection:\n"
        "    hosts: ['http://127.0.0.1:1']\n"
        "    username: u\n"
        f"    password: ${{HOSTILE_PW_{i}}}\n"
        "    max_retries: 0\n"
        "    request_timeout: 2\n"
    )
    return (
        BASE.replace("suite: t", f"suite: s{i}")
        + f"backend:\n  type: {backend}\n"
        + conn
        + "regression:\n  max_drop: {ndcg@10: 0.5}\n"
        + "floors:\n  bm25:\n    ndcg@10: 0.1\n"
    )


def _run(pytester: pytest.Pytester, backend: str, extra: List[str]) -> Dict[str, str]:
    for i, _pw in SCANNED:
        pytester.makefile(".yaml", **{f"retrieval_s{i}": textwrap.dedent(_suite(i, backend))})
    report = pytester.path / "report.json"
    junit = pytester.path / "junit.xml"
    log = pytester.path / "run.log"
    result = pytester.runpytest_subprocess(
        "-rA",
        "-p",
        "no:cacheprovider",
        f"--retrieval-report={report}",
        f"--junitxml={junit}",
        f"--log-file={log}",
        "--log-file-level=DEBUG",
        "--log-level=DEBUG",
        *extra,
        timeout=300,
    )
    outputs = {
        "terminal": result.stdout.str() + result.stderr.str(),
        "report": report.read_text() if report.exists() else "",
        "junit": junit.read_text() if junit.exists() else "",
        "log": log.read_text() if log.exists() else "",
    }
    for f in pytester.path.glob("*.baseline.json"):
        outputs[f"baseline {f.name}"] = f.read_text()
    outputs["_ret"] = str(int(result.ret))
    return outputs


@pytest.fixture(scope="module")
def passing_run(pytester_module) -> Dict[str, str]:
    return pytester_module("embedded", ["--retrieval-baseline-update"])


@pytest.fixture(scope="module")
def unreachable_run(pytester_module) -> Dict[str, str]:
    return pytester_module("elasticsearch", [])


@pytest.fixture(scope="module")
def pytester_module(tmp_path_factory, request):
    """A module-scoped stand-in for pytester: one subprocess run per backend for all secrets."""
    import os

    cache: Dict[str, Dict[str, str]] = {}

    def run(backend: str, extra: List[str]) -> Dict[str, str]:
        if backend not in cache:
            old = dict(os.environ)
            try:
                for i, pw in enumerate(HOSTILE_PASSWORDS):
                    os.environ[f"HOSTILE_PW_{i}"] = pw
                d = tmp_path_factory.mktemp(f"secrets-{backend}")

                class _P:  # the parts of pytester _run uses
                    path = d

                    @staticmethod
                    def makefile(ext, **files):
                        for name, text in files.items():
                            (d / f"{name}{ext}").write_text(text)

                    @staticmethod
                    def runpytest_subprocess(*args, timeout=None):
                        import subprocess
                        import sys

                        proc = subprocess.run(
                            [sys.executable, "-m", "pytest", *args],
                            cwd=d,
                            capture_output=True,
                            text=True,
                            timeout=timeout,
                        )

                        class R:
                            ret = proc.returncode

                            class stdout:
                                @staticmethod
                                def str():
                                    return proc.stdout

                            class stderr:
                                @staticmethod
                                def str():
                                    return proc.stderr

                        return R

                cache[backend] = _run(_P, backend, extra)  # type: ignore[arg-type]
            finally:
                os.environ.clear()
                os.environ.update(old)
        return cache[backend]

    return run


@pytest.mark.parametrize("i,pw", SCANNED, ids=[repr(p) for _, p in SCANNED])
def test_no_secret_in_any_output_of_a_passing_run(passing_run: Dict[str, str], i: int, pw: str) -> None:
    assert passing_run["_ret"] == "0", passing_run["terminal"][-3000:]
    assert any(k.startswith("baseline") for k in passing_run)
    for where, text in passing_run.items():
        for form in _forms(pw):
            assert form not in text, f"secret #{i} ({form!r}) found in {where}"


@pytest.mark.parametrize("i,pw", SCANNED, ids=[repr(p) for _, p in SCANNED])
def test_no_secret_in_any_output_of_an_unreachable_engine(
    unreachable_run: Dict[str, str], i: int, pw: str
) -> None:
    out = unreachable_run["terminal"]
    assert unreachable_run["_ret"] != "0"  # fail closed: infrastructure is an error
    assert " passed" not in out.splitlines()[-1]
    assert "Traceback" not in out
    for where, text in unreachable_run.items():
        for form in _forms(pw):
            assert form not in text, f"secret #{i} ({form!r}) found in {where}"


def test_an_unreachable_engine_is_one_error_line_per_item_and_quiet_client_logs(
    unreachable_run: Dict[str, str],
) -> None:
    """Issue #11 item 8: the InfrastructureError line, no client retry chatter, no traceback."""
    out, log = unreachable_run["terminal"], unreachable_run["log"]
    errors = [
        l
        for l in out.splitlines()
        if l.startswith("InfrastructureError: elasticsearch at http://127.0.0.1:1")
    ]
    assert errors, out[-2000:]
    assert all("\n" not in e for e in errors)
    for text in (out, log):
        assert "has failed for" not in text
        assert "Traceback" not in text


@pytest.mark.parametrize(
    "connection,expected",
    [
        ({"verify_certs": False}, ["verify_certs is false"]),
        (
            {"hosts": ["http://search.example:9200"], "username": "u", "password": "p"},
            ["clear text", "search.example:9200"],
        ),
        ({"hosts": ["http://u:p@search.example"]}, ["clear text"]),
        ({"hosts": ["http://10.0.0.5:9200"], "api_key": "k"}, ["clear text", "10.0.0.5"]),
        ({"hosts": ["http://127.0.0.1:9200"], "username": "u", "password": "p"}, []),
        ({"hosts": ["http://localhost:9200"], "username": "u", "password": "p"}, []),
        ({"hosts": ["http://[::1]:9200"], "username": "u", "password": "p"}, []),
        ({"hosts": ["https://search.example:9200"], "username": "u", "password": "p"}, []),
        ({"hosts": ["http://search.example:9200"]}, []),
    ],
    ids=[
        "no-verify",
        "http-basic",
        "http-url-creds",
        "http-api-key",
        "loopback",
        "localhost",
        "ipv6-loopback",
        "https",
        "no-creds",
    ],
)
def test_quiet_insecurity_is_said_once(tmp_path: Path, connection: dict, expected: List[str]) -> None:
    """Issue #11 item 10: a named warning in the summary (the suite's warnings), never silence."""
    import yaml

    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.security import security_warnings

    p = tmp_path / "retrieval_x.yaml"
    p.write_text(
        BASE
        + "floors:\n  bm25:\n    ndcg@10: 0.1\n"
        + yaml.safe_dump({"backend": {"type": "elasticsearch", "connection": connection}})
    )
    warnings = security_warnings(load_suite(p))
    if not expected:
        assert warnings == []
    else:
        assert len(warnings) == 1, warnings
        for f in expected:
            assert f in warnings[0]
        assert ":p@" not in warnings[0] and "'p'" not in warnings[0]
