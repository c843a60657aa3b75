"""The `researchbot` command. Heavy libraries are imported inside the commands that use them,
so `researchbot --help` starts fast."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT = 0, 1, 2
SWITCH_INTERVAL_S = 0.0005


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="researchbot",
        description="Research questions against a local knowledge base; cited answers.",
    )
    parser.add_argument("--config", type=Path, help="config file (default ./config.toml)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ask = commands.add_parser("ask", help="research a question and print a cited answer")
    ask.add_argument("question", help="the question, in quotes")
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.add_argument("--no-cache", action="store_true", help="skip the answer cache")
    ask.add_argument("--depth", choices=["auto", "quick", "standard", "deep"], default="auto",
                     help="how far to research (default: chosen from the question)")
    ask.add_argument("--tenant", help="tenant whose knowledge base and cache to use")
    ask.add_argument("--context", default="", metavar="TEXT",
                     help="your needs or constraints, in quotes (\"for a beginner\"): a "
                     "language model researches within them; without one they are only kept")
    ask.add_argument("--max-iterations", type=int, metavar="N",
                     help="search rounds at most (the depth's own limit applies if lower)")
    ask.add_argument("--recency", choices=["day", "week", "month", "year", "any"],
                     help="only results this recent (default: the question decides)")
    ask.add_argument("--include-domain", action="append", default=[], type=_domain,
                     metavar="DOMAIN", help="only results from this site (repeatable)")
    ask.add_argument("--exclude-domain", action="append", default=[], type=_domain,
                     metavar="DOMAIN", help="never results from this site (repeatable)")
    ask.add_argument("--content-type", choices=["news", "academic", "general"],
                     default="general", help="news, academic (arXiv, PubMed, papers) or "
                     "general (default)")

    improve = commands.add_parser(
        "improve", help="rewrite the last answer following your feedback (needs llm.*)")
    improve.add_argument("feedback", help="what to change, in quotes")
    improve.add_argument("--job", help="the job whose answer to improve (default: the latest)")
    improve.add_argument("--json", action="store_true", help="print one JSON object")
    improve.add_argument("--tenant", help="tenant of the job")

    index = commands.add_parser("index", help="add files, folders or web pages to the "
                                "knowledge base")
    index.add_argument("paths", nargs="+", metavar="PATH_OR_URL",
                       help="a file, a folder, or an http(s) URL")
    index.add_argument("--crawl", type=int, default=1, metavar="N",
                       help="for a URL: read up to N pages of its site under its path "
                       "(links and the sitemap; default 1: the page alone)")
    index.add_argument("--depth", type=int, default=2, metavar="D",
                       help="for --crawl: follow links at most D steps from the URL")
    index.add_argument("--tenant", help="tenant whose knowledge base to update")

    refresh = commands.add_parser("refresh", help="read the web pages and sites indexed from "
                                  "a URL again now (serve, the bots and workers do it every "
                                  "advanced.knowledge_base.refresh_hours)")
    refresh.add_argument("--tenant", help="only this tenant's sites (default: every tenant's)")

    documents = commands.add_parser("documents", help="the knowledge base's documents: list, "
                                    "remove")
    document_commands = documents.add_subparsers(dest="documents_command", required=True,
                                                 metavar="ACTION")
    listed_documents = document_commands.add_parser("list", help="list the documents indexed")
    listed_documents.add_argument("--tenant", help="tenant whose knowledge base to list")
    listed_documents.add_argument("--json", action="store_true", help="print a JSON array")
    removed = document_commands.add_parser("remove", help="take documents out of search: "
                                           "their chunks, vectors and the answers cached from "
                                           "the knowledge base")
    removed.add_argument("document_ids", nargs="+", metavar="ID", help="a document's id (from "
                         "documents list)")
    removed.add_argument("--tenant", help="tenant whose knowledge base to change")

    jobs = commands.add_parser("jobs", help="list recent research jobs")
    jobs.add_argument("--limit", type=int, default=20)
    jobs.add_argument("--tenant", help="only this tenant's jobs")

    commands.add_parser("slack", help="run the Slack bot (HTTP, or Socket Mode with an "
                        "app token)")
    commands.add_parser("discord", help="run the Discord bot (/research, thread follow-ups)")
    commands.add_parser("worker", help="answer the questions the chat bots queue (needs "
                        "redis.url)")
    mcp = commands.add_parser("mcp", help="run the MCP server over stdio, for an AI agent "
                              "(tools: research, search, get_job, add_document)")
    mcp.add_argument("--tenant", help="whose knowledge base and jobs (default: tenant)")

    serve = commands.add_parser("serve", help="run the HTTP API and answer pages (web.*)")
    serve.add_argument("--host", help="address to listen on (default: web.host)")
    serve.add_argument("--port", type=int, help="port (default: web.port)")

    keys = commands.add_parser("keys", help="API keys: create, list, revoke")
    key_commands = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    create = key_commands.add_parser("create", help="make a key for a tenant; the key is "
                                     "printed once, alone on the last line")
    create.add_argument("--tenant", required=True, help="tenant the key acts for")
    create.add_argument("--name", default="", help="a note on who or what uses it")
    listed = key_commands.add_parser("list", help="list keys (never the keys themselves)")
    listed.add_argument("--tenant", help="only this tenant's keys")
    revoke = key_commands.add_parser("revoke", help="revoke a key at once")
    revoke.add_argument("key_id", help="the key's id (from keys list) or the key itself")

    check = commands.add_parser("check", help="check that the database, vector store, Redis, "
                                "models and web sources configured are usable")
    check.add_argument("--json", action="store_true", help="print the checks as JSON")
    check.add_argument("--call-models", action="store_true",
                       help="also make one tiny call to each configured model (a few tokens)")

    save = commands.add_parser("save", help="save an answer as a document: Markdown, HTML, "
                               "PDF or Word")
    save.add_argument("job_id", nargs="?", help="the job (default: the latest answered)")
    save.add_argument("--format", choices=["md", "html", "pdf", "docx"], default="md",
                      help="the document's format (default: md)")
    save.add_argument("-o", "--output", metavar="PATH", help="the file to write, or a folder "
                      "to write it in (default: results/<question>_<time>.<format>)")
    save.add_argument("--tenant", help="tenant of the latest job (without JOB_ID)")

    show = commands.add_parser("show", help="show one job: request, stages, result, metrics")
    show.add_argument("job_id")
    show.add_argument("--json", action="store_true", help="print the job as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with _safe_output():
        return _run(args)


def run() -> NoReturn:
    """The `researchbot` program: `main`, then the process ends at once. Every command has
    closed what it opened by then (databases, vector store, caches) and its output is
    flushed here; what is skipped is the interpreter's teardown of the loaded libraries
    (ONNX Runtime, Chroma, SQLAlchemy), measured at 0.3-0.4 s of a CLI question
    (bench/startup.py)."""
    code = main()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe has nothing to flush
            stream.flush()
    os._exit(code)


def _run(args: argparse.Namespace) -> int:
    from bot.config import load_settings
    from core.errors import ConfigurationError, InvalidQuestionError, ResearchBotError
    from core.redact import REDACTOR

    # Database calls run on aiosqlite's thread: each is a hand-over of the GIL, which waits
    # out the default 5 ms switch interval while the event loop's thread is busy. At 0.5 ms,
    # cache hits through `serve` went from 26 to 41 a second for one client (bench/api.py 4).
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        settings = load_settings(args.config)
        REDACTOR.add_settings(settings)
        return asyncio.run(_COMMANDS[args.command](args, settings))
    except InvalidQuestionError as error:
        return _fail(str(error), EXIT_BAD_INPUT)
    except ConfigurationError as error:
        return _fail(f"configuration: {error}", EXIT_ERROR)
    except ResearchBotError as error:
        return _fail(str(error), EXIT_ERROR)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as error:  # a bug or an unreachable server: one line, not a traceback
        if os.environ.get("RESEARCHBOT_DEBUG") == "1":
            import traceback

            traceback.print_exc()  # through the redacting stream, unlike an uncaught raise
        return _fail(
            f"unexpected {type(error).__name__}: {error} (RESEARCHBOT_DEBUG=1 shows details)",
            EXIT_ERROR,
        )


@contextmanager
def _safe_output() -> Iterator[None]:
    """Everything printed while a command runs, by us or by a library, goes out with secrets
    redacted and terminal control characters neutralised; log records are redacted too."""
    from adapters.terminal import SafeTerminal
    from core.redact import REDACTOR, install_log_redaction

    REDACTOR.add_environment(os.environ)
    install_log_redaction()
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeTerminal(sys.stdout), SafeTerminal(sys.stderr)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = streams


def _domain(value: str) -> str:
    """A domain argument, normalised (nature.com from https://www.Nature.com/x), or a usage
    error naming it."""
    from core.models import normalised_domain

    try:
        return normalised_domain(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _controls(args: argparse.Namespace) -> Any:
    """The search controls of `ask`'s flags (SearchControls); ValueError when too many."""
    from pydantic import ValidationError

    from core.models import SearchControls

    try:
        return SearchControls(recency=args.recency, include_domains=args.include_domain,
                              exclude_domains=args.exclude_domain,
                              content_type=args.content_type)
    except ValidationError as error:
        raise ValueError("; ".join(str(e["msg"]).removeprefix("Value error, ")
                                   for e in error.errors())) from None


def _fail(message: str, code: int) -> int:
    print(f"researchbot: error: {message}", file=sys.stderr)
    return code


async def _ask(args: argparse.Namespace, settings: Any) -> int:
    from bot.wiring import open_asking
    from core.models import MAX_ITERATIONS, Depth, ResearchRequest
    from core.research.intake import validate_context, validate_question
    from core.store.catalogue import KnowledgeCatalogue

    validate_question(args.question)  # bad input fails before any store is opened
    validate_context(args.context)
    if args.max_iterations is not None and not 1 <= args.max_iterations <= MAX_ITERATIONS:
        return _fail(f"--max-iterations must be 1 to {MAX_ITERATIONS}", EXIT_BAD_INPUT)
    try:
        controls = _controls(args)
    except ValueError as error:
        return _fail(f"--include-domain/--exclude-domain: {error}", EXIT_BAD_INPUT)
    request = ResearchRequest(
        question=args.question,
        context=args.context,
        tenant=args.tenant or settings.tenant,
        platform="cli",
        depth=Depth(args.depth),
        max_iterations=args.max_iterations,
        bypass_cache=args.no_cache,
        controls=controls,
    )

    async with open_asking(settings) as jobs:
        job_id = await jobs.submit(request)
        result = await _followed(jobs, job_id, args.json)
        trace = (await jobs.result(job_id)).trace if args.json else None
        files, _ = await KnowledgeCatalogue(jobs.store.engine).size(request.tenant)
    if not files:
        print(f"hint: the knowledge base of tenant '{request.tenant}' is empty; add documents "
              "with: researchbot index PATH", file=sys.stderr)
    _print_result(result, args.json, trace)
    return EXIT_OK


async def _improve(args: argparse.Namespace, settings: Any) -> int:
    from bot.wiring import open_research
    from core.research.intake import validate_question

    validate_question(args.feedback, what="feedback")
    async with open_research(settings, in_process=True) as research:
        job_id = await research.jobs.improve(args.feedback, args.tenant or settings.tenant,
                                             args.job)
        result = await _followed(research.jobs, job_id, args.json)
        trace = (await research.jobs.result(job_id)).trace if args.json else None
    _print_result(result, args.json, trace)
    return EXIT_OK


async def _followed(jobs: Any, job_id: str, quiet: bool) -> Any:
    """The job's result, its progress printed on stderr meanwhile (unless `quiet`)."""
    from adapters.terminal import render_progress

    async for event in jobs.events(job_id):
        progress = event.progress_event()
        if progress is not None and not quiet:
            print(render_progress(progress), file=sys.stderr, flush=True)
    return await jobs.answer(job_id)


def _print_result(result: Any, as_json: bool, trace: Any = None) -> None:
    from adapters.terminal import render_answer_markdown

    if as_json:
        from adapters.terminal import json_safe

        print(json_safe(json.dumps(result.to_public_json(trace), ensure_ascii=False,
                                   default=str)))
    else:
        print(render_answer_markdown(result))


async def _index(args: argparse.Namespace, settings: Any) -> int:
    from bot.wiring import open_indexing
    from core.retrieval.kb.indexer import IndexReport

    def on_file(path: str, what: str) -> None:
        if what != "unchanged":
            print(f"{what:>9}  {path}", file=sys.stderr, flush=True)

    tenant = args.tenant or settings.tenant
    urls, paths = _targets(args.paths)
    if not 1 <= args.crawl <= MAX_CRAWL_PAGES or not 0 <= args.depth <= 10:
        return _fail(f"--crawl must be 1 to {MAX_CRAWL_PAGES} and --depth 0 to 10",
                     EXIT_BAD_INPUT)
    async with open_indexing(settings) as knowledge_base:
        report = await knowledge_base.index(paths, tenant, on_file) if paths \
            else IndexReport()
        if urls:
            report.absorb(await _index_urls(settings, knowledge_base, urls, tenant, args,
                                            on_file))
        files, chunks = await knowledge_base.stats(tenant)
    for path, reason in report.skipped:
        print(f"warning: skipped {path}: {reason}", file=sys.stderr)
    print(
        f"Indexed in {report.seconds:.1f} s: {len(report.added)} added, "
        f"{len(report.updated)} updated, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} removed, {len(report.skipped)} skipped; "
        f"{report.chunks} new chunks. Knowledge base '{tenant}': {files} files, {chunks} chunks."
    )
    return EXIT_OK


MAX_CRAWL_PAGES = 5000


def _targets(given: list[str]) -> tuple[list[str], list[Path]]:
    """The URLs and the paths among `index`'s arguments."""
    urls = [target for target in given if target.startswith(("http://", "https://"))]
    return urls, [Path(target).expanduser() for target in given if target not in urls]


async def _index_urls(settings: Any, knowledge_base: Any, urls: list[str], tenant: str,
                      args: argparse.Namespace, on_file: Any) -> Any:
    from bot.wiring import open_page_fetcher
    from core.errors import IndexingError
    from core.retrieval.kb.indexer import IndexReport

    report = IndexReport()
    async with open_page_fetcher(settings) as fetcher:
        for url in urls:
            read = await knowledge_base.read_site(fetcher, tenant, url, args.crawl,
                                                  args.depth, on_file)
            if read.start_failed is not None:
                raise IndexingError(f"cannot read {read.start_failed}")
            report.absorb(read.report)
    return report


async def _refresh(args: argparse.Namespace, settings: Any) -> int:
    from adapters.terminal import terminal_safe
    from bot.wiring import open_indexing, open_page_fetcher

    def on_file(url: str, what: str) -> None:
        if what != "unchanged":
            print(terminal_safe(f"{what:>9}  {url}"), file=sys.stderr, flush=True)

    async with open_indexing(settings) as knowledge_base, \
            open_page_fetcher(settings) as fetcher:
        done = await knowledge_base.refresh_sites(fetcher, tenant=args.tenant,
                                                  on_file=on_file)
    if not done:
        print("No web pages or sites to refresh: add one with researchbot index URL")
    for refreshed in done:
        report = refreshed.report
        print(terminal_safe(
            f"{refreshed.site.url} ({refreshed.site.tenant}): {len(report.added)} added, "
            f"{len(report.updated)} updated, {len(report.unchanged)} unchanged, "
            f"{len(report.removed)} removed, {len(report.skipped)} skipped"))
    return EXIT_OK


async def _documents(args: argparse.Namespace, settings: Any) -> int:
    from adapters.terminal import json_safe, terminal_safe
    from bot.wiring import open_indexing

    tenant = args.tenant or settings.tenant
    async with open_indexing(settings) as knowledge_base:
        if args.documents_command == "list":
            documents = await knowledge_base.documents(tenant)
            if args.json:
                print(json_safe(json.dumps([_document_json(d) for d in documents],
                                           ensure_ascii=False)))
                return EXIT_OK
            if not documents:
                print(f"Knowledge base '{tenant}' has no documents. Add some: "
                      "researchbot index PATH")
            for document in documents:
                byline = ", ".join(filter(None, [
                    document.author, document.published,
                    f"{document.pages} pages" if document.pages else None,
                    f"added by {document.added_by}" if document.added_by else None]))
                print(terminal_safe(f"{document.document_id}  {document.chunks:>5} chunks  "
                                    f"{document.title}" + (f" ({byline})" if byline else "")
                                    + f"  {document.path}"))
            return EXIT_OK
        missing = []
        for document_id in args.document_ids:
            removed = await knowledge_base.remove_document(tenant, document_id)
            if removed is None:
                missing.append(document_id)
            else:
                print(terminal_safe(f"Removed {removed.document_id}: {removed.title} "
                                    f"({removed.chunks} chunks)"))
    if missing:
        return _fail(f"knowledge base '{tenant}' has no document "
                     f"{', '.join(repr(m) for m in missing)} (see researchbot documents list)",
                     EXIT_ERROR)
    return EXIT_OK


def _document_json(document: Any) -> dict[str, Any]:
    """The fields GET /v1/documents gives a document, as they are known here."""
    return {"document_id": document.document_id, "title": document.title,
            "authors": document.author, "date": document.published,
            "origin": document.origin, "path": document.path, "chunks": document.chunks,
            "words": document.words, "pages": document.pages, "status": "indexed",
            "added_at": document.indexed_at.isoformat(), "added_by": document.added_by}


async def _jobs(args: argparse.Namespace, settings: Any) -> int:
    from adapters.terminal import render_job_line
    from bot.wiring import open_job_reader

    async with open_job_reader(settings) as service:
        jobs = await service.recent(args.tenant, args.limit)
    if not jobs:
        print("No jobs yet. Ask something: researchbot ask \"...\"")
    for job in jobs:
        print(render_job_line(job))
    return EXIT_OK


async def _show(args: argparse.Namespace, settings: Any) -> int:
    from adapters.terminal import render_answer_markdown, render_trace, terminal_safe
    from bot.wiring import open_job_reader
    from core.models import ResearchRequest
    from core.store.feedback import FeedbackStore, Rating

    async with open_job_reader(settings) as service:
        job = await service.result(args.job_id)
        delivery = await service.delivery(job.id)
        events = await service.stored_events(job.id)
        feedback = await FeedbackStore(service.store.engine).for_job(job.id)
    if args.json:
        from adapters.terminal import json_safe

        shown = job.model_dump(mode="json")
        shown["events"] = [event.model_dump(mode="json") for event in events]
        if delivery is not None:
            shown["delivery"] = _delivery_json(delivery)
        shown["feedback"] = [rating.model_dump(mode="json", exclude={"job_id"})
                             for rating in feedback]
        print(json_safe(json.dumps(shown, indent=2, ensure_ascii=False)))
        return EXIT_OK
    print(f"job {job.id}: {job.status.value} (stage {job.stage or '-'}, "
          f"{job.progress:.0%}) · {job.platform} · tenant {job.tenant}")
    finished = f"{job.completed_at:%Y-%m-%d %H:%M:%S}" if job.completed_at else "not yet"
    print(f"created {job.created_at:%Y-%m-%d %H:%M:%S} · completed {finished}")
    if job.error:
        print(f"error: {job.error}")
    if isinstance(job.request, ResearchRequest) and job.request.context:
        print(f"context: {terminal_safe(job.request.context)}")
    if delivery is not None:
        print(_delivery_line(delivery))
    stages = [e for e in events if e.kind == "finished" and e.stage is not None]
    if stages:
        print("stages: " + " · ".join(f"{e.stage.value if e.stage else ''}: "
                                      f"{terminal_safe(e.message)}" for e in stages))
    if job.result:
        print()
        print(render_answer_markdown(job.result))
        print()
        print(render_trace(job.trace))
    if job.added is not None:
        print()
        print(f"{job.subject}: {job.added.summary}")
        for added in job.added.documents:
            said = added.reason if added.status == "skipped" else added.title
            print(terminal_safe(f"  {added.status:<9} {added.name}" + (f" · {said}" if said
                                                                        else "")))
    if feedback:
        print()
        print(f"feedback ({len(feedback)}):")
    for rating in feedback:
        comment = " ".join(terminal_safe(rating.comment).split())
        print(f"  {'👍' if rating.rating is Rating.UP else '👎'} {rating.rating.value} · "
              f"{terminal_safe(rating.channel)} · {terminal_safe(rating.rater)} · "
              f"{rating.at:%Y-%m-%d %H:%M:%S}" + (f" · {comment}" if comment else ""))
    metrics = job.metrics
    if metrics.get("llm_calls"):
        print()
        print(f"LLM: {metrics['llm_calls']} calls ({metrics.get('llm_failed_calls', 0)} failed, "
              f"{metrics.get('llm_retries', 0)} retries), {metrics.get('tokens', 0):,} tokens "
              f"({metrics.get('prompt_tokens', 0):,} prompt + "
              f"{metrics.get('completion_tokens', 0):,} completion), "
              f"cost ${metrics.get('cost_usd', 0.0):.4f}")
    print()
    print("metrics: " + json.dumps(metrics, sort_keys=True))
    return EXIT_OK


def _delivery_json(delivery: Any) -> dict[str, Any]:
    return dict(delivery.model_dump(mode="json", include={"platform", "status", "attempts",
                                                           "error"}))


def _delivery_line(delivery: Any) -> str:
    attempts = delivery.attempts
    line = (f"delivery to {delivery.platform}: {delivery.status} after {attempts} "
            f"attempt{'s' if attempts != 1 else ''}")
    return f"{line}; last error: {delivery.error}" if delivery.error else line


async def _check(args: argparse.Namespace, settings: Any) -> int:
    from adapters.terminal import json_safe
    from bot.doctor import all_ok, render_json, render_table, run_checks

    checks = await run_checks(settings, call_models=args.call_models)
    print(json_safe(render_json(checks)) if args.json else render_table(checks))
    return EXIT_OK if all_ok(checks) else EXIT_ERROR


async def _slack(args: argparse.Namespace, settings: Any) -> int:
    from bot.slack import run_slack

    await run_slack(settings)
    return EXIT_OK


async def _discord(args: argparse.Namespace, settings: Any) -> int:
    from bot.discord import run_discord

    await run_discord(settings)
    return EXIT_OK


async def _mcp(args: argparse.Namespace, settings: Any) -> int:
    from bot.mcp import run_mcp_stdio

    await run_mcp_stdio(settings, args.tenant or settings.tenant)
    return EXIT_OK


async def _serve(args: argparse.Namespace, settings: Any) -> int:
    from bot.serve import run_server

    await run_server(settings, args.host, args.port)
    return EXIT_OK


async def _keys(args: argparse.Namespace, settings: Any) -> int:
    from bot.wiring import open_job_reader
    from core.store.access import ApiKeys, key_id_of

    async with open_job_reader(settings) as service:
        keys = ApiKeys(service.store.engine)
        if args.keys_command == "create":
            tenant = args.tenant.strip()
            if not tenant or len(tenant) > 255:
                return _fail("--tenant must be 1 to 255 characters", EXIT_BAD_INPUT)
            row, key = await keys.create(tenant, args.name)
            print(f"Created key {row.id} for tenant '{row.tenant}'. It is shown only now: "
                  "store it somewhere safe. Send it as: Authorization: Bearer <key>",
                  file=sys.stderr)
            print(key)
            return EXIT_OK
        if args.keys_command == "list":
            found = await keys.list(args.tenant)
            if not found:
                print("No API keys. Make one: researchbot keys create --tenant NAME")
            for row in found:
                state = f"revoked {row.revoked_at:%Y-%m-%d %H:%M}" if row.revoked_at \
                    else "active"
                print(f"{row.id}  {row.tenant:<20} {row.created_at:%Y-%m-%d %H:%M}  "
                      f"{state:<22} {row.name}")
            return EXIT_OK
        key_id = key_id_of(args.key_id)  # never echo a whole key back
        if not await keys.revoke(key_id):
            return _fail(f"no active key {key_id!r} (see researchbot keys list)", EXIT_ERROR)
        print(f"Revoked key {key_id}: it is refused from now on.")
    return EXIT_OK


async def _save(args: argparse.Namespace, settings: Any) -> int:
    from bot.wiring import open_job_reader
    from core.answer.export import export_answer, export_filename
    from core.models import JobStatus, utcnow

    async with open_job_reader(settings) as reader:
        if args.job_id:
            job = await reader.result(args.job_id)
        else:
            latest = await reader.store.recent(args.tenant or settings.tenant, limit=1,
                                               status=JobStatus.COMPLETED)
            if not latest or latest[0].result is None:
                return _fail("no answered question to save yet: ask one first "
                             "(researchbot ask \"...\")", EXIT_BAD_INPUT)
            job = latest[0]
    if job.result is None:
        return _fail(f"job {job.id} has no answer to save ({job.status.value})",
                     EXIT_BAD_INPUT)
    result = job.result
    name = export_filename(result, args.format, job.completed_at or utcnow())

    def write() -> Path:
        target = Path(args.output).expanduser() if args.output else Path("results") / name
        if target.is_dir():
            target = target / name
        data = export_answer(result, args.format)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return target

    try:
        print(await asyncio.to_thread(write))
    except OSError as error:
        return _fail(f"cannot write {error.filename or args.output}: "
                     f"{error.strerror or error}", EXIT_ERROR)
    return EXIT_OK


async def _worker(args: argparse.Namespace, settings: Any) -> int:
    from bot.worker import run_worker_process

    await run_worker_process(settings)
    return EXIT_OK


_COMMANDS = {"ask": _ask, "improve": _improve, "index": _index, "refresh": _refresh,
             "documents": _documents,
             "jobs": _jobs, "show": _show, "save": _save,
             "slack": _slack, "discord": _discord, "worker": _worker, "check": _check,
             "serve": _serve, "keys": _keys, "mcp": _mcp}
