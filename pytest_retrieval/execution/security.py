"""Warnings about how a suite talks to its engine, said once in the summary, not per request."""

from __future__ import annotations

from typing import List, Optional

from ..config.load import Suite


def security_warnings(suite: Suite) -> List[str]:
    """Said once in the summary, not per request: certificates not checked, and credentials
    sent in clear text over ``http://`` to a host other than this machine."""
    b = suite.model.backend
    conn = b.connection
    if b.type == "embedded" or conn is None:
        return []
    out: List[str] = []
    if not conn.verify_certs:
        out.append("backend.connection.verify_certs is false: the engine's TLS certificate is not checked")
    has_credentials = bool(conn.password or conn.api_key)
    for host in conn.hosts:
        where = _clear_text_host(host, has_credentials)
        if where is not None:
            out.append(f"credentials are sent in clear text over http:// to {where} (use https://)")
    return out


def _clear_text_host(host: str, has_credentials: bool) -> Optional[str]:
    """``name[:port]`` of ``host`` when credentials go to it over ``http://`` and it is not
    this machine; else None."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(host if "://" in host else f"http://{host}")
        name = parts.hostname or ""
    except ValueError:
        return None
    if parts.scheme != "http" or not (has_credentials or parts.password):
        return None
    if _is_loopback(name):
        return None
    return f"{name}:{parts.port}" if parts.port else name


def _is_loopback(name: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return name in ("localhost",) or name.endswith(".localhost")
