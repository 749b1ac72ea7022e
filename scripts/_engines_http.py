#!/usr/bin/env python3
"""HTTP helper for scripts/engines (stdlib only: runs before any project install).

_engines_http.py probe  URL              -> prints "<distribution> <version>", exit 1 if nothing answers
_engines_http.py wait   URL TIMEOUT PID [NODES]
                                         -> waits for cluster health yellow (and NODES nodes
                                            joined, default 1); exit 1 on timeout/death
_engines_http.py info   NAME URL         -> prints version and plugins of a running engine
_engines_http.py status URL [PID [NAME]] -> one line: the state (up / starting / down / security
                                            on), what a plain `curl URL/` answers, the version and
                                            the cluster health; exit 0 only if up
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request


def get(url: str, timeout: float = 5.0):
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        body = resp.read().decode("utf-8", "replace")
    try:
        return json.loads(body)
    except ValueError:
        return body


def root_info(url: str):
    """(distribution, version number, GET / body).

    Elasticsearch's integ-test distribution has no ``rest-root`` module, so ``GET /`` answers
    405 there: fall back to the local node's info, which every distribution has."""
    try:
        data = get(url.rstrip("/") + "/")
    except urllib.error.HTTPError as exc:
        if exc.code not in (404, 405):
            raise
        nodes = get(url.rstrip("/") + "/_nodes/_local?filter_path=nodes.*.version")["nodes"]
        number = next(iter(nodes.values()))["version"]
        return "elasticsearch", number, {"version": {"number": number}}
    version = data.get("version", {})
    return version.get("distribution", "elasticsearch"), version.get("number", "?"), data


def probe(url: str) -> int:
    try:
        dist, number, _ = root_info(url)
    except Exception:  # noqa: BLE001 - anything means "not up"
        return 1
    print(f"{dist} {number}")
    return 0


def plain_curl(url: str) -> str:
    """What a plain ``curl URL/`` (GET, no credentials) answers, in a few words."""
    try:
        req = urllib.request.Request(url.rstrip("/") + "/")
        with urllib.request.urlopen(req, timeout=5) as resp:
            return f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ConnectionRefusedError):
            return "connection refused"
        return f"no answer ({type(reason).__name__})"
    except Exception as exc:  # noqa: BLE001 - a timeout, a reset: says "no answer"
        return f"no answer ({type(exc).__name__})"


def status(url: str, pid: int = 0, name: str = "") -> int:
    """One line a person who curls the engine can act on (scripts/engines status)."""
    curl = plain_curl(url)
    up = f"scripts/engines up {name}".rstrip()
    if curl in ("HTTP 401", "HTTP 403"):
        print(f"security on  `curl {url}/` answers {curl}: pass credentials (curl -u USER {url}/)")
        return 1
    if not curl.startswith("HTTP"):
        if pid > 0 and pid_alive(pid):
            print(f"starting  process {pid} runs, `curl {url}/`: {curl} yet (wait: {up})")
        else:
            print(f"down  `curl {url}/`: {curl} (start it: {up})")
        return 1
    try:
        dist, number, _ = root_info(url)
        health = get(url.rstrip("/") + "/_cluster/health?timeout=2s", timeout=5)
        colour = health.get("status", "?") if isinstance(health, dict) else "?"
    except urllib.error.HTTPError as exc:  # 503 while the node has no master yet
        print(f"starting  `curl {url}/` answers {curl}, cluster health HTTP {exc.code}")
        return 1
    except Exception as exc:  # noqa: BLE001
        print(f"starting  `curl {url}/` answers {curl}, no version yet ({type(exc).__name__})")
        return 1
    if curl == "HTTP 200":
        root = f"`curl {url}/` answers HTTP 200 (the version JSON)"
    else:  # Elasticsearch's integ-test build has no rest-root module: GET / is 405
        root = f"`curl {url}/` answers {curl} (this build has no GET / handler; curl {url}/_cluster/health)"
    print(f"up  {dist} {number}  health {colour}  {root}")
    return 0 if colour in ("green", "yellow") else 1


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return True  # unknown pid: rely on the timeout only
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return True


def wait(url: str, timeout: float, pid: int, nodes: int = 1) -> int:
    deadline = time.monotonic() + timeout
    health = url.rstrip("/") + f"/_cluster/health?wait_for_status=yellow&wait_for_nodes=>={nodes}&timeout=5s"
    last = "no answer yet"
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            print(f"process {pid} exited during start-up", file=sys.stderr)
            return 1
        try:
            data = get(health, timeout=10)
            status = data.get("status") if isinstance(data, dict) else None
            if status in ("yellow", "green") and data.get("number_of_nodes", 1) >= nodes:
                return 0
            last = f"cluster status {status}"
        except urllib.error.HTTPError as exc:  # 408 while waiting for yellow
            last = f"HTTP {exc.code}"
        except Exception as exc:  # noqa: BLE001
            last = type(exc).__name__
        time.sleep(1)
    print(f"timed out after {timeout:.0f}s waiting for {url} to be yellow ({last})", file=sys.stderr)
    return 1


def info(name: str, url: str) -> int:
    try:
        dist, number, data = root_info(url)
        plugins = get(url.rstrip("/") + "/_cat/plugins?h=component,version&s=component&format=json")
    except Exception as exc:  # noqa: BLE001
        print(f"{name}: cannot read {url}: {exc}", file=sys.stderr)
        return 1
    lucene = data.get("version", {}).get("lucene_version")
    print(f"{name}: {dist} {number}{f' (lucene {lucene})' if lucene else ''} at {url}")
    try:
        nodes = get(url.rstrip("/") + "/_nodes/_local?filter_path=nodes.*.modules.name")["nodes"]
        modules = sorted(m["name"] for m in next(iter(nodes.values()))["modules"])
        print(f"  modules: {', '.join(modules)}")
    except Exception:  # noqa: BLE001 - informational only
        pass
    if plugins:
        for p in plugins:
            print(f"  plugin {p.get('component')} {p.get('version')}")
    else:
        print("  plugins: none")
    return 0


def main(argv) -> int:
    if len(argv) >= 2 and argv[0] == "probe":
        return probe(argv[1])
    if len(argv) >= 3 and argv[0] == "wait":
        return wait(
            argv[1],
            float(argv[2]),
            int(argv[3]) if len(argv) > 3 else 0,
            int(argv[4]) if len(argv) > 4 else 1,
        )
    if len(argv) >= 2 and argv[0] == "status":
        return status(
            argv[1],
            int(argv[2]) if len(argv) > 2 and argv[2].isdigit() else 0,
            argv[3] if len(argv) > 3 else "",
        )
    if len(argv) >= 3 and argv[0] == "info":
        return info(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
