"""YAML reading that remembers where each value came from (file and line).

Used so that every configuration mistake can be reported as one line naming the
file, the key path and the line. Also does ``${VAR}`` / ``${VAR:-default}``
interpolation of string values and merging of included / overriding files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

from ..errors import ConfigError

KeyPath = Tuple[Any, ...]
Positions = Dict[KeyPath, Tuple[str, int]]  # key path -> (file, 1-based line)

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


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


def load_yaml(path: Path) -> Tuple[Any, Positions]:
    """Parse one YAML file into plain data plus a map key-path -> (file, line)."""
    import yaml

    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", file=file) from None
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", file=file) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise ConfigError(
            f"invalid YAML: {exc.problem or exc.context}", file=file, line=(mark.line + 1) if mark else None
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=file) from None
    positions: Positions = {}
    if node is None:
        return None, positions
    constructor = yaml.SafeLoader("")

    def build(n: yaml.Node, key: KeyPath) -> Any:
        positions[key] = (file, n.start_mark.line + 1)
        if isinstance(n, yaml.MappingNode):
            out: Dict[Any, Any] = {}
            for k_node, v_node in n.value:
                if k_node.tag == "tag:yaml.org,2002:merge":
                    raise ConfigError(
                        "YAML merge keys (<<) are not supported; use include:",
                        file=file,
                        line=k_node.start_mark.line + 1,
                    )
                k = constructor.construct_object(k_node, deep=True)
                if isinstance(k, (list, dict)):
                    raise ConfigError(
                        "a mapping key must be a scalar", file=file, line=k_node.start_mark.line + 1
                    )
                if k in out:
                    raise ConfigError(
                        f"duplicate key {k!r}",
                        file=file,
                        key=format_path(key + (k,)),
                        line=k_node.start_mark.line + 1,
                    )
                out[k] = build(v_node, key + (k,))
            return out
        if isinstance(n, yaml.SequenceNode):
            return [build(v, key + (i,)) for i, v in enumerate(n.value)]
        value = constructor.construct_object(n, deep=True)
        if isinstance(value, str):
            value = interpolate(value, file=file, key=key, line=n.start_mark.line + 1)
            if getattr(n, "style", None) is None and value != n.value:
                # an unquoted ${VAR} that expands to a number/bool keeps YAML's typing
                value = yaml.safe_load(value) if value.strip() else value
        return value

    try:
        data = build(node, ())
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        raise ConfigError(
            f"invalid YAML: {exc.problem}", file=file, line=(mark.line + 1) if mark else None
        ) from None
    return data, positions


def deep_merge(
    base: Any, over: Any, base_pos: Positions, over_pos: Positions, key: KeyPath = ()
) -> Tuple[Any, Positions]:
    """``over`` wins; mappings merge key by key, everything else is replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
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
    return over, _sub(over_pos, key)


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


def load_with_includes(path: Path, *, _stack: List[Path] | None = None) -> Tuple[Any, Positions]:
    """Load ``path``; files listed under its ``include:`` key are merged first, in order,
    and the including file overrides them (so a suite can include shared floors and
    a team file can include a suite and override its floors)."""
    path = Path(path).resolve()
    stack = (_stack or []) + [path]
    data, pos = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError("the file must be a YAML mapping (key: value)", file=str(path), line=1)
    includes = data.pop("include", None)
    if includes is None:
        return data, pos
    if isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise ConfigError(
            "include must be a file path or a list of paths",
            file=str(path),
            key="include",
            line=pos.get(("include",), (None, None))[1],
        )
    merged: Any = {}
    merged_pos: Positions = {}
    for i, inc in enumerate(includes):
        target = (path.parent / inc).resolve()
        line = pos.get(("include", i), pos.get(("include",), (None, None)))[1]
        if target in stack:
            raise ConfigError(
                f"include cycle: {' -> '.join(p.name for p in stack + [target])}",
                file=str(path),
                key=f"include[{i}]",
                line=line,
            )
        if not target.exists():
            raise ConfigError(
                f"included file not found: {inc}", file=str(path), key=f"include[{i}]", line=line
            )
        inc_data, inc_pos = load_with_includes(target, _stack=stack)
        merged, merged_pos = deep_merge(merged, inc_data, merged_pos, inc_pos)
    pos = {k: v for k, v in pos.items() if k[:1] != ("include",)}
    return deep_merge(merged, data, merged_pos, pos)
