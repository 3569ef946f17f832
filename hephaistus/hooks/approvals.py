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

from hephaistus.hooks.definitions import Hook, with_project
from hephaistus.settings.userstate import WorkspaceRecords
from hephaistus.workspace.project_commands import files_named

RECORDS = "hook-approvals.json"
REDIRECTION = re.compile(r"(?:\d|&)?>>?\s*(?:\"[^\"]*\"|'[^']*'|\S+)")
CHANGES_FOLDER = re.compile(r"\b(?:cd|pushd)\s+(\"[^\"]+\"|'[^']+'|[^\s;&|]+)")
FOLDER_FILES = 50  # of a folder the command goes into, in its digest


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
    line = REDIRECTION.sub(" ", with_project(hook.command, root))  # its output is no script
    named = files_named(root, line)
    for folder in CHANGES_FOLDER.findall(line):  # `cd hooks && sh lint.sh`: what is there
        path = (root / folder.strip("'\"")).resolve()
        if path.is_dir() and path.is_relative_to(root.resolve()) and path != root.resolve():
            inside = sorted(p for p in path.iterdir() if p.is_file() and not p.is_symlink())
            named += [str(p.relative_to(root.resolve())) for p in inside[:FOLDER_FILES]]
    return list(dict.fromkeys(named))


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
