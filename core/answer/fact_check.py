"""Every sentence of a written answer checked against the sources it cites.

The code splits the answer into sentences itself (core.answer.sentences); what the writer
listed in its `claims` only lends each sentence its quote. For each sentence that makes a claim:

1. Citation numbers that name no source of the answer are removed. A sentence left without a
   citation is removed: nothing supports it.
2. The model judges every cited sentence against the text of the sources it cites (batches,
   run concurrently within the job's budget).
3. A sentence whose quote (the writer's, or the sentence itself) is found word for word in a
   cited source and says all the sentence says (core.answer.citations.quotes_cover) is kept whatever
   the verdict; a verdict of "unsupported" is counted as a disagreement.
4. Any other sentence needs more than one verdict: it is removed when judged unsupported,
   when no verdict came back for it, or when it shares too few words with its sources
   (core.answer.citations.grounded). Judged supported (or partly), the model is asked in a second,
   different task to copy the words of the source that state it; the sentence is kept only
   if those words are in a cited source and hold its numbers and most of its words. Keeping
   an invented sentence costs more than losing a true one, and one judgement can be wrong.

When no sentence got a verdict (the model failed, its reply had no usable `verdicts`, or the
budget was spent) the check did not run: `ClaimCheck.verification` says so and why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from core.answer.citations import best_quote, grounded, quote_supported, quotes_cover
from core.answer.sentences import MARKER, Sentence, parse
from core.answer.synthesis.base import Draft
from core.errors import LLMBudgetError, LLMError, LLMOutputError
from core.llm.gateway import ModelGateway, Role, Usage
from core.llm.quoting import attribute, quoted
from core.models import Citation, Source
from core.text import normalise

VERIFY_BATCH = 8  # sentences a verification call judges
BATCH_SOURCES = 4  # sources a verification call shows, unless one sentence cites more
SOURCE_CHARS = 1500


class Verdict(BaseModel):
    claim: int
    verdict: Literal["supported", "partial", "unsupported"]
    reason: str = ""


class Verdicts(BaseModel):
    verdicts: list[Verdict] = Field(min_length=1)  # an empty list is asked for again


class Quote(BaseModel):
    claim: int
    quote: str = ""  # empty: the source does not state it


class Quotes(BaseModel):
    quotes: list[Quote] = Field(min_length=1)


Verification = Literal["ran", "partial", "not run", "not needed"]


class ClaimCheck(BaseModel):
    """The answer left after the check, and what happened to its sentences."""

    draft: Draft
    claims: int = 0  # sentences that make a claim
    kept: int = 0
    by_quote: int = 0  # kept because their quote was found in the source
    judged: int = 0  # given a verdict by the model
    partial: int = 0  # kept, judged partly supported
    unsupported: int = 0  # removed: judged unsupported, too far from the source's words, or
    # no words of the source found to state it (`unconfirmed` of them)
    unconfirmed: int = 0
    confirmed: int = 0  # kept on a verdict and the source's words the model pointed to
    uncited: int = 0  # removed: no citation
    dangling: int = 0  # removed: their only citations named no source
    unjudged: int = 0  # removed: no verdict, and their quote did not carry them
    invalid_citations: int = 0  # citation numbers naming no source, removed
    disagreements: int = 0  # kept on their quote although judged unsupported
    verification: Verification = "not needed"
    problem: str = ""  # why the model's check did not run, or not for every sentence
    problems: list[str] = Field(default_factory=list, exclude=True)

    @property
    def checked(self) -> int:
        return self.claims - self.uncited - self.dangling - self.unjudged

    def metrics(self) -> dict[str, object]:
        return {"claims": self.claims, "claims_checked": self.checked,
                "claims_kept": self.kept, "claims_kept_by_quote": self.by_quote,
                "claims_judged": self.judged, "claims_partial": self.partial,
                "claims_unsupported": self.unsupported, "claims_unconfirmed": self.unconfirmed,
                "claims_confirmed": self.confirmed, "claims_uncited": self.uncited,
                "claims_dangling": self.dangling, "claims_unjudged": self.unjudged,
                "invalid_citations": self.invalid_citations,
                "verdict_disagreements": self.disagreements,
                "verification": self.verification}


@dataclass
class _Claim:
    sentence: Sentence
    part: str  # "summary" or "detail"
    cites: list[int]  # valid source numbers
    quotes: list[str]  # quotes found word for word in a cited source
    verdict: str | None = None
    confirmation: str | None = None  # the source's words stating it; "" none; None not asked


async def check_answer(gateway: ModelGateway | None, usage: Usage, draft: Draft,
                       sources: Sequence[Source], language: str = "en",
                       reply_tokens: int = 1200) -> ClaimCheck:
    """`draft`, cited as [1..n] over `sources`, with every sentence checked (see the module
    docstring); without a gateway, by the code's checks alone."""
    parts = {"summary": parse(draft.summary, language), "detail": parse(draft.detail, language)}
    check = ClaimCheck(draft=draft)
    valid = range(1, len(sources) + 1)
    claims: list[_Claim] = []
    kept: dict[str, dict[int, str]] = {name: {} for name in parts}
    for name, answer in parts.items():
        for sentence in answer.sentences:
            markers = sentence.markers
            cites = [n for n in markers if n in valid]
            check.invalid_citations += len(markers) - len(cites)
            if not sentence.is_claim:
                kept[name][sentence.index] = sentence.cited(valid.__contains__)
                continue
            check.claims += 1
            if not cites:
                check.uncited += not markers
                check.dangling += bool(markers)
                continue
            quotes = [q for q in _quotes_for(sentence, draft.citations)
                      if any(quote_supported(q, sources[n - 1]) for n in cites)]
            claims.append(_Claim(sentence, name, cites, quotes))

    if gateway is not None and claims:
        await _judge(gateway, usage, claims, sources, check, reply_tokens)
        doubtful = [c for c in claims if c.verdict in ("supported", "partial")
                    and not quotes_cover(c.sentence.body, c.quotes)
                    and grounded(c.sentence.body, [_text(sources[n - 1]) for n in c.cites])]
        if doubtful:
            await _confirm(gateway, usage, doubtful, sources, check, reply_tokens)
    citations: list[Citation] = []
    for claim in claims:
        if _decide(claim, sources, check):
            check.kept += 1
            text = claim.sentence.cited(valid.__contains__)
            kept[claim.part][claim.sentence.index] = text
            citations += [Citation(claim=text, source_id=sources[n - 1].id,
                                   quote=_quote_in(claim, sources[n - 1]))
                          for n in claim.cites]
    summary, detail = (parts[name].render(kept[name]) for name in ("summary", "detail"))
    if not summary:  # a summary left empty takes the detail's place
        summary, detail = detail, ""
    check.draft = Draft(summary=summary, detail=detail, citations=citations, notes=draft.notes)
    return check


def _decide(claim: _Claim, sources: Sequence[Source], check: ClaimCheck) -> bool:
    body = claim.sentence.body
    if quotes_cover(body, claim.quotes):
        check.by_quote += 1
        check.disagreements += claim.verdict == "unsupported"
        return True
    if claim.verdict is None:
        check.unjudged += 1
        return False
    cited = [sources[n - 1] for n in claim.cites]
    if claim.verdict == "unsupported" or not grounded(body, [_text(s) for s in cited]):
        check.unsupported += 1
        return False
    if claim.confirmation is not None:  # None: the second task could not run
        words = claim.confirmation
        if not (words and any(quote_supported(words, s) for s in cited)
                and grounded(body, [words])):
            check.unsupported += 1
            check.unconfirmed += 1
            return False
        check.confirmed += 1
        claim.quotes.append(words)
    check.partial += claim.verdict == "partial"
    return True


async def _judge(gateway: ModelGateway, usage: Usage, claims: list[_Claim],
                 sources: Sequence[Source], check: ClaimCheck, reply_tokens: int) -> None:
    """Verdicts for the claims, batch by batch; what failed is noted on `check`."""
    async def judge(batch: list[_Claim]) -> None:
        try:
            reply = await gateway.json(Role.STRONG, "verify", Verdicts, usage,
                                       reply_tokens=min(reply_tokens, 200 + 120 * len(batch)),
                                       **_shown(batch, sources))
        except LLMError as error:
            check.problems.append(_reason(error))
            return
        found = 0
        for verdict in reply.verdicts:
            if 1 <= verdict.claim <= len(batch) and batch[verdict.claim - 1].verdict is None:
                batch[verdict.claim - 1].verdict = verdict.verdict
                found += 1
        if not found:
            check.problems.append("the model's reply judged no sentence")

    await asyncio.gather(*(judge(batch) for batch in _batches(claims)))
    check.judged = sum(1 for claim in claims if claim.verdict is not None)
    check.verification = "ran" if check.judged == len(claims) else \
        "partial" if check.judged else "not run"
    check.problem = "; ".join(dict.fromkeys(check.problems))


async def _confirm(gateway: ModelGateway, usage: Usage, claims: list[_Claim],
                   sources: Sequence[Source], check: ClaimCheck, reply_tokens: int) -> None:
    """The words of the cited sources that state each claim, as the model copies them out; a
    batch that fails leaves its claims on their verdict alone."""
    async def confirm(batch: list[_Claim]) -> None:
        try:
            reply = await gateway.json(Role.STRONG, "confirm", Quotes, usage,
                                       reply_tokens=min(reply_tokens, 200 + 150 * len(batch)),
                                       **_shown(batch, sources))
        except LLMError as error:
            check.problems.append(_reason(error))
            return
        for item in reply.quotes:
            if 1 <= item.claim <= len(batch) and batch[item.claim - 1].confirmation is None:
                batch[item.claim - 1].confirmation = item.quote.strip()
        for claim in batch:  # a claim the reply passed over has no words found for it
            if claim.confirmation is None:
                claim.confirmation = ""

    await asyncio.gather(*(confirm(batch) for batch in _batches(claims)))


def _shown(batch: list[_Claim], sources: Sequence[Source]) -> dict[str, str]:
    """The prompt's values: the sources the batch cites, once each, and its claims."""
    shown = sorted({n for claim in batch for n in claim.cites})
    listing = "\n\n".join(
        f"<source number=\"{n}\" title=\"{attribute(sources[n - 1].title)}\">\n"
        f"{quoted(_text(sources[n - 1]), SOURCE_CHARS)}\n</source>" for n in shown)
    lines = "\n".join(
        f"Claim {k}: {claim.sentence.body}\nCites: "
        + ", ".join(f"[{n}]" for n in claim.cites) for k, claim in enumerate(batch, 1))
    return {"sources": listing, "claims": lines}


def _batches(claims: list[_Claim]) -> list[list[_Claim]]:
    """Claims citing the same sources together, so that each source is shown once a batch."""
    batches: list[list[_Claim]] = []
    shown: set[int] = set()
    for claim in sorted(claims, key=lambda c: c.cites):
        wanted = shown | set(claim.cites)
        if not batches or len(batches[-1]) >= VERIFY_BATCH or (
                len(wanted) > BATCH_SOURCES and shown):
            batches.append([])
            shown = set()
        batches[-1].append(claim)
        shown |= set(claim.cites)
    return batches


def _reason(error: LLMError) -> str:
    """Why a check did not run, in words for the reader of the answer."""
    if isinstance(error, LLMBudgetError):
        return "the time for this question ran out" if error.kind == "time" \
            else "the token budget for this question was spent"
    if isinstance(error, LLMOutputError):
        return "the model's reply could not be read"
    return "the model failed"


def _quotes_for(sentence: Sentence, citations: Sequence[Citation]) -> list[str]:
    """The writer's quotes for this sentence (matched by its words, as the writer's claim
    text may hold more or less than one sentence), and the sentence itself."""
    mine = normalise(sentence.body)
    quotes = []
    for citation in citations:
        theirs = normalise(MARKER.sub("", citation.claim))
        shorter = min(mine, theirs, key=len)
        if theirs and (mine == theirs or (len(shorter.split()) >= 4 and (
                mine in theirs or theirs in mine))):
            quotes.append(citation.quote)
    return list(dict.fromkeys([*quotes, sentence.body]))


def _quote_in(claim: _Claim, source: Source) -> str:
    """The words of `source` that back the claim: its quote, or the closest sentence."""
    for quote in claim.quotes:
        if quote_supported(quote, source):
            return quote
    return best_quote(claim.sentence.body, _text(source))


def _text(source: Source) -> str:
    return source.content or source.snippet


