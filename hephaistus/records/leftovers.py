"""What a command leaves that the snapshots' pictures do not hold as files, and what of it needs a
word of its own: changes to what git ignores and to nested repositories (judged by ctime, which a
command cannot set back as `touch -r` sets back an mtime), the setuid and setgid files it made
anywhere in the workspace, the git repositories it made (a `.git` whose settings and hooks the
person's next git command there would run), and the files too large to keep a copy of.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from hephaistus.records.filestate import LARGEST_KEPT
from hephaistus.wording import listed

SPECIAL = stat.S_ISUID | stat.S_ISGID  # what makes a program run with its owner's rights
WATCHED_ENTRIES = 20_000  # files and folders looked at for changes, at most, per command
NAMED = 5  # files named in a remark, at most


@dataclass(frozen=True)
class Watch:
    """The ignored entries before a command, and when it started (on the file system's clock)."""

    listed: frozenset[str]
    mark: int  # st_ctime_ns of a file written just before the command
    # heph's own folders inside what is watched (a home folder's ~/.local/state/hephaistus),
    # as absolute paths: heph writes there itself during every command, never looked into.
    skipped: frozenset[str] = frozenset()


@dataclass
class Remarks:
    """What a command did that needs a word of its own, for the model and the person alike
    (names are the command's: shown as text, never markup)."""

    special: list[str] = field(default_factory=list)  # setuid or setgid: "build/sh (setuid)"
    unkept: list[str] = field(default_factory=list)  # files too large to keep a copy of

    def lines(self, repositories: list[str]) -> list[str]:
        """The remarks, with the git repositories the command made."""
        said = []
        if repositories:
            said.append(
                f"It made {'a git repository' if len(repositories) == 1 else 'git repositories'}"
                f", which undo removes: {listed(repositories, NAMED)} (the next git command "
                "there would run its settings and hooks)"
            )
        if self.special:
            said.append(
                "It made setuid or setgid files, which run with their owner's rights: "
                + listed(self.special, NAMED)
            )
        if self.unkept:
            said.append(
                f"{listed(self.unkept, NAMED)}: over {LARGEST_KEPT // 2**20} MB, so heph kept "
                "no copy; undo deletes such a file the command made, but cannot bring back "
                "what one held before"
            )
        return said


def changed_since(root: Path, watch: Watch, now: frozenset[str], special: list[str]) -> list[str]:
    """The entries (ignored files and folders as git names them, a folder for all it holds;
    nested repositories) that appeared, went or hold something changed since `watch`, `now`
    being those after the command. The setuid and setgid files changed meanwhile, in any of
    them, go into `special`."""
    budget = [WATCHED_ENTRIES]
    found: list[Path] = []
    touched = {
        name for name in sorted(watch.listed & now) if _touched(root / name, watch, budget, found)
    }
    for name in sorted(now - watch.listed):  # all new: looked into for setuid files alone
        _touched(root / name, watch, budget, found)
    special += [special_name(root, str(path.relative_to(root))) for path in found]
    changed = (watch.listed ^ now) | touched
    # A folder stands for what it holds (git lists a folder with a .gitignore of its own
    # beside what is in it).
    return sorted(
        name
        for name in changed
        if not any(other != name and name.startswith(f"{other.rstrip('/')}/") for other in changed)
    )


def _touched(path: Path, watch: Watch, budget: list[int], special: list[Path]) -> bool:
    """Whether `path`, or anything in it (links not followed, heph's own folders left out),
    changed at or after the watch's mark, by ctime; a removed entry shows in its folder's.
    The setuid or setgid files changed meanwhile go into `special`. Looks at no more entries
    than the budget holds."""
    mark = watch.mark
    try:
        info = path.lstat()
    except OSError:
        return True  # gone meanwhile
    touched = info.st_ctime_ns >= mark
    if not stat.S_ISDIR(info.st_mode):
        if touched and _runs_as_owner(info.st_mode):
            special.append(path)
        return touched
    stack = [path]
    while stack and budget[0] > 0:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    budget[0] -= 1
                    if entry.name == ".git" or entry.path in watch.skipped:
                        continue  # a nested repository's own records (git's), or heph's
                    found = entry.stat(follow_symlinks=False)
                    if found.st_ctime_ns >= mark:
                        touched = True
                        if _runs_as_owner(found.st_mode):
                            special.append(Path(entry.path))
                    if stat.S_ISDIR(found.st_mode):
                        stack.append(Path(entry.path))
        except OSError:
            continue
    return touched


def _runs_as_owner(mode: int) -> bool:
    """Whether a file of `mode` is a program that runs with its owner's or group's rights."""
    return stat.S_ISREG(mode) and bool(mode & SPECIAL)


def special_name(root: Path, rel: str) -> str:
    """`build/sh (setuid)`: a setuid or setgid file, as a remark names it."""
    try:
        mode = os.lstat(root / rel).st_mode
    except OSError:
        mode = 0
    kinds = [
        name for bit, name in ((stat.S_ISUID, "setuid"), (stat.S_ISGID, "setgid")) if mode & bit
    ]
    return f"{rel} ({' and '.join(kinds) or 'setuid or setgid'})"


def repositories_in(root: Path, folders: set[str], left_out: frozenset[str]) -> frozenset[str]:
    """Each `.git` (a repository, or a file or link naming one) in `folders` (workspace-
    relative; "" the root), their parent folders, and the folders left out of the picture."""
    every = {""}
    for folder in folders | {name.rstrip("/") for name in left_out if name.endswith("/")}:
        while folder not in every:
            every.add(folder)
            folder = os.path.dirname(folder)
    found = (os.path.join(folder, ".git") for folder in every)
    return frozenset(rel for rel in found if os.path.lexists(root / rel))
