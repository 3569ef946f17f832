"""The `skill` tool: a skill's instructions, and the files it brings, read when the model
chooses one from the prompt's list (workspace.skills). It reads only: a skill's steps are
the model's own calls, decided like any other."""

from __future__ import annotations

from pathlib import Path

from hephaistus.redact import credential_spans
from hephaistus.textfile import NotTextError, decode, read_real
from hephaistus.tools.context import ToolContext
from hephaistus.values import ToolResult, clip


def skill(ctx: ToolContext, name: str, file: str | None = None) -> ToolResult:
    """Load a skill listed under Skills: its instructions and its files; with file, one file.

    Args:
        ctx: the run's skills and limits (given by heph, not by the model)
        name: the skill's name, as listed
        file: one of the files the skill lists (e.g. scripts/check.py), to read it
    """
    found = ctx.skills.get(name)
    if found is None:
        known = ", ".join(sorted(ctx.skills)[:20]) or "none"
        return ToolResult(False, f"no skill is called {name!r} (skills: {known})")
    if file is None:
        return ToolResult(True, clip(found.loaded(), ctx.observation_limit))
    if file not in found.files:
        return ToolResult(
            False,
            f"skill {name} has no file {file!r} (its files: "
            f"{', '.join(found.files[:30]) or 'none'})",
        )
    shown = f"{found.source.removesuffix('SKILL.md')}{file}"
    try:
        text = decode(read_real(found.folder / Path(file), 4 * ctx.observation_limit), shown).text
    except NotTextError as error:
        return ToolResult(False, str(error))
    except OSError as error:
        return ToolResult(False, f"cannot read {shown}: {error.strerror or error}")
    if any(True for _ in credential_spans(text)):  # a key by its content, whatever its name
        return ToolResult(False, f"{shown} holds what looks like a credential: it is not read")
    return ToolResult(True, clip(text, ctx.observation_limit))


TOOLS = ((skill, "read"),)
