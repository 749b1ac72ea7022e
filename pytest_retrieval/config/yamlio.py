"""YAML reading that remembers where each value came from (file and line).

Used so that every configuration mistake can be reported as one line naming the
file, the key path and the line. Also does ``${VAR}`` / ``${VAR:-default}``
interpolation of string values and merging of included / overriding files.

The interpolation rule: an interpolated value is text. ``${VAR}`` is substituted into the
string the YAML parser read, and the result is never parsed again, whatever characters the
variable holds (``12:30:45``, ``null``, ``*ref``, ``[a``, digits). A whole-value ``${PORT}``
is therefore the string ``"9200"``; fields that take a number or a boolean (``port``,
``evaluation.depth``, ``verify_certs``) accept such a string when it spells one (pydantic's
lax coercion), secret and text fields keep it as written. Floors and other gate numbers are
written as numbers, not interpolated. Interpolated values are ``Interpolated`` strings, so
error messages never echo them (they may be secrets).

Resource limits: a file larger than ``MAX_YAML_BYTES`` is refused, and so is one whose
aliases would expand to more than ``MAX_YAML_NODES`` nodes (a "billion laughs" file).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import ConfigError
from .scalars import ScalarRules, typed_scalar

KeyPath = Tuple[Any, ...]
Positions = Dict[KeyPath, Tuple[str, int]]  # key path -> (file, 1-based line)

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")

_PLAIN_TAGS = frozenset(
    "tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)
MAX_YAML_BYTES = 10 * 1024 * 1024  # a suite file is configuration, not data
MAX_YAML_NODES = 100_000  # nodes after alias expansion
NO_RULES = ScalarRules()  # every scalar typed as YAML types it


class Interpolated(str):
    """A string that ``${VAR}`` interpolation produced: text, never parsed again, never echoed
    in an error message (``variables`` names the variables it came from)."""

    variables: Tuple[str, ...] = ()
    #: (name, value) of each variable taken from the environment (a default written in the
    #: file is no secret): what ``redaction`` registers when the suite loads
    values: Tuple[Tuple[str, str], ...] = ()

    def describe(self) -> str:
        """How an error message may refer to this value without showing it."""
        names = ", ".join("${" + v + "}" for v in self.variables) or "an environment variable"
        return f"the value of {names}"


def shown(value: Any) -> str:
    """``repr(value)``, except for interpolated values (possibly secrets), which are named."""
    if isinstance(value, Interpolated):
        return value.describe()
    return repr(value)


def interpolated_values(data: Any) -> List[Interpolated]:
    """Every ``Interpolated`` string in ``data`` (values, list items), longest first: what an
    error message about the loaded suite must not echo."""
    found: List[Interpolated] = []
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, Interpolated):
            found.append(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(found, key=len, reverse=True)


def register_secrets(values: List[Interpolated]) -> None:
    """Every value a variable of the environment gave: a secret in every output from now on
    (``redaction``), each with its variable's name (what a fingerprint hashes in its place)."""
    from ..redaction import register

    for value in values:
        for name, secret in value.values:
            register(secret, name)


def conceal(message: str, values: List[Interpolated]) -> str:
    """``message`` with each interpolated value it quotes (``repr``, as messages quote values)
    replaced by the variable's name, and so each one of 4 characters or more that stands in it
    as a word of its own: a message built from the validated model, where the value is a plain
    string again, still never shows it (issue #28 section 4)."""
    for value in values:
        if not value.strip():
            continue
        name = value.describe()
        message = message.replace(repr(str(value)), name)
        if len(value.strip()) >= 4:
            parts = re.split(r"(?<![\w])" + re.escape(str(value)) + r"(?![\w])", message)
            message = name.join(parts)
    return message


def format_path(path: KeyPath) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


def interpolate(value: str, *, file: str, key: KeyPath, line: int) -> str:
    """``${VAR}`` must be set; ``${VAR:-default}`` falls back to ``default``."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise ConfigError(
            f"environment variable {name} is not set (write ${{{name}:-default}} for a default)",
            file=file,
            key=format_path(key),
            line=line,
        )

    return _ENV.sub(sub, value)


def _interpolated(value: str, *, file: str, key: KeyPath, line: int) -> str:
    """``value`` with its variables substituted, as an ``Interpolated`` string when it had any."""
    names = tuple(m.group(1) for m in _ENV.finditer(value))
    if not names:
        return value
    out = Interpolated(interpolate(value, file=file, key=key, line=line))
    out.variables = names
    out.values = tuple((n, os.environ[n]) for n in dict.fromkeys(names) if n in os.environ)
    return out


def read_text_file(path: Path, *, max_bytes: int, what: str = "file") -> str:
    """A regular UTF-8 text file of at most ``max_bytes``, its BOM stripped. Anything else (a
    missing file, a directory, a device like /dev/zero, a FIFO, a bigger file, bytes that are
    not UTF-8) is one ``ConfigError`` naming the file."""
    file = str(path)
    _check_regular_file(path, max_bytes=max_bytes, what=what)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror or exc}", file=file) from None
    if len(raw) > max_bytes:
        raise ConfigError(f"{what} is over the limit of {max_bytes:,} bytes", file=file)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file=file) from None


def _check_regular_file(path: Path, *, max_bytes: int, what: str) -> None:
    """``path`` is a regular file of at most ``max_bytes`` (by its size before it is read)."""
    import stat

    file = str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(f"{what} not found", file=file) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror or exc}", file=file) from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ConfigError(f"{kind}: expected a {what}", file=file)
    if st.st_size > max_bytes:
        raise ConfigError(f"{what} is {st.st_size:,} bytes, over the limit of {max_bytes:,} bytes", file=file)


def _count_nodes(node: Any, limit: int) -> int:
    """Nodes of ``node`` with every alias expanded, counted without expanding them (shared
    subtrees are counted once per reference); stops past ``limit``."""
    memo: Dict[int, int] = {}

    def count(n: Any) -> int:
        got = memo.get(id(n))
        if got is not None:
            return got
        memo[id(n)] = 1  # a recursive alias counts once while being counted
        total = 1
        if isinstance(n.value, list):
            for item in n.value:
                if isinstance(item, tuple):
                    total += count(item[0]) + count(item[1])
                else:
                    total += count(item)
                if total > limit:
                    break
        memo[id(n)] = total
        return total

    return count(node)


def load_yaml(path: Path, rules: ScalarRules = NO_RULES) -> Tuple[Any, Positions]:
    """Parse one YAML file into plain data plus a map key-path -> (file, line); the plain
    scalars at the ids and grades of ``rules`` typed by its rules (``scalars``), not YAML's."""
    import yaml

    file = str(path)
    node = _compose(read_text_file(Path(path), max_bytes=MAX_YAML_BYTES), file)
    if node is None:
        return None, {}
    builder = _Builder(file, rules)
    try:
        data = builder.build(node, ())
    except RecursionError:
        raise ConfigError("YAML nested too deeply", file=file) from None
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        raise ConfigError(
            f"invalid YAML: {exc.problem}", file=file, line=(mark.line + 1) if mark else None
        ) from None
    return data, builder.positions


def _compose(text: str, file: str) -> Any:
    """The YAML node tree of ``text``; syntax errors, deep nesting and alias bombs refused."""
    node = _parse(text, file)
    if node is None:
        return None
    try:
        too_many = _count_nodes(node, MAX_YAML_NODES) > MAX_YAML_NODES
    except RecursionError:
        raise ConfigError("YAML nested too deeply", file=file) from None
    if too_many:
        raise ConfigError(
            f"YAML aliases expand to more than {MAX_YAML_NODES:,} values (an alias bomb?); "
            "write the values out or use include:",
            file=file,
        )
    return node


def _parse(text: str, file: str) -> Any:
    """``yaml.compose`` of ``text``, every failure one ``ConfigError`` (with its line if known)."""
    import yaml

    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise ConfigError("YAML nested too deeply", file=file) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise ConfigError(
            f"invalid YAML: {exc.problem or exc.context}", file=file, line=(mark.line + 1) if mark else None
        ) from None
    except yaml.YAMLError as exc:  # e.g. a reader error: a NUL byte, a control character
        first = (str(exc).strip().splitlines() or ["?"])[0]
        raise ConfigError(f"invalid YAML: {first}", file=file) from None


class _Builder:
    """Node tree -> plain data, recording each key path's line; only plain tags, no merge
    keys, no alias cycles, no duplicate keys; strings interpolated once, never re-parsed."""

    def __init__(self, file: str, rules: ScalarRules = NO_RULES):
        import yaml

        self.file = file
        self.rules = rules
        self.positions: Positions = {}
        self.constructor = yaml.SafeLoader("")
        self.active: set = set()  # nodes being built: an alias back into one is a cycle

    def error(self, message: str, key: Optional[KeyPath], line: int) -> ConfigError:
        return ConfigError(
            message, file=self.file, key=(format_path(key) or None) if key else None, line=line
        )

    def build(self, n: Any, key: KeyPath) -> Any:
        import yaml

        line = n.start_mark.line + 1
        self.positions[key] = (self.file, line)
        if n.tag not in _PLAIN_TAGS:
            raise self.error(
                f"YAML tag {n.tag!r} is not supported (plain values, lists and mappings only)", key, line
            )
        if isinstance(n, (yaml.MappingNode, yaml.SequenceNode)):
            if id(n) in self.active:
                raise self.error("a YAML alias refers to a value that contains it (a cycle)", key, line)
            self.active.add(id(n))
            try:
                if isinstance(n, yaml.MappingNode):
                    return self.mapping(n, key)
                return [self.build(v, key + (i,)) for i, v in enumerate(n.value)]
            finally:
                self.active.discard(id(n))
        value = self.scalar(n, self.rules.value_kind(key), key, line)
        if isinstance(value, str):
            # text in, text out: the result is never parsed as YAML again (see the module doc)
            value = _interpolated(value, file=self.file, key=key, line=line)
        return value

    def scalar(self, n: Any, kind: Optional[str], key: KeyPath, line: int) -> Any:
        """The value of a scalar node (or a key): YAML's, or for a plain id or grade the
        suite's (``scalars.typed_scalar``)."""
        value = self.constructor.construct_object(n, deep=True)
        if kind is None or getattr(n, "style", "") is not None or isinstance(value, (list, dict)):
            return value
        try:
            return typed_scalar(kind, n.value, n.tag, value)
        except ValueError as exc:
            raise self.error(str(exc), key, line) from None

    def mapping(self, n: Any, key: KeyPath) -> Dict[Any, Any]:
        out: Dict[Any, Any] = {}
        for k_node, v_node in n.value:
            line = k_node.start_mark.line + 1
            if k_node.tag == "tag:yaml.org,2002:merge":
                raise self.error("YAML merge keys (<<) are not supported; use include:", None, line)
            k = self.scalar(k_node, self.rules.key_kind(key), key + (k_node.value,), line)
            if isinstance(k, (list, dict)):
                raise self.error("a mapping key must be a scalar", None, line)
            if k in out:
                raise self.error(f"duplicate key {k!r}", key + (k,), line)
            out[k] = self.build(v_node, key + (k,))
        return out


def deep_merge(
    base: Any, over: Any, base_pos: Positions, over_pos: Positions, key: KeyPath = ()
) -> Tuple[Any, Positions]:
    """``over`` wins; mappings merge key by key, a keyed list (``KEYED_LISTS``) item by item
    (:func:`merge_list`), everything else is replaced. The one merge rule of includes and
    override files."""
    if isinstance(base, dict) and isinstance(over, dict):
        return _merge_mappings(base, over, base_pos, over_pos, key)
    key_of = KEYED_LISTS.get(key)
    if key_of is not None and isinstance(base, list) and isinstance(over, list):
        return merge_list(base, over, _sub(base_pos, key), _sub(over_pos, key), key, key_of)
    return over, _sub(over_pos, key)


def _merge_mappings(
    base: Dict[Any, Any], over: Dict[Any, Any], base_pos: Positions, over_pos: Positions, key: KeyPath
) -> Tuple[Dict[Any, Any], Positions]:
    out = dict(base)
    pos = {k: v for k, v in base_pos.items()}
    for k, v in over.items():
        if k in base:
            merged, sub_pos = deep_merge(
                base[k], v, _sub(base_pos, key + (k,)), _sub(over_pos, key + (k,)), key + (k,)
            )
            pos = {p: l for p, l in pos.items() if p[: len(key) + 1] != key + (k,)}
            pos.update(sub_pos)
            out[k] = merged
        else:
            out[k] = v
            pos.update(_sub(over_pos, key + (k,)))
    if key in over_pos:
        pos[key] = over_pos[key]
    return out, pos


def expectation_key(item: Any) -> Optional[str]:
    """A golden query's identity across files: its ``name``, else its ``query``, else its
    ``query_id`` (the item name ``expect[...]`` pytest shows)."""
    if not isinstance(item, dict):
        return None
    for field in ("name", "query", "query_id"):
        if item.get(field) is not None:
            return str(item[field])
    return None


#: Lists merged item by item across includes and overrides (key path -> an item's key); every
#: other list is replaced whole.
KEYED_LISTS: Dict[KeyPath, Callable[[Any], Optional[str]]] = {("expectations",): expectation_key}


def merge_list(
    base: List[Any],
    over: List[Any],
    base_pos: Positions,
    over_pos: Positions,
    key: KeyPath,
    key_of: Callable[[Any], Optional[str]],
) -> Tuple[List[Any], Positions]:
    """``base`` with each item of ``over`` replacing the item of the same key, or appended: an
    override adds or replaces items, it never deletes one. Positions follow the items."""
    out = list(base)
    pos = dict(base_pos)
    at: Dict[Optional[str], int] = {}
    for i, item in enumerate(base):
        at.setdefault(key_of(item), i)
    for j, item in enumerate(over):
        k = key_of(item)
        i = at[k] if k is not None and k in at else len(out)
        if i == len(out):
            out.append(item)
            at[k] = i
        else:
            out[i] = item
            pos = {p: l for p, l in pos.items() if p[: len(key) + 1] != key + (i,)}
        pos.update(_moved(over_pos, key + (j,), key + (i,)))
    if key in over_pos:
        pos[key] = over_pos[key]
    return out, pos


def _moved(pos: Positions, src: KeyPath, dst: KeyPath) -> Positions:
    """The positions under ``src``, re-keyed under ``dst`` (an item that moved in a list)."""
    n = len(src)
    return {dst + p[n:]: l for p, l in pos.items() if p[:n] == src}


def _sub(pos: Positions, prefix: KeyPath) -> Positions:
    n = len(prefix)
    return {p: l for p, l in pos.items() if p[:n] == prefix}


def locate(positions: Positions, path: KeyPath) -> Tuple[str | None, int | None]:
    """The file and line of the longest known prefix of ``path``."""
    for n in range(len(path), -1, -1):
        hit = positions.get(tuple(path[:n]))
        if hit:
            return hit
    return None, None


MAX_INCLUDE_LOADS = 1_000  # files read for one suite, every include counted each time it is read


class LoadCount:
    """The files one suite's loading reads (the suite, its overrides and every include, a
    file included twice counted twice): includes that fan out (each of ten files including
    the next ten) stop at ``limit`` with one line, instead of reading a file per path."""

    def __init__(self, limit: int = MAX_INCLUDE_LOADS):
        self.limit = limit
        self.loads = 0
        #: called before a later file is merged over what came before it (``before_merge(base,
        #: base_pos, over, over_pos)``): the suite's floor guard (``config/lowering.py``)
        self.before_merge: Optional[Callable[[Any, Positions, Any, Positions], None]] = None

    def merge(self, base: Any, over: Any, base_pos: Positions, over_pos: Positions) -> Tuple[Any, Positions]:
        """``deep_merge`` of a later file over what came before it, watched by ``before_merge``."""
        if self.before_merge is not None:
            self.before_merge(base, base_pos, over, over_pos)
        return deep_merge(base, over, base_pos, over_pos)

    def add(
        self,
        target: Path,
        *,
        file: Optional[str] = None,
        key: Optional[str] = None,
        line: Optional[int] = None,
    ) -> None:
        self.loads += 1
        if self.loads > self.limit:
            raise ConfigError(
                f"includes fan out to more than {self.limit} file loads for one suite (at {target.name}; "
                f"a file included from several places is read each time): include shared files once",
                file=file or str(target),
                key=key,
                line=line,
            )


def load_with_includes(
    path: Path,
    *,
    rules: ScalarRules = NO_RULES,
    loads: Optional[LoadCount] = None,
    _stack: List[Path] | None = None,
) -> Tuple[Any, Positions]:
    """Load ``path``; files listed under its ``include:`` key are merged first, in order,
    and the including file overrides them (so a suite can include shared floors and
    a team file can include a suite and override its floors). ``loads`` counts every file
    read (one suite's count is shared by its overrides); ``rules``: see ``load_yaml``."""
    path = Path(path).resolve()
    loads = loads if loads is not None else LoadCount()
    if _stack is None:
        loads.add(path)
    stack = (_stack or []) + [path]
    data, pos = load_yaml(path, rules)
    if not isinstance(data, dict):
        raise ConfigError("the file must be a YAML mapping (key: value)", file=str(path), line=1)
    includes = data.pop("include", None)
    if includes is None:
        return data, pos
    merged: Any = {}
    merged_pos: Positions = {}
    for i, inc in enumerate(_include_list(includes, path, pos)):
        inc_data, inc_pos = _load_include(inc, i, path, pos, stack, rules, loads)
        merged, merged_pos = loads.merge(merged, inc_data, merged_pos, inc_pos)
    pos = {k: v for k, v in pos.items() if k[:1] != ("include",)}
    return loads.merge(merged, data, merged_pos, pos)


def _include_list(includes: Any, path: Path, pos: Positions) -> List[str]:
    """The value of ``include:``: one path or a list of paths."""
    if isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise ConfigError(
            "include must be a file path or a list of paths",
            file=str(path),
            key="include",
            line=pos.get(("include",), (None, None))[1],
        )
    return includes


def _load_include(
    inc: str, i: int, path: Path, pos: Positions, stack: List[Path], rules: ScalarRules, loads: LoadCount
) -> Tuple[Any, Positions]:
    """The ``i``-th file ``path`` includes (relative to it), with its own includes; a cycle, a
    missing file or one load too many is an error at the ``include:`` line."""
    line = pos.get(("include", i), pos.get(("include",), (None, None)))[1]
    if "\x00" in inc:  # Path.resolve would raise ValueError
        raise ConfigError("a path cannot hold a NUL byte", file=str(path), key=f"include[{i}]", line=line)
    target = (path.parent / inc).resolve()
    if target in stack:
        raise ConfigError(
            f"include cycle: {' -> '.join(p.name for p in stack + [target])}",
            file=str(path),
            key=f"include[{i}]",
            line=line,
        )
    if not target.exists():
        raise ConfigError(f"included file not found: {inc}", file=str(path), key=f"include[{i}]", line=line)
    loads.add(target, file=str(path), key=f"include[{i}]", line=line)
    return load_with_includes(target, rules=rules, loads=loads, _stack=stack)
