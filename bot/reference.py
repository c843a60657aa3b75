"""The settings and command-line references, rendered as Markdown from the code they describe.

The documentation site inserts them at build time (docs/hooks/reference.py), so a setting or a
flag added to the code appears there without an edit, and one removed disappears: the
descriptions are the settings' own `Field(description=...)` and the parser's own help."""

from __future__ import annotations

import argparse
import enum
import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from bot.config import ENV_PREFIX, MOVED, REMOVED, Settings


@dataclass(frozen=True)
class SettingRow:
    """One leaf of the settings tree, as the reference lists it."""

    key: str  # dotted: advanced.llm.quick.seconds
    variable: str  # RESEARCHBOT_ADVANCED__LLM__QUICK__SECONDS
    type: str
    default: str
    description: str


def setting_rows(model: BaseModel | None = None, path: tuple[str, ...] = ()
                 ) -> Iterator[SettingRow]:
    """Every leaf setting, depth first in declaration order, with its default value; a key
    moved elsewhere (bot.config.MOVED) only at its new place.

    Walks an instance built from the defaults alone (no file, no environment), so the
    reference shows what a fresh installation gets."""
    values = Settings.model_construct() if model is None else model
    for name, field in type(values).model_fields.items():
        value = getattr(values, name, None)
        key = (*path, name)
        if ".".join(key) in MOVED:
            continue
        section = _section_model(field.annotation)
        if section is not None:  # an optional section unset by default still lists its keys
            yield from setting_rows(value if isinstance(value, BaseModel)
                                    else section.model_construct(), key)
            continue
        yield SettingRow(
            key=".".join(key),
            variable=ENV_PREFIX + "__".join(key).upper(),
            type=_type_name(field),
            default=_default_text(value),
            description=field.description or "",
        )


def _section_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((section for arg in get_args(annotation)
                 if (section := _section_model(arg)) is not None), None)


def settings_reference() -> str:
    """The settings as Markdown: one table a section, top-level keys first, the sections a
    person decides before `advanced` and `endpoints`."""
    sections: dict[str, list[SettingRow]] = {}
    for row in setting_rows():
        section = row.key.rsplit(".", 1)[0] if "." in row.key else ""
        sections.setdefault(section, []).append(row)
    parts = []
    advanced_said = False
    for section, rows in sections.items():
        if section.startswith("advanced.") and not advanced_said:
            advanced_said = True
            parts.append("## Advanced settings\n\n" + _escape(_section_doc("advanced")))
        heading = "###" if section.startswith("advanced.") else "##"
        parts.append(f"{heading} `{section}`" if section else "## Top-level keys")
        note = _section_doc(section)
        if note:
            parts.append(_escape(note))
        parts.append("| setting | type | default | description |\n|---|---|---|---|")
        parts[-1] += "".join(
            f"\n| `{row.key}`<br>`{row.variable}` | {_escape(row.type)} | `{row.default}` | "
            f"{_escape(row.description)} |" for row in rows)
    return "\n\n".join(parts) + "\n"


def renamed_reference() -> str:
    """The names of the previous release that still load, each with its new place."""
    rows = [f"| `{old}` | `{new}` |" for old, new in MOVED.items()]
    rows += [f"| `{old}` | no longer a setting (ignored): {_escape(why)} |"
             for old, why in REMOVED.items()]
    return "| previous name | now |\n|---|---|\n" + "\n".join(rows) + "\n"


def cli_reference(parser: argparse.ArgumentParser) -> str:
    """Every command of the parser, nested ones included: usage, help and each argument."""
    return "\n\n".join(_command_text(parser, words, text)
                       for words, text, parser in _commands(parser)) + "\n"


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = (), text: str = ""
              ) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    yield words, text or (parser.description or ""), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield from _commands(sub, (*words, name), helps.get(name, ""))


def _command_text(parser: argparse.ArgumentParser, words: tuple[str, ...], text: str) -> str:
    title = " ".join((parser.prog.split()[0], *words))
    usage = argparse.HelpFormatter(title, width=10_000)
    usage.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    lines = [f"## `{title}`", _escape(_sentence(text)), f"```\n{usage.format_help().strip()}\n```"]
    rows = [f"| `{_invocation(action)}` | {_escape(_argument_help(action))} |"
            for action in parser._actions
            if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)]
    if rows:
        lines.append("| argument | what it does |\n|---|---|\n" + "\n".join(rows))
    return "\n\n".join(line for line in lines if line)


def _invocation(action: argparse.Action) -> str:
    if not action.option_strings:
        return str(action.metavar or action.dest)
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = action.metavar or (
        "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper())
    return ", ".join(f"{option} {metavar}" for option in action.option_strings)


def _argument_help(action: argparse.Action) -> str:
    text = _sentence(action.help or "")
    extras = []
    if action.required and action.option_strings:
        extras.append("Required.")
    if action.nargs in ("+", "*"):
        extras.append("One or more." if action.nargs == "+" else "Any number.")
    if action.default not in (None, False, "", argparse.SUPPRESS) \
            and "default" not in (action.help or ""):
        extras.append(f"Default: {action.default}.")
    return " ".join(part for part in (text, *extras) if part)


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if not text or text.endswith(".") else ".")


def _type_name(field: FieldInfo) -> str:
    name = _annotation_name(field.annotation)
    bounds = [f"{sign} {getattr(item, attr)}" for item in field.metadata
              for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"))
              if isinstance(item, annotated_types.BaseMetadata) and hasattr(item, attr)]
    return ", ".join([name, *bounds])


def _annotation_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _annotation_name(get_args(annotation)[0])
    if origin is Union or type(annotation).__name__ == "UnionType":
        names = [_annotation_name(arg) for arg in get_args(annotation) if arg is not type(None)]
        return " or ".join(dict.fromkeys(names))
    if origin is Literal:
        return " or ".join(json.dumps(value) for value in get_args(annotation))
    if origin is list:
        return "list of " + _annotation_name(get_args(annotation)[0]) + "s"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " or ".join(json.dumps(member.value) for member in annotation)
    if annotation is SecretStr:
        return "secret string"
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return "path"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(
        annotation, getattr(annotation, "__name__", str(annotation)))


def _default_text(value: Any) -> str:
    """A default as it would be written in config.toml; a secret's value is never shown."""
    if value is None:
        return "unset"
    if isinstance(value, SecretStr):
        return "(secret)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return json.dumps(value.value)
    if isinstance(value, Path):
        return str(value).replace(str(Path.home()), "~", 1)
    return json.dumps(value, ensure_ascii=False)


def _section_doc(section: str) -> str:
    model: type[BaseModel] | None = Settings
    for name in section.split(".") if section else ():
        model = _section_model(model.model_fields[name].annotation) if model else None
    return " ".join((model.__doc__ or "").split()) if model is not None else ""


def _escape(text: str) -> str:
    """Text for a Markdown table cell: pipes escaped, and angle brackets outside code spans
    (a description's '<link>' would otherwise be read as an HTML tag)."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`")
                   else html.escape(part, quote=False).replace("|", "\\|") for part in parts)
