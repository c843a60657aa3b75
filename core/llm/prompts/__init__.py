"""Prompt templates, kept as files beside this module and checked when they are loaded.

Each file has a `[system]` and a `[user]` part (a repair prompt only the latter) with
`${placeholder}` fields; the placeholders a template must use are declared here, and a template
that lacks one or uses another stops start-up with a ConfigurationError."""

from __future__ import annotations

import re
from importlib import resources
from string import Template

from pydantic import BaseModel

from core.errors import ConfigurationError

PLACEHOLDERS: dict[str, frozenset[str]] = {
    "understand": frozenset({"question", "history", "constraints", "today"}),
    "plan": frozenset({"question", "checklist", "sources", "max_queries", "today",
                       "constraints"}),
    "evidence": frozenset({"question", "checklist", "passages"}),
    "reflect": frozenset({"question", "checklist", "facts", "queries", "max_queries",
                          "constraints"}),
    "compact": frozenset({"facts"}),
    "synthesize": frozenset({"question", "checklist", "evidence", "previous", "feedback",
                             "constraints"}),
    "verify": frozenset({"sources", "claims"}),
    "confirm": frozenset({"sources", "claims"}),
    "improve": frozenset({"question", "answer", "feedback"}),
    "repair": frozenset({"error"}),
}
_PART = re.compile(r"^\[(system|user)\]\s*$", re.M)


class Prompt(BaseModel):
    name: str
    system: str
    user: str

    def messages(self, **values: object) -> list[dict[str, str]]:
        text = {key: str(value) for key, value in values.items()}
        messages = [{"role": "user", "content": Template(self.user).substitute(text)}]
        if self.system:
            messages.insert(0, {"role": "system",
                                "content": Template(self.system).substitute(text)})
        return messages


class PromptLibrary:
    def __init__(self, prompts: dict[str, Prompt]) -> None:
        self._prompts = prompts

    @classmethod
    def load(cls, texts: dict[str, str] | None = None) -> PromptLibrary:
        """The shipped templates (or `texts`, name -> file content), validated."""
        if texts is None:
            folder = resources.files(__package__)
            texts = {name: (folder / f"{name}.txt").read_text(encoding="utf-8")
                     for name in PLACEHOLDERS}
        return cls({name: parse(name, text) for name, text in texts.items()})

    def __getitem__(self, name: str) -> Prompt:
        return self._prompts[name]


def parse(name: str, text: str) -> Prompt:
    if name not in PLACEHOLDERS:
        raise ConfigurationError(f"prompt {name!r}: no such prompt")
    parts = dict.fromkeys(("system", "user"), "")
    pieces = _PART.split(text)
    for label, body in zip(pieces[1::2], pieces[2::2], strict=True):
        parts[label] = body.strip()
    if not parts["user"]:
        raise ConfigurationError(f"prompt {name!r}: no [user] part")
    used: set[str] = set()
    for label, body in parts.items():
        template = Template(body)
        if not template.is_valid():
            raise ConfigurationError(f"prompt {name!r}: a '$$' field in [{label}] is malformed")
        used.update(template.get_identifiers())
    wanted = PLACEHOLDERS[name]
    if used != wanted:
        missing, unknown = sorted(wanted - used), sorted(used - wanted)
        raise ConfigurationError(
            f"prompt {name!r}: placeholders do not match"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unknown {', '.join(unknown)}" if unknown else ""))
    return Prompt(name=name, **parts)
