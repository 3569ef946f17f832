"""The repositories a workspace held before heph first ran a command there, in any run: a
`.git` not among them (by its place and inode) may be a command's, with settings git runs, even
when no command of this run made it. Kept in heph's own folder for the workspace, which no
command can write. A command of a workspace that holds this one (heph run in a folder above)
could have made one before this workspace's first: those newer than its first command are
never taken for the person's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hephaistus.runtime.hidden import walk
from hephaistus.settings.userdirs import workspace_folder

BEFORE_COMMANDS = "repositories-before-commands.json"  # what no command of heph's made


def remember_repositories(workspace: Path) -> None:
    """The repositories of the workspace before heph first ran a command there, in any run
    (each `.git` by its place and inode), kept for `repositories_before_commands`; once."""
    path = _record(workspace)
    if os.path.lexists(path):
        return
    outer = enclosing_first_command(workspace)
    found = {
        rel: marked.st_ino
        for rel, marked in repository_marks(workspace).items()
        if outer is None or marked.st_ctime < outer
    }
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return
    with os.fdopen(fd, "w") as kept:
        json.dump(found, kept)


def repositories_before_commands(workspace: Path) -> dict[str, int] | None:
    """The workspace's repositories (`.git` by place, its inode) before heph first ran a
    command there; None when no run of heph's has (or the record is unreadable)."""
    try:
        found = json.loads(_record(workspace, make=False).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def enclosing_first_command(workspace: Path) -> float | None:
    """When heph first ran a command in a workspace holding this one (None: never)."""
    times = []
    for folder in Path(os.path.realpath(workspace)).parents:
        try:
            times.append(os.lstat(_record(folder, make=False)).st_mtime)
        except OSError:
            continue
    return min(times) if times else None


def repository_marks(workspace: Path) -> dict[str, os.stat_result]:
    """Each `.git` of the workspace (a folder, a file or a link naming one), not followed: its
    own, those of the repositories nested in it, and those of the root repository's submodules
    wherever they are (git status goes into each one that holds a `.git`)."""
    rels = [".git", *(rel for rel in walk(workspace).internals if rel.endswith(".git"))]
    rels += [f"{rel}/.git" for rel in _submodules(workspace)]
    found = {}
    for rel in dict.fromkeys(rels):
        try:
            found[rel] = os.lstat(workspace / rel)
        except OSError:
            continue
    return found


def _submodules(workspace: Path) -> list[str]:
    """The paths of the root repository's gitlinks (submodules), from its index."""
    from hephaistus.runtime.gitrun import GitError, run

    try:
        listed = run(workspace, "ls-files", "--stage", "-z", text=False)
    except (GitError, OSError):
        return []
    return [entry.partition("\t")[2] for entry in listed.split("\0") if entry.startswith("160000 ")]


def _record(workspace: Path, *, make: bool = True) -> Path:
    return workspace_folder(workspace, "sandbox", make=make) / BEFORE_COMMANDS
