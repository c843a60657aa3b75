"""Answer quality and cache safety on labelled sets; prints tables.

    .venv/bin/python bench/quality.py [--set hotpotqa|multihop] [--baseline REF]
        [--split dev|heldout|all] [--workdir DIR]

Question sets. `hotpotqa` (the default): real HotpotQA questions over their 4,858 Wikipedia
paragraphs (../shared/data/hotpotqa, or --data), split once by a hash of each question's id
(the file is ordered by kind, so a split by position would tune on bridge questions alone): 150
questions are the dev part (tuned on), 100 the heldout part (never tuned on). `multihop`
(bench/data/multihop/*.json): hand-written Wikipedia-style paragraphs with distractors, a
regression set. Both add the hand-written questions about entities absent from the corpus.
Three runs through the job service over the research core (local knowledge base, no model,
no cache): the answerable questions; the same questions with every gold paragraph removed
from the index ("evidence removed"); the absent-entity questions. Cache pairs
(bench/data/cache_pairs_*.json): paraphrase and near-miss pairs through the shipped guard, and
1,000 distinct questions looked up at concurrency 50 in a cache filled with their neighbours.

`--baseline REF` runs the same measurements on git revision REF (a temporary worktree) in
the same run and prints both. The dev split is for tuning; heldout is never tuned on.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.tables import table  # noqa: E402

DATA = HERE / "data"
LEVELS = ["high", "medium", "low", "insufficient"]


HOTPOTQA = HERE.parent.parent / "shared" / "data" / "hotpotqa"
HOTPOTQA_DEV = 150  # questions tuned on; the other 100 never are


def load_multihop(split: str, limit: int | None = None
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    paragraphs, questions, absent = [], [], []
    for path in sorted((DATA / "multihop").glob("*.json")):
        part = json.loads(path.read_text())
        paragraphs += part["paragraphs"]  # the corpus is always whole
        if split in ("all", part["split"]):
            questions += [{**q, "split": part["split"], "kind": question_kind(q)}
                          for q in part["questions"][:limit]]
            absent += [{**a, "split": part["split"]} for a in part["absent"][:limit]]
    return paragraphs, questions, absent


def load_hotpotqa(folder: Path, split: str, limit: int | None = None
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The shared HotpotQA set, split by position; the absent-entity questions are the
    multi-hop set's (names that appear nowhere in either corpus)."""
    paragraphs = [json.loads(line) for line in (folder / "corpus.jsonl").open()]
    rows = [json.loads(line) for line in (folder / "questions_dev.jsonl").open()]
    rows.sort(key=lambda row: hashlib.sha256(row["id"].encode()).hexdigest())
    questions = []
    for n, row in enumerate(rows):
        part = "dev" if n < HOTPOTQA_DEV else "heldout"
        question = {"id": row["id"], "question": row["question"], "answer": row["answers"][0],
                    "gold": row["gold_paragraphs"], "split": part}
        questions.append({**question, "kind": question_kind(question)})
    picked = []
    for part in ("dev", "heldout"):
        if split in ("all", part):
            picked += [q for q in questions if q["split"] == part][:limit]
    _, _, absent = load_multihop(split, limit)
    return paragraphs, picked, absent


def question_kind(q: dict[str, Any]) -> str:
    """"yes/no", "comparison" (the answer is one of two things the question names: "Who is
    older, A or B?") or "bridge" (the answer is reached through another thing)."""
    answer = q["answer"].strip().casefold()
    if answer in ("yes", "no"):
        return "yes/no"
    if " or " in q["question"] and contains(q["question"], q["answer"]):
        return "comparison"
    return "bridge"


def contains(text: str, span: str) -> bool:
    from core.text import normalise

    return f" {normalise(span)} " in f" {normalise(text)} "


# ---- the measurements, run against whichever checkout is on sys.path ---------------------

async def measure(split: str, workdir: Path, limit: int | None = None,
                  hotpotqa: Path | None = None) -> dict[str, Any]:
    sys.path.insert(0, os.getcwd())
    from core.config import CacheSettings, KnowledgeBaseSettings
    from core.models import ResearchRequest

    database = _module("core.store.database")
    open_database, sqlite_url = database.open_database, database.sqlite_url
    OnnxMiniLMEmbedder = _module("core.retrieval.embedding").OnnxMiniLMEmbedder
    KnowledgeBase = _module("core.retrieval.kb.knowledge_base").KnowledgeBase
    open_chroma = _module("core.retrieval.vectors").open_chroma

    paragraphs, questions, absent = load_hotpotqa(hotpotqa, split, limit) if hotpotqa \
        else load_multihop(split, limit)
    embedder = _Memo(OnnxMiniLMEmbedder())
    engine = await open_database(sqlite_url(str(workdir / "bench.sqlite3")))
    chroma = open_chroma(workdir / "chroma", None)
    kb = KnowledgeBase(_catalogue(engine), chroma, embedder, KnowledgeBaseSettings())
    gold = {g for q in questions for g in q["gold"]}
    started = time.perf_counter()
    for tenant, keep in (("full", paragraphs), ("removed",
                                                [p for p in paragraphs if p["id"] not in gold])):
        folder = workdir / tenant
        folder.mkdir(exist_ok=True)  # a kept --workdir is indexed once
        kept = {f"{p['id']}.md" for p in keep}
        for stale in folder.iterdir():  # a --split run keeps other parts' gold: not now
            if stale.name not in kept:
                stale.unlink()
        for p in keep:
            path = folder / f"{p['id']}.md"
            if not path.exists():
                path.write_text(f"# {p['title']}\n\n{p['text']}\n")
        await kb.index([folder], tenant)
    index_s = time.perf_counter() - started
    ask = _asker(engine, kb, embedder)

    def paragraph_of(source: Any) -> str:
        return Path(source.path or "").stem

    out: dict[str, Any] = {"index_s": index_s, "answerable": [], "removed": [], "absent": []}
    for q in questions:
        hits = await kb.search(q["question"], "full", limit=10)
        top10 = {paragraph_of(h) for h in hits}
        result, job = await ask(ResearchRequest(question=q["question"], tenant="full"))
        evidence = set(_trace_of(job).get("evidence", []))
        handed = {paragraph_of(h) for h in hits if h.id in evidence} if evidence else None
        out["answerable"].append(_row(q, result, top10, handed, paragraph_of, job))
        removed, job = await ask(ResearchRequest(question=q["question"], tenant="removed"))
        out["removed"].append(_row(q, removed, set(), None, paragraph_of, job))
    for a in absent:
        result, job = await ask(ResearchRequest(question=a["question"], tenant="full"))
        out["absent"].append(_row({**a, "gold": [], "answer": "", "kind": "absent"}, result,
                                  set(), None,
                                  paragraph_of, job))
    out["own"] = []
    if hotpotqa:  # the project's own questions over the same corpus
        for q in json.loads((DATA / "corpus_questions.json").read_text())["questions"]:
            result, job = await ask(ResearchRequest(question=q["question"], tenant="full"))
            said = _SAID.match(result.answer.summary)
            text = f"{result.answer.summary} {result.answer.detail}"
            out["own"].append({**q, "said": bool(said),
                               "right": (bool(said) and said.group(1).casefold() == q["answer"])
                               if q["kind"] == "yes/no" else contains(text, q["answer"]),
                               "first": contains(result.answer.summary, q["answer"])})
    out["cache"] = cache_pairs(embedder)
    out["load"] = await cache_under_load(engine, chroma, embedder, CacheSettings())
    await engine.dispose()
    return out


_SAID = re.compile(r"\W*(yes|no)\b", re.I)  # an answer that starts with Yes or No


def _row(q: dict[str, Any], result: Any, top10: set[str], handed: set[str] | None,
         paragraph_of: Any, job: Any) -> dict[str, Any]:
    cited = [paragraph_of(s) for s in result.sources]
    text = f"{result.answer.summary} {result.answer.detail}"
    gold = set(q["gold"])
    said = _SAID.match(result.answer.summary)
    return {
        "id": q["id"], "split": q["split"], "kind": q["kind"],
        "confidence": result.answer.confidence.value,
        "said_yes_no": bool(said),
        "yes_no_right": bool(said) and said.group(1).casefold() == q["answer"].casefold(),
        "common_word_limitation": any(_common_words(line, q["question"])
                                      for line in result.answer.limitations),
        "gold_in_top10": len(gold & top10), "gold_handed": None if handed is None
        else len(gold & top10 & handed), "gold_cited": len(gold & set(cited)),
        "cited": len(cited), "gold": len(gold),
        "first": bool(q["answer"]) and contains(result.answer.summary, q["answer"]),
        "anywhere": bool(q["answer"]) and contains(text, q["answer"]),
        # a referring sentence standing alone: first, or right after another citation
        "pronoun_lead": bool(re.search(
            r"(^|\]\s*[.!?]?\s+)(He|She|It|They|His|Her|Its|Their)\s", text)),
        "limitations": result.answer.limitations,
        "grade": (job.metrics if job else {}).get("grade", {}),
        "answer_text": text,
    }


def _common_words(limitation: str, question: str) -> list[str]:
    """The ordinary words of the question a "do not mention" limitation reports missing:
    lower-case single words ("nationality", "born"), not names, numbers or quoted phrases."""
    listed = re.search(r"do not mention (.+?)\.?$", limitation)
    if not listed:
        return []
    items = re.split(r",\s*|\s+or\s+", listed.group(1))
    return [i for i in items if re.fullmatch(r"[a-z][a-z'-]*", i)
            and re.search(rf"\b{re.escape(i)}\b", question)]


class _Memo:
    """The embedder with a memory: the two indexes share every paragraph's vector."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._seen: dict[str, Any] = {}
        self.name = inner.name

    def embed(self, texts: Any) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if missing:
            for text, vector in zip(missing, self._inner.embed(missing), strict=True):
                self._seen[text] = vector
        return np.vstack([self._seen[t] for t in texts]) if texts else self._inner.embed([])


def _asker(engine: Any, kb: Any, embedder: Any) -> Any:
    """`ask(request) -> (result, job)` through the checkout's own way in: the job service
    over the research core, built by its composition root; or, in a revision from before
    research was a function of its request, the pipeline that stored its own job."""
    from core.config import PipelineSettings
    from core.sources.local import LocalKnowledgeBaseSource

    sources = {"local": LocalKnowledgeBaseSource(kb, 3)}
    synthesizer = _module("core.answer.synthesis.extractive").ExtractiveSynthesizer(embedder)
    if _exists("core.research.researcher"):
        wiring = importlib.import_module("bot.wiring")
        jobs = wiring.build_jobs(
            wiring.build_research(sources, embedder, PipelineSettings(),
                                  synthesizer=synthesizer), engine)

        async def ask(request: Any) -> tuple[Any, Any]:
            job_id = await jobs.submit(request)
            return await jobs.answer(job_id), await jobs.result(job_id)

        return ask
    store = _module("core.store.jobs").JobStore(engine)
    pipeline = _module("core.research.pipeline").ResearchPipeline(
        store=store, sources=sources, synthesizer=synthesizer, embedder=embedder,
        settings=PipelineSettings(), cache=None)

    async def ask_pipeline(request: Any) -> tuple[Any, Any]:
        result = await pipeline.run(request)
        return result, await store.get(result.job_id)

    return ask_pipeline


def _trace_of(job: Any) -> dict[str, Any]:
    """What the job's research did, as JSON (`job.trace` now, `job.state` before)."""
    trace = getattr(job, "trace", None)
    if trace is not None:
        return dict(trace.model_dump(mode="json"))
    return dict(getattr(job, "state", None) or {})


# Modules by their names now, and what earlier revisions called them (newest first): a
# baseline revision is measured with its own names.
_EARLIER_NAMES = {
    "core.answer.synthesis.extractive": ["core.synthesis.extractive"],
    "core.store.jobs": ["core.jobs.store", "core.store"],
    "core.store.database": ["core.db"],
    "core.research.pipeline": ["core.pipeline"],
    "core.retrieval.embedding": ["core.embedding"],
    "core.retrieval.kb.knowledge_base": ["core.kb.knowledge_base"],
    "core.retrieval.vectors": ["core.vectors"], "core.answer.cache": ["core.cache"],
    "core.answer.question_match": ["core.question_match"],
    "core.research.intake": ["core.intake"],
}


def _module(name: str) -> Any:
    """The module `name`, or what it was called in the revision being measured. Decided by
    the files of the checkout: the installed package's import finder would otherwise supply
    a module the checkout does not have from another tree."""
    for candidate in (name, *_EARLIER_NAMES.get(name, [])):
        if _exists(candidate):
            return importlib.import_module(candidate)
    raise ModuleNotFoundError(name)


def _exists(name: str) -> bool:
    import core

    root = Path(next(iter(core.__path__))).parent
    where = root / name.replace(".", "/")
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _catalogue(engine: Any) -> Any:
    """What KnowledgeBase takes first: the catalogue, or in a revision from before
    core/store/catalogue.py, the engine itself."""
    try:
        catalogue = _module("core.store.catalogue")
    except (KeyError, ModuleNotFoundError):
        return engine
    return catalogue.KnowledgeCatalogue(engine)


def _guard() -> Any:
    cache = _module("core.answer.cache")
    if hasattr(cache, "is_same_question"):  # revisions before question_match
        return cache.is_same_question
    return _module("core.answer.question_match").same_question


def cache_pairs(embedder: Any) -> dict[str, Any]:
    from core.answer.cache import SIMILARITY_THRESHOLD

    same_question = _guard()
    threshold = SIMILARITY_THRESHOLD
    found: dict[str, Any] = {"threshold": threshold}
    for path in sorted(DATA.glob("cache_pairs_*.json")):
        pairs = json.loads(path.read_text())
        vectors = embedder.embed([t for p in pairs for t in (p["a"], p["b"])])
        rows = []
        for n, p in enumerate(pairs):
            similarity = float(vectors[2 * n] @ vectors[2 * n + 1])
            rows.append({"same": p["same"], "kind": p["kind"], "similarity": similarity,
                         "hit": bool(same_question(p["b"], p["a"], similarity, threshold))})
        found[path.stem.removeprefix("cache_pairs_")] = rows
    return found


# Project names that differ by a digit, a version or one word: what a team's questions are
# about, and what a guard that drops single digits or short words cannot tell apart.
_NUMBERED = ("billing", "search", "auth", "payments", "gateway", "ledger", "inbox", "reports")
_VERSIONED = ("atlas", "orion", "nimbus", "helix", "vega", "comet", "quartz", "zephyr")
PROJECTS = ([f"{stem}-{n}" for stem in _NUMBERED for n in range(1, 9)]
            + [f"{stem} v{n}" for stem in _VERSIONED for n in range(2, 10)])
TEMPLATES = ["How do I install {p}?", "What license does {p} use?", "Who maintains {p}?",
             "How do I configure logging in {p}?", "Does {p} support Python 3.12?",
             "How do I upgrade {p} to version 2?", "What is the latest release of {p}?",
             "How do I uninstall {p}?"]


async def cache_under_load(engine: Any, chroma: Any, embedder: Any, settings: Any
                           ) -> dict[str, Any]:
    """1,000 distinct questions about 128 projects; half are cached first, then all are
    looked up at concurrency 50. Every question is different, so any hit is wrong."""
    from core.models import Confidence, JobStatus, ResearchAnswer, ResearchResult

    SemanticAnswerCache = _module("core.answer.cache").SemanticAnswerCache
    detect_intent = _module("core.research.intake").detect_intent

    if _exists("core.store.answers"):  # the exact half in the job database (issue 23)
        answers = _module("core.store.answers").CachedAnswerStore(engine)
        cache = SemanticAnswerCache(answers, chroma, embedder, settings)
    else:
        cache = SemanticAnswerCache(chroma, embedder, settings)
    questions = [t.format(p=p) for p in PROJECTS for t in TEMPLATES][:1000]
    # every other project's questions are cached: the rest ask the same things about a
    # neighbouring project (billing-2 after billing-1, atlas v3 after atlas v2)
    stored = [q for n, q in enumerate(questions) if (n // len(TEMPLATES)) % 2 == 0]
    for question in stored:
        result = ResearchResult(job_id="x", status=JobStatus.COMPLETED, question=question,
                                answer=ResearchAnswer(summary=f"answer to {question}",
                                                      confidence=Confidence.MEDIUM))
        await cache.store(question, "load", detect_intent(question), result)
    limit = asyncio.Semaphore(50)
    wrong = other_project = exact = 0

    async def ask(question: str) -> None:
        nonlocal wrong, other_project, exact
        async with limit:
            hit = await cache.lookup(question, "load")
        if hit is None:
            return
        served = hit.result.answer.summary.removeprefix("answer to ")
        if served == question:
            exact += 1
        else:
            wrong += 1
            mine = _project(question)
            theirs = _project(served)
            other_project += mine != theirs

    started = time.perf_counter()
    await asyncio.gather(*(ask(q) for q in questions))
    return {"questions": len(questions), "stored": len(stored), "exact_hits": exact,
            "wrong_hits": wrong, "other_project": other_project,
            "seconds": time.perf_counter() - started}


def _project(question: str) -> str:
    return next((p for p in sorted(PROJECTS, key=len, reverse=True) if p in question), "")


# ---- reporting ----------------------------------------------------------------------------

def summarise(name: str, out: dict[str, Any], split: str) -> dict[str, list[object]]:
    rows: dict[str, list[object]] = {}
    for part in ("dev", "heldout") if split == "all" else (split,):
        answerable = [r for r in out["answerable"] if r["split"] == part]
        removed = [r for r in out["removed"] if r["split"] == part]
        absent = [r for r in out["absent"] if r["split"] == part]
        if not answerable:
            continue
        gold = sum(r["gold"] for r in answerable)
        top10 = sum(r["gold_in_top10"] for r in answerable)
        handed = [r["gold_handed"] for r in answerable if r["gold_handed"] is not None]
        cited = sum(r["cited"] for r in answerable)
        gold_cited = sum(r["gold_cited"] for r in answerable)
        yes_no = [r for r in answerable if r["kind"] == "yes/no"]
        rows[part] = [
            f"{name} {part}", len(answerable),
            top10 / gold,
            sum(handed) / top10 if handed and top10 else "n/a",
            gold_cited / gold,
            _recall([r for r in answerable if r["kind"] == "bridge"]),
            _recall([r for r in answerable if r["kind"] != "bridge"]),
            sum(r["gold_cited"] == r["gold"] for r in answerable) / len(answerable),
            gold_cited / cited if cited else 0.0,
            _share(answerable, "first"), _share(answerable, "anywhere"),
            f"{_share(yes_no, 'said_yes_no'):.3f} / {_share(yes_no, 'yes_no_right'):.3f} "
            f"({len(yes_no)})",
            sum(r["common_word_limitation"] for r in answerable + removed + absent),
            _rate(answerable, {"insufficient"}),
            _rate(removed, {"high", "medium"}),
            _rate(removed, {"insufficient"}),
            _rate(absent, {"insufficient"}), len(absent),
        ]
    return rows


def _recall(rows: list[dict[str, Any]]) -> float | str:
    gold = sum(r["gold"] for r in rows)
    return sum(r["gold_cited"] for r in rows) / gold if gold else "n/a"


def right(row: dict[str, Any]) -> bool:
    """The answer holds the gold answer: Yes or No first for a yes/no question, the answer's
    words anywhere otherwise."""
    return row["yes_no_right"] if row["kind"] == "yes/no" else row["anywhere"]


def _share(rows: list[dict[str, Any]], key: str) -> float:
    return sum(bool(r[key]) for r in rows) / len(rows) if rows else 0.0


def _rate(rows: list[dict[str, Any]], levels: set[str]) -> float:
    return sum(r["confidence"] in levels for r in rows) / len(rows) if rows else 0.0


def calibration(name: str, out: dict[str, Any]) -> list[list[object]]:
    rows = []
    for part in ("dev", "heldout"):
        answerable = [r for r in out["answerable"] if r["split"] == part]
        for level in LEVELS:
            picked = [r for r in answerable if r["confidence"] == level]
            rows.append([f"{name} {part}", level, len(picked),
                         sum(right(r) for r in picked) / len(picked) if picked else "n/a"])
    return rows


def cache_rows(name: str, cache: dict[str, Any], load: dict[str, Any]) -> list[list[object]]:
    rows = []
    for part in sorted(k for k in cache if k != "threshold"):
        pairs = cache[part]
        same = [p for p in pairs if p["same"]]
        near = [p for p in pairs if not p["same"]]
        if not pairs:
            continue
        rows.append([f"{name} {part}", len(same), len(near),
                     sum(p["similarity"] >= cache["threshold"] for p in same) / len(same),
                     sum(p["similarity"] >= cache["threshold"] for p in near) / len(near),
                     sum(p["hit"] for p in same) / len(same),
                     sum(p["hit"] for p in near)])
    return rows


def near_miss_kinds(name: str, cache: dict[str, Any]) -> list[list[object]]:
    rows = []
    for part in sorted(k for k in cache if k != "threshold"):
        pairs = cache[part]
        for kind in sorted({p["kind"] for p in pairs}):
            picked = [p for p in pairs if p["kind"] == kind]
            rows.append([f"{name} {part}", kind, "paraphrase" if picked[0]["same"]
                         else "near-miss", len(picked),
                         sum(p["hit"] for p in picked) / len(picked)])
    return rows


def report(results: dict[str, dict[str, Any]], split: str) -> None:
    quality = [row for name, out in results.items()
               for row in summarise(name, out, split).values()]
    table("1. Multi-hop answers (local knowledge base, no model)",
          ["run", "questions", "gold in search top 10", "of those handed to the answer",
           "cited recall", "bridge", "comparison", "all gold cited", "cited precision",
           "answer in 1st sentence", "answer anywhere", "yes/no: said / right (n)",
           "common-word limitations", "answerable refused", "evidence removed: High/Medium",
           "evidence removed: Insufficient", "absent entity: Insufficient",
           "absent questions"], quality)
    table("2. Confidence calibration (answerable set): share right (Yes/No right, or the "
          "answer's words in the answer)", ["run", "confidence", "answers", "right"],
          [row for name, out in results.items() for row in calibration(name, out)])
    table("3. Cache pairs at the shipped threshold", [
        "run", "paraphrases", "near-misses", "cosine only: hit", "cosine only: false hit",
        "shipped rule: hit", "shipped rule: false hits"],
          [row for name, out in results.items()
           for row in cache_rows(name, out["cache"], out["load"])])
    table("4. Cache pairs by kind (hit rate)", ["run", "kind", "pair", "pairs", "hit"],
          [row for name, out in results.items() for row in near_miss_kinds(name, out["cache"])])
    table("5. Cache under load: 1,000 distinct questions at concurrency 50", [
        "run", "cached", "served their own answer", "served another question's answer",
        "about another project", "seconds"],
          [[name, out["load"]["stored"], out["load"]["exact_hits"], out["load"]["wrong_hits"],
            out["load"]["other_project"], out["load"]["seconds"]]
           for name, out in results.items()])
    table("6. The project's own questions over the shared corpus (regression, not the "
          "target)", ["run", "questions", "part", "yes/no said", "right", "1st sentence"],
          [row for name, out in results.items() for row in own_rows(name, out)])
    limitations = [line for out in list(results.values())[-1:]
                   for rows in (out["answerable"], out["removed"], out["absent"])
                   for r in rows for line in r["limitations"]]
    common = sorted(set(limitations), key=limitations.count, reverse=True)[:8]
    print("\nMost frequent limitations (last run):")
    for line in common:
        print(f"- {limitations.count(line)} x {line}")


def own_rows(name: str, out: dict[str, Any]) -> list[list[object]]:
    rows: list[list[object]] = []
    parts = list(dict.fromkeys(q["part"] for q in out.get("own", [])))  # as the file has them
    for kind, part in ((kind, part) for kind in ("yes/no", "open") for part in parts):
        picked = [q for q in out.get("own", []) if q["kind"] == kind and q["part"] == part]
        if picked:
            rows.append([name, f"{kind} ({len(picked)})", part,
                         _share(picked, "said") if kind == "yes/no" else "n/a",
                         _share(picked, "right"), _share(picked, "first")])
    return rows


def run_checkout(root: Path, args: argparse.Namespace, name: str) -> dict[str, Any]:
    """This script's measurements on the code in `root`, in a child process; with
    --workdir, its index is kept in WORKDIR/NAME for the next run."""
    with tempfile.TemporaryDirectory(prefix="researchbot-quality-") as work:
        output = Path(work) / "out.json"
        kept = Path(args.workdir).resolve() / name if args.workdir else None
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure", str(output),
                        "--split", args.split, "--set", args.set, "--data", str(args.data)]
                       + (["--limit", str(args.limit)] if args.limit else [])
                       + (["--workdir", str(kept)] if kept else []),
                       cwd=root, check=True,
                       env={**os.environ, "PYTHONPATH": str(root)})
        return json.loads(output.read_text())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default="hotpotqa", choices=["hotpotqa", "multihop"])
    parser.add_argument("--data", type=Path, default=HOTPOTQA,
                        help="the HotpotQA folder (corpus.jsonl, questions_dev.jsonl)")
    parser.add_argument("--baseline", help="a git revision to measure alongside")
    parser.add_argument("--split", default="all", choices=["dev", "heldout", "all"])
    parser.add_argument("--limit", type=int, help="the first N questions of each part (quicker "
                        "runs while working; report full runs)")
    parser.add_argument("--workdir", help="keep each run's index here and reuse it")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # child mode: write JSON here
    parser.add_argument("--report", nargs="+", metavar="NAME=JSON",
                        help="print the tables of runs saved by --measure")
    parser.add_argument("--save", help="also write each run's rows as JSON to SAVE.NAME.json "
                        "(for --report)")
    args = parser.parse_args()
    if args.report:
        report({name: json.loads(Path(path).read_text())
                for name, path in (item.split("=", 1) for item in args.report)}, args.split)
        return
    if args.measure:
        hotpotqa = args.data if args.set == "hotpotqa" else None
        if args.workdir:
            Path(args.workdir).mkdir(parents=True, exist_ok=True)
            out = asyncio.run(measure(args.split, Path(args.workdir), args.limit, hotpotqa))
        else:
            with tempfile.TemporaryDirectory(prefix="researchbot-quality-") as work:
                out = asyncio.run(measure(args.split, Path(work), args.limit, hotpotqa))
        Path(args.measure).write_text(json.dumps(out))
        return
    repository = HERE.parent
    results: dict[str, dict[str, Any]] = {}
    if args.baseline:
        base = Path(tempfile.mkdtemp(prefix="researchbot-baseline-"))
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.baseline],
                       cwd=repository, check=True, capture_output=True)
        try:
            results[f"base {args.baseline[:7]}"] = run_checkout(base, args, "base")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)],
                           cwd=repository, check=False, capture_output=True)
            shutil.rmtree(base, ignore_errors=True)
    results["this"] = run_checkout(repository, args, "this")
    for name, out in results.items() if args.save else ():
        Path(f"{args.save}.{name.replace(' ', '-')}.json").write_text(json.dumps(out))
    print("\nindex s: " + ", ".join(f"{n} {o['index_s']:.1f}" for n, o in results.items()))
    report(results, args.split)


if __name__ == "__main__":
    main()
