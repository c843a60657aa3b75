"""Checks the hand-written evaluation data under bench/data (run: python bench/data/validate.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = {"bridge", "comparison"}


def _fail(problems: list[str], where: str, message: str) -> None:
    problems.append(f"{where}: {message}")


def check_multihop(path: Path, problems: list[str], all_text: list[str]) -> tuple[int, int, int]:
    data = json.loads(path.read_text())
    for key in ("part", "split", "paragraphs", "questions", "absent"):
        if key not in data:
            _fail(problems, path.name, f"missing key {key!r}")
            return 0, 0, 0
    if data["split"] not in ("dev", "heldout"):
        _fail(problems, path.name, "split must be dev or heldout")
    paragraphs = {p["id"]: p for p in data["paragraphs"]}
    if len(paragraphs) != len(data["paragraphs"]):
        _fail(problems, path.name, "duplicate paragraph ids")
    for p in data["paragraphs"]:
        words = len(p["text"].split())
        if not 35 <= words <= 160:
            _fail(problems, p["id"], f"{words} words (want 35-160)")
        if not p.get("title"):
            _fail(problems, p["id"], "no title")
        all_text.append(p["title"] + " " + p["text"])
    for q in data["questions"]:
        where = q.get("id", "?")
        if q.get("type") not in KINDS:
            _fail(problems, where, f"type must be one of {sorted(KINDS)}")
        gold = q.get("gold", [])
        if len(gold) != 2 or any(g not in paragraphs for g in gold):
            _fail(problems, where, f"gold must be two known paragraph ids, got {gold}")
            continue
        answer = q.get("answer", "")
        if not answer or not any(answer in paragraphs[g]["text"] for g in gold):
            _fail(problems, where, f"answer {answer!r} not verbatim in a gold paragraph")
        if not q.get("question", "").endswith("?"):
            _fail(problems, where, "question must end with '?'")
    return len(data["paragraphs"]), len(data["questions"]), len(data.get("absent", []))


def check_absent(paths: list[Path], problems: list[str], all_text: list[str]) -> None:
    corpus = "\n".join(all_text).casefold()
    for path in paths:
        for a in json.loads(path.read_text())["absent"]:
            entity = a.get("entity", "")
            if not entity or entity.casefold() not in a.get("question", "").casefold():
                _fail(problems, a.get("id", "?"), "entity must appear in the question")
            elif entity.casefold() in corpus:
                _fail(problems, a.get("id", "?"), f"entity {entity!r} appears in the corpus")


def check_pairs(path: Path, problems: list[str]) -> tuple[int, int]:
    pairs = json.loads(path.read_text())
    same = sum(1 for p in pairs if p["same"])
    for n, p in enumerate(pairs):
        for key in ("a", "b", "same", "kind", "domain"):
            if key not in p:
                _fail(problems, f"{path.name}[{n}]", f"missing {key!r}")
        if p.get("a", "").strip().casefold() == p.get("b", "").strip().casefold():
            _fail(problems, f"{path.name}[{n}]", "a and b are identical")
    return same, len(pairs) - same


def main() -> int:
    problems: list[str] = []
    all_text: list[str] = []
    parts = sorted((HERE / "multihop").glob("*.json"))
    for path in parts:
        counts = check_multihop(path, problems, all_text)
        print(f"{path.name}: {counts[0]} paragraphs, {counts[1]} questions, {counts[2]} absent")
    check_absent(parts, problems, all_text)
    for path in sorted(HERE.glob("cache_pairs_*.json")):
        same, near = check_pairs(path, problems)
        print(f"{path.name}: {same} paraphrase pairs, {near} near-miss pairs")
    for problem in problems:
        print("PROBLEM", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
