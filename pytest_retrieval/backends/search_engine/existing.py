"""Retriever options an existing index cannot take.

BM25's ``k1``/``b`` are the index's similarity settings and stop words are its analyzers'
(both fixed in the index's settings and mapping, not in the query), so on an existing
index (``index.name``) a retriever that sets them would be measured with the index's own
values while the YAML claims others. That is a config error naming the index and what
its settings actually hold (read with ``_settings`` and ``_mapping``), and how to test the
values (a throwaway index, or an index template with them).

Also here: which document ids an existing index (or alias) holds (:func:`held_ids`), read
before the judgments are trusted.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ...errors import ConfigError
from ..base import AnalyzerNotes, BM25Spec
from ..id_field import IdField
from .http import EngineHTTP

__all__ = [
    "check_id_field",
    "check_index_options",
    "existing_count",
    "field_analyzers",
    "held_ids",
    "index_owned_options",
    "refuse_index_options",
    "text_setup",
]

# Lucene's BM25Similarity defaults (the engines' "BM25" similarity without parameters)
_BM25_DEFAULTS = {"k1": "1.2", "b": "0.75"}


def index_owned_options(spec: Any) -> List[str]:
    """The options of ``spec`` that belong to the index: those the suite wrote, or (a spec
    built in Python) those that differ from BM25Spec's defaults."""
    if not isinstance(spec, BM25Spec):
        return []
    if spec.index_options:
        return list(spec.index_options)
    defaults = BM25Spec()
    return [o for o in ("k1", "b", "stopwords", "analyzer") if getattr(spec, o) != getattr(defaults, o)]


def _similarity(settings: Mapping[str, Any], name: str) -> str:
    """'BM25 (k1=1.2, b=0.75)' for the similarity ``name`` of flat index settings."""
    prefix = f"index.similarity.{name}."
    kind = settings.get(prefix + "type", "BM25" if name in ("default", "BM25") else name)
    if str(kind).upper() != "BM25":
        params = {
            k[len(prefix) :]: v for k, v in settings.items() if k.startswith(prefix) and k != prefix + "type"
        }
        return f"{kind}" + (
            f" ({', '.join(f'{k}={v}' for k, v in sorted(params.items()))})" if params else ""
        )
    k1 = settings.get(prefix + "k1", _BM25_DEFAULTS["k1"])
    b = settings.get(prefix + "b", _BM25_DEFAULTS["b"])
    return f"BM25 (k1={k1}, b={b})"


def _analyzer(settings: Mapping[str, Any], name: str) -> str:
    """'english' or 'my_text (custom: tokenizer standard, filter [lowercase, stop])'."""
    prefix = f"index.analysis.analyzer.{name}."
    own = {k[len(prefix) :]: v for k, v in settings.items() if k.startswith(prefix)}
    if not own:
        return name
    shown = ", ".join(f"{k} {v}" for k, v in sorted(own.items()))
    return f"{name} ({shown})"


def _field_mappings(found: Any, fields: List[str]) -> Dict[str, Dict[str, Any]]:
    """field -> its mapping (the first index of an alias that has it)."""
    out: Dict[str, Dict[str, Any]] = {}
    for info in (found or {}).values():
        for field in fields:
            entry = ((info or {}).get("mappings") or {}).get(field)
            if entry and field not in out:
                leaf = field.rsplit(".", 1)[-1]
                out[field] = (entry.get("mapping") or {}).get(leaf) or {}
    return out


def field_analyzers(http: EngineHTTP, index: str, fields: List[str]) -> Dict[str, str]:
    """field -> the analyzer its mapping names (the index's ``default``, else ``standard``, when
    it names none): what an existing index analyses each searched field with."""
    settings_by_index = http.request(
        "GET",
        f"/{index}/_settings",
        params={"flat_settings": "true"},
        what=f"reading the settings of {index!r}",
    )
    first: Tuple[str, Any] = next(iter(sorted((settings_by_index or {}).items())), (index, {}))
    settings: Mapping[str, Any] = (first[1] or {}).get("settings") or {}
    found = http.request(
        "GET", f"/{index}/_mapping/field/{','.join(fields)}", what=f"reading the mapping of {index!r}"
    )
    mappings = _field_mappings(found, fields)
    default = "default" if "index.analysis.analyzer.default.type" in settings else "standard"
    return {f: str(mappings.get(f, {}).get("analyzer", default)) for f in fields}


def check_index_options(
    http: EngineHTTP, index: str, spec: Any, existing: Optional[str], notes: AnalyzerNotes
) -> None:
    """An existing index: refuse the options it holds otherwise (:func:`refuse_index_options`).
    Either: note the analyzer of each field a BM25 spec searches, for the summary (read from an
    existing index's mapping, once per field; the suite's names on a throwaway index)."""
    if existing:
        refuse_index_options(http, index, spec)
    if not isinstance(spec, BM25Spec):
        return
    fields = [f for f, _b in spec.fields if "*" not in f]
    if existing:
        new = [f for f in fields if f not in notes.by_field]
        found = field_analyzers(http, index, new) if new else {}
    else:
        found = {f: spec.analyzer_of(f) for f in fields}
    for field, name in found.items():
        notes.add(field, name)


def text_setup(http: EngineHTTP, index: str, fields: List[str]) -> Tuple[str, List[str]]:
    """(the index's concrete name, one line per field: its similarity and analyzer)."""
    settings_by_index = http.request(
        "GET",
        f"/{index}/_settings",
        params={"flat_settings": "true"},
        what=f"reading the settings of {index!r}",
    )
    first: Tuple[str, Any] = next(iter(sorted((settings_by_index or {}).items())), (index, {}))
    concrete = first[0]
    settings: Mapping[str, Any] = (first[1] or {}).get("settings") or {}
    found = http.request(
        "GET", f"/{index}/_mapping/field/{','.join(fields)}", what=f"reading the mapping of {index!r}"
    )
    mappings = _field_mappings(found, fields)
    lines = []
    for field in fields:
        mapping = mappings.get(field, {})
        default_analyzer = "default" if "index.analysis.analyzer.default.type" in settings else "standard"
        analyzer = mapping.get("analyzer", default_analyzer)
        search_analyzer = mapping.get("search_analyzer")
        text = (
            f"{field}: similarity {_similarity(settings, mapping.get('similarity', 'default'))}, "
            f"analyzer {_analyzer(settings, analyzer)}"
        )
        if search_analyzer and search_analyzer != analyzer:
            text += f", search_analyzer {_analyzer(settings, search_analyzer)}"
        lines.append(text)
    return concrete, lines


def refuse_index_options(http: EngineHTTP, index: str, spec: Any) -> None:
    """A ConfigError when ``spec`` sets options the existing ``index`` holds in its settings."""
    options = index_owned_options(spec)
    if not options:
        return
    fields = [name for name, _boost in spec.fields if "*" not in name]
    if "analyzer" in options and all(
        held == spec.analyzer_of(f) for f, held in field_analyzers(http, index, fields).items()
    ):
        options.remove("analyzer")  # the index holds the analyzers the suite names: nothing to refuse
    if not options:
        return
    concrete, lines = text_setup(http, index, fields)
    wanted = ", ".join(
        f"{o}: {dict(spec.analyzer) if o == 'analyzer' else getattr(spec, o)}" for o in options
    )
    where = f"{index!r}" + (f" (index {concrete!r})" if concrete != index else "")
    raise ConfigError(
        f"a bm25 retriever sets {wanted}, but BM25 parameters, stop words and analyzers belong to the "
        f"index's settings and mapping, not to the query: on the existing index {where} it would "
        f"be measured with what the index holds ({'; '.join(lines) or 'no such fields'}). "
        "Remove these keys to measure the index as it is, or test them on a throwaway index "
        "(leave out index.name and give judgments.corpus; index.settings/mappings shape it) or "
        "on a copy of the index made from an index template with these settings",
        key="retrievers",
    )


def held_ids(
    http: EngineHTTP, index: str, doc_ids: Sequence[str], batch: int, id_field: Optional[str] = None
) -> Set[str]:
    """Which of ``doc_ids`` the index (or alias) holds: batched read-only ``ids`` queries
    (an ``ids`` query, unlike ``_mget``, also answers on an alias over several indexes), or
    ``terms`` queries on ``id_field`` when the judgments' ids are that field's values."""
    unique = list(dict.fromkeys(doc_ids))
    found: Set[str] = set()
    for i in range(0, len(unique), batch):
        part = unique[i : i + batch]
        if id_field is None:
            resp = http.request(
                "POST",
                f"/{index}/_search",
                params={"filter_path": "hits.hits._id"},
                body={"query": {"ids": {"values": part}}, "size": len(part), "_source": False},
                what="document id check",
            )
            found.update(str(h["_id"]) for h in (resp.get("hits") or {}).get("hits", []))
            continue
        reader = IdField(id_field)
        resp = http.request(
            "POST",
            f"/{index}/_search",
            body=reader.request({"query": {"terms": {id_field: part}}, "size": len(part) * 2}),
            what=f"document id check (id field {id_field!r})",
        )
        for hit in (resp.get("hits") or {}).get("hits", []):
            found.add(reader.of_hit(hit, "the document id check"))
    return found


# mapping types whose values a terms query matches whole (a text field is analysed into words)
_EXACT_TYPES = frozenset(
    {"keyword", "constant_keyword", "wildcard", "long", "integer", "short", "byte", "unsigned_long"}
)


def existing_count(http: EngineHTTP, index: str, id_field: Optional[str]) -> int:
    """The documents of an existing index (or alias), with its ``id_field`` checked."""
    from .index import count_docs

    count = count_docs(http, index, missing_hint=True)
    if id_field is not None:
        check_id_field(http, index, id_field)
    return count


def check_id_field(http: EngineHTTP, index: str, field: str) -> None:
    """``index.id_field`` of an existing index is a field its mapping has, of a type whose
    values are matched whole (keyword or an integer); a ConfigError names what it is."""
    found = http.request("GET", f"/{index}/_mapping/field/{field}", what=f"reading the mapping of {field!r}")
    mapping = _field_mappings(found, [field]).get(field)
    if mapping is None:
        raise ConfigError(
            f"the existing index {index!r} has no field {field!r} to read the judgments' ids from",
            key="backend.index.id_field",
        )
    kind = str(mapping.get("type", "object"))
    if kind not in _EXACT_TYPES:
        raise ConfigError(
            f"field {field!r} of the existing index {index!r} is {kind}: the "
            "judgments' ids need a field whose values are matched whole (keyword or an integer; "
            f"for a text field with a keyword sub-field, name it: {field}.keyword)",
            key="backend.index.id_field",
        )
