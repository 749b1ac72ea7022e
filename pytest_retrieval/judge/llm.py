"""LLM-assisted grading: a judge reads (query, document) and answers a grade 0-3.

**The prompt** is versioned (:data:`PROMPTS`, default :data:`DEFAULT_PROMPT_VERSION`): the
UMBRELA 0-3 scale (Upadhyay et al., 2024, after Thomas et al., 2023), asking for the integer
only. A custom template (placeholders ``{query}`` and ``{document}``) gets its own version
string, by default ``custom-`` + a hash of its text, so its answers never mix with another
prompt's in the cache.

**Parsing is strict** (:func:`parse_grade`). Accepted, case-insensitively and ignoring
surrounding whitespace: a lone digit 0-3, optionally wrapped in matching quotes, backticks or
markdown ``*``/``**``, optionally followed by one ``.``, optionally preceded by a label
``grade``, ``score``, ``relevance``, ``label`` or ``final score`` (leading ``#``s allowed) and
an optional ``:`` or ``=``. So ``2``, ``" 2\\n"``, ``'2'``, ``**2**``, ``2.``, ``Grade: 2``,
``##final score: 2`` are 2. Everything else is a failure, logged and reported, never a
silent 0: ``4``, ``-1``, ``2.5``, ``2.0``, ``2/3``, ``two``, ``2 or 3``, ``Grade: 2 because
...``, an empty answer.

**The cache** is an append-only JSONL file, one line per answer, keyed by sha256 of (judge
id, prompt version, sha256 of the query text, sha256 of the document text as sent). Each
answer is appended and flushed (and fsynced) as it arrives, so a crash or Ctrl-C loses at
most the requests in flight, and a rerun asks only what is not cached. A torn last line
(crash mid-write) is skipped with a warning. Failures are appended too (``grade: null``,
for the audit trail) but are not cache hits: a rerun asks them again. One process writes a
cache file at a time.

**Transport**: Anthropic's Messages API (``POST {base_url}/v1/messages``, key from
``ANTHROPIC_API_KEY`` in ``x-api-key``, ``anthropic-version`` header), any OpenAI-compatible
chat endpoint (``POST {base_url}/chat/completions``, ``Authorization: Bearer`` from
``OPENAI_API_KEY`` or the variable you name; none sent when it is unset, for local servers),
both over stdlib ``urllib``, and any ``module:function`` callable ``(query, document) ->
int | str``. Keys are read from the environment at request time, never stored on the
judge, and any echo of one in an error message is replaced by ``***``.

**Errors**: HTTP 429, 5xx (and Anthropic's 529), timeouts and dropped connections are
retried with exponential backoff (``base * 2**attempt``, full jitter, capped), honouring
``Retry-After`` (capped at ``max_delay``); 401/403/404 stop the run (wrong key, URL or
model: every further request would fail the same way); other 4xx and malformed answers fail
that pair only. After ``max_consecutive_failures`` failures in a row the run stops too.
Requests are spread by a token bucket (``requests_per_minute``) over a thread pool
(``concurrency``).
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import importlib
import json
import logging
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.request
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ..errors import ConfigError

log = logging.getLogger("pytest_retrieval.judge")

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "DEFAULT_PROMPT_VERSION",
    "PROMPTS",
    "AnthropicJudge",
    "Answer",
    "CallableJudge",
    "FatalJudgeError",
    "GradeParseError",
    "GradingReport",
    "Judge",
    "JudgeCache",
    "JudgeError",
    "JudgePair",
    "OpenAICompatibleJudge",
    "Prices",
    "PromptTemplate",
    "RetryPolicy",
    "TokenBucket",
    "TransientJudgeError",
    "grade_pairs",
    "make_judge",
    "parse_grade",
    "prompt_template",
]

# ---------------------------------------------------------------------- prompt

_UMBRELA_INT_V1 = """\
Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following meanings:
0 = represents that the passage has nothing to do with the query,
1 = represents that the passage seems related to the query but does not answer it,
2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden amongst extraneous information and
3 = represents that the passage is dedicated to the query and contains the exact answer.

Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, category 2 if passage presents something very important related to the entire topic but also has some extra information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies give it category 0.

Query: {query}
Passage: {document}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score (O).
Do not explain. Answer with the final score only: a single integer 0, 1, 2 or 3 and nothing else."""

PROMPTS: Dict[str, str] = {"umbrela-int-v1": _UMBRELA_INT_V1}
DEFAULT_PROMPT_VERSION = "umbrela-int-v1"


@dataclass(frozen=True)
class PromptTemplate:
    version: str
    text: str

    def render(self, query: str, document: str) -> str:
        # str.replace, not str.format: documents are full of braces
        return self.text.replace("{query}", query).replace("{document}", document)


def prompt_template(version: Optional[str] = None, text: Optional[str] = None) -> PromptTemplate:
    """A shipped template by version, or your own ``text`` (version defaults to a hash)."""
    if text is not None:
        for ph in ("{query}", "{document}"):
            if ph not in text:
                raise ValueError(f"prompt template lacks the placeholder {ph}")
        if version is None or version in PROMPTS and PROMPTS[version] != text:
            version = "custom-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
        return PromptTemplate(version, text)
    version = version or DEFAULT_PROMPT_VERSION
    if version not in PROMPTS:
        raise ValueError(
            f"unknown prompt version {version!r} (shipped: {', '.join(PROMPTS)}; "
            f"give your own template file for others)"
        )
    return PromptTemplate(version, PROMPTS[version])


# --------------------------------------------------------------------- parsing


class GradeParseError(ValueError):
    pass


_GRADE_RE = re.compile(
    r"""^\s*
        (?:\#*\s*(?:final\s+score|grade|score|relevance|label)\s*[:=]?\s*)?
        (?P<w>\*\*|\*|["'`]?)
        (?P<g>[0-3])
        (?P=w)
        \s*\.?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)


def parse_grade(answer: Any, *, lo: int = 0, hi: int = 3) -> int:
    """The grade in a judge's answer, strictly (see the module docstring), else GradeParseError."""
    if isinstance(answer, bool):
        raise GradeParseError(f"answer {answer!r} is not a grade")
    if isinstance(answer, int):
        if lo <= answer <= hi:
            return answer
        raise GradeParseError(f"grade {answer} outside {lo}..{hi}")
    if not isinstance(answer, str):
        raise GradeParseError(f"answer of type {type(answer).__name__} is not a grade")
    m = _GRADE_RE.match(answer)
    if not m or not lo <= int(m.group("g")) <= hi:
        raise GradeParseError(f"answer {_snippet(answer)!r} is not a lone grade {lo}-{hi}")
    return int(m.group("g"))


def _snippet(text: str, n: int = 80) -> str:
    text = text if isinstance(text, str) else repr(text)
    return text if len(text) <= n else text[: n - 3] + "..."


# ---------------------------------------------------------------------- judges


@dataclass
class Answer:
    text: str
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None


class JudgeError(Exception):
    """This pair could not be graded (not retried)."""


class TransientJudgeError(JudgeError):
    """Worth retrying: rate limited, server error, timeout, dropped connection."""

    def __init__(self, message: str, retry_after: Optional[float] = None):
        super().__init__(message)
        self.retry_after = retry_after


class FatalJudgeError(JudgeError):
    """Every further request would fail the same way (bad key, URL or model): stop."""


class Judge:
    """The judge interface: ``id``, ``prompt_version`` and ``judge(query, document) -> Answer``.

    ``id`` names the grader (provider and model); together with ``prompt_version`` it keys
    the cache, so change either when the answers would change."""

    id: str = "judge"
    prompt_version: str = DEFAULT_PROMPT_VERSION

    def judge(self, query: str, document: str) -> Answer:  # pragma: no cover - interface
        raise NotImplementedError


def _redact(text: str, secrets: Iterable[Optional[str]]) -> str:
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    return text


def _retry_after(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


class _HTTPJudge(Judge):
    provider = "http"
    default_base_url = ""
    default_key_env = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: Optional[str] = None,
        api_key_env: Optional[str] = None,
        prompt: Optional[PromptTemplate] = None,
        timeout: float = 60.0,
        max_tokens: int = 16,
        temperature: float = 0.0,
        judge_id: Optional[str] = None,
    ):
        if not model:
            raise ValueError(f"{self.provider} judge needs a model name")
        self.model = model
        self.base_url = (base_url or os.environ.get(self.base_url_env, "") or self.default_base_url).rstrip(
            "/"
        )
        self.api_key_env = api_key_env or self.default_key_env
        self.prompt = prompt or prompt_template()
        self.prompt_version = self.prompt.version
        self.timeout = float(timeout)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.id = judge_id or f"{self.provider}:{model}"

    base_url_env = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, base_url={self.base_url!r})"

    def _key(self) -> Optional[str]:
        return os.environ.get(self.api_key_env) or None

    def judge(self, query: str, document: str) -> Answer:
        return self.complete(self.prompt.render(query, document))

    def complete(self, prompt: str) -> Answer:  # pragma: no cover - per provider
        raise NotImplementedError

    def _post(self, path: str, body: Dict[str, Any], headers: Dict[str, str]) -> Dict[str, Any]:
        url = self.base_url + path
        secrets = [self._key()]
        data = json.dumps(body).encode("utf-8")
        req = urllib.request.Request(
            url,
            data=data,
            method="POST",
            headers={"content-type": "application/json", "accept": "application/json", **headers},
        )
        where = f"{self.provider} judge ({url})"
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                detail = exc.read()[:300].decode("utf-8", "replace")
            except Exception:  # noqa: BLE001 - best effort
                detail = ""
            retry_after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            msg = _redact(f"{where}: HTTP {status} {' '.join(detail.split())[:200]}".rstrip(), secrets)
            if status == 429 or status >= 500:
                raise TransientJudgeError(msg, retry_after) from None
            if status in (401, 403):
                raise FatalJudgeError(msg + f" (check ${self.api_key_env})") from None
            if status == 404:
                raise FatalJudgeError(msg + " (check the base URL and the model name)") from None
            raise JudgeError(msg) from None
        except TimeoutError:
            raise TransientJudgeError(f"{where}: timed out after {self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise TransientJudgeError(f"{where}: timed out after {self.timeout:g} s") from None
            raise TransientJudgeError(_redact(f"{where}: {reason}", secrets)) from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise TransientJudgeError(_redact(f"{where}: {type(exc).__name__}: {exc}", secrets)) from None
        try:
            obj = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            text = _redact(_snippet(payload.decode("utf-8", "replace")), secrets)
            raise JudgeError(f"{where}: response is not JSON: {text!r}") from None
        if not isinstance(obj, dict):
            raise JudgeError(f"{where}: response is not a JSON object")
        return obj


class AnthropicJudge(_HTTPJudge):
    """Anthropic Messages API over plain HTTP (no SDK needed)."""

    provider = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"

    def __init__(self, model: str, *, anthropic_version: str = "2023-06-01", **kw: Any):
        super().__init__(model, **kw)
        self.anthropic_version = anthropic_version

    def complete(self, prompt: str) -> Answer:
        key = self._key()
        if key is None:
            raise FatalJudgeError(f"${self.api_key_env} is not set (the Anthropic API key)")
        obj = self._post(
            "/v1/messages",
            {
                "model": self.model,
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
                "messages": [{"role": "user", "content": prompt}],
            },
            {"x-api-key": key, "anthropic-version": self.anthropic_version},
        )
        content = obj.get("content")
        if not isinstance(content, list):
            raise JudgeError(
                f"anthropic judge: unexpected response (no 'content' list): {_snippet(json.dumps(obj))!r}"
            )
        text = "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
        usage = obj.get("usage") or {}
        return Answer(text, _int(usage.get("input_tokens")), _int(usage.get("output_tokens")))


class OpenAICompatibleJudge(_HTTPJudge):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, Azure-style proxies, vLLM,
    Ollama, llama.cpp server, ...): ``base_url`` is the part before ``/chat/completions``."""

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"

    def complete(self, prompt: str) -> Answer:
        key = self._key()
        headers = {"authorization": f"Bearer {key}"} if key else {}
        obj = self._post(
            "/chat/completions",
            {
                "model": self.model,
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
                "messages": [{"role": "user", "content": prompt}],
            },
            headers,
        )
        try:
            text = obj["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise JudgeError(
                f"openai judge: unexpected response (no choices[0].message.content): "
                f"{_snippet(json.dumps(obj))!r}"
            ) from None
        if text is None:
            text = ""
        usage = obj.get("usage") or {}
        return Answer(str(text), _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))


class CallableJudge(Judge):
    """Your own ``module:function`` (or any callable) ``(query, document) -> int | str``.

    An ``int`` is taken as the grade (still checked to lie in 0-3); a ``str`` is parsed like
    an LLM answer. Raise :class:`TransientJudgeError` to have a pair retried. The prompt
    version is the function's ``prompt_version`` attribute if it has one, else ``callable``."""

    def __init__(
        self,
        fn: Union[str, Callable[[str, str], Any]],
        *,
        judge_id: Optional[str] = None,
        prompt_version: Optional[str] = None,
    ):
        if isinstance(fn, str):
            spec = fn
            mod, _, attr = spec.partition(":")
            if not mod or not attr:
                raise ValueError(f"callable judge {spec!r}: expected 'module:function'")
            try:
                obj: Any = importlib.import_module(mod)
                for part in attr.split("."):
                    obj = getattr(obj, part)
            except (ImportError, AttributeError) as exc:
                raise ConfigError(f"callable judge {spec!r}: {exc}") from None
            if not callable(obj):
                raise ConfigError(f"callable judge {spec!r} is not callable")
            self.fn = obj
            name = spec
        else:
            self.fn = fn
            name = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        self.id = judge_id or f"callable:{name}"
        self.prompt_version = prompt_version or str(getattr(self.fn, "prompt_version", "callable"))

    def judge(self, query: str, document: str) -> Answer:
        value = self.fn(query, document)
        if isinstance(value, Answer):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise JudgeError(
                f"callable judge returned {type(value).__name__} {value!r}, expected an int or a str"
            )
        return Answer(str(value))


def make_judge(
    provider: str, *, model: Optional[str] = None, function: Optional[str] = None, **kw: Any
) -> Judge:
    """``provider``: ``anthropic`` | ``openai`` (any OpenAI-compatible endpoint) | ``callable``."""
    if provider == "anthropic":
        return AnthropicJudge(model or "", **kw)
    if provider in ("openai", "openai-compatible"):
        kw.pop("anthropic_version", None)
        return OpenAICompatibleJudge(model or "", **kw)
    if provider == "callable":
        if not function:
            raise ValueError("callable judge needs --function module:function")
        return CallableJudge(function, judge_id=kw.get("judge_id"), prompt_version=kw.get("prompt_version"))
    raise ValueError(f"unknown judge provider {provider!r} (anthropic, openai, callable)")


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# ----------------------------------------------------------------------- cache


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class JudgeCache:
    """Append-only JSONL cache of judge answers (see the module docstring)."""

    def __init__(self, path: PathLike, *, fsync: bool = True):
        self.path = Path(path)
        self.fsync = fsync
        self._grades: Dict[str, Dict[str, Any]] = {}
        self.failures_seen = 0
        self.skipped_lines: List[int] = []
        self._lock = threading.Lock()
        self._fh = None
        self._load()

    @staticmethod
    def key(judge_id: str, prompt_version: str, query: str, document: str) -> str:
        return _sha("\0".join([judge_id, prompt_version, _sha(query), _sha(document)]))

    def _load(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    rec = json.loads(raw)
                    key = rec["key"]
                except (ValueError, KeyError, TypeError):
                    self.skipped_lines.append(n)
                    continue
                g = rec.get("grade")
                if isinstance(g, int) and not isinstance(g, bool) and 0 <= g <= 3:
                    self._grades[key] = rec
                else:
                    self.failures_seen += 1
        if self.skipped_lines:
            warnings.warn(
                f"{self.path}: skipped {len(self.skipped_lines)} unreadable line(s) "
                f"(e.g. line {self.skipped_lines[0]}; a crash mid-write?); those pairs "
                f"will be asked again",
                stacklevel=2,
            )

    def __len__(self) -> int:
        return len(self._grades)

    def get(self, key: str) -> Optional[Dict[str, Any]]:
        return self._grades.get(key)

    def put(self, record: Dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                torn = False
                if self.path.exists() and self.path.stat().st_size:
                    with open(self.path, "rb") as fh:
                        fh.seek(-1, os.SEEK_END)
                        torn = fh.read(1) != b"\n"
                self._fh = open(self.path, "a", encoding="utf-8")
                if torn:  # never glue a new record onto a torn last line
                    self._fh.write("\n")
            self._fh.write(line)
            self._fh.flush()
            if self.fsync:
                os.fsync(self._fh.fileno())
            if isinstance(record.get("grade"), int):
                self._grades[record["key"]] = record

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


# -------------------------------------------------------- rate limit and retry


class TokenBucket:
    """Requests per minute, as a token bucket of ``burst`` tokens; thread-safe."""

    def __init__(
        self,
        requests_per_minute: float,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be > 0")
        if burst < 1:
            raise ValueError("burst must be >= 1")
        self.rate = requests_per_minute / 60.0
        self.capacity = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Take one token, waiting as needed; returns the seconds waited."""
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return waited
                need = (1.0 - self._tokens) / self.rate
            self._sleep(need)
            waited += need


@dataclass
class RetryPolicy:
    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: bool = True

    def delay(self, attempt: int, retry_after: Optional[float] = None) -> float:
        """Seconds to wait before retry number ``attempt + 1``: the server's Retry-After if
        it sent one, else ``base * 2**attempt`` (full jitter), both capped at ``max_delay``."""
        if retry_after is not None:
            return min(self.max_delay, max(0.0, retry_after))
        d = min(self.max_delay, self.base_delay * (2**attempt))
        return random.uniform(0.0, d) if self.jitter else d


@dataclass(frozen=True)
class Prices:
    """USD per million tokens, for the cost estimate."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


# ---------------------------------------------------------------------- runner


@dataclass(frozen=True)
class JudgePair:
    query_id: str
    query: str
    doc_id: str
    document: str


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
    grades: Dict[Tuple[str, str], int] = field(default_factory=dict)
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
            s = (
                f"dry run, {self.judge_id} (prompt {self.prompt_version}): {self.total} pairs, "
                f"{self.cached} cached, {self.not_asked} to ask (~{self.estimated_input_tokens:,} "
                f"input tokens"
            )
            s += f", est. ${self.cost:.2f})" if self.cost is not None else ")"
            return s
        s = (
            f"{self.judge_id} (prompt {self.prompt_version}): {self.total} pairs: "
            f"{self.cached} cached, {self.new} new, {self.failed} failed"
        )
        if self.not_asked:
            s += f", {self.not_asked} not asked"
        s += f"; {self.requests} request(s), {self.retries} retr{'y' if self.retries == 1 else 'ies'}"
        if self.usage_reported:
            s += f"; tokens in {self.input_tokens:,} / out {self.output_tokens:,}"
        if self.cost is not None:
            s += f"; est. cost ${self.cost:.4f}"
        s += f"; {self.elapsed:.1f} s"
        if self.aborted:
            s += f"\nstopped early: {self.aborted}"
        if self.failed or self.not_asked or self.aborted:
            s += (
                "\nrerun the same command to ask the failed/remaining pairs again; cached "
                "answers are not asked twice"
            )
        return s


@dataclass
class _Outcome:
    key: str
    grade: Optional[int] = None
    raw: Optional[str] = None
    error: Optional[str] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    requests: int = 0
    retries: int = 0
    fatal: bool = False
    skipped: bool = False


def document_text(title: str, text: str, max_chars: Optional[int] = None) -> str:
    doc = f"{title}\n{text}" if title and text else (title or text)
    if max_chars is not None and len(doc) > max_chars:
        doc = doc[:max_chars]
    return doc


def grade_pairs(
    pairs: Sequence[JudgePair],
    judge: Judge,
    *,
    cache: Union[JudgeCache, PathLike],
    concurrency: int = 4,
    requests_per_minute: Optional[float] = None,
    retry: Optional[RetryPolicy] = None,
    prices: Optional[Prices] = None,
    max_doc_chars: Optional[int] = 4000,
    max_consecutive_failures: int = 25,
    progress: Optional[bool] = None,
    dry_run: bool = False,
    sleep: Optional[Callable[[float], None]] = None,
) -> GradingReport:
    """Grade every pair with ``judge``, through the cache (see the module docstring).

    Pairs whose (judge, prompt, query text, document text) are cached are not asked; pairs
    with identical texts are asked once. Returns a :class:`GradingReport` with the grades of
    every pair that has one (cached or new) and the failures; it never raises for a pair
    that failed. ``KeyboardInterrupt`` stops the run after saving what has arrived."""
    from .pool import progress_bar

    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    retry = retry or RetryPolicy()
    own_cache = not isinstance(cache, JudgeCache)
    store = JudgeCache(cache) if own_cache else cache
    report = GradingReport(judge.id, judge.prompt_version, total=len(pairs), dry_run=dry_run)
    t0 = time.monotonic()

    # cached pairs, and what is left to ask (one request per distinct key)
    todo: Dict[str, Tuple[JudgePair, str]] = {}
    waiting: Dict[str, List[JudgePair]] = {}
    for p in pairs:
        doc = p.document if max_doc_chars is None else p.document[:max_doc_chars]
        key = JudgeCache.key(judge.id, judge.prompt_version, p.query, doc)
        hit = store.get(key)
        if hit is not None:
            report.cached += 1
            report.grades[(p.query_id, p.doc_id)] = int(hit["grade"])
            continue
        waiting.setdefault(key, []).append(p)
        todo.setdefault(key, (p, doc))

    if dry_run:
        report.not_asked = sum(len(v) for v in waiting.values())
        chars = 0
        for p, doc in todo.values():
            rendered = judge.prompt.render(p.query, doc) if hasattr(judge, "prompt") else p.query + doc
            chars += len(rendered)
        report.estimated_input_tokens = chars // 4
        if prices is not None:
            report.cost = prices.cost(report.estimated_input_tokens, 2 * len(todo))
        report.elapsed = time.monotonic() - t0
        if own_cache:
            store.close()
        return report

    bucket = TokenBucket(requests_per_minute, sleep=sleep or time.sleep) if requests_per_minute else None
    stop = threading.Event()
    state_lock = threading.Lock()
    state: Dict[str, Any] = {"consecutive": 0, "reason": None}

    def ask(key: str, pair: JudgePair, doc: str) -> _Outcome:
        out = _ask(key, pair, doc)
        if out.skipped:
            return out
        # decided here, in the worker, so no other worker starts a request after the stop
        with state_lock:
            if out.grade is not None:
                state["consecutive"] = 0
            else:
                state["consecutive"] += 1
                if out.fatal and state["reason"] is None:
                    state["reason"] = out.error
                    stop.set()
                n = state["consecutive"]
                if max_consecutive_failures and n >= max_consecutive_failures and state["reason"] is None:
                    state["reason"] = f"{n} failures in a row (last: {out.error})"
                    stop.set()
        return out

    def _ask(key: str, pair: JudgePair, doc: str) -> _Outcome:
        out = _Outcome(key)
        attempt = 0
        while True:
            if stop.is_set():
                out.skipped = True
                return out
            if bucket is not None:
                bucket.acquire()
            out.requests += 1
            try:
                answer = judge.judge(pair.query, doc)
            except TransientJudgeError as exc:
                if attempt >= retry.max_retries:
                    out.error = f"{exc} (gave up after {attempt + 1} attempt(s))"
                    return out
                wait_s = retry.delay(attempt, exc.retry_after)
                log.info("retrying (%s, %s) in %.2f s: %s", pair.query_id, pair.doc_id, wait_s, exc)
                if sleep is None:
                    stop.wait(wait_s)  # a stopped run does not sit out its backoff
                else:
                    sleep(wait_s)
                attempt += 1
                out.retries += 1
                continue
            except FatalJudgeError as exc:
                out.error = str(exc)
                out.fatal = True
                return out
            except JudgeError as exc:
                out.error = str(exc)
                return out
            except Exception as exc:  # a callable judge's own bug: this pair fails, loudly
                out.error = f"{type(exc).__name__}: {exc}"
                return out
            out.raw = answer.text
            out.input_tokens = answer.input_tokens
            out.output_tokens = answer.output_tokens
            try:
                out.grade = parse_grade(answer.text)
            except GradeParseError as exc:
                out.error = str(exc)
            return out

    bar = progress_bar(len(todo), f"judging ({judge.id})", unit="pair", enabled=progress)
    bar.set_postfix(cached=report.cached, new=0, failed=0)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judge")
    futures: Dict[Future, str] = {}
    try:
        for key, (pair, doc) in todo.items():
            futures[pool.submit(ask, key, pair, doc)] = key
        pending = set(futures)
        crash: Optional[BaseException] = None
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in done:
                try:
                    out = fut.result()
                except BaseException as exc:  # KeyboardInterrupt/SystemExit inside a judge:
                    crash = crash or exc  # stop, but save every answer that did arrive
                    stop.set()
                    continue
                report.requests += out.requests
                report.retries += out.retries
                if out.input_tokens is not None or out.output_tokens is not None:
                    report.usage_reported = True
                    report.input_tokens += out.input_tokens or 0
                    report.output_tokens += out.output_tokens or 0
                group = waiting[out.key]
                first = group[0]
                if out.skipped:
                    report.not_asked += len(group)
                    continue
                bar.update(1)
                record = {
                    "v": 1,
                    "key": out.key,
                    "judge": judge.id,
                    "prompt_version": judge.prompt_version,
                    "query_id": first.query_id,
                    "doc_id": first.doc_id,
                    "grade": out.grade,
                    "raw": None if out.raw is None else out.raw[:500],
                    "input_tokens": out.input_tokens,
                    "output_tokens": out.output_tokens,
                    "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                }
                if out.grade is not None:
                    store.put(record)
                    report.new += len(group)
                    for p in group:
                        report.grades[(p.query_id, p.doc_id)] = out.grade
                else:
                    record["error"] = out.error
                    store.put(record)
                    report.failed += len(group)
                    for p in group:
                        report.failures.append(Failure(p.query_id, p.doc_id, out.error or "", out.raw))
                    log.warning("judge failed for (%s, %s): %s", first.query_id, first.doc_id, out.error)
                bar.set_postfix(cached=report.cached, new=report.new, failed=report.failed)
        if crash is not None:
            raise crash
    except BaseException:
        # Ctrl-C (or a bug): every answer that arrived is already in the cache
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        report.aborted = report.aborted or state["reason"]
        bar.close()
        report.elapsed = time.monotonic() - t0
        if prices is not None and report.usage_reported:
            report.cost = prices.cost(report.input_tokens, report.output_tokens)
        if own_cache:
            store.close()
    return report


def pairs_from_pool(pool_pairs: Iterable[Any], *, max_doc_chars: Optional[int] = None) -> List[JudgePair]:
    """``pool.PoolPair`` (or annotation rows) -> JudgePair (document = title + text)."""
    return [
        JudgePair(p.query_id, p.query, p.doc_id, document_text(p.title, p.text, max_doc_chars))
        for p in pool_pairs
    ]


def write_failures(report: GradingReport, path: PathLike) -> None:
    from .pool import atomic_write

    def write(fh) -> None:
        for f in report.failures:
            fh.write(
                json.dumps(
                    {"query_id": f.query_id, "doc_id": f.doc_id, "error": f.error, "raw": f.raw},
                    ensure_ascii=False,
                )
                + "\n"
            )

    atomic_write(path, write)
