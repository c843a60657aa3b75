"""Conflict detection on labelled passage pairs, and its false alarms on real Wikipedia text.

    .venv/bin/python bench/conflicts.py [--data DIR] [--show]

Labelled pairs (bench/data/conflict_pairs_*.json, hand-written, varied domains): two passages
that give different values for one thing (a year, a date, an amount, a name), or that agree,
among them the hard cases (the same value written differently, units, rounding and hedges,
another attribute, another entity of a similar name, another census, a release elsewhere).
A pair counts as flagged when core.answer.conflicts finds any disagreement between them. The
dev pairs were tuned on (the parsing bugs they showed were fixed); the heldout pairs were
written before that and never tuned on.

Real text: the HotpotQA paragraphs (../shared/data/hotpotqa): each question's two gold
paragraphs, each block of ten paragraphs retrieved together (a question's gold and
distractor paragraphs, many about namesakes), and the whole corpus at once; and the
Wikipedia-style paragraphs of the multihop set (bench/data/multihop), at once; and, since
separate articles seldom state the same attribute of the same subject, each paragraph's
sentences as passages of their own (a paragraph that says its subject's year twice, in other
words). Wikipedia rarely contradicts itself, so what fires there is mostly false alarms; each
is printed to be read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.tables import table  # noqa: E402
from core.answer.conflicts import (  # noqa: E402
    Disagreement,
    Passage,
    claims_in,
    disagreements,
    name_words,
)
from core.text import sentences  # noqa: E402

PAIRS = {"dev (tuned on)": HERE / "data" / "conflict_pairs_dev.json",
         "heldout (never tuned on)": HERE / "data" / "conflict_pairs_heldout.json"}
HOTPOTQA = HERE.parent.parent / "shared" / "data" / "hotpotqa"
BLOCK = 10  # the corpus lists each question's ten paragraphs together


def labelled(show: bool) -> None:
    rows: list[list[object]] = []
    for name, path in PAIRS.items():
        pairs = json.loads(path.read_text())
        outcome: Counter[str] = Counter()
        for n, pair in enumerate(pairs):
            found = disagreements([Passage("a", **pair["a"]), Passage("b", **pair["b"])])
            cell = ("t" if bool(found) == pair["conflict"] else "f") + ("p" if found else "n")
            outcome[cell] += 1
            if show and cell in ("fp", "fn"):
                print(f"{cell.upper()} {path.name} #{n} {pair['kind']}: "
                      f"{_said(found) or pair['a']['text']}")
        rows.append([name, sum(p["conflict"] for p in pairs), *_scores(outcome)])
    table("Conflict detection on labelled passage pairs",
          ["set", "conflicting", "pairs", "TP", "FP", "FN", "TN", "precision", "recall"], rows)


def _scores(counts: Counter[str]) -> list[object]:
    tp, fp, fn, tn = counts["tp"], counts["fp"], counts["fn"], counts["tn"]
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    return [tp + fp + fn + tn, tp, fp, fn, tn, precision, recall]


def real_text(data: Path) -> None:
    corpus = {row["id"]: row for row in map(json.loads, (data / "corpus.jsonl").open())}
    questions = [json.loads(line) for line in (data / "questions_dev.jsonl").open()]
    passages = {i: Passage(i, row["title"], row["text"]) for i, row in corpus.items()}
    ids = list(corpus)
    started = time.perf_counter()
    sets: dict[str, list[list[Passage]]] = {
        "gold pairs (dev questions)": [[passages[i] for i in q["gold_paragraphs"]]
                                       for q in questions],
        f"blocks of {BLOCK} retrieved paragraphs": [
            [passages[i] for i in ids[at:at + BLOCK]] for at in range(0, len(ids), BLOCK)],
        "the whole corpus at once": [list(passages.values())],
    }
    multihop = [Passage(row["id"], row["title"], row["text"])
                for path in sorted((HERE / "data" / "multihop").glob("*.json"))
                for row in json.loads(path.read_text())["paragraphs"]]
    sets["the multihop set's paragraphs at once"] = [multihop]
    # each sentence its own passage: what one paragraph says twice of its subject, in other
    # words, is the same thing stated twice, and a paragraph rarely contradicts itself
    sets["sentences of one paragraph (both sets)"] = [
        said for p in [*passages.values(), *multihop]
        if len(said := [Passage(f"{p.key}#{n}", p.title, s)
                        for n, s in enumerate(sentences(p.text))]) > 1]
    rows: list[list[object]] = []
    for name, groups in sets.items():
        fired = [found for group in groups if (found := disagreements(group))]
        rows.append([name, len(groups), sum(len(g) for g in groups), _compared(groups),
                     len(fired), sum(len(f) for f in fired)])
        for found in fired:
            print(f"fired on {name}: {_said(found)}")
    claims = sum(len(claims_in(p)) for p in passages.values())
    table(f"Firings on real Wikipedia paragraphs ({len(corpus)} HotpotQA paragraphs, {claims} "
          f"claims read; {time.perf_counter() - started:.0f} s)",
          ["set", "groups", "passages", "things two passages state", "groups flagged",
           "disagreements"], rows)


def _compared(groups: list[list[Passage]]) -> int:
    """How many things (a subject's attribute) two passages of a group both give a value
    for: the chances the detector had to fire."""
    total = 0
    for group in groups:
        said: dict[tuple[str, ...], set[str]] = {}
        for passage in group:
            for claim in claims_in(passage):
                thing = (claim.attribute.name, claim.condition, claim.sense,
                         *name_words(claim.subject))
                said.setdefault(thing, set()).add(passage.key)
        total += sum(1 for keys in said.values() if len(keys) > 1)
    return total


def _said(found: list[Disagreement]) -> str:
    return "; ".join(f"{d.disputed}: " + " vs ".join(f"{v} {list(k)}" for v, k in d.values)
                     for d in found)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HOTPOTQA,
                        help="the HotpotQA folder (corpus.jsonl, questions_dev.jsonl)")
    parser.add_argument("--show", action="store_true",
                        help="print each labelled pair flagged wrongly or missed")
    args = parser.parse_args(argv)
    labelled(args.show)
    if (args.data / "corpus.jsonl").exists():
        real_text(args.data)
    else:
        print(f"\n(no HotpotQA data at {args.data}: real-text firings not measured)")


if __name__ == "__main__":
    main()
