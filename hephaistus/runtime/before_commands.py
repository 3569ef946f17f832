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
import re
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
    try:
        marks = repository_marks(workspace)
    except Unreadable:  # those heph can read; the unreadable one keeps calls out anyway
        marks = repository_marks(workspace, submodules=False)
    found = {
        rel: marked.st_ino
        for rel, marked in marks.items()
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


def repository_marks(workspace: Path, *, submodules: bool = True) -> dict[str, os.stat_result]:
    """Each `.git` of the workspace (a folder, a file or a link naming one), not followed: its
    own, those of the repositories nested in it, and those of the root repository's submodules
    wherever they are (git status goes into each one that holds a `.git`)."""
    rels = [".git", *(rel for rel in walk(workspace).internals if rel.endswith(".git"))]
    rels += [f"{rel}/.git" for rel in _submodules(workspace)] if submodules else []
    found = {}
    for rel in dict.fromkeys(rels):
        try:
            found[rel] = os.lstat(workspace / rel)
        except OSError:
            continue
    return found


def kept_internals(workspace: Path, walked: list[str]) -> list[str]:
    """What the sandbox keeps read-only (a `.git`) or hidden (a `.heph`) in the workspace: the
    walk's, and the `.git` of each submodule wherever it is (in `node_modules/`, deeper than
    the walk goes), whose hooks the person's own git would run."""
    try:
        inner = [f"{rel}/.git" for rel in _submodules(workspace)]
    except Unreadable:
        inner = []  # (a call to a networked server is refused there: see mcp.paths)
    return list(dict.fromkeys([*walked, *inner]))


class Unreadable(Exception):
    """A submodule whose index heph cannot read: what git status would go into is unknown."""


def _submodules(workspace: Path) -> list[str]:
    """The paths of the gitlinks (submodules) of the root repository and, through each one
    that holds a `.git`, of theirs (git status goes into every level): the first from git,
    the deeper ones read from each submodule's own index (no git runs in a submodule).
    Unreadable (naming it) where an index cannot be read as it must be."""
    from hephaistus.runtime.gitrun import GitError, run

    try:
        listed = run(workspace, "ls-files", "--stage", "-z", text=False)
    except (GitError, OSError):
        return []
    pending = [
        entry.partition("\t")[2] for entry in listed.split("\0") if entry.startswith("160000 ")
    ]
    found: list[str] = []
    seen: set[str] = set()
    while pending:
        rel = pending.pop()
        found.append(rel)
        git_dir = _git_dir_of(workspace / rel)
        real = os.path.realpath(workspace / rel)
        if git_dir is None or real in seen:  # not filled; or a link back to one seen
            continue
        seen.add(real)
        inner = gitlinks(git_dir)
        if inner is None:
            raise Unreadable(rel)
        pending += [f"{rel}/{name}" for name in inner]
    return found


def _git_dir_of(folder: Path) -> Path | None:
    """The git directory of the repository whose `.git` (a folder, a link, or a `gitdir:`
    file) is in `folder`, or None."""
    marker = folder / ".git"
    if marker.is_dir():
        return marker
    named = _regular_bytes(marker, 4096).decode(errors="replace").strip()
    if not named.startswith("gitdir:"):
        return None
    return folder / named.removeprefix("gitdir:").strip()


def gitlinks(git_dir: Path) -> list[str] | None:
    """The paths of the gitlinks in the index of the repository at `git_dir` (index versions 2
    to 4, SHA-1 or SHA-256 names): read as bytes, never by git, whose settings there may be a
    command's. [] with no index; None for one heph cannot read whole (a split or sparse index,
    another version, cut short)."""
    data = _regular_bytes(git_dir / "index", MOST_INDEX_BYTES)
    if not data and not os.path.lexists(git_dir / "index"):
        return []
    if data[:4] != b"DIRC" or len(data) < 12:
        return None
    version, count = int.from_bytes(data[4:8], "big"), int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        return None
    config = _regular_bytes(git_dir / "config", 1024 * 1024).decode(errors="replace")
    sha256 = re.search(r"objectformat\s*=\s*sha256", config, re.IGNORECASE)
    try:
        return _entries(data, version, count, 32 if sha256 else 20)
    except (ValueError, IndexError):
        return None


def _entries(data: bytes, version: int, count: int, hash_size: int) -> list[str] | None:
    found: list[str] = []
    at, previous = 12, b""
    fixed = 40 + hash_size  # the stat fields, then the object name
    for _ in range(count):
        mode = int.from_bytes(data[at + 24 : at + 28], "big")
        flags = int.from_bytes(data[at + fixed : at + fixed + 2], "big")
        start = at + fixed + 2 + (2 if version >= 3 and flags & 0x4000 else 0)
        if version == 4:  # the name: how much of the previous one to drop, then the rest
            drop, start = _varint(data, start)
            end = data.index(b"\0", start)
            name = previous[: len(previous) - drop] + data[start:end]
            at = end + 1
        else:
            end = data.index(b"\0", start)
            name = data[start:end]
            at += (end - at + 8) // 8 * 8  # padded with NULs to a multiple of 8
        if at > len(data) - hash_size:
            return None
        previous = name
        if mode == 0o160000:
            found.append(os.fsdecode(name))
    while at + 8 <= len(data) - hash_size:  # the extensions, then the checksum
        signature, size = data[at : at + 4], int.from_bytes(data[at + 4 : at + 8], "big")
        if signature[:1].islower():  # one git requires (a split index's link, a sparse one)
            return None
        at += 8 + size
    return found


MOST_INDEX_BYTES = 256 * 1024 * 1024  # a million files' index is a tenth of it


def _regular_bytes(path: Path, limit: int) -> bytes:
    """What the regular file at `path` holds, up to `limit`: b"" for anything else (a named
    pipe a command put there would never end a read) or what cannot be read."""
    from hephaistus.textfile import read_real

    try:
        return read_real(Path(os.path.realpath(path)), limit)
    except OSError:
        return b""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """Git's offset varint (index v4) at `at`: its value and where it ends."""
    value = data[at] & 0x7F
    while data[at] & 0x80:
        at += 1
        value = ((value + 1) << 7) | (data[at] & 0x7F)
    return value, at + 1


def _record(workspace: Path, *, make: bool = True) -> Path:
    return workspace_folder(workspace, "sandbox", make=make) / BEFORE_COMMANDS
