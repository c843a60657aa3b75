"""A plausible but flawed model for the FakeOpenAI server.

It answers every prompt of the loop from the passages the prompt shows it, like
tests.support.scripted_analyst, and at a given fault rate (seeded) makes the mistakes real models
make. Writing the answer, each sentence it takes from a passage may come with one fault:

- "invented": a true-sounding sentence found in no passage is added after it (a fact from
  general knowledge, a passage's sentence with a number changed, or with a name swapped),
  cited like the rest, and listed in `claims` with a quote that is either a real sentence of
  the passage or the invented sentence itself;
- "cite99": its citation is [99], a source that does not exist;
- "unlisted": it is left out of `claims`;
- "uncited": it carries no citation.

Some true sentences are paraphrased: attributed ("According to the sources, ...") or reworded
with words the passage does not use; their quote stays the passage's words. Some replies have
no `claims` at all. Judging sentences, it knows which ones it invented (as an honest
judge would see), then flips the verdict at `verifier_error`; some replies have no usable
`verdicts`. Asked where a source states a sentence, it points to the passage's closest
sentence whenever it takes the sentence to be supported (flipped at the same rate).

Every sentence it writes is recorded in `written`, so a test can count which invented ones
reach the final answer.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.support.fake_openai import Chat, FakeOpenAI, Reply
from tests.support.scripted_analyst import (
    claims_shown,
    closest,
    compact,
    improve,
    line_after,
    plan,
    reflect,
    understand,
    words,
)

Fault = Literal["", "invented", "cite99", "unlisted", "uncited"]
FAULTS: tuple[Fault, ...] = ("invented", "cite99", "unlisted", "uncited")

_GENERAL_KNOWLEDGE = {
    "cat": ["Cats have a third eyelid called the nictitating membrane.",
            "A group of cats is called a clowder.",
            "Most cats can rotate their ears through 180 degrees.",
            "Cats spend up to a third of their waking hours grooming."],
    "tea": ["Tea is the most widely consumed drink in the world after water.",
            "White tea is made from the youngest leaves and buds of the plant.",
            "Oolong tea is only partly oxidised."],
    "volcano": ["Mount Etna is the most active volcano in Europe.",
                "Volcanic ash can travel thousands of kilometres in the atmosphere.",
                "About 1,350 potentially active volcanoes exist worldwide."],
    "erupt": ["The eruption of Vesuvius was described in letters by Pliny the Younger.",
              "Pyroclastic flows can move faster than 100 kilometres an hour."],
    "bread": ["Sourdough starters can be kept alive for decades.",
              "Bread flour contains more protein than cake flour.",
              "Steam in the oven lets the crust expand before it sets."],
    "planet": ["Saturn has more known moons than any other planet.",
               "A day on Jupiter lasts about ten hours."],
}
_GENERIC = ["Scientists have studied this question for more than a century.",
            "The topic is covered in most introductory textbooks."]
_SWAPS = {"cats": "dogs", "Cats": "Dogs", "kittens": "puppies", "Kittens": "Puppies",
          "Black": "White", "black": "white", "green": "yellow", "Vesuvius": "Etna",
          "Pompeii": "Herculaneum", "wild yeast": "baker's yeast", "lactic": "citric",
          "Jupiter": "Saturn", "Sun": "Moon", "carnivores": "omnivores",
          "taurine": "glucose", "dawn": "noon", "darker": "lighter", "sour": "sweet",
          "meat": "grain", "Roman": "Greek", "ash": "mud", "covered": "open",
          "Camellia sinensis": "Camellia japonica"}
_ATTRIBUTIONS = ("According to the sources, {}", "Notably, {}", "It is reported that {}")
_REWORDINGS = {" a day": " daily", "between 12 and 16": "12 to 16", "erupted": "blew up",
               "buried": "covered", "come from": "are made from", "need": "require",
               "most active": "busiest", "fully oxidised": "completely oxidised",
               "about": "roughly", "happen": "occur", "rises": "grows", "produce": "make",
               "Bake": "Cook", "carnivorous": "meat-eating", "kept": "owned"}


@dataclass
class Written:
    """One sentence the model wrote: its words (no citation), and what is wrong with it."""

    text: str
    invented: bool
    fault: Fault = ""


@dataclass
class FlawedModel:
    fault_rate: float
    verifier_error: float = 0.0
    seed: int = 0
    paraphrase_rate: float = 0.25
    missing_claims_rate: float | None = None  # default: half the fault rate
    missing_verdicts_rate: float | None = None  # default: half the fault rate
    written: list[Written] = field(default_factory=list)
    verdicts_missing: int = 0  # verify replies without usable verdicts

    def install(self, fake: FakeOpenAI) -> FakeOpenAI:
        fake.script.update({
            "understand": understand, "plan": plan, "evidence": self.evidence,
            "reflect": reflect, "synthesize": self.synthesize, "verify": self.verify,
            "confirm": self.confirm, "compact": compact, "improve": improve})
        return fake

    @property
    def invented(self) -> list[str]:
        return [w.text for w in self.written if w.invented]

    def _random(self, chat: Chat) -> random.Random:
        """Decisions seeded by the request itself: the same whatever order calls arrive in
        (and wherever the corpus lies: paths are left out)."""
        asked = [re.sub(r"\S*/\S*", "", m["content"]) for m in chat.messages]
        digest = hashlib.sha256(repr((self.seed, asked)).encode()).hexdigest()
        return random.Random(digest)

    def evidence(self, chat: Chat) -> Reply:
        prompt = _asked(chat)
        wanted = words(line_after(prompt, "Question:"))
        need = min(2, len(wanted)) or 1
        scores = []
        for number, text in re.findall(r'<passage number="(\d+)"[^>]*>\n(.*?)\n</passage>',
                                       prompt, re.S):
            facts = [s for s in _sentences(text) if len(words(s) & wanted) >= need][:3]
            scores.append({"passage": int(number), "relevance": 0.9 if facts else 0.1,
                           "facts": facts, "checklist_items": [1] if facts else []})
        return {"scores": scores}

    def synthesize(self, chat: Chat) -> Reply:
        rng = self._random(chat)
        prompt = _asked(chat)
        wanted = words(line_after(prompt, "Question:"))
        facts: list[tuple[int, str]] = []
        for number, block, excerpt in re.findall(
                r"^\[(\d+)\] .*?\nFacts:\n(.*?)\n<excerpt>\n(.*?)\n</excerpt>", prompt,
                re.S | re.M):
            listed = [f[2:].strip() for f in block.splitlines()
                      if f.startswith("- ") and "(not summarised)" not in f]
            listed += [s for s in _sentences(excerpt) if words(s) & wanted]
            facts += [(int(number), fact) for fact in dict.fromkeys(listed)
                      if fact not in [f for _, f in facts]]
        if not facts:
            return {"summary": "The sources do not answer the question.", "detail": "",
                    "claims": [], "gaps": ["everything"]}
        sentences: list[str] = []
        claims: list[dict[str, Any]] = []
        for number, fact in facts[:6]:
            fault: Fault = rng.choice(FAULTS) if rng.random() < self.fault_rate else ""
            text = fact
            if rng.random() < self.paraphrase_rate:
                text = _paraphrase(rng, fact)
            marker = {"cite99": " [99]", "uncited": ""}.get(fault, f" [{number}]")
            sentences.append(_cite(text, marker))
            self.written.append(Written(_plain(text), False, fault if fault != "invented"
                                        else ""))
            if fault not in ("unlisted", "uncited"):
                claims.append({"text": sentences[-1], "quote": fact,
                               "sources": [99 if fault == "cite99" else number]})
            if fault == "invented":
                made_up = self._invent(rng, fact, prompt)
                sentences.append(_cite(made_up, f" [{number}]"))
                self.written.append(Written(_plain(made_up), True, "invented"))
                claims.append({"text": sentences[-1], "sources": [number],
                               "quote": fact if rng.random() < 0.5 else made_up})
        reply: dict[str, Any] = {"summary": sentences[0], "detail": _layout(sentences[1:]),
                                 "gaps": []}
        missing = self.fault_rate / 2 if self.missing_claims_rate is None \
            else self.missing_claims_rate
        if rng.random() >= missing:
            reply["claims"] = claims
        return reply

    def verify(self, chat: Chat) -> Reply:
        rng = self._random(chat)
        if rng.random() < self._missing_verdicts:
            self.verdicts_missing += 1
            unusable: list[dict[str, Any]] = [{}, {"verdicts": []}, {"answer": "all supported"}]
            return rng.choice(unusable)
        verdicts = []
        for number, true in self._judged(chat, rng):
            verdicts.append({"claim": number, "verdict": "supported" if true else "unsupported",
                             "reason": "stated" if true else "not in the source"})
        return {"verdicts": verdicts}

    def confirm(self, chat: Chat) -> Reply:
        """Where the source states each claim: the passage's closest sentence when the model
        believes it is supported (rightly, or wrongly at `verifier_error`), else nothing."""
        rng = self._random(chat)
        if rng.random() < self._missing_verdicts:
            return {"quotes": []}
        shown = {k: (body, text) for k, body, text in claims_shown(_asked(chat))}
        return {"quotes": [{"claim": k, "quote": closest(*shown[k]) if true else ""}
                           for k, true in self._judged(chat, rng)]}

    @property
    def _missing_verdicts(self) -> float:
        return self.fault_rate / 2 if self.missing_verdicts_rate is None \
            else self.missing_verdicts_rate

    def _judged(self, chat: Chat, rng: random.Random) -> list[tuple[int, bool]]:
        """Each claim shown, and whether the model takes it to be supported: the truth as an
        honest judge sees it, flipped at `verifier_error`."""
        invented = {_key(text) for text in self.invented}
        written = {_key(w.text) for w in self.written}
        judged = []
        for number, body, cited in claims_shown(_asked(chat)):
            true = _key(body) not in invented and (
                _key(body) in written or _key(body) in _key(cited))
            judged.append((number, true != (rng.random() < self.verifier_error)))
        return judged

    def _invent(self, rng: random.Random, fact: str, prompt: str) -> str:
        kinds = ["general"]
        if re.search(r"\d", fact):
            kinds.append("number")
        if any(word in fact for word in _SWAPS):
            kinds.append("swap")
        kind = rng.choice(kinds)
        if kind == "number":
            return re.sub(r"\d+", lambda m: str(int(m.group(0)) + rng.randint(3, 9)), fact,
                          count=1)
        if kind == "swap":
            word = rng.choice([w for w in _SWAPS if w in fact])
            return fact.replace(word, _SWAPS[word], 1)
        lowered = prompt.lower()
        pool = [s for topic, found in _GENERAL_KNOWLEDGE.items() if topic in lowered
                for s in found] or _GENERIC
        unused = [s for s in pool if _key(s) not in {_key(w.text) for w in self.written}]
        return rng.choice(unused or pool)


def _paraphrase(rng: random.Random, fact: str) -> str:
    """The fact reworded (words the passage does not use, the same meaning) or attributed."""
    found = [w for w in _REWORDINGS if w in fact]
    if found and rng.random() < 0.5:
        word = rng.choice(found)
        return fact.replace(word, _REWORDINGS[word], 1)
    return rng.choice(_ATTRIBUTIONS).format(fact[0].lower() + fact[1:])


def _asked(chat: Chat) -> str:
    """The prompt as first asked: a repair turn ("could not be used") comes after it."""
    return next((m["content"] for m in chat.messages if m["role"] == "user"), "")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
            if len(s.split()) >= 4]


def _cite(text: str, marker: str) -> str:
    return f"{text.rstrip('.')}{marker}."


def _plain(text: str) -> str:
    return " ".join(re.sub(r"\s?\[\d+\]", "", text).split())


def _key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", _plain(text).lower()))


def _layout(sentences: list[str]) -> str:
    """Three or more sentences as a list under a heading; fewer as a paragraph."""
    if len(sentences) >= 3:
        return "## Details\n\n" + "\n".join(f"- {s}" for s in sentences)
    return " ".join(sentences)


def survivors(model: FlawedModel, answer: str) -> list[Written]:
    """The sentences the model wrote that are in `answer` (its words, citations aside)."""
    final = _key(answer)
    return [w for w in model.written if _key(w.text) and _key(w.text) in final]
