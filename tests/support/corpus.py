"""The test corpus: five short documents in as many formats (Markdown, text, reStructuredText,
HTML with a page's chrome around its article, a two-page PDF), and ways to write and index it."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support import researchbot

CORPUS = {
    "cats.md": """# Cats

Cats are small carnivorous mammals that people have kept as pets for thousands of years.

## Sleep

Domestic cats sleep between 12 and 16 hours a day. Kittens and old cats sleep even longer.
Cats are most active at dawn and dusk, which makes them crepuscular animals.

## Diet

Cats are obligate carnivores: they need taurine, an amino acid found in meat.
""",
    "tea.txt": """Green tea and black tea come from the same plant, Camellia sinensis.
Black tea is fully oxidised while green tea is not oxidised, which gives black tea its darker
colour and stronger flavour. A cup of black tea has about 47 milligrams of caffeine, and a cup
of green tea has about 28 milligrams.
""",
    "volcanoes.rst": """Volcanoes
=========

A volcano is a rupture in the crust of a planet that lets hot lava, ash and gases escape.

Eruptions
---------

Mount Vesuvius erupted in the year 79 and buried the Roman city of Pompeii under ash.
Explosive eruptions happen when gas-rich magma fragments as it rises.
""",
    "bread.html": """<html><head><title>Baking sourdough bread</title></head><body>
<nav><a href="/">Home</a> | <a href="/shop">Shop our ovens</a> | Subscribe to the newsletter</nav>
<main><article><h1>Baking sourdough bread</h1>
<p>Sourdough bread rises because a starter of wild yeast and lactic acid bacteria ferments
the dough. The bacteria produce lactic and acetic acids that give the bread its sour taste.</p>
<h2>Baking</h2>
<p>Bake the loaf at 250 degrees Celsius in a covered pot for twenty minutes, then uncovered
for another twenty minutes until the crust is dark brown.</p>
</article></main>
<footer>Copyright Bakery Ltd. All rights reserved. Cookie settings.</footer>
</body></html>""",
}


def write_pdf(path: Path, pages: list[str], title: str = "Solar system facts") -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    pdf.output(str(path))


def write_documents(folder: Path) -> Path:
    """CORPUS's four files in `folder` (made here)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in CORPUS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def write_corpus(folder: Path) -> Path:
    """CORPUS's files and a two-page PDF in `folder`."""
    write_documents(folder)
    write_pdf(
        folder / "planets.pdf",
        [
            "The Sun is a star at the centre of the solar system.",
            "Jupiter is the largest planet in the solar system. It has a Great Red Spot, "
            "a storm larger than the Earth.",
        ],
    )
    return folder


def index_corpus(data_dir: Path, tenant: str | None = None,
                 env: Mapping[str, str] | None = None) -> Path:
    """CORPUS written to a folder "docs" beside `data_dir` and indexed through the CLI, as a
    user would, in a process of its own (synchronous: from a coroutine, in a thread). `env`:
    the process's environment (tests.support.researchbot.run), naming `data_dir`."""
    docs = write_documents(data_dir.parent / "docs")
    done = researchbot.run("index", str(docs), *(["--tenant", tenant] if tenant else []),
                           env=env)
    assert done.returncode == 0, done.stderr
    return docs


# Tenants whose knowledge base holds CORPUS in the chat front ends' tests: Slack workspaces
# and the fake Discord's server.
CHAT_TENANTS = ("T1", "T2", "300000000000000001")


def copy_store(source: Path, target: Path) -> None:
    """Copy a closed store's files (SQLite database, Chroma folder), not its corpus."""
    for path in source.iterdir():
        if path.name == "corpus":
            continue
        if path.is_dir():
            shutil.copytree(path, target / path.name)
        else:
            shutil.copy2(path, target / path.name)


@dataclass
class Indexed:
    engine: Any
    chroma: Any
    knowledge_base: Any
    corpus: Path
    folder: Path  # where the database file (test.sqlite3) and the chroma folder are
