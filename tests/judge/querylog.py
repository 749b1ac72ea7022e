"""A generated query log for the sampling tests and the benchmark: Zipf-distributed queries
taken from a real query set (SciFact or NFCorpus), written in the spellings people type
(case, punctuation, extra spaces, full-width letters), some carrying PII, over locales,
users and a month of timestamps."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import List, Sequence

PII = ["mail me at jane.doe@example.org", "call +44 20 7946 0958", "order 88812345"]


def variants(text: str) -> List[str]:
    full = "".join(chr(ord(c) + 0xFEE0) if "a" <= c <= "z" else c for c in text[:3]) + text[3:]
    return [text, text.upper(), text.lower() + "?", "  " + text.replace(" ", "  "), full]


def write_log(path: Path, base: Sequence[str], rows: int, seed: int = 0, pii_share: float = 0.01) -> None:
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(base))]  # Zipf, s = 1
    picks = rng.choices(range(len(base)), weights=weights, k=rows)
    locales = ["en", "de", "fr"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["query", "count", "timestamp", "user", "locale"])
        for n, i in enumerate(picks):
            text = rng.choice(variants(base[i]))
            if rng.random() < pii_share:
                text = f"{base[i]} {rng.choice(PII)}"
            day = 1 + n * 30 // rows
            w.writerow(
                [
                    text,
                    1 + (n % 3 == 0),
                    f"2026-10-{day:02d}T12:00:00Z",
                    f"u{rng.randrange(500)}",
                    locales[i % 3],
                ]
            )


def real_queries(shared: Path, name: str = "nfcorpus") -> List[str]:
    with open(shared / "data" / name / "queries.jsonl", encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh]
