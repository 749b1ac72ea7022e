"""The judge's prompt, versioned.

The shipped prompt (:data:`PROMPTS`, default :data:`DEFAULT_PROMPT_VERSION`) is the UMBRELA
0-3 scale (Upadhyay et al., 2024, after Thomas et al., 2023), asking for the integer only.
A custom template (placeholders ``{query}`` and ``{document}``) gets its own version
string, by default ``custom-`` + a hash of its text, so its answers never mix with another
prompt's in the cache.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Dict, Optional

__all__ = ["DEFAULT_PROMPT_VERSION", "PROMPTS", "PromptTemplate", "prompt_template"]

_UMBRELA_INT_V1 = """\
Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following meanings:
0 = represents that the passage has nothing to do with the query,
1 = represents that the passage seems related to the query but does not answer it,
2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden amongst extraneous information and
3 = represents that the passage is dedicated to the query and contains the exact answer.

Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, category 2 if passage presents something very important related to the entire topic but also has some extra information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies give it category 0.

Query: {query}
Passage: {document}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score (O).
Do not explain. Answer with the final score only: a single integer 0, 1, 2 or 3 and nothing else."""

PROMPTS: Dict[str, str] = {"umbrela-int-v1": _UMBRELA_INT_V1}
DEFAULT_PROMPT_VERSION = "umbrela-int-v1"


@dataclass(frozen=True)
class PromptTemplate:
    version: str
    text: str

    def render(self, query: str, document: str) -> str:
        # str.replace, not str.format: documents are full of braces
        return self.text.replace("{query}", query).replace("{document}", document)


def prompt_template(version: Optional[str] = None, text: Optional[str] = None) -> PromptTemplate:
    """A shipped template by version, or your own ``text`` (version defaults to a hash)."""
    if text is not None:
        for ph in ("{query}", "{document}"):
            if ph not in text:
                raise ValueError(f"prompt template lacks the placeholder {ph}")
        if version is None or version in PROMPTS and PROMPTS[version] != text:
            version = "custom-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
        return PromptTemplate(version, text)
    version = version or DEFAULT_PROMPT_VERSION
    if version not in PROMPTS:
        raise ValueError(
            f"unknown prompt version {version!r} (shipped: {', '.join(PROMPTS)}; "
            f"give your own template file for others)"
        )
    return PromptTemplate(version, PROMPTS[version])
