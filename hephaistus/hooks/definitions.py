"""Where hooks are defined and what a definition is, in Claude Code's shape (Codex and Crush
read the same): `{"hooks": {"EVENT": [{"matcher": "REGEX", "hooks": [{"type": "command",
"command": "...", "timeout": SECONDS}]}]}}`.

The person's come from `hooks` in their config.toml and from `hooks.json` in their config
folder; a workspace's from `.heph/hooks.json` only (a plain file, never a link), counted only
where the workspace is trusted and each hook approved (hooks.approvals). `.claude/settings.json`
and `.codex/hooks.json` are never read on their own: `heph hooks import FILE` copies from them.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hephaistus.errors import ConfigError

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
TOOL_EVENTS = ("PreToolUse", "PostToolUse")  # the events a matcher matches a tool name in
DEFAULT_TIMEOUT = 60.0
WORKSPACE_FILE = ".heph/hooks.json"
USER_FILE = "hooks.json"
FILE_BYTES = 256 * 1024
# Claude Code's tool names for heph's tools, so a hook written for it matches unchanged.
THEIR_NAMES = {
    "shell": "Bash",
    "run_command": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "append_file": "Write",
    "edit_file": "Edit",
    "patch_file": "Edit",
    "list_files": "Glob",
    "search": "Grep",
}


@dataclass(frozen=True)
class Hook:
    """One command to run at an event (for the tools its matcher matches)."""

    event: str
    matcher: str  # a regular expression over tool names; "" or "*" matches every tool
    command: str
    timeout: float
    source: str  # the file it came from, as the person knows it
    workspace: bool  # a workspace's: approved by hash, run in the sandbox

    def matches(self, tool: str) -> bool:
        """Whether it runs for `tool` (heph's name; Claude Code's name of it matches too)."""
        if self.event not in TOOL_EVENTS or self.matcher in ("", "*"):
            return True
        pattern = re.compile(self.matcher)  # checked when read
        return any(name and pattern.fullmatch(name) for name in (tool, THEIR_NAMES.get(tool)))

    def describe(self) -> str:
        """The hook in one line, as `heph hooks list` and the questions show it."""
        matcher = f" [{self.matcher}]" if self.event in TOOL_EVENTS and self.matcher else ""
        return f"{self.event}{matcher}: {self.command}"


# `$CLAUDE_PROJECT_DIR`, `${CLAUDE_PROJECT_DIR}`, `${CLAUDE_PROJECT_DIR:-.}`, heph's own name,
# quoted or not: each is the workspace, to the hooks that read it.
PROJECT = re.compile(
    r'"?\$(?:\{(?:CLAUDE|HEPH)_PROJECT_DIR(?::-[^}]*)?\}|(?:CLAUDE|HEPH)_PROJECT_DIR\b)"?'
)


def with_project(command: str, root: Path) -> str:
    """`command` with the workspace's path for each spelling of the project variable."""
    return PROJECT.sub(lambda _: str(root), command)


def names_project(command: str) -> bool:
    """Whether `command` spells the project variable (it works on the workspace's files)."""
    return PROJECT.search(command) is not None


def parse(data: Any, source: str, *, workspace: bool) -> list[Hook]:
    """The hooks of a definition (the whole `{"hooks": ...}` object, or the table of events
    itself); ConfigError naming `source` and the entry for anything else."""
    if isinstance(data, dict) and set(data) == {"hooks"}:
        data = data["hooks"]
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: hooks must be a table of events")
    found: list[Hook] = []
    for event, groups in data.items():
        if event not in EVENTS:
            raise ConfigError(
                f"{source}: unknown hook event {event!r} (events: {', '.join(EVENTS)})"
            )
        if not isinstance(groups, list):
            raise ConfigError(f"{source}: hooks.{event} must be a list of matcher groups")
        for n, group in enumerate(groups):
            found += _group(group, event, f"{source}: hooks.{event}[{n}]", source, workspace)
    return found


def _group(group: Any, event: str, where: str, source: str, workspace: bool) -> list[Hook]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        raise ConfigError(f"{where} must be {{'matcher': ..., 'hooks': [...]}}")
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str):
        raise ConfigError(f"{where}.matcher must be a string")
    try:
        re.compile(matcher)
    except re.error as error:
        raise ConfigError(f"{where}.matcher is no regular expression: {error}") from None
    found = []
    for n, entry in enumerate(group["hooks"]):
        place = f"{where}.hooks[{n}]"
        if not isinstance(entry, dict) or entry.get("type", "command") != "command":
            raise ConfigError(f"{place}: heph runs hooks of type 'command' only")
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(f"{place}.command must be a command line")
        timeout = entry.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ConfigError(f"{place}.timeout must be a number of seconds")
        found.append(Hook(event, matcher, command, float(timeout), source, workspace))
    return found


def persons_hooks() -> list[Hook]:
    """The person's hooks: `hooks` in their config.toml, then their `hooks.json`."""
    from hephaistus.settings.config import user_config_path
    from hephaistus.settings.userdirs import config_dir

    found: list[Hook] = []
    toml_path = user_config_path()
    if toml_path.is_file():
        import tomllib

        try:
            table = tomllib.loads(toml_path.read_text(encoding="utf-8")).get("hooks")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            table = None  # the config's own reading says what is wrong with it
        if table is not None:
            found += parse(table, str(toml_path), workspace=False)
    json_path = config_dir() / USER_FILE
    if json_path.is_file():
        found += parse(read_json(json_path), str(json_path), workspace=False)
    return found


def workspace_hooks(root: Path) -> list[Hook]:
    """The hooks of the workspace's `.heph/hooks.json` (none when there is no such plain
    file); ConfigError when it is not a definition."""
    path = root / WORKSPACE_FILE
    try:
        info = os.lstat(path)
        if os.path.islink(root / ".heph") or not stat.S_ISREG(info.st_mode):
            return []
    except OSError:
        return []
    return parse(read_json(path), WORKSPACE_FILE, workspace=True)


def read_json(path: Path) -> Any:
    """The JSON of the plain file at `path`; ConfigError when it is not JSON."""
    try:
        with path.open("rb") as handle:
            data = handle.read(FILE_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror or error}") from None
    if len(data) > FILE_BYTES:
        raise ConfigError(f"{path}: larger than {FILE_BYTES // 1024} KiB")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:
        raise ConfigError(f"{path}: not valid JSON: {error}") from None
