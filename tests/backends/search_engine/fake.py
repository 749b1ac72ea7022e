"""A fake engine for the search-engine parts: answers requests from a table of handlers and
records every request, so the shared logic is tested without Elasticsearch or OpenSearch."""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from pytest_retrieval.backends.search_engine.http import ConnectionSettings, EngineHTTP

Handler = Callable[[str, str, Optional[Mapping[str, Any]], Any], Any]


class FakeEngine:
    def __init__(self, routes: Optional[Dict[Tuple[str, str], Any]] = None):
        self.routes: Dict[Tuple[str, str], Any] = dict(routes or {})
        self.calls: List[Tuple[str, str, Dict[str, Any], Any]] = []

    def send(
        self, method: str, path: str, params: Optional[Mapping[str, Any]], body: Any, ndjson: bool
    ) -> Any:
        self.calls.append((method, path, dict(params or {}), body))
        for (m, pattern), answer in self.routes.items():
            if m == method and re.fullmatch(pattern, path):
                if isinstance(answer, BaseException):
                    raise answer
                return answer(method, path, params, body) if callable(answer) else answer
        raise AssertionError(f"unexpected request {method} {path}")

    def paths(self, method: Optional[str] = None) -> List[str]:
        return [p for m, p, _, _ in self.calls if method is None or m == method]


def engine_http(engine: FakeEngine, connection: Optional[Mapping[str, Any]] = None) -> EngineHTTP:
    return EngineHTTP("fake", ConnectionSettings(connection), engine.send)
