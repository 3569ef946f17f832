"""The person's approvals of a workspace's hooks, kept in their state folder (never in the
workspace, where a repository could plant its own). A hook is approved by a digest of its
definition and of every workspace file its command names (the script it runs), so an edit to
either asks again. Only a question put to the person approves one: `--yes`, `--mode auto` and
an editor never do."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from hephaistus.hooks.definitions import Hook
from hephaistus.settings.userstate import WorkspaceRecords
from hephaistus.workspace.project_commands import files_named

RECORDS = "hook-approvals.json"
REDIRECTION = re.compile(r"(?:\d|&)?>>?\s*(?:\"[^\"]*\"|'[^']*'|\S+)")
PROJECT_VARIABLES = ("$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}", "$HEPH_PROJECT_DIR")


def digest(root: Path, hook: Hook) -> str:
    """What approving `hook` approves: its definition and the files it runs, as they are."""
    whole = hashlib.sha256(
        json.dumps([hook.event, hook.matcher, hook.command, hook.timeout]).encode()
    )
    for rel in scripts(root, hook):
        whole.update(f"\0{rel}\0".encode())
        try:
            whole.update(hashlib.sha256((root / rel).read_bytes()).digest())
        except OSError as error:
            whole.update(f"unreadable {error.errno}".encode())
    return whole.hexdigest()


def scripts(root: Path, hook: Hook) -> list[str]:
    """The workspace files the hook's command names (`$CLAUDE_PROJECT_DIR` read as the
    workspace)."""
    line = hook.command
    for name in PROJECT_VARIABLES:
        line = line.replace(f'"{name}"', str(root)).replace(name, str(root))
    line = REDIRECTION.sub(" ", line)  # a file it writes to is its output, not what it runs
    return files_named(root, line)


class HookApprovals:
    """The approved digests of one workspace's hooks."""

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        self.root = root
        self.records = WorkspaceRecords(RECORDS, folder)

    def approved(self, hook: Hook) -> bool:
        """Whether the person approved `hook` as it is now (its scripts included)."""
        return digest(self.root, hook) in self.records.get(self.root).get("approved", [])

    def approve(self, hook: Hook) -> None:
        """Record the person's yes to `hook` as it is now."""
        record = self.records.get(self.root)
        kept = [d for d in record.get("approved", []) if isinstance(d, str)]
        self.records.put(self.root, {"approved": [*kept, digest(self.root, hook)][-200:]})
