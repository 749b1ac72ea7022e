"""Stamps and reaping of throwaway indices: ``_meta.created_by`` and friends on every index
(and OpenSearch search pipeline) this plugin creates, and the deletion of the stale ones of
crashed runs (older than ``reap_after_hours``, or whose creator process on this host is
gone). Anything without the stamp is never touched."""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from .http import EngineHTTP, EngineHTTPError

log = logging.getLogger("pytest_retrieval.backends")

__all__ = ["INDEX_PREFIX", "META_CREATOR", "creation_meta", "is_stale", "pid_alive", "reap_indices"]

INDEX_PREFIX = "pytest-retrieval-"
META_CREATOR = "pytest-retrieval"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, ValueError, OverflowError):
        return False
    return True


# --------------------------------------------------------------------------- stamps and reaping


def creation_meta(suite_slug: str) -> Dict[str, Any]:
    """The ``_meta`` stamp of what this plugin creates (indices, search pipelines)."""
    from ... import __version__

    return {
        "created_by": META_CREATOR,
        "plugin_version": __version__,
        "suite": suite_slug,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "created_at": time.time(),
    }


def _number(value: Any, kind: Callable[[Any], Any]) -> Any:
    try:
        return kind(value)
    except (TypeError, ValueError):
        return None


def is_stale(meta: Mapping[str, Any], now: float, reap_after_s: float) -> Optional[str]:
    """Why a stamped leftover may be deleted (too old, or its creator on this host is
    gone); None when it may not, or it is not ours."""
    if not isinstance(meta, Mapping) or meta.get("created_by") != META_CREATOR:
        return None
    created = _number(meta.get("created_at"), float)
    if created is None:
        return None
    if now - created > reap_after_s:
        return f"created {(now - created) / 3600:.1f} h ago"
    pid = _number(meta.get("pid"), int)
    if pid is None:
        return None
    if meta.get("host") == socket.gethostname() and pid != os.getpid() and not pid_alive(pid):
        return f"its creator (pid {pid} on this host) is gone"
    return None


def _stale_indices(
    mappings: Mapping[str, Any], now: float, reap_after_s: float, keep: Optional[str]
) -> Iterator[Tuple[str, str]]:
    """``(name, why)`` of the stale throwaway indices in a ``_mapping`` answer, by name."""
    for name, info in sorted(mappings.items()):
        if name == keep or not name.startswith(INDEX_PREFIX):
            continue
        meta = ((info or {}).get("mappings") or {}).get("_meta") or {}
        why = is_stale(meta, now, reap_after_s)
        if why is not None:
            yield name, why


def reap_indices(http: EngineHTTP, reap_after_s: float, keep: Optional[str] = None) -> List[str]:
    """Delete throwaway indices of crashed runs; returns the names deleted.

    Only ``pytest-retrieval-*`` indices whose ``_meta.created_by`` is this plugin's, and
    only when they are older than ``reap_after_hours`` or their creator process (on this
    host) is dead. Anything else, e.g. an index of the same prefix without the stamp, is
    left alone."""
    found = http.request(
        "GET",
        f"/{INDEX_PREFIX}*/_mapping",
        params={"expand_wildcards": "open,closed", "allow_no_indices": "true"},
        what="listing leftover throwaway indices",
        ok_status=(401, 403),
    )
    if isinstance(found, EngineHTTPError):  # not allowed to look: nothing to reap, not an error
        log.warning(
            "%s: cannot list %s* indices to reap leftovers (HTTP %s)", http.name, INDEX_PREFIX, found.status
        )
        return []
    reaped: List[str] = []
    for name, why in _stale_indices(found or {}, time.time(), reap_after_s, keep):
        resp = http.request("DELETE", f"/{name}", what=f"reaping index {name!r}", ok_status=(404,))
        if not isinstance(resp, EngineHTTPError):
            log.warning("%s: deleted leftover index %s (%s)", http.name, name, why)
            reaped.append(name)
    return reaped
