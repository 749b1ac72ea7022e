"""Secrets, round 3 (issue #32 section 1, and two items of section 5): the value of every
``${VAR}`` is a secret wherever it is interpolated (a header value in part, a URL path or query,
``params`` filled into a URL or passed to a Python function), redacted by value and in its
percent-encoded, JSON-escaped, base64 and basic-auth forms, before any snippet is cut, in every
output and file (the terminal, the JSON/Markdown/HTML/OpenMetrics reports, the run files, the
baseline and its fingerprint, which hashes the template). Credentials in a URL's user part are
sent as basic auth or refused by name; a header value that cannot be encoded is refused when the
suite loads, naming the header; a redirect is one line saying where to."""

from __future__ import annotations

import base64
import json
import textwrap
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from pytest_retrieval import redaction
from pytest_retrieval.backends.base import ServiceSpec
from pytest_retrieval.backends.http.backend import HttpBackend
from pytest_retrieval.backends.http.config import HttpRequestConfig, HttpResponseConfig
from pytest_retrieval.backends.search_engine.http import ConnectionSettings, snippet
from pytest_retrieval.backends.search_engine.retry import RetryPolicy
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.types import Query

from ..backends.http.service import TOKEN, SearchService
from ..backends.http.test_backend import DOCS, SUITE
from .conftest import bounded, one_line

pytest_plugins = ["pytester"]

# 32 characters, distinctive, with characters that every encoding changes (unit cases)
ODD_TOKEN = "pAtH+t0k/en=Zq8&x%y\"w'v\\u-9Kx3Lm"
# 32 characters a URL takes as they are (end to end: the ${VAR} is written into the URL)
PATH_TOKEN = "pAtH-t0k.en_Zq8~x9w7v-u9Kx3LmQ2Z"
PARAM_TOKEN = "PaRaM-9f8e7d6c5b4a3-q1w2e3r4t5y6"
HEADER_TOKEN = TOKEN  # what the test service expects after "Bearer "


def forms(secret: str) -> List[str]:
    """The secret and the shapes it takes on its way to a server or into a log."""
    raw = secret.encode()
    out = {
        secret,
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote(secret),
        urllib.parse.quote_plus(secret),
        json.dumps(secret)[1:-1],
        repr(secret)[1:-1],
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        base64.b64encode(f"user:{secret}".encode()).decode(),
    }
    return sorted(out)


def assert_nowhere(outputs: Dict[str, str], *secrets: str, prefix: int = 12) -> None:
    """No secret, no form of one, and no start of one (``prefix`` characters) in any output."""
    for where, text in outputs.items():
        for secret in secrets:
            for form in forms(secret):
                if form.startswith("user:"):
                    continue
                assert form not in text, f"{form!r} in {where}"
            assert secret[:prefix] not in text, f"the start of a secret in {where}"


# --------------------------------------------------------------------------- the one redaction


def test_every_form_of_a_registered_value_is_redacted() -> None:
    redaction.register(ODD_TOKEN, "T")
    basic = base64.b64encode(f"svc:{ODD_TOKEN}".encode()).decode()
    redaction.register(basic, "B")  # a basic-auth token given as it is: user:pass decoded too
    for form in forms(ODD_TOKEN) + [basic, f"svc:{ODD_TOKEN}"]:
        if form.startswith(base64.b64encode(b"user:").decode()[:4]):
            continue  # base64 of a pair whose user is not registered: not a form of the value
        out = redaction.redact(f"before {form} after")
        assert out == "before *** after", (form, out)


def test_a_truncated_snippet_never_shows_part_of_a_secret() -> None:
    redaction.register(ODD_TOKEN, "T")
    for start in range(130, 165):  # the token across the cut at every offset
        text = "x" * start + ODD_TOKEN + " y" * 40
        shown = snippet(text)
        body = shown[:-3] if shown.endswith("...") else shown
        assert ODD_TOKEN[:4] not in shown and (body.endswith("***") or not body.endswith("*")), (start, shown)
        assert len(shown) <= 163
    # a text that holds only the start of a secret (cut by someone else) loses it at the cut
    partial = "z" * 170 + ODD_TOKEN[:20]
    assert redaction.clip(partial, 185).rstrip(".") == "z" * 170


def test_short_values_and_settings_are_not_registered() -> None:
    for value in ("true", "null", "9200", "abc", "  ", "1e3"):
        redaction.register(value, "V")
    assert (
        redaction.redact("true null 9200 abc 1e3 localhost:9200") == "true null 9200 abc 1e3 localhost:9200"
    )
    redaction.register("s3cr", "V")  # a short secret: where it stands as a word
    assert redaction.redact("s3cr s3cret /t/s3cr/x") == "*** s3cret /t/***/x"


def test_the_template_stands_for_the_value() -> None:
    redaction.register(ODD_TOKEN, "T")
    doc = {"url": f"https://svc/t/{ODD_TOKEN}/search", "n": 1}
    assert redaction.templated(doc) == {"url": "https://svc/t/${T}/search", "n": 1}


# ------------------------------------------------------------- the http backend, end to end


@pytest.fixture(scope="module")
def service() -> Iterator[SearchService]:
    with SearchService(DOCS) as s:
        yield s


@pytest.fixture(autouse=True)
def _clean(service: SearchService) -> None:
    service.faults.clear()
    service.always = None
    service.requests.clear()


def _suite(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch, token: str = PATH_TOKEN) -> Path:
    monkeypatch.setenv("PATH_TOKEN", token)
    monkeypatch.setenv("PARAM_TOKEN", PARAM_TOKEN)
    monkeypatch.setenv("HEADER_TOKEN", HEADER_TOKEN)
    path = tmp_path / "retrieval_svc.yaml"
    path.write_text(
        SUITE
        + textwrap.dedent(
            f"""\
            backend:
              type: http
              request:
                url: "{url}/t/${{PATH_TOKEN}}/search?q={{query}}&k={{k}}&key={{key}}&p=${{PATH_TOKEN}}"
                headers: {{Authorization: "Bearer ${{HEADER_TOKEN}}"}}
                max_retries: 0
              response: {{hits: results, id: doc.id, score: score}}
            retrievers:
              svc: {{type: service, params: {{key: "${{PARAM_TOKEN}}"}}}}
            floors:
              svc: {{ndcg@10: 0.1}}
            regression:
              max_drop: {{ndcg@10: 0.5}}
            """
        )
    )
    return path


def _run(pytester: pytest.Pytester, suite: Path, *extra: str) -> Tuple[Any, Dict[str, str]]:
    out = pytester.path
    result = pytester.runpytest_subprocess(
        "-v",
        "-rA",
        "-p",
        "no:cacheprovider",
        f"--retrieval-report={out / 'report.json'}",
        f"--retrieval-markdown={out / 'report.md'}",
        f"--retrieval-html={out / 'report.html'}",
        f"--retrieval-openmetrics={out / 'metrics.txt'}",
        f"--retrieval-runs={out / 'runs'}",
        f"--junitxml={out / 'junit.xml'}",
        *extra,
        str(suite),
        timeout=400,
    )
    outputs = {"terminal": result.stdout.str() + result.stderr.str()}
    for f in sorted(out.rglob("*")):
        if f.is_file() and f.suffix != ".yaml":
            outputs[str(f.relative_to(out))] = f.read_text(errors="replace")
    return result, outputs


def test_a_passing_run_shows_no_interpolated_value_anywhere(
    pytester: pytest.Pytester, service: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(pytester.path, service.url, monkeypatch)
    result, outputs = _run(pytester, suite, "--retrieval-baseline-update")
    result.assert_outcomes(passed=1, skipped=1)  # the baseline gate: written, not compared
    sent = service.requests[0]
    assert f"/t/{PATH_TOKEN}/search" in sent["path"]  # it was sent, filled in
    assert urllib.parse.quote(PARAM_TOKEN, safe="") in sent["path"]
    baseline = next(p for p in outputs if p.endswith(".baseline.json"))
    assert {"report.json", "report.md", "report.html", "metrics.txt", "junit.xml", baseline} <= set(outputs)
    assert_nowhere(outputs, PATH_TOKEN, PARAM_TOKEN, HEADER_TOKEN)
    # the fingerprint names the template: the same after the token's rotation
    fingerprint = json.loads(outputs[baseline])["fingerprint"]
    assert fingerprint["engine"]["version"] == f"GET {service.url}/t/${{PATH_TOKEN}}/search"


def test_the_fingerprint_hashes_the_template_not_the_value(
    tmp_path: Path, service: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_retrieval.execution.runner import run_suite
    from pytest_retrieval.gates.fingerprint import fingerprint_from_result

    prints = []
    for token in (PATH_TOKEN, "rotated-" + PATH_TOKEN[::-1]):
        redaction.reset()
        prints.append(fingerprint_from_result(run_suite(_suite(tmp_path, service.url, monkeypatch, token))))
    assert prints[0] == prints[1]
    assert PATH_TOKEN not in json.dumps(prints[0]) and PARAM_TOKEN not in json.dumps(prints[0])


class _Echo(BaseHTTPRequestHandler):
    """A service that answers 401 with a body echoing the bare token, or a long page with the
    token near its 160th character, as ``self.server.answer`` says."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        token = self.headers.get("authorization", "").split(" ")[-1]
        kind = self.server.answer  # type: ignore[attr-defined]
        if kind == "echo":
            body = json.dumps({"error": "invalid token", "token": token}).encode()
        else:
            body = ("Unauthorized. " + "x" * 137 + token + " please log in again " * 20).encode()
        self.send_response(401)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def echo() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("answer", ["echo", "long"])
def test_a_401_that_echoes_the_token_shows_it_nowhere(
    pytester: pytest.Pytester, echo: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    echo.answer = answer  # type: ignore[attr-defined]
    host, port = echo.server_address[:2]
    suite = _suite(pytester.path, f"http://{host}:{port}", monkeypatch)
    result, outputs = _run(pytester, suite)
    result.assert_outcomes(errors=2)  # the floor and the baseline gate
    assert "failed (HTTP 401)" in outputs["terminal"]
    assert_nowhere(outputs, PATH_TOKEN, PARAM_TOKEN, HEADER_TOKEN, prefix=4)


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["in-process", "xdist"])
def test_params_passed_to_a_python_function_show_nowhere(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: List[str]
) -> None:
    monkeypatch.setenv("PARAM_TOKEN", PARAM_TOKEN)
    (pytester.path / "team_svc.py").write_text(
        "def search(text, k, qid, key):\n    raise RuntimeError(f'key {key!r} refused')\n"
    )
    suite = pytester.path / "retrieval_py.yaml"
    suite.write_text(
        SUITE
        + "backend: {type: python, function: 'team_svc:search'}\n"
        + 'retrievers:\n  svc: {type: service, params: {key: "${PARAM_TOKEN}"}}\n'
        + "floors:\n  svc: {ndcg@10: 0.1}\n"
    )
    result, outputs = _run(pytester, suite, *workers)  # under xdist the controller reports
    result.assert_outcomes(errors=1)
    assert "RuntimeError" in outputs["terminal"] and "RuntimeError" in outputs["report.json"]
    assert_nowhere(outputs, PARAM_TOKEN, prefix=6)


# ----------------------------------------------------------------- credentials in a URL's user part


def _backend(url: str, **request: Any) -> HttpBackend:
    return HttpBackend(
        HttpRequestConfig.model_validate({"url": url, "max_retries": 0, **request}),
        HttpResponseConfig(hits="results", id="doc.id", score="score"),
        retry=RetryPolicy(max_retries=0, sleep=lambda s: None),
    )


def test_url_credentials_are_sent_as_basic_auth_and_shown_nowhere(service: SearchService) -> None:
    password = "Ur1-pa55:w%rd@x"
    url = service.url.replace("http://", f"http://svc-user:{urllib.parse.quote(password, safe='')}@")
    b = _backend(url + "/search?q={query}&k={k}")
    with bounded(10), pytest.raises(InfrastructureError) as err:  # the service wants a Bearer token
        b.search_one(ServiceSpec(), Query("q1", "solar"), 5)
    sent = service.requests[-1]["headers"]
    token = base64.b64encode(f"svc-user:{password}".encode()).decode()
    assert sent["Authorization"] == f"Basic {token}"
    message = str(err.value)
    one_line(message, "failed (HTTP 401)")
    for shown in (message, repr(b), json.dumps(b.describe())):
        assert password not in shown and token not in shown and "pa55" not in shown


def test_url_credentials_beside_an_authorization_header_are_refused_by_name() -> None:
    with pytest.raises(ValueError) as err:
        HttpRequestConfig.model_validate(
            {"url": "https://u:Zx9-secret@svc/search", "headers": {"authorization": "Bearer t0ken-0123"}}
        )
    assert "credentials" in str(err.value) and "Zx9-secret" not in str(err.value)


def test_batch_url_credentials_beside_an_authorization_header_are_refused_by_name() -> None:
    from pytest_retrieval.backends.http.config import HttpBatchConfig

    request = {
        "url": "https://svc/s",
        "method": "POST",
        "body": {"q": "{query}"},
        "headers": {"Authorization": "t"},
    }
    with pytest.raises(ConfigError) as err:
        HttpBackend(
            HttpRequestConfig.model_validate(request),
            HttpResponseConfig(hits="results"),
            batch=HttpBatchConfig.model_validate({"size": 2, "url": "https://u:Zx9-batch-pw@svc/m"}),
        )
    one_line(str(err.value), "batch.url", "credentials")
    assert "Zx9-batch-pw" not in str(err.value)


def test_engine_hosts_credentials_are_sent_or_refused_never_dropped() -> None:
    conn = ConnectionSettings({"hosts": ["http://es-user:Es-pa55-word@127.0.0.1:9200"]})
    assert (conn.username, conn.password, conn.hosts) == (
        "es-user",
        "Es-pa55-word",
        ["http://127.0.0.1:9200"],
    )
    for other in ({"username": "admin", "password": "x"}, {"api_key": "a2V5OmlkMTIz"}):
        with pytest.raises(ConfigError) as err:
            ConnectionSettings({"hosts": ["http://es-user:Es-pa55-word@127.0.0.1:9200"], **other})
        one_line(str(err.value), "hosts[0]", "credentials")
        assert "Es-pa55-word" not in str(err.value)
    same = {"username": "es-user", "password": "Es-pa55-word"}  # the same pair twice: sent
    assert ConnectionSettings({"hosts": ["http://es-user:Es-pa55-word@h:9200"], **same}).username == "es-user"
    with pytest.raises(ConfigError, match=r"hosts\[1\]"):
        ConnectionSettings({"hosts": ["http://a:Pa55-one@h1:9200", "http://b:Pa55-two@h2:9200"]})
    assert (
        ConnectionSettings({"hosts": ["http://a:Pa55-one@h1:9200", "http://a:Pa55-one@h2:9200"]}).username
        == "a"
    )


def test_base_url_credentials_are_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_retrieval.cli.app import main

    argv = ["judge", "llm", "pool.jsonl", "--out", "x.qrels", "--provider", "openai", "--model", "m"]
    with pytest.raises(SystemExit) as code:
        main(argv + ["--base-url", "https://me:Ba5e-url-secret@llm.example/v1"])
    err = capsys.readouterr().err
    assert code.value.code == 2 and "--base-url" in err and "credentials" in err
    assert "Ba5e-url-secret" not in err and len(err.strip().splitlines()[-1]) < 300


# --------------------------------------------------------------- headers that cannot be encoded


@pytest.mark.parametrize(
    "value,why",
    [
        ("Bearer t\u00f6k\u20ac-x9", "cannot carry"),  # the euro sign is not latin-1
        ("Bearer \u0001tok-x9", "control character"),
        ("Bearer tok-x9\r\nX-Evil: 1", "line break"),
        ("Bearer tok-x9\x7f", "control character"),
    ],
    ids=["not-latin-1", "control", "crlf", "del"],
)
@pytest.mark.parametrize("interpolated", [False, True], ids=["written", "from-env"])
def test_a_header_value_that_cannot_be_encoded_is_refused_at_load_naming_the_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, why: str, interpolated: bool
) -> None:
    monkeypatch.setenv("HV", value)
    written = '"${HV}"' if interpolated else json.dumps(value)
    path = tmp_path / "retrieval_h.yaml"
    path.write_text(
        SUITE
        + "backend:\n  type: http\n  request:\n    url: http://127.0.0.1:9/s?q={query}\n"
        + f"    headers: {{X-Team-Token: {written}}}\n"
        + "  response: {hits: results}\nretrievers:\n  svc: {type: service}\nfloors:\n  svc: {ndcg@10: 0.1}\n"
    )
    with bounded(10), pytest.raises(ConfigError) as err:
        load_suite(path)
    message = str(err.value)
    one_line(message, "X-Team-Token", why)
    assert "tok" not in message.replace("X-Team-Token", "")


def test_a_latin_1_header_value_is_accepted() -> None:
    HttpRequestConfig.model_validate({"url": "http://svc/s", "headers": {"X-Name": "caf\u00e9\tok"}})


# ------------------------------------------------------------------------------------ redirects


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_says_so_and_where_to(service: SearchService, status: int) -> None:
    redaction.register(ODD_TOKEN, "T")
    where = f"https://login.example/sso?next=/t/{urllib.parse.quote(ODD_TOKEN, safe='')}"
    service.always = ("status", (status, {"Location": where}))
    b = _backend(service.url + "/search?q={query}", headers={"Authorization": f"Bearer {TOKEN}"})
    with bounded(10), pytest.raises(InfrastructureError) as err:
        b.search_one(ServiceSpec(), Query("q1", "solar"), 5)
    message = str(err.value)
    one_line(message, f"HTTP {status} is a redirect to https://login.example/sso?next=/t/***", "not followed")
    assert len(service.requests) == 1  # asked once, not followed, not retried


class _Engine(BaseHTTPRequestHandler):
    """An engine's root answer, or a redirect (``self.server.status``); records Authorization."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        server: Any = self.server
        server.seen.append(self.headers.get("authorization"))
        body = json.dumps({"version": {"number": "8.15.0", "distribution": "elasticsearch"}}).encode()
        self.send_response(server.status)
        if server.status != 200:
            self.send_header("Location", f"https://sso.example/login?next={PATH_TOKEN}")
        self.send_header("content-type", "application/json")
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def engine() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Engine)
    server.daemon_threads, server.seen, server.status = True, [], 200
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind", ["elasticsearch", "opensearch"])
def test_engine_host_credentials_are_sent_as_basic_auth_and_a_redirect_is_named(
    engine: Any, kind: str
) -> None:
    from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend
    from pytest_retrieval.backends.opensearch import OpenSearchBackend

    redaction.register(PATH_TOKEN, "T")
    make = ElasticsearchBackend if kind == "elasticsearch" else OpenSearchBackend
    host = f"http://es-user:Es-pa55-w0rd@127.0.0.1:{engine.server_port}"
    with bounded(30):
        assert make({"hosts": [host], "max_retries": 0}, {"name": "x"})._http.engine_info()[1] == "8.15.0"
        assert engine.seen[-1] == "Basic " + base64.b64encode(b"es-user:Es-pa55-w0rd").decode()
        engine.status = 301
        with pytest.raises(InfrastructureError) as err:
            make({"hosts": [host], "max_retries": 0}, {"name": "x"})._http.engine_info()
    message = str(err.value)
    one_line(message, "HTTP 301 is a redirect to https://sso.example/login?next=***", "not followed")
    assert "Es-pa55-w0rd" not in message and PATH_TOKEN[:8] not in message


@pytest.mark.parametrize("variable", ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"])
def test_a_base_url_from_the_environment_with_credentials_is_refused(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    from pytest_retrieval.judge.llm.judges import AnthropicJudge, OpenAICompatibleJudge

    monkeypatch.setenv(variable, "https://me:Env-ba5e-secret@llm.example/v1")
    judge = OpenAICompatibleJudge if variable.startswith("OPENAI") else AnthropicJudge
    with pytest.raises(ConfigError) as err:
        judge("m")
    one_line(str(err.value), f"${variable}", "credentials")
    assert "Env-ba5e-secret" not in str(err.value)
