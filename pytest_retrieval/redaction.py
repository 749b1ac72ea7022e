"""Secrets kept out of every output: the one registry of secret values and the one redaction.

What is a secret (issue #32 section 1): the value of every ``${VAR}`` a suite file takes from
the environment, wherever it is interpolated (a header value in part, ``Bearer ${T}``; a URL
path or query, ``/t/${T}/search``; a retriever's ``params``); the credentials in a URL's user
part (``https://user:pass@host``); a connection's password and API key. ``config/load.py``
registers a suite's values when it loads, the backends their credentials.

How it is removed (:func:`redact`): each value, and each form it takes on its way to a server or
into a log (:func:`secret_forms`: percent-encoded, ``+`` for a space, JSON- and ``repr``-escaped,
base64, and for a basic-auth token ``user:pass`` decoded), becomes ``***``. A value of fewer than
``WORD_ONLY`` characters is removed where it stands as a word of its own (not inside a longer
word or number); a value of fewer than ``MIN_LENGTH`` characters, and a value that spells a
setting rather than a secret (``true``, ``null``, a number of fewer than ``WORD_ONLY`` digits), is
not registered. A text is redacted before it is cut (:func:`clip`): a cut never leaves part of a
secret or of the ``***`` marker.

The fingerprint of a baseline hashes the template, never the filled value (:func:`templated`:
each value becomes ``${VAR}`` again), so a rotated token does not change it and a committed hash
cannot be tried against guessed tokens.

The registry is one per process (a pytest session, a command): :func:`reset` empties it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from typing import Any, Dict, Iterable, List, Optional, Pattern, Tuple
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

__all__ = [
    "MARK",
    "Redactor",
    "basic_auth_token",
    "clip",
    "redact",
    "redact_data",
    "register",
    "register_basic_auth",
    "reset",
    "secret_forms",
    "split_user_info",
    "templated",
]

MARK = "***"
MIN_LENGTH = 4  # shorter values are not registered (a word of 3 letters is everywhere)
WORD_ONLY = 8  # shorter values are removed only where they stand as a word of their own
_SETTINGS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none", "~"})
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")


def _is_setting(value: str) -> bool:
    """A value that spells a setting, not a secret: a YAML boolean or null, a short number."""
    text = value.strip()
    return text.lower() in _SETTINGS or (len(text) < WORD_ONLY and bool(_NUMBER.fullmatch(text)))


def secret_forms(secret: str) -> List[str]:
    """The shapes a secret takes on the way to a server or into a log: itself (and stripped),
    percent-encoded (every character, and as a path keeps ``/``; ``+`` for a space), JSON- and
    ``repr``-escaped, base64 (standard, URL-safe, unpadded) and, when it is a base64 basic-auth
    token, ``user:pass`` decoded and its password."""
    forms = {secret, secret.strip(), quote(secret, safe=""), quote(secret), quote_plus(secret)}
    forms.update({repr(secret)[1:-1], json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]})
    raw = secret.encode("utf-8", "surrogatepass")
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        forms.update({text, text.rstrip("=")})
    forms.update(_decoded_basic(secret))
    return sorted(f for f in forms if f.strip())


def _decoded_basic(value: str) -> List[str]:
    """``user:pass`` and ``pass`` when ``value`` (or its last word: ``Basic dTpw``) is the
    base64 of a ``user:pass`` pair; [] otherwise."""
    token = value.strip().split(" ")[-1]
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return []
    if ":" not in decoded or not decoded.isprintable():
        return []
    return [decoded, decoded.partition(":")[2]]


def basic_auth_token(user: str, password: str) -> str:
    """The base64 ``user:pass`` of an ``Authorization: Basic`` header (RFC 7617)."""
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def split_user_info(url: str) -> Tuple[str, Optional[Tuple[str, str]]]:
    """``url`` without its user part, and the ``(user, password)`` it held, decoded (None: no
    user part). ``http://u:p%40ss@host/x`` -> ``("http://host/x", ("u", "p@ss"))``."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    info, _, host = parts.netloc.rpartition("@")
    user, _, password = info.partition(":")
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), (
        unquote(user),
        unquote(password),
    )


class _Registry:
    """Every secret value of this process, each with the variable it came from (if any)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._names: Dict[str, str] = {}  # value -> ${NAME} (or "")
        self._exact: Dict[str, str] = {}  # forms given as they are (not expanded again)
        self._patterns: Tuple[Tuple[str, Pattern[str]], ...] = ()
        self._prefixes: Tuple[str, ...] = ()

    def add(self, value: Any, name: str = "", expand: bool = True) -> None:
        text = "" if value is None else str(value)
        if len(text.strip()) < MIN_LENGTH or _is_setting(text):
            return
        with self._lock:
            known = self._names if expand else self._exact
            if text in known:
                return
            known[text] = name
            self._compile()

    def _compile(self) -> None:
        forms = {f for value in self._names for f in secret_forms(value)} | set(self._exact)
        forms = {f for f in forms if len(f.strip()) >= MIN_LENGTH and not _is_setting(f)}
        self._patterns = tuple((form, _pattern(form)) for form in sorted(forms, key=len, reverse=True))
        self._prefixes = tuple(f for f in forms if len(f) >= WORD_ONLY)

    def clear(self) -> None:
        with self._lock:
            self._names.clear()
            self._exact.clear()
            self._patterns = ()
            self._prefixes = ()

    def redact(self, text: str) -> str:
        if not self._patterns:
            return text
        for form, pattern in self._patterns:
            if form in text:
                text = pattern.sub(MARK, text)
        return text

    def cut_prefix(self, text: str) -> str:
        """``text`` without a tail that is the start (of ``MIN_LENGTH`` characters or more) of
        a secret: what a cut through a secret would leave."""
        for form in self._prefixes:
            for n in range(min(len(form) - 1, len(text)), MIN_LENGTH - 1, -1):
                if text.endswith(form[:n]):
                    return text[:-n]
        return text

    def templated(self, text: str) -> str:
        values = [(v, "${" + n + "}" if n else MARK) for v, n in self._names.items()]
        values += [(v, MARK) for v in self._exact if v not in self._names]
        for value, template in sorted(values, key=lambda item: len(item[0]), reverse=True):
            if value in text:
                text = _pattern(value).sub(template.replace("\\", "\\\\"), text)
        return text


def _pattern(form: str) -> Pattern[str]:
    """``form`` anywhere, or where it stands as a word of its own when shorter than ``WORD_ONLY``."""
    escaped = re.escape(form)
    if len(form) < WORD_ONLY:
        escaped = r"(?<![A-Za-z0-9])" + escaped + r"(?![A-Za-z0-9])"
    return re.compile(escaped)


_REGISTRY = _Registry()


def register(value: Any, name: str = "", *, forms: bool = True) -> None:
    """``value`` (and, with ``forms``, each of its :func:`secret_forms`) is a secret from now on
    in this process; ``name``: the variable it came from, written in its place by
    :func:`templated`."""
    _REGISTRY.add(value, name, expand=forms)


def register_basic_auth(user: str, password: str) -> None:
    """The credentials of a URL's user part: the password and the basic-auth token."""
    register(password)
    register(f"{user}:{password}")
    if password:
        register(basic_auth_token(user, password))


def reset() -> None:
    """Forget every registered secret (a new session; a test)."""
    _REGISTRY.clear()


def redact(text: Any) -> str:
    """``text`` with every registered secret, in each of its forms, replaced by ``***``."""
    return _REGISTRY.redact(str(text))


def clip(text: Any, limit: int, ellipsis: str = "...") -> str:
    """``text`` redacted, then cut to ``limit`` characters (and ``ellipsis``) when longer; the
    cut never falls inside a ``***`` marker nor leaves the start of a secret."""
    shown = redact(text)
    if len(shown) <= limit:
        return shown
    cut = shown[:limit]
    start = shown.find(MARK, max(0, limit - len(MARK) + 1), limit + len(MARK) - 1)
    if 0 <= start < limit:  # a marker through the cut: cut before it
        cut = shown[:start]
    return _REGISTRY.cut_prefix(cut) + ellipsis


def redact_data(value: Any) -> Any:
    """A JSON-like document with every string in it (keys too) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v) for v in value]
    return value


def redact_json_text(text: str) -> Any:
    """The JSON document ``text``, parsed, with every registered secret out of every string:
    one pass over the text (every secret's JSON-escaped form is one of its forms), and a walk of
    the parsed document only when the redacted text is no longer JSON (a secret that is also
    a number in it)."""
    if not _REGISTRY._patterns:  # nothing registered: nothing to look for
        return json.loads(text)
    try:
        return json.loads(redact(text))
    except ValueError:
        return redact_data(json.loads(text))


def templated(value: Any) -> Any:
    """A JSON-like document with each registered value written as its template (``${VAR}``;
    ``***`` for a secret that came from no variable): what a fingerprint hashes."""
    if isinstance(value, str):
        return _REGISTRY.templated(value)
    if isinstance(value, dict):
        return {templated(k) if isinstance(k, str) else k: templated(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [templated(v) for v in value]
    return value


class Redactor:
    """The secrets of one connection, removed from any text together with every registered
    secret. A secret of ``_SHORT`` characters or fewer (``007``, ``pw``) is removed where it
    stands as a word of its own (not inside ``1007`` or ``pwd``): a short password is still a
    password (issue #28); longer ones are registered for every output too."""

    _SHORT = 3
    _USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
    _AUTH_HEADER = re.compile(
        r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(basic|apikey|bearer)\s+[A-Za-z0-9+/=._-]+"
    )

    def __init__(self) -> None:
        self._secrets: List[str] = []
        self._short: List[Pattern[str]] = []

    def add(self, *values: Any) -> None:
        for value in values:
            if value is None:
                continue
            if isinstance(value, (tuple, list)):
                self.add(*value)
                continue
            text = str(value)
            if len(text) > self._SHORT:
                self._secrets.append(text)
                register(text, forms=False)
            elif text.strip():
                self._short.append(re.compile(r"(?<![A-Za-z0-9])" + re.escape(text) + r"(?![A-Za-z0-9])"))
        self._secrets.sort(key=len, reverse=True)
        self._short.sort(key=lambda p: len(p.pattern), reverse=True)

    def add_all(self, values: Iterable[Any]) -> None:
        """Each value and every form of it (:func:`secret_forms`)."""
        for value in values:
            if value is not None and str(value):
                self.add(secret_forms(str(value)))
                register(value)

    def __call__(self, text: Any) -> str:
        out = str(text)
        for secret in self._secrets:
            out = out.replace(secret, MARK)
        for pattern in self._short:
            out = pattern.sub(MARK, out)
        out = redact(out)
        out = self._USERINFO.sub(lambda m: m.group("scheme") + MARK + "@", out)
        return self._AUTH_HEADER.sub(lambda m: m.group(1) + m.group(2) + " " + MARK, out)
