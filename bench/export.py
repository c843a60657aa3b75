"""Saving an answer as a document: an answer of ~600 words citing 20 references (each with a
byline, a link or file, pages and two quoted passages) written in each format, in this
process. Prints one table: milliseconds per export (median of --runs) and file size.

    .venv/bin/python bench/export.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.answer.export import FORMATS, export_answer
from core.models import (
    Citation,
    Confidence,
    JobStatus,
    Reference,
    ResearchAnswer,
    ResearchResult,
    Source,
)

WORDS = ["the", "harbour", "lantern", "was", "lit", "each", "evening", "while", "the", "ferry",
         "crossed", "the", "estuary", "and", "the", "keepers", "wrote", "down", "the", "tide"]


def answer(references: int = 20) -> ResearchResult:
    sources, refs, citations, sentences = [], [], [], []
    for number in range(1, references + 1):
        source_id = f"s{number}"
        sentence = " ".join(WORDS[(number + k) % len(WORDS)] for k in range(28))
        sources.append(Source(id=source_id, title=f"Report {number} on harbour lights",
                              url=f"https://example.org/reports/{number}",
                              snippet=sentence))
        refs.append(Reference(number=number, source_id=source_id,
                              title=f"Report {number} on harbour lights",
                              where=f"https://example.org/reports/{number}",
                              authors="Ada Keeper, Ben Tide", year="2024",
                              source_ids=[source_id], pages=[number, number + 2]))
        citations += [Citation(claim=sentence, source_id=source_id, quote=sentence),
                      Citation(claim=sentence, source_id=source_id,
                               quote=sentence[::-1].capitalize())]
        sentences.append(f"{sentence.capitalize()} [{number}, p. {number}].")
    return ResearchResult(
        job_id="bench", status=JobStatus.COMPLETED, question="What do the harbour reports "
        "say about the lantern?", answer=ResearchAnswer(
            summary=" ".join(sentences[:5]), detail="\n\n".join(
                " ".join(sentences[i:i + 5]) for i in range(5, references, 5)),
            citations=citations, confidence=Confidence.HIGH,
            limitations=["The reports cover one harbour."]),
        sources=sources, references=refs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    result = answer()
    rows = []
    for kind in FORMATS:
        export_answer(result, kind)  # warm: imports, fonts registered
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            data = export_answer(result, kind)
            times.append((time.perf_counter() - started) * 1000)
        rows.append([kind, f"{statistics.median(times):.1f}", f"{len(data) / 1024:.1f}"])
    header = ["format", "ms (median)", "KB"]
    print(f"answer: {len(result.references)} references, "
          f"{len((result.answer.summary + result.answer.detail).split())} words")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
