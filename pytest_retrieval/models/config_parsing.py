"""The base of the embedder and reranker config models, and the reading of a config dict
into one, strictly and with one-line errors (what the factories do)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Dict, List, Mapping, Tuple, Type, TypeVar, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, PrivateAttr, ValidationError
from typing_extensions import Annotated

from ..errors import ConfigError


def _fspath(value: Any) -> Any:
    return os.fspath(value) if isinstance(value, os.PathLike) else value


PathStr = Annotated[str, BeforeValidator(_fspath)]
"""A path option: a string in the suite file, a string or ``os.PathLike`` from Python."""


def _is_path(field: Any) -> bool:
    """Whether a model field (its metadata or annotation) is a :data:`PathStr`."""
    parts = list(getattr(field, "metadata", ())) + [getattr(field, "annotation", None)]
    while parts:
        part = parts.pop()
        if getattr(part, "func", None) is _fspath:
            return True
        parts.extend(get_args(part))
    return False


class ModelConfig(BaseModel):
    """One kind of embedder or reranker, as a suite file or a Python dict configures it.

    ``build(base_dir)`` makes the object, relative paths resolving against ``base_dir``.
    :func:`parse_config` reads a config dict the way the factories do (strictly)."""

    model_config = ConfigDict(extra="forbid")
    aliases: ClassVar[Tuple[str, ...]] = ()  # other names of the kind, for make_embedder/make_reranker
    _written: Dict[str, Any] = PrivateAttr(default_factory=dict)

    def build(self, base_dir: Path) -> Any:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def as_written(self) -> Dict[str, Any]:
        """The config as it was written (aliases, nulls and all), when read by
        :func:`parse_config`: what baseline fingerprints hash."""
        return dict(self._written) or self.model_dump(mode="json", exclude_unset=True)

    def options(self, *exclude: str) -> Dict[str, Any]:
        """Every option but ``type`` and ``exclude``, as keyword arguments."""
        return {n: getattr(self, n) for n in type(self).model_fields if n != "type" and n not in exclude}


C = TypeVar("C", bound=ModelConfig)


def parse_config(
    config: Any, family: str, configs: Mapping[str, Type[C]], words: Mapping[str, str], type_required: str
) -> C:
    """A config dict as the model of its kind; every problem is one :class:`ConfigError`
    line: ``{family}: ...`` / ``{family} ({kind}): ...``. A model passes through.

    ``type`` is case-insensitive and may be an alias of a kind; a ``null`` option means its
    default; values are not coerced (``"8"`` is not an integer). ``words`` names the types in
    messages (``{"int": "an integer", ...}``); ``type_required`` is the message for a
    missing ``type``."""
    if isinstance(config, tuple(configs.values())):
        return config  # type: ignore[return-value]
    if not isinstance(config, Mapping):
        raise ConfigError(f"{family}: expected a mapping, got {type(config).__name__}")
    kind = _kind(config, family, configs, type_required)
    cls = configs[kind]
    _check_keys(config, cls, f"{family} ({kind})")
    data = {k: v for k, v in config.items() if v is not None}
    try:
        model = cls.model_validate({**data, "type": kind}, strict=True)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, cls, f"{family} ({kind})", words)) from None
    model._written = dict(config)
    return model


def _kind(config: Mapping[str, Any], family: str, configs: Mapping[str, Type[C]], type_required: str) -> str:
    """The kind ``type`` names (case-insensitive, aliases allowed), one of ``configs``."""
    raw_type = config.get("type")
    if not isinstance(raw_type, str) or not raw_type:
        raise ConfigError(f"{family}: {type_required}")
    aliases = {alias: kind for kind, cls in configs.items() for alias in cls.aliases}
    kind = aliases.get(raw_type.lower(), raw_type.lower())
    if kind not in configs:
        raise ConfigError(f"{family}: unknown type {raw_type!r} (known: {', '.join(configs)})")
    return kind


def _options(cls: Type[ModelConfig]) -> Tuple[List[str], List[str]]:
    """(every option but ``type``, the required ones) of a kind."""
    fields = [n for n in cls.model_fields if n != "type"]
    return fields, [n for n in fields if cls.model_fields[n].is_required()]


def _check_keys(config: Mapping[str, Any], cls: Type[ModelConfig], where: str) -> None:
    """No key the kind does not know, no required option missing (or null, or empty)."""
    fields, required = _options(cls)
    unknown = [k for k in config if k != "type" and k not in fields]
    if unknown:
        allowed = required + [n for n in fields if n not in required]
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))} (allowed: {', '.join(allowed)})"
        )
    missing = [k for k in required if config.get(k) in (None, "")]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(map(repr, missing))}")


def _describe(exc: ValidationError, cls: Type[ModelConfig], where: str, words: Mapping[str, str]) -> str:
    err = exc.errors(include_url=False)[0]
    loc = err.get("loc", ())
    msg = str(err.get("msg", "")).replace("Value error, ", "")
    if not loc:
        return msg  # a check across options: the message says it all
    key, etype = loc[0], str(err.get("type", ""))
    base = etype.split("_")[0]
    field = cls.model_fields.get(str(key))
    if etype == "string_type" and _is_path(field):
        return f"{where}: {key!r} must be a path"
    if base in words and etype.endswith(("_type", "_parsing")):
        return f"{where}: {key!r} must be {words[base]}, got {err.get('input')!r}"
    if etype == "value_error":
        return f"{where}: {key!r} {msg}"
    return f"{where}: {key!r}: {msg} (got {err.get('input')!r})"
