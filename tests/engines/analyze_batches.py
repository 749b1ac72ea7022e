"""Many texts through an engine's ``_analyze`` in a few requests, for the token agreement tests
and ``benchmarks/language_agreement.py``.

``_analyze`` takes an array of texts and answers one token list with offsets running on across
them: each text starts where the last ended plus the analyzer's offset gap, 1
(``TransportAnalyzeAction``: ``lastOffset += offset.endOffset() + analyzer.getOffsetGap(field)``,
the end offset after ``end()`` being the text's length in UTF-16 units). So the tokens are given
back to their texts by start offset."""

from __future__ import annotations

import bisect
import json
import urllib.request
from typing import List, Sequence

__all__ = ["engine_tokens", "xquad_texts"]


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def engine_tokens(url: str, analyzer: str, texts: Sequence[str], batch: int = 250) -> List[List[str]]:
    """The engine's terms of each text under the built-in ``analyzer``."""
    out: List[List[str]] = []
    for i in range(0, len(texts), batch):
        part = list(texts[i : i + batch])
        body = json.dumps({"analyzer": analyzer, "text": part}).encode("utf-8")
        req = urllib.request.Request(
            f"{url}/_analyze", data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        with urllib.request.urlopen(req, timeout=120) as resp:
            tokens = json.loads(resp.read())["tokens"]
        starts, base = [], 0
        for text in part:
            starts.append(base)
            base += _utf16_len(text) + 1
        terms: List[List[str]] = [[] for _ in part]
        for token in tokens:
            terms[bisect.bisect_right(starts, token["start_offset"]) - 1].append(token["token"])
        out.extend(terms)
    return out


def xquad_texts(lang_dir) -> List[str]:
    """Every corpus sentence (title and text) and query of one XQuAD-R language, in file order."""
    texts: List[str] = []
    titles = set()
    with open(lang_dir / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            texts.append(doc["text"])
            titles.add(doc.get("title") or "")
    texts.extend(sorted(t for t in titles if t))
    with open(lang_dir / "queries.jsonl", encoding="utf-8") as f:
        texts.extend(json.loads(line)["text"] for line in f)
    return texts
