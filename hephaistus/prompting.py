"""Prompt templates: shipped in the wheel as `hephaistus.prompts`, overridable per workspace."""

from __future__ import annotations

from collections.abc import Collection
from importlib import resources
from pathlib import Path

from hephaistus.tools import Registry

SOURCE_TREE_PROMPTS = Path(__file__).resolve().parent.parent / "prompts"


def load_template(name: str, workspace_root: Path | None = None) -> str:
    """Template `name` (e.g. "system.md"): `.heph/prompts/` in the workspace wins."""
    if workspace_root is not None:
        override = workspace_root / ".heph" / "prompts" / name
        if override.is_file():
            return override.read_text(encoding="utf-8")
    try:
        return resources.files("hephaistus.prompts").joinpath(name).read_text(encoding="utf-8")
    except ModuleNotFoundError:  # running from a source checkout that was not installed
        return (SOURCE_TREE_PROMPTS / name).read_text(encoding="utf-8")


def system_prompt(
    registry: Registry,
    workspace_root: Path | None = None,
    commands: str = "",
    leave_out: Collection[str] = (),
    instructions: str = "",
) -> str:
    """The system prompt: the template with the tool list and the project commands filled in.
    Tools in `leave_out` (the git tools outside a repository) are not offered: every request
    would carry them, and each call would fail. The project's instructions follow."""
    template = load_template("system.md", workspace_root)
    tools = registry.describe(leave_out)
    prompt = template.replace("{{tools}}", tools).replace("{{commands}}", commands)
    return f"{prompt.rstrip()}\n\n{instructions}\n" if instructions else prompt
