"""researchbot as an MCP server (the official Python SDK), for AI agents in IDEs and desktop
assistants: the same job service as every other front end.

    research(question, depth?, wait_seconds?,   a cited answer, its confidence, limitations
             context?, max_iterations?)         and page; progress notifications while it
                                                runs. A job still running after
                                                `wait_seconds` (default 45, under clients'
                                                usual 60 s timeout) is returned as
                                                {job_id, status}: follow it with get_job.
    search(query, limit?)                       passages from the knowledge base and the
                                                sources, ranked, with no answer written
    get_job(job_id)                             a job of the caller's tenant, as the API shows it
    add_document(url, max_pages?)               add a web page (or its site) to the
                                                knowledge base, as a documents job

Over stdio (`researchbot mcp`) the tenant is the settings' (or --tenant); over HTTP (/mcp on
`researchbot serve`) it is the API key's, checked by the HTTP front end before any message
reaches a tool (the request carries the caller in its state)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from core.errors import DocumentRefusedError, InvalidQuestionError, JobNotFoundError
from core.jobs.service import JobService
from core.models import (
    MAX_ITERATIONS,
    Depth,
    DocumentsRequest,
    Job,
    JobStatus,
    ResearchRequest,
    SearchControls,
)

PLATFORM = "mcp"
WAIT_S = 45.0
MAX_SEARCH = 25

# (query, tenant, limit) -> passages found (as JSON), the sources that failed
Searcher = Callable[[str, str, int], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class McpCaller:
    tenant: str
    user: str


CallerOf = Callable[[Context], McpCaller]


@dataclass(frozen=True)
class McpServices:
    jobs: JobService
    search: Searcher
    # job id -> its answer page's address (a signed link), or None without web.public_url
    page_of: Callable[[str], str | None]
    # the caller of a tool call: the fixed tenant (stdio), or the HTTP request's caller
    caller_of: CallerOf


def stdio_caller(tenant: str) -> CallerOf:
    caller = McpCaller(tenant, "mcp")
    return lambda _ctx: caller


def http_caller(ctx: Context) -> McpCaller:
    """The caller the HTTP front end authenticated (it put it in the request's state)."""
    request = ctx.request_context.request
    caller = getattr(getattr(request, "state", None), "caller", None)
    if caller is None:  # never reached through /mcp: the front end refuses first
        raise PermissionError("no authenticated caller")
    return McpCaller(caller.tenant, caller.user)


def build_mcp(services: McpServices) -> MCPServer:
    server: MCPServer = MCPServer(
        "researchbot", title="researchbot", version="1",
        instructions="Research questions with cited sources. `research` answers with a "
        "graded confidence (Insufficient when the evidence is missing: it never guesses) and "
        "the passages each claim rests on; `search` finds passages without answering.")

    @server.tool(description="Research a question: a cited answer with its confidence "
                 "(high, medium, low or insufficient), limitations, references and a page. "
                 "`context`: the asker's needs or constraints (a language model researches "
                 "within them); `max_iterations`: search rounds at most. "
                 "If it is still running after wait_seconds, returns its job_id and status: "
                 "call get_job to follow it. recency, include_domains, exclude_domains and "
                 "content_type (news, academic, general) limit what is searched.")
    async def research(question: str, ctx: Context,
                       depth: Literal["auto", "quick", "standard", "deep"] = "auto",
                       wait_seconds: float = WAIT_S, context: str = "",
                       max_iterations: int | None = None,
                       recency: Literal["day", "week", "month", "year", "any"] | None = None,
                       include_domains: list[str] | None = None,
                       exclude_domains: list[str] | None = None,
                       content_type: Literal["news", "academic", "general"] = "general",
                       ) -> dict[str, Any]:
        who = services.caller_of(ctx)
        if max_iterations is not None and not 1 <= max_iterations <= MAX_ITERATIONS:
            raise ToolError(f"max_iterations must be 1 to {MAX_ITERATIONS}")
        try:
            controls = SearchControls(recency=recency, include_domains=include_domains or (),
                                      exclude_domains=exclude_domains or (),
                                      content_type=content_type)
        except ValidationError as error:
            raise ToolError("; ".join(str(e["msg"]) for e in error.errors())) from None
        try:
            job_id = await services.jobs.submit(ResearchRequest(
                question=question, context=context, tenant=who.tenant, user=who.user,
                platform=PLATFORM, depth=Depth(depth), max_iterations=max_iterations,
                controls=controls))
        except InvalidQuestionError as error:
            raise ToolError(str(error)) from None
        job = await _followed(services.jobs, job_id, ctx, max(0.0, min(wait_seconds, 600.0)))
        return job_view(job, services.page_of(job.id))

    @server.tool(description="Search the knowledge base and the sources for passages about "
                 "a query, best first, without writing an answer.")
    async def search(query: str, ctx: Context, limit: int = 8) -> dict[str, Any]:
        who = services.caller_of(ctx)
        try:
            return await services.search(query, who.tenant, max(1, min(limit, MAX_SEARCH)))
        except InvalidQuestionError as error:
            raise ToolError(str(error)) from None

    @server.tool(description="A research or documents job of yours: its status, and once "
                 "completed its answer (or what it added).")
    async def get_job(job_id: str, ctx: Context) -> dict[str, Any]:
        who = services.caller_of(ctx)
        job = await _own_job(services.jobs, job_id, who)
        return job_view(job, services.page_of(job.id))

    @server.tool(description="Add a web page (with max_pages > 1, the pages of its site "
                 "under its path) to your knowledge base. Returns the documents job: call "
                 "get_job to see what was added.")
    async def add_document(url: str, ctx: Context, max_pages: int = 1) -> dict[str, Any]:
        who = services.caller_of(ctx)
        if not services.jobs.adds_documents:
            raise ToolError("this server adds no documents")
        try:
            job = await services.jobs.add_url(who.tenant, who.user, PLATFORM, url,
                                              max(1, max_pages))
        except DocumentRefusedError as error:
            raise ToolError(str(error)) from None
        return {"job_id": job.id, "status": job.status.value, "url": url}

    return server


async def _own_job(jobs: JobService, job_id: str, who: McpCaller) -> Job:
    """The caller's tenant's job; another tenant's is "not found", as one that does not
    exist."""
    try:
        job = await jobs.result(job_id)
    except JobNotFoundError:
        job = None
    if job is None or job.tenant != who.tenant:
        raise ToolError(f"no job with id {job_id!r}")
    return job


async def _followed(jobs: JobService, job_id: str, ctx: Context, within_s: float) -> Job:
    """The job once it has ended, or as it is after `within_s`; each event it passes is a
    progress notification (best effort: a client that asked for none gets none)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(within_s):
            async for event in jobs.events(job_id):
                if event.message:  # a notification that fails is never worth the answer
                    with contextlib.suppress(Exception):
                        await ctx.report_progress(round(event.progress * 100), 100,
                                                  event.message)
    return await jobs.result(job_id)


def job_view(job: Job, page: str | None) -> dict[str, Any]:
    """A job as a tool returns it: the `ask --json` object once answered."""
    view: dict[str, Any] = {"job_id": job.id, "status": job.status.value,
                            "question": job.subject}
    if page is not None:
        view["page"] = page
    if job.status in (JobStatus.PENDING, JobStatus.IN_PROGRESS):
        view["message"] = "still running: call get_job with this job_id to follow it"
        view["progress"] = job.progress
    elif isinstance(job.request, DocumentsRequest):
        view["documents"] = [d.model_dump() for d in job.added.documents] \
            if job.added is not None else []
    else:
        view.update(context=job.request.context, max_iterations=job.request.max_iterations)
        if job.result is not None:
            answer = job.result.to_public_json()
            view.update({key: answer[key] for key in ("answer", "citations", "references",
                                                      "sources", "metadata")})
    if job.error:
        view["error"] = job.error
    return view
