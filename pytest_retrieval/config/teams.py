"""Team threshold files (issue #36): a suite's ``teams:`` lists files that each hold one team's
gates over the suite's one run. A team file holds gates only (``floors``, ``regression``
``max_drop`` gates against the suite's baseline, ``owner``, ``mention``, ``team``), never a key
that changes the retrieval, so every team gates the same run and the same baseline, each gate its
own item ``<suite file>::<team>::<retriever>::<metric>`` (or ``::baseline:<metric>``)
(docs/how-to/team-thresholds.md says why this and not one suite per team)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError
from .gate_models import Margin
from .ownership import OwnedKeys, owners_of
from .problems import pydantic_error
from .schema import SCALAR_RULES, FloorValue
from .yamlio import KeyPath, Positions, format_path, load_with_includes, locate

__all__ = ["MAX_TEAMS", "TEAM_NAME", "Team", "TeamFile", "TeamRegression", "load_teams"]

MAX_TEAMS = 100  # team files of one suite
#: A team's name as its items name it (``retrieval_search.yaml::ranking::rrf::ndcg@10``).
TEAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class TeamRegression(BaseModel):
    """A team's baseline gates: ``max_drop`` per metric against the suite's one baseline, with
    the suite's comparison settings (confidence, strata, ...: the suite's ``regression``)."""

    model_config = ConfigDict(extra="forbid")

    max_drop: Dict[str, Margin] = Field(
        description="metric -> the largest mean drop tolerated, e.g. {ndcg@10: 0.01}.", min_length=1
    )
    retrievers: Optional[List[str]] = Field(None, description="Retrievers compared (default: all).")


class TeamFile(OwnedKeys):
    """Schema of a team threshold file: gates only."""

    team: Optional[str] = Field(
        None, description="The team's name in item ids (default: the file name's stem)."
    )
    floors: Dict[str, Dict[str, FloorValue]] = Field(
        default_factory=dict, description="retriever -> {metric: floor}, as a suite's floors."
    )
    regression: Optional[TeamRegression] = Field(
        None, description="max_drop gates against the suite's baseline (the suite needs a regression block)."
    )


@dataclass(frozen=True)
class Team:
    name: str
    file: str
    owners: Tuple[str, ...] = ()
    mention: bool = False


class _TeamScope:
    """What ``gates.floors.parse_floors`` asks of a suite (``error``, ``positions``), for a team
    file: its mistakes and its floors' origins name the team file and its lines."""

    def __init__(self, suite: Any, file: Path, positions: Positions) -> None:
        self.suite = suite
        self.file = str(file)
        self.positions = positions

    def error(self, key: KeyPath, message: str) -> ConfigError:
        file, line = locate(self.positions, key)
        return ConfigError(message, file=file or self.file, key=format_path(key) or None, line=line)


def load_teams(suite: Any, metrics: List[str]) -> Tuple[List[Team], List[Any], List[Any]]:
    """The suite's teams, their floors and their baseline gates (each stamped with its team and
    owners); metrics a gate needs are appended to ``metrics``. Every mistake is one
    ``ConfigError`` line."""
    from ..gates.floors import parse_floors

    paths = suite.model.teams
    if len(paths) > MAX_TEAMS:
        raise suite.error(("teams",), f"{len(paths)} team files: at most {MAX_TEAMS}")
    teams: List[Team] = []
    floors: List[Any] = []
    regression: List[Any] = []
    seen: Dict[str, str] = {}
    for i, raw in enumerate(paths):
        path, model, positions = _read(suite, i, raw)
        team = _team(suite, i, path, model, seen)
        scope = _TeamScope(suite, path, positions)
        name, owners, mention = team.name, team.owners, team.mention
        for f in parse_floors(suite.model, scope, metrics, floors=model.floors):
            floors.append(dataclasses.replace(f, team=name, owners=owners, mention=mention))
        for g in _baseline_gates(suite, scope, model, metrics):
            regression.append(g._replace(team=name, owners=owners, mention=mention))
        teams.append(team)
    return teams, floors, regression


def _baseline_gates(suite: Any, scope: _TeamScope, model: TeamFile, metrics: List[str]) -> List[Any]:
    """A team file's ``regression`` gates, against the suite's one baseline: the suite must
    compare with a baseline (its ``regression`` block holds the baseline and the statistics)."""
    from .regression import baseline_gates

    if model.regression is None:
        return []
    if suite.model.regression is None:
        raise scope.error(
            ("regression",),
            "a team's regression gates compare with the suite's baseline, and the suite has no "
            "regression block (add regression: {max_drop: ...} to the suite)",
        )
    return baseline_gates(suite, scope, model.regression.max_drop, model.regression.retrievers, metrics)


def _read(suite: Any, i: int, raw: str) -> Tuple[Path, TeamFile, Positions]:
    """The ``i``-th team file, read and validated."""
    key: KeyPath = ("teams", i)
    if not raw.strip() or "\x00" in raw:
        raise suite.error(key, "a team file's path is empty or holds a NUL byte")
    path = suite.resolve_path(key, raw)
    if not path.exists():
        raise suite.error(key, f"team file not found: {raw}")
    if not path.is_file():  # a folder, a FIFO, a device: never opened
        raise suite.error(key, f"team file {raw} is not a regular file")
    data, positions = load_with_includes(path, rules=SCALAR_RULES)
    try:
        model = TeamFile.model_validate(data)
    except ValidationError as exc:
        raise _team_error(exc, data, positions, path) from None
    if not model.floors and model.regression is None:
        raise ConfigError(
            "a team file gates at least one floor (floors: {retriever: {metric: floor}}) or "
            "baseline gate (regression: {max_drop: {metric: margin}})",
            file=str(path),
            line=1,
        )
    return path, model, positions


def _team_error(exc: ValidationError, data: Any, positions: Positions, path: Path) -> ConfigError:
    """A team file's first problem; a key a team file cannot hold says why (it would change the
    retrieval every team shares)."""
    for err in exc.errors(include_url=False):
        loc = tuple(err.get("loc", ()))
        if err.get("type") == "extra_forbidden" and len(loc) == 1:
            file, line = locate(positions, loc)
            included = f" (from {file}:{line}, included)" if file and Path(file) != path.resolve() else ""
            return ConfigError(
                f"unknown key {str(loc[0])[:80]!r}{included}: a team file holds gates only (team, owner, "
                "mention, floors, regression); the retrieval is the suite's, shared by every team, so a "
                "team file includes no suite",
                file=str(path),
                key=str(loc[0])[:80],
                line=line if not included else None,
            )
    return pydantic_error(exc, data, positions, path)


def _team(suite: Any, i: int, path: Path, model: TeamFile, seen: Dict[str, str]) -> Team:
    """The team of a team file: its name checked (an item id's part, once per suite, never a
    retriever's name) and its owners."""
    name = model.team if model.team is not None else path.stem.removeprefix("retrieval_")
    if not TEAM_NAME.fullmatch(name):
        where = "team" if model.team is not None else f"the file name {path.name!r}"
        raise ConfigError(
            f"team name {name[:80]!r} (from {where}) is not a name an item id can hold: letters, "
            "digits, '.', '_' and '-', at most 64 (set team: in the file)",
            file=str(path),
            key="team" if model.team is not None else None,
            line=1,
        )
    if name in suite.model.retrievers:
        raise suite.error(("teams", i), f"team {name!r} is also a retriever's name: set team: in {path.name}")
    if name in seen:
        raise suite.error(("teams", i), f"team {name!r} twice ({seen[name]} and {path}): set team: in one")
    seen[name] = str(path)
    return Team(name, str(path), owners_of(model.owner), model.mention)
