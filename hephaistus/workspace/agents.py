"""Sub-agents' definitions: Markdown files with front matter `name`, `description`, `tools`
(the tool names it may use, a list that only narrows the parent's), `model` and `max_steps`,
found in the workspace's `.heph/agents/` and `.claude/agents/` (only when it is trusted) and
in `agents/` of the person's config folder (the person's win on a clash); the body is what
the child is told. The built-in `explore` reads only."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hephaistus.workspace import Workspace
from hephaistus.workspace.markdown_files import read_markdown

FOLDERS = (".heph/agents", ".claude/agents")
BODY_BYTES = 32_000
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class SubAgent:
    """One kind of child agent."""

    name: str
    description: str
    body: str  # what the child is told, below heph's own prompt
    tools: frozenset[str] | None = None  # None: the parent's
    max_steps: int = 0  # 0: the default
    reads_only: bool = False
    source: str = "heph"


EXPLORE = SubAgent(
    "explore",
    "reads and searches the workspace to answer a question; changes nothing",
    "Find out what you are asked by reading and searching, then answer briefly with what you "
    "found: the files and lines that matter. You cannot change anything.",
    reads_only=True,
)


def found(workspace: Workspace, trusted: bool, persons: Path | None = None) -> dict[str, SubAgent]:
    """The agents by name: the built-in ones, a trusted workspace's, the person's."""
    if persons is None:
        from hephaistus.settings.userdirs import config_dir

        persons = config_dir() / "agents"
    agents = {EXPLORE.name: EXPLORE}
    folders = [workspace.root / folder for folder in FOLDERS] if trusted else []
    for folder in [*folders, persons]:
        if not folder.is_dir() or folder.is_symlink():
            continue
        for path in sorted(folder.glob("*.md")):
            in_workspace = folder != persons
            rel = str(path.relative_to(workspace.root)) if in_workspace else str(path)
            if in_workspace and workspace.is_secret(rel):
                continue
            made = _agent(path, rel)
            if made is not None and made.name != EXPLORE.name:
                agents[made.name] = made  # later folders win: the person's last
    return agents


def _agent(path: Path, shown: str) -> SubAgent | None:
    read = read_markdown(path, shown, BODY_BYTES)
    if read is None:
        return None
    keys, body, _ = read
    name = keys.get("name", path.stem).strip()
    if not NAME.fullmatch(name):
        return None
    tools = keys.get("tools", "").strip().strip("[]")
    listed = frozenset(t.strip().strip("'\"") for t in tools.split(",") if t.strip()) or None
    steps = keys.get("max_steps", "")
    return SubAgent(
        name,
        " ".join(keys.get("description", "").split())[:300],
        body.strip(),
        listed,
        int(steps) if steps.isdigit() else 0,
        source=shown,
    )
