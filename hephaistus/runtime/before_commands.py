"""The repositories a workspace held before heph first ran a command there, in any run: a
`.git` not among them (by its place and inode) may be a command's, with settings git runs, even
when no command of this run made it. Kept in heph's own folder for the workspace, which no
command can write."""

from __future__ import annotations

import os
from pathlib import Path

from hephaistus.runtime.hidden import walk
from hephaistus.settings.userdirs import workspace_folder

BEFORE_COMMANDS = "repositories-before-commands.json"  # what no command of heph's made


def remember_repositories(workspace: Path) -> None:
    """The repositories of the workspace before heph first ran a command there, in any run
    (each `.git` by its place and inode), kept for `repositories_before_commands`; once."""
    import json

    path = workspace_folder(workspace, "sandbox") / BEFORE_COMMANDS
    if os.path.lexists(path):
        return
    marks = [".git", *(rel for rel in walk(workspace).internals if rel.endswith(".git"))]
    found = {}
    for rel in marks:
        try:
            found[rel] = os.lstat(workspace / rel).st_ino
        except OSError:
            continue
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return
    with os.fdopen(fd, "w") as kept:
        json.dump(found, kept)


def repositories_before_commands(workspace: Path) -> dict[str, int] | None:
    """The workspace's repositories (`.git` by place, its inode) before heph first ran a
    command there; None when no run of heph's has (or the record is unreadable)."""
    import json

    try:
        found = json.loads((workspace_folder(workspace, "sandbox") / BEFORE_COMMANDS).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None
