"""Hostile ``backend`` sections of the whole-pipeline and third-party backends (http, python,
``options``) and their ``service`` retrievers: each is one clear line naming the file and the
key, never a traceback; a token in a header is never echoed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.execution.runner import run_suite

from .conftest import bounded, one_line

HEAD = """\
suite: t
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
"""
FLOOR = "floors:\n  svc:\n    ndcg@10: 0.1\n"
SVC = "retrievers:\n  svc:\n    type: service\n"


def http(request: str = 'url: "http://127.0.0.1:9/s?q={query}"', response: str = "hits: results") -> str:
    return (
        HEAD
        + "backend:\n  type: http\n  request:\n    "
        + request.replace("\n", "\n    ")
        + "\n  response:\n    "
        + response.replace("\n", "\n    ")
        + "\n"
    )


POST = 'url: "http://127.0.0.1:9/s"\nmethod: POST\nbody: {q: "{query}", n: "{k}"}'


def python(extra: str = "") -> str:
    return HEAD + 'backend:\n  type: python\n  function: "hostile_fn:search"\n' + extra


ERRORS = [
    (
        "unknown type",
        HEAD + "backend: {type: vespa}\n" + SVC + FLOOR,
        ["backend.type", "unknown backend type 'vespa'"],
    ),
    ("type not a name", HEAD + "backend: {type: 'Vespa DB'}\n" + SVC + FLOOR, ["backend.type"]),
    ("http without request", HEAD + "backend: {type: http}\n" + SVC + FLOOR, ["backend", "needs 'request'"]),
    (
        "python without function",
        HEAD + "backend: {type: python}\n" + SVC + FLOOR,
        ["backend", "needs 'function'"],
    ),
    (
        "function on http",
        http() + '  function: "m:f"\n' + SVC + FLOOR,
        ["backend", "'function' belongs to backend type python, not 'http'"],
    ),
    (
        "request on python",
        python("  request: {url: 'http://x/'}\n") + SVC + FLOOR,
        ["backend", "'request' belongs to backend type http"],
    ),
    (
        "max_concurrency on embedded",
        HEAD
        + "backend: {max_concurrency: 4}\n"
        + "retrievers:\n  b: {type: bm25}\nfloors:\n  b: {ndcg@10: 0.1}\n",
        ["backend", "'max_concurrency' belongs to backend type http or python"],
    ),
    (
        "options on opensearch",
        HEAD + "backend: {type: opensearch, options: {a: 1}}\n" + SVC + FLOOR,
        ["backend"],
    ),
    ("max_concurrency zero", python("  max_concurrency: 0\n") + SVC + FLOOR, ["backend.max_concurrency"]),
    ("max_concurrency bool", python("  max_concurrency: true\n") + SVC + FLOOR, ["backend.max_concurrency"]),
    (
        "max_concurrency huge",
        python("  max_concurrency: 100000\n") + SVC + FLOOR,
        ["backend.max_concurrency"],
    ),
    ("ftp url", http('url: "ftp://x/s"') + SVC + FLOOR, ["backend.request.url", "http:// or https://"]),
    (
        "url with a space",
        http('url: "http://x/s?q={query} x"') + SVC + FLOOR,
        ["backend.request.url", "white space"],
    ),
    ("url without host", http('url: "http://"') + SVC + FLOOR, ["backend.request.url"]),
    ("method DELETE", http('url: "http://x/"\nmethod: DELETE') + SVC + FLOOR, ["backend.request.method"]),
    ("timeout zero", http('url: "http://x/"\ntimeout: 0') + SVC + FLOOR, ["backend.request.timeout"]),
    ("timeout nan", http('url: "http://x/"\ntimeout: .nan') + SVC + FLOOR, ["backend.request.timeout"]),
    (
        "max_retries negative",
        http('url: "http://x/"\nmax_retries: -1') + SVC + FLOOR,
        ["backend.request.max_retries"],
    ),
    (
        "retry_deadline inf",
        http('url: "http://x/"\nretry_deadline: .inf') + SVC + FLOOR,
        ["backend.request.retry_deadline"],
    ),
    (
        "header with a line break",
        http('url: "http://x/"\nheaders: {X-Token: "a\\r\\nInjected: 1"}') + SVC + FLOOR,
        ["backend.request.headers", "line break"],
    ),
    (
        "header name with a colon",
        http('url: "http://x/"\nheaders: {"X:Token": "a"}') + SVC + FLOOR,
        ["backend.request.headers", "not a token"],
    ),
    ("body a string", http('url: "http://x/"\nbody: "{query}"') + SVC + FLOOR, ["backend.request.body"]),
    ("bad JMESPath", http(response="hits: 'results[?'") + SVC + FLOOR, ["backend.response.hits", "JMESPath"]),
    (
        "empty JMESPath",
        http(response="hits: results\nid: ''") + SVC + FLOOR,
        ["backend.response.id", "empty"],
    ),
    ("score JMESPath", http(response="hits: results\nscore: '..'") + SVC + FLOOR, ["backend.response.score"]),
    ("hits missing", http(response="id: x") + SVC + FLOOR, ["backend.response", "'hits'"]),
    (
        "unknown placeholder",
        http('url: "http://x/s?q={qeury}"') + SVC + FLOOR,
        ["backend.request.url", "placeholder {qeury} has no value", "retriever 'svc' has no such param"],
    ),
    (
        "placeholder in the body",
        http('url: "http://x/"\nmethod: POST\nbody: {mode: "{mode}"}') + SVC + FLOOR,
        ["backend.request.body", "placeholder {mode}"],
    ),
    (
        "unused param",
        http() + SVC + "    params: {mode: fast}\n" + FLOOR,
        ["retrievers.svc.params.mode", "would not be sent"],
    ),
    (
        "reserved param",
        http() + SVC + "    params: {k: 5}\n" + FLOOR,
        ["retrievers.svc.params", "hide the built-in placeholder {k}"],
    ),
    ("param name", http() + SVC + "    params: {'a-b': 5}\n" + FLOOR, ["retrievers.svc.params", "'a-b'"]),
    ("param nan", python() + SVC + "    params: {a: .nan}\n" + FLOOR, ["retrievers.svc.params.a"]),
    ("param list", python() + SVC + "    params: {a: [1]}\n" + FLOOR, ["retrievers.svc.params.a"]),
    (
        "bm25 on http",
        http() + "retrievers:\n  svc: {type: bm25}\n" + FLOOR,
        ["retrievers.svc.type", "a bm25 retriever on backend http, which answers only 'type: service'"],
    ),
    (
        "knn on python",
        python() + "retrievers:\n  svc: {type: knn}\n" + FLOOR,
        ["retrievers.svc.type", "a knn retriever on backend python"],
    ),
    (
        "service on embedded",
        HEAD + SVC + FLOOR,
        ["retrievers.svc.type", "a service retriever asks a whole-pipeline backend", "not embedded"],
    ),
    (
        "service with a key",
        python() + SVC + "    size: 3\n" + FLOOR,
        ["retrievers.svc", "unknown key 'size'"],
    ),
    (
        "took JMESPath",
        http(response="hits: results\ntook: 'took[?'") + SVC + FLOOR,
        ["backend.response.took", "JMESPath"],
    ),
    ("took a number", http(response="hits: results\ntook: 12") + SVC + FLOOR, ["backend.response.took"]),
    (
        "batch on python",
        python("  batch: {size: 2}\n") + SVC + FLOOR,
        ["backend", "'batch' belongs to backend type http"],
    ),
    ("batch without size", http(POST) + "  batch: {answers: r}\n" + SVC + FLOOR, ["backend.batch", "size"]),
    ("batch size zero", http(POST) + "  batch: {size: 0}\n" + SVC + FLOOR, ["backend.batch.size"]),
    ("batch size text", http(POST) + "  batch: {size: '20'}\n" + SVC + FLOOR, ["backend.batch.size"]),
    ("batch size 1e9", http(POST) + "  batch: {size: 1000000000}\n" + SVC + FLOOR, ["backend.batch.size"]),
    (
        "batch key typo",
        http(POST) + "  batch: {size: 2, anwsers: r}\n" + SVC + FLOOR,
        ["backend.batch", "anwsers"],
    ),
    (
        "batch without a per-query body",
        http() + "  batch: {size: 2}\n" + SVC + FLOOR,
        ["backend.batch", "needs request.body"],
    ),
    (
        "batch url ftp",
        http(POST) + "  batch: {size: 2, url: 'ftp://x/m'}\n" + SVC + FLOOR,
        ["backend.batch.url", "http:// or https://"],
    ),
    (
        "batch url per query",
        http(POST) + "  batch: {size: 2, url: 'http://x/m?q={query}'}\n" + SVC + FLOOR,
        ["backend.batch.url", "holds {query}, which differs from query to query"],
    ),
    (
        "batch default url per query",
        http(POST.replace("/s", "/s?id={query_id}")) + "  batch: {size: 2}\n" + SVC + FLOOR,
        ["backend.batch", "request.url (the default batch.url: give one) holds {query_id}"],
    ),
    (
        "batch body per query",
        http(POST) + "  batch: {size: 2, body: {q: '{query}', r: '{requests}'}}\n" + SVC + FLOOR,
        ["backend.batch.body", "holds {query}"],
    ),
    (
        "batch body without requests",
        http(POST) + "  batch: {size: 2, body: {searches: []}}\n" + SVC + FLOOR,
        ["backend.batch.body", "'{requests}' exactly once", "found it 0 times"],
    ),
    (
        "batch body requests twice",
        http(POST) + "  batch: {size: 2, body: ['{requests}', '{requests}']}\n" + SVC + FLOOR,
        ["backend.batch.body", "found it 2 times"],
    ),
    (
        "batch body requests in text",
        http(POST) + "  batch: {size: 2, body: {s: 'all {requests}'}}\n" + SVC + FLOOR,
        ["backend.batch.body", "inside a longer string"],
    ),
    (
        "batch body a string",
        http(POST) + "  batch: {size: 2, body: '{requests}'}\n" + SVC + FLOOR,
        ["backend.batch.body"],
    ),
    (
        "batch body unfilled",
        http(POST) + "  batch: {size: 2, body: {r: '{requests}', m: '{mode}'}}\n" + SVC + FLOOR,
        ["backend.batch.body", "placeholder {mode} has no value", "(built in: {k}, {requests})"],
    ),
    (
        "batch answers JMESPath",
        http(POST) + "  batch: {size: 2, answers: 'responses[?'}\n" + SVC + FLOOR,
        ["backend.batch.answers", "JMESPath"],
    ),
    (
        "batch answers empty",
        http(POST) + "  batch: {size: 2, answers: ' '}\n" + SVC + FLOOR,
        ["backend.batch.answers"],
    ),
    (
        "batch timeout inf",
        http(POST) + "  batch: {size: 2, timeout: .inf}\n" + SVC + FLOOR,
        ["backend.batch.timeout"],
    ),
    (
        "batch timeout zero",
        http(POST) + "  batch: {size: 2, timeout: 0}\n" + SVC + FLOOR,
        ["backend.batch.timeout"],
    ),
    ("function a list", python().replace('"hostile_fn:search"', "[a]") + SVC + FLOOR, ["backend.function"]),
    ("batch_function a map", python("  batch_function: {a: 1}\n") + SVC + FLOOR, ["backend.batch_function"]),
]


@pytest.mark.parametrize("case, text, fragments", ERRORS, ids=[c[0] for c in ERRORS])
def test_a_hostile_backend_is_one_clear_line(tmp_path: Path, case: str, text: str, fragments: list) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    with bounded(30), pytest.raises(ConfigError) as info:
        load_suite(path)
    one_line(str(info.value), "s.yaml", *fragments)


def test_a_header_token_is_never_echoed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "Zq9-hostile-token-value"
    monkeypatch.setenv("HOSTILE_TOKEN", token)
    path = tmp_path / "s.yaml"
    bad = http(
        'url: "http://x/s?q={query}&key=${HOSTILE_TOKEN}"\nheaders: {Authorization: "${HOSTILE_TOKEN}\\n"}'
    )
    path.write_text(bad + SVC + FLOOR, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    one_line(str(info.value), "backend.request.headers", "line break")
    assert token not in str(info.value)


# --- python functions that cannot be imported or answer the wrong shape: one line at run time

FUNCTIONS = """
def search(text, k, qid):
    return {"d1": 1.0}

def pairs_of_three(text, k, qid):
    return [("d1", 1.0, "x")]

def nan_score(text, k, qid):
    return [("d1", float("nan"))]

def raises(text, k, qid):
    raise ConnectionError("the service is down")

def no_args():
    return []
"""


@pytest.mark.parametrize(
    "function, error, fragments",
    [
        ("nowhere_module:search", ConfigError, ["backend.function", "cannot import 'nowhere_module'"]),
        ("hostile_fn:absent", ConfigError, ["backend.function", "has no 'absent'"]),
        ("hostile_fn", ConfigError, ["backend.function", "expected 'module:function'"]),
        (
            "hostile_fn:search",
            ConfigError,
            ["for query 'q1': expected a list of (doc_id, score) pairs, got dict"],
        ),
        ("hostile_fn:pairs_of_three", ConfigError, ["hit 0 is tuple", "expected a (doc_id, score) pair"]),
        ("hostile_fn:nan_score", ConfigError, ["hit 0 ('d1') has score float nan"]),
        ("hostile_fn:raises", InfrastructureError, ["raised ConnectionError: the service is down"]),
        ("hostile_fn:no_args", ConfigError, ["cannot be called as documented"]),
    ],
)
def test_a_python_function_that_cannot_answer_is_one_line(
    tmp_path: Path, function: str, error: type, fragments: list
) -> None:
    (tmp_path / "hostile_fn.py").write_text(FUNCTIONS)
    path = tmp_path / "s.yaml"
    path.write_text(python().replace("hostile_fn:search", function) + SVC + FLOOR, encoding="utf-8")
    with bounded(30), pytest.raises(error) as info:
        run_suite(path)
    one_line(str(info.value), *fragments)
