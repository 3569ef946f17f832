"""Prompt templates: shipped in the wheel as `hephaistus.prompts`, overridable by the person
(`prompts/` in the user's config folder) and by a trusted workspace (`.heph/prompts/`)."""

from __future__ import annotations

from collections.abc import Collection
from importlib import resources
from pathlib import Path

from hephaistus.tools import Registry

SOURCE_TREE_PROMPTS = Path(__file__).resolve().parents[2] / "prompts"


def load_template(name: str, trusted_workspace: Path | None = None) -> str:
    """Template `name` (e.g. "system.md"): a trusted workspace's `.heph/prompts/` wins, then
    the user's own `prompts/` folder, then the shipped one. Only pass a workspace that is
    trusted: an untrusted one's prompt is someone else's instruction to the model."""
    if trusted_workspace is not None:
        from hephaistus.workspace.trust import prompt_override

        override = prompt_override(trusted_workspace, name)
        if override is not None:
            return override.decode("utf-8", "replace")
    from hephaistus.settings.userdirs import config_dir
    from hephaistus.textfile import text_of

    personal = text_of(config_dir() / "prompts" / name)
    if personal is not None:
        return personal
    try:
        return resources.files("hephaistus.prompts").joinpath(name).read_text(encoding="utf-8")
    except ModuleNotFoundError:  # running from a source checkout that was not installed
        return (SOURCE_TREE_PROMPTS / name).read_text(encoding="utf-8")


def system_prompt(
    registry: Registry,
    trusted_workspace: Path | None = None,
    commands: str = "",
    leave_out: Collection[str] = (),
    instructions: str = "",
    planning: bool = False,
    skills: str = "",
) -> str:
    """The system prompt: the template with the tool list and the project commands filled in.
    Tools in `leave_out` (the git tools outside a repository, those the mode denies) are not
    offered: every request would carry them, and each call would fail. In plan mode the plan
    template says what the answer is; the skills' lines and the project's instructions
    follow."""
    template = load_template("system.md", trusted_workspace)
    tools = registry.describe(leave_out)
    prompt = template.replace("{{tools}}", tools).replace("{{commands}}", commands).rstrip()
    if skills:
        prompt += "\n\n" + skills
    if planning:
        prompt += "\n\n" + load_template("plan.md", trusted_workspace).rstrip()
    return f"{prompt}\n\n{instructions}\n" if instructions else prompt + "\n"
