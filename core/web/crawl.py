"""Reading a web page, or a site, for the knowledge base: the start page, then (when asked)
the pages it links to on the same site and under the same path, breadth first, and the
pages the site's sitemap lists, up to `max_pages` and `max_depth` links away. Every request
goes through the page fetcher (core.web.fetch): robots.txt, no private address unless
trusted, size and time caps, pages only (HTML, PDF, plain text)."""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit

from core.errors import FetchError
from core.web.fetch import FetchedPage, PageFetcher

SITEMAP_MAX_BYTES = 5 * 1024 * 1024
# Pages fetched at once during a crawl (the fetcher's per-host limit applies as well).
BATCH = 4


@dataclass
class CrawlReport:
    pages: list[FetchedPage] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (url, why)


def page_key(url: str) -> str:
    """The URL as the knowledge base knows a page by: without its fragment."""
    return urldefrag(url.strip())[0]


async def crawl(fetcher: PageFetcher, start: str, max_pages: int = 1,
                max_depth: int = 2, skip: Collection[str] = ()) -> CrawlReport:
    """The start page and, with `max_pages` > 1, the site's pages under its path, but for
    the pages in `skip` (removed by a person)."""
    start = page_key(start)
    report = CrawlReport()
    scope = _scope_of(start)
    queue: deque[tuple[str, int]] = deque([(start, 0)])
    seen = {start, *(set(skip) - {start})}
    if max_pages > 1:
        for url in await sitemap_urls(fetcher, start):
            if url not in seen and _in_scope(url, scope):
                seen.add(url)
                queue.append((url, 1))
    while queue and len(report.pages) < max_pages:
        batch = [queue.popleft() for _ in range(min(BATCH, len(queue),
                                                   max_pages - len(report.pages)))]
        fetched = await fetcher.fetch_many([url for url, _ in batch])
        for url, depth in batch:
            outcome = fetched[url]
            if isinstance(outcome, FetchError):
                report.failed.append((url, str(outcome)))
                continue
            report.pages.append(outcome)
            if depth >= max_depth or max_pages <= 1 or outcome.content_type != "text/html":
                continue
            for link in links_of(outcome):
                if link not in seen and _in_scope(link, scope):
                    seen.add(link)
                    queue.append((link, depth + 1))
    return report


def links_of(page: FetchedPage) -> list[str]:
    """The http(s) links of an HTML page, absolute, without fragments, in page order."""
    import lxml.html
    from lxml.etree import ParserError

    try:
        document = lxml.html.fromstring(page.body)
    except (ParserError, ValueError):
        return []
    found = []
    for href in document.xpath("//a/@href"):
        url = page_key(urljoin(page.final_url, str(href)))
        if urlsplit(url).scheme in ("http", "https"):
            found.append(url)
    return found


async def sitemap_urls(fetcher: PageFetcher, start: str) -> list[str]:
    """The page URLs the site's /sitemap.xml lists (a sitemap index is followed one level);
    [] when it has none or it cannot be read."""
    parts = urlsplit(start)
    origin = f"{parts.scheme}://{parts.netloc}"
    urls: list[str] = []
    documents = [f"{origin}/sitemap.xml"]
    for level in range(2):
        nested: list[str] = []
        for address in documents:
            for kind, location in await _sitemap_entries(fetcher, address):
                (nested if kind == "sitemap" and level == 0 else urls).append(location)
        documents = nested[:20]
    return [page_key(url) for url in urls]


async def _sitemap_entries(fetcher: PageFetcher, address: str) -> list[tuple[str, str]]:
    from defusedxml import ElementTree
    from defusedxml.common import DefusedXmlException

    try:
        root = ElementTree.fromstring(await fetcher.fetch_bytes(address, SITEMAP_MAX_BYTES))
    except (FetchError, DefusedXmlException, ElementTree.ParseError, ValueError):
        return []
    entries = []
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] != "loc" or not (element.text or "").strip():
            continue
        parent_kind = "sitemap" if root.tag.endswith("sitemapindex") else "url"
        entries.append((parent_kind, element.text.strip()))
    return entries


def _scope_of(start: str) -> tuple[str, str, str]:
    """(scheme, host, path prefix) a crawl from `start` stays within: its folder."""
    parts = urlsplit(start)
    folder = parts.path.rsplit("/", 1)[0] + "/"
    return parts.scheme, parts.netloc.lower(), folder


def _in_scope(url: str, scope: tuple[str, str, str]) -> bool:
    parts = urlsplit(url)
    return (parts.scheme, parts.netloc.lower()) == scope[:2] and \
        (parts.path or "/").startswith(scope[2])
