"""The questions ``judge synth`` asks for, and how they are read and screened.

**Prompt** (:data:`GENERATION_PROMPT`, version ``synth-questions-v1``): the pattern of RAGAS's
test-set generation and LlamaIndex's ``generate_question_context_pairs``: N questions a user
might type into a search box that this document answers, self-contained, not copied from
it, one JSON array of strings. A template of your own needs the placeholders ``{document}``
and ``{n}``; its version is ``custom-`` + a hash of its text (as for ``judge llm`` prompts).

**Reading** (:func:`parse_questions`): a JSON array of strings (inside a fenced block too),
else one question per line (list markers ``1.``, ``-``, ``*`` stripped); each on one line,
control and format characters removed. An answer with no question in it is a failure
(``ValueError``), never an empty success.

**Verbatim** (:func:`verbatim`): the longest run of words the question shares with the
document, and the share of the question's word 3-grams found in the document (words after
:func:`~..querytext.normalise`). A question above either limit quotes its document instead of
asking about it (lexical retrievers would find it by the quote alone).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..llm.prompts import PromptTemplate
from ..querytext import normalise

__all__ = ["GENERATION_PROMPT", "GenerationPrompt", "generation_prompt", "parse_questions", "verbatim"]

GENERATION_PROMPT = """\
You write search queries for testing a search engine.

Read the document below and write {n} different questions that a user might type into a \
search box and that this document answers. Each question must make sense on its own \
(do not say "the document", "this study" or "the passage"), must be answerable from the \
document, and must use your own words: do not copy phrases of more than a few words from it.

Document:
{document}

Answer with a JSON array of {n} strings and nothing else."""
GENERATION_VERSION = "synth-questions-v1"


@dataclass(frozen=True)
class GenerationPrompt:
    version: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, document: str, n: int) -> str:
        # str.replace, not str.format: documents are full of braces; {n} first, so a
        # document holding "{n}" keeps it
        return self.text.replace("{n}", str(n)).replace("{document}", document)


class Verbatim(PromptTemplate):
    """What an SDK judge sends for a generation request: the rendered prompt, carried in
    the pair's query slot (so the cache key covers the prompt, the N and the document)."""

    def render(self, query: str, document: str) -> str:
        return query


def generation_prompt(text: Optional[str] = None, version: Optional[str] = None) -> GenerationPrompt:
    """The shipped prompt, or your own ``text`` with ``{document}`` and ``{n}``."""
    if text is None:
        return GenerationPrompt(version or GENERATION_VERSION, GENERATION_PROMPT)
    for ph in ("{document}", "{n}"):
        if ph not in text:
            raise ValueError(f"question prompt template lacks the placeholder {ph}")
    if version is None or version == GENERATION_VERSION:
        version = "custom-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return GenerationPrompt(version, text)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_MARKER = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")


def parse_questions(answer: str) -> List[str]:
    """The questions in a generator's answer (see the module docstring)."""
    if not isinstance(answer, str):
        raise ValueError(f"answer of type {type(answer).__name__} holds no questions")
    body = answer.strip()
    fenced = _FENCE.search(body)
    if fenced:
        body = fenced.group(1).strip()
    questions = _json_questions(body)
    if questions is None:
        questions = [_MARKER.sub("", line).strip().strip('"') for line in body.splitlines()]
    questions = [_clean(q) for q in questions if isinstance(q, str)]
    questions = [q for q in questions if q]
    if not questions:
        raise ValueError(f"answer {answer[:80]!r} holds no question")
    return questions


def _clean(question: str) -> str:
    """One line of plain text: white space collapsed, control and format characters (a NUL,
    a right-to-left override, a zero-width joiner) removed."""
    import unicodedata

    kept = "".join(
        " " if c.isspace() else c
        for c in question
        if unicodedata.category(c) not in ("Cc", "Cf") or c.isspace()
    )
    return " ".join(kept.split())


def _json_questions(body: str) -> Optional[List[str]]:
    start, end = body.find("["), body.rfind("]")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(body[start : end + 1])
    except ValueError:
        return None
    if not isinstance(value, list):
        return None
    return [v for v in value if isinstance(v, str)]


def verbatim(question: str, document: str) -> Tuple[int, float]:
    """(longest run of the question's words found in the document, share of its word
    3-grams found there), on normalised words."""
    q = normalise(question).split()
    d = normalise(document).split()
    if not q or not d:
        return 0, 0.0
    padded = " " + " ".join(d) + " "
    longest = 0
    for i in range(len(q)):
        j = i + longest + 1  # only a longer run can matter
        while j <= len(q) and (" " + " ".join(q[i:j]) + " ") in padded:
            longest = j - i
            j += 1
    grams = {tuple(q[i : i + 3]) for i in range(len(q) - 2)}
    if not grams:
        return longest, 1.0 if longest == len(q) else 0.0
    doc_grams = {tuple(d[i : i + 3]) for i in range(len(d) - 2)}
    return longest, len(grams & doc_grams) / len(grams)
