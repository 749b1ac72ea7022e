"""Synthetic query sets (``judge synth``): sampled documents, LLM-written questions, a second
judge's check, and the counts of every drop. One module per step: :mod:`.documents` (which
documents), :mod:`.questions` (prompt, reading, verbatim screen), :mod:`.run` (the steps),
:mod:`.output` (the files)."""

from __future__ import annotations

from .documents import DocSample, SourceDoc, sample_documents
from .output import provenance, write_synth
from .questions import (
    GENERATION_PROMPT,
    GenerationPrompt,
    Verbatim,
    generation_prompt,
    parse_questions,
    verbatim,
)
from .run import DROP_REASONS, SYNTHETIC_TAG, Asking, SynthResult, SynthSpec, synthesize

__all__ = [
    "DROP_REASONS",
    "GENERATION_PROMPT",
    "SYNTHETIC_TAG",
    "Asking",
    "DocSample",
    "GenerationPrompt",
    "SourceDoc",
    "SynthResult",
    "SynthSpec",
    "Verbatim",
    "generation_prompt",
    "parse_questions",
    "provenance",
    "sample_documents",
    "synthesize",
    "verbatim",
    "write_synth",
]
