"""Who answers for a suite's gates, and who may loosen them: the keys ``owner``, ``mention``,
``teams`` and ``overrides`` of a suite file, and ``owner`` / ``mention`` of a team threshold file
(``config/teams.py``). Pydantic models only; the suite file's schema (``schema.SuiteFile``)
takes them in as a base class."""

from __future__ import annotations

import re
from typing import List, Optional, Tuple, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["OWNER_PATTERN", "GateOwnership", "OverridesConfig", "OwnedKeys", "owners_of"]

#: A CODEOWNERS owner: ``@user``, ``@org/team`` or an e-mail address (GitHub's CODEOWNERS
#: syntax, docs.github.com "About code owners"). Nothing else, so a name the Markdown comment
#: writes as a live mention (``mention: true``) can never carry other Markdown.
OWNER_PATTERN = re.compile(
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9][A-Za-z0-9._-]{0,99})?"
    r"|[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+"
)


class _Keys(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _owners(value: Optional[Union[str, List[str]]]) -> Optional[Union[str, List[str]]]:
    """One owner or a list of them, each a CODEOWNERS name, at most 20."""
    if value is None:
        return value
    names = [value] if isinstance(value, str) else list(value)
    if not names:
        raise ValueError("an empty list names no owner: name one, or leave the key out")
    if len(names) > 20:
        raise ValueError(f"{len(names)} owners: at most 20")
    for n in names:
        if not OWNER_PATTERN.fullmatch(n):
            raise ValueError(
                f"owner {n[:80]!r} is not a CODEOWNERS name (@user, @org/team or an e-mail address)"
            )
    return value


def owners_of(value: Optional[Union[str, List[str]]]) -> Tuple[str, ...]:
    """The owners an ``owner`` key names, as a tuple (empty without one)."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


class OverridesConfig(_Keys):
    """What files merged over this one may change of its floors."""

    may_lower: bool = Field(
        default=True,
        description="false: an override file (--retrieval-override) or a file that includes this "
        "one may not lower a floor (or raise a ceiling) this file sets; such a file is refused, "
        "naming both files and lines.",
    )


class OwnedKeys(_Keys):
    """``owner`` and ``mention``: of a suite file and of a team file."""

    owner: Optional[Union[str, List[str]]] = Field(
        None,
        description="Who answers for these gates' failures: CODEOWNERS names (@org/team, @user, "
        "e-mail), shown beside each failure in the reports.",
    )
    mention: bool = Field(
        False,
        description="true: the Markdown comment writes the owners as live @mentions (they are "
        "notified); default: as code, notifying no one.",
    )

    @field_validator("owner")
    @classmethod
    def _codeowners(cls, v: Optional[Union[str, List[str]]]) -> Optional[Union[str, List[str]]]:
        return _owners(v)


class GateOwnership(OwnedKeys):
    """The suite file's keys of this module (a base class of ``schema.SuiteFile``)."""

    teams: List[str] = Field(
        default_factory=list,
        description="Team threshold files (relative to this file): each one's floors gate this "
        "suite's one run as its own items, <suite file>::<team>::<retriever>::<metric>.",
    )
    overrides: OverridesConfig = Field(
        default_factory=OverridesConfig, description="What override and including files may change."
    )
