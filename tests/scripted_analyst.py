"""A scripted model for the loop's prompts, reading what the prompt shows it: what a small,
literal-minded analyst would answer about the test corpus. Tests override single tasks."""

from __future__ import annotations

import re
from typing import Any

from tests.fake_openai import Chat, FakeOpenAI, Reply

_WORD = re.compile(r"[a-z]{3,}")
_STOP = {"the", "and", "how", "many", "what", "which", "does", "did", "day", "are", "for",
         "with", "they", "their", "this", "that", "from", "into", "why", "who"}


def between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip() if start in text else ""


def line_after(text: str, label: str) -> str:
    match = re.search(rf"^{re.escape(label)}\s*(.+)$", text, re.M)
    return match.group(1).strip() if match else ""


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def understand(chat: Chat) -> Reply:
    question = between(chat.prompt, "<question>", "</question>")
    return {"question_type": "factual", "entities": [], "time_constraint": None,
            "language": "en", "refined_question": question, "scope": "the question only",
            "checklist": [f"a direct answer to: {question}"]}


def plan(chat: Chat) -> Reply:
    return {"queries": [{"text": line_after(chat.prompt, "Question:"), "purpose": "item 1",
                         "sources": ["local"]}]}


def evidence(chat: Chat) -> Reply:
    wanted = words(line_after(chat.prompt, "Question:"))
    scores = []
    for number, text in re.findall(r'<passage number="(\d+)"[^>]*>\n(.*?)\n</passage>',
                                   chat.prompt, re.S):
        facts = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text)
                 if len(words(s) & wanted) >= 2][:2]
        scores.append({"passage": int(number), "relevance": 0.9 if facts else 0.1,
                       "facts": facts, "checklist_items": [1] if facts else []})
    return {"scores": scores}


def reflect(chat: Chat) -> Reply:
    return {"items": [{"item": 1, "status": "satisfied"}], "sufficient": True,
            "confidence": 0.8, "gaps": [], "new_queries": []}


def synthesize(chat: Chat) -> Reply:
    facts = []
    for number, block in re.findall(r"^\[(\d+)\] .*?\nFacts:\n(.*?)\n<excerpt>", chat.prompt,
                                    re.S | re.M):
        facts += [(int(number), f[2:].strip()) for f in block.splitlines()
                  if f.startswith("- ") and "(not summarised)" not in f]
    if not facts:
        return {"summary": "The evidence does not answer the question.", "detail": "",
                "claims": [], "gaps": ["everything"]}
    cited = [(n, f"{fact.rstrip('.')} [{n}].", fact) for n, fact in facts[:4]]
    return {"summary": cited[0][1], "detail": " ".join(c[1] for c in cited[1:]),
            "claims": [{"text": text, "sources": [n], "quote": quote}
                       for n, text, quote in cited], "gaps": []}


def verify(chat: Chat) -> Reply:
    count = len(re.findall(r"^Claim \d+:", chat.prompt, re.M))
    return {"verdicts": [{"claim": n, "verdict": "supported", "reason": "stated"}
                         for n in range(1, count + 1)]}


def compact(chat: Chat) -> Reply:
    firsts: dict[int, str] = {}
    for number, text in re.findall(r"^- \[(\d+)\] (.+)$", chat.prompt, re.M):
        firsts.setdefault(int(number), text)
    return {"facts": [{"text": text, "source": n, "checklist_items": [1]}
                      for n, text in firsts.items()]}


def improve(chat: Chat) -> Reply:
    return {"needs_search": False, "queries": []}


def script(fake: FakeOpenAI) -> FakeOpenAI:
    """Give `fake` the default analyst; tests then override tasks in `fake.script`."""
    defaults: dict[str, Any] = {
        "understand": understand, "plan": plan, "evidence": evidence, "reflect": reflect,
        "synthesize": synthesize, "verify": verify, "compact": compact, "improve": improve,
    }
    fake.script.update(defaults)
    return fake
