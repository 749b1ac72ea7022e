"""``scripts/engines`` as a command, and the status a plain ``curl`` of an engine's root meets
(issue #36, section 2): up (with the version, the cluster health and what ``GET /`` answers:
Elasticsearch's integ-test build has no ``rest-root`` module, so 405 there), starting (the
process runs, nothing answers yet), down, and security on (401)."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from tests.engines.conftest import ROOT, Instance

SCRIPT = ROOT / "scripts" / "engines"
HELPER = ROOT / "scripts" / "_engines_http.py"


def _status(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(HELPER), "status", url, *args], capture_output=True, text=True, timeout=60
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_script_runs_as_a_command() -> None:
    assert SCRIPT.read_text().startswith("#!/usr/bin/env bash\n")
    assert os.access(SCRIPT, os.X_OK)
    assert HELPER.read_text().startswith("#!/usr/bin/env python3\n")
    out = subprocess.run([str(SCRIPT), "help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "plain `curl URL/` answers" in out.stdout
    assert "Each instance has its own port" in out.stdout  # the whole usage block, not cut


def test_down_and_starting() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    down = _status(url, "0", "es9")
    assert down.returncode == 1
    assert down.stdout == f"down  `curl {url}/`: connection refused (start it: scripts/engines up es9)\n"
    starting = _status(url, str(os.getpid()), "es9")  # a live process, nothing answers yet
    assert starting.returncode == 1
    assert starting.stdout.startswith(
        f"starting  process {os.getpid()} runs, `curl {url}/`: connection refused"
    )


class _Secured(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="security"')
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_security_on() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Secured)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        out = _status(url)
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 1
    assert (
        out.stdout == f"security on  `curl {url}/` answers HTTP 401: pass credentials (curl -u USER {url}/)\n"
    )


def test_status_of_a_running_engine(engine: Instance) -> None:
    out = _status(engine.url)
    assert out.returncode == 0, out.stdout + out.stderr
    line = out.stdout
    assert line.startswith(f"up  {engine.name} {engine.version}  health ")
    assert "health green" in line or "health yellow" in line
    if engine.name == "opensearch":
        assert f"`curl {engine.url}/` answers HTTP 200 (the version JSON)" in line
    else:  # the integ-test build: GET / is 405, the line says what to curl instead
        assert (
            f"answers HTTP 405 (this build has no GET / handler; curl {engine.url}/_cluster/health)" in line
        )


def test_script_status_names_every_instance(tmp_path: Path) -> None:
    """``scripts/engines status`` prints one line per instance: name, URL and the state; it
    starts nothing (an install root with nothing in it is fine)."""
    env = dict(os.environ, PYTEST_RETRIEVAL_ENGINES_DIR=str(tmp_path))
    out = subprocess.run(
        [str(SCRIPT), "status", "es9", "os3"], capture_output=True, text=True, timeout=120, env=env
    )
    lines = out.stdout.splitlines()
    assert [line.split()[:3] for line in lines] == [
        ["es9", "elasticsearch-9.5.0", "http://127.0.0.1:19202"],
        ["os3", "opensearch-3.6.0", "http://127.0.0.1:19203"],
    ]
    assert all(line.split()[3] in ("up", "down", "starting", "security") for line in lines)
    assert out.returncode == (0 if all(line.split()[3] == "up" for line in lines) else 1)
