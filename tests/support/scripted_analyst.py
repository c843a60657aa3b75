"""A scripted model for the loop's prompts, reading what the prompt shows it: what a small,
literal-minded analyst would answer about the test corpus. Tests override single tasks.
`Lab` builds the real research core and job service against it."""

from __future__ import annotations

import re
from typing import Any

from bot.wiring import build_jobs, build_research, local_sources
from core.answer.cache import SemanticAnswerCache
from core.config import CacheSettings, LLMSettings, PipelineSettings
from core.models import Depth, Job, ResearchRequest, ResearchResult
from core.research.researcher import Researcher
from core.store.answers import CachedAnswerStore
from core.store.jobs import JobStore
from tests.support.fake_openai import Chat, FakeOpenAI, Reply
from tests.support.job_client import JobClient

QUESTION = "How many hours a day do cats sleep?"

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


def understand(chat: Chat) -> dict[str, Any]:
    question = between(chat.prompt, "<question>", "</question>")
    return {"question_type": "factual", "entities": [], "time_constraint": None,
            "language": "en", "refined_question": question, "scope": "the question only",
            "checklist": [f"a direct answer to: {question}"]}


def plan(chat: Chat) -> Reply:
    return {"queries": [{"text": line_after(chat.prompt, "Question:"), "purpose": "item 1",
                         "sources": ["local"]}]}


def evidence(chat: Chat) -> dict[str, Any]:
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
    """Up to four facts, each cited; a source whose facts were not summarised is read from
    its excerpt (the sentences sharing two words with the question)."""
    wanted = words(line_after(chat.prompt, "Question:"))
    facts = []
    for number, block, excerpt in re.findall(
            r"^\[(\d+)\] .*?\nFacts:\n(.*?)\n<excerpt>\n(.*?)\n</excerpt>", chat.prompt,
            re.S | re.M):
        listed = [f[2:].strip() for f in block.splitlines()
                  if f.startswith("- ") and "(not summarised)" not in f]
        listed = listed or [s.strip() for s in re.split(r"(?<=[.!?])\s+", excerpt)
                            if len(words(s) & wanted) >= 2]
        facts += [(int(number), fact) for fact in listed]
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


def claims_shown(prompt: str) -> list[tuple[int, str, str]]:
    """A verify or confirm prompt's claims: number, sentence, and the text of its sources."""
    sources = dict(re.findall(r'<source number="(\d+)"[^>]*>\n(.*?)\n</source>', prompt,
                              re.S))
    return [(int(k), body, " ".join(sources.get(n, "") for n in re.findall(r"\d+", cites)))
            for k, body, cites in re.findall(r"^Claim (\d+): (.+)\nCites: (.+)$", prompt,
                                             re.M)]


def closest(sentence: str, text: str) -> str:
    """The sentence of `text` sharing the most words with `sentence` (two at least)."""
    best = max(re.split(r"(?<=[.!?])\s+", text), key=lambda s: len(words(s) & words(sentence)))
    return best if len(words(best) & words(sentence)) >= 2 else ""


def confirm(chat: Chat) -> dict[str, Any]:
    return {"quotes": [{"claim": k, "quote": closest(body, text)}
                       for k, body, text in claims_shown(chat.prompt)]}


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
        "synthesize": synthesize, "verify": verify, "confirm": confirm, "compact": compact,
        "improve": improve,
    }
    fake.script.update(defaults)
    return fake


class Lab:
    """The scripted model server, and the research core and job service over it with given LLM
    settings."""

    def __init__(self, fake: FakeOpenAI, parts: tuple[Any, ...]) -> None:
        self.fake = fake
        self._parts = parts  # engine, chroma, embedder, knowledge base

    def settings(self, **changes: Any) -> LLMSettings:
        values: dict[str, Any] = {
            "fast_model": "openai/fast", "strong_model": "openai/strong",
            "api_base": self.fake.base_url, "api_key": "test-key", "backoff_s": 0.05}
        return LLMSettings(**(values | changes))

    @property
    def engine(self) -> Any:
        return self._parts[0]

    @property
    def embedder(self) -> Any:
        return self._parts[2]

    def research(self, **changes: Any) -> Researcher:
        """The real research core over the test corpus, with these LLM settings."""
        engine, chroma, embedder, knowledge_base = self._parts
        cache = SemanticAnswerCache(CachedAnswerStore(engine), chroma, embedder,
                                    CacheSettings())
        return build_research(local_sources(knowledge_base, PipelineSettings()), embedder,
                              PipelineSettings(), self.settings(**changes), cache=cache)

    def client(self, **changes: Any) -> JobClient:
        """The job service over the real research core, with these LLM settings."""
        return JobClient(build_jobs(self.research(**changes), self.engine,
                                    progress_interval_s=0.0))

    async def ask(self, question: str = QUESTION, **changes: Any) -> tuple[ResearchResult, Job]:
        client = self.client(**changes)
        result = await client.run(ResearchRequest(question=question, tenant="t1",
                                                  depth=Depth.QUICK, bypass_cache=True))
        return result, await self.job(result.job_id)

    async def job(self, job_id: str) -> Job:
        return await JobStore(self.engine).get(job_id)
