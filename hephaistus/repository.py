"""The git repository a workspace is in: every git call heph makes goes through here.

heph runs the `git` command itself (no library: importing one would cost every run a tenth of a
second). Output is read in its machine formats (`-z`, `--porcelain`), and every failure becomes
a GitError carrying git's own message.

A repository's own `.git/config` can make git run programs: an fsmonitor hook on every status
(heph lists files at every start), clean and smudge filters, external diff and textconv
drivers, a hooks path, a signing program. A clone brings none of these, but an unpacked
archive can. So heph's git never asks an fsmonitor, its diffs never run external drivers, and
in a workspace the person has not trusted, the repository's own program settings are switched
off for every git command heph runs (see `distrust`; trust lists them).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 60.0
# The settings of a repository's own config that make git run a program of its choosing.
PROGRAM_SETTINGS = (
    r"^(filter\..+\.(clean|smudge|process)|diff\.external|diff\..+\.(command|textconv)"
    r"|merge\..+\.driver|core\.hookspath|gpg\.program|gpg\..+\.program)$"
)
ALWAYS = ("-c", "core.fsmonitor=false")  # a hook git would run on every status and listing
DIFFING = {"diff", "log", "show"}  # their drivers are never run: heph reads plain diffs
# Folder → `-c` overrides that switch off the program settings of an untrusted workspace's
# repository, for every git command run at or under that folder.
_distrusted: dict[str, tuple[str, ...]] = {}


class GitError(Exception):
    """A git command failed; the message is git's, for the model or the user."""


@dataclass(frozen=True)
class Repository:
    top: Path  # the working tree's top folder
    cwd: Path  # where commands run (the workspace, which may be a subfolder of `top`)

    @classmethod
    def find(cls, folder: Path) -> Repository | None:
        """The repository `folder` is in, or None (not in one, or no git installed)."""
        try:
            top = run(folder, "rev-parse", "--show-toplevel").strip()
        except GitError:
            return None
        return cls(Path(top), folder) if top else None

    def git(self, *args: str) -> str:
        return run(self.cwd, *args)

    def relative(self, path: Path) -> str:
        """A path as git names it: relative to the top of the working tree."""
        return path.resolve().relative_to(self.top.resolve()).as_posix()

    # -- what the tools and the workspace ask ------------------------------------------------
    def has_commits(self) -> bool:
        try:
            self.git("rev-parse", "--verify", "--quiet", "HEAD")
        except GitError:
            return False
        return True

    def branch(self) -> str:
        try:
            name = self.git("symbolic-ref", "--short", "HEAD").strip()
        except GitError:  # not on a branch
            return f"detached HEAD at {self.git('rev-parse', '--short=10', 'HEAD').strip()}"
        return name if self.has_commits() else f"{name} (no commits yet)"

    def changes(self) -> list[tuple[str, str]]:
        """(two-letter status, path from the top) of every changed or untracked file."""
        raw = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all")
        entries, parts = [], raw.split("\0")
        index = 0
        while index < len(parts):
            item = parts[index]
            if len(item) > 3:
                entries.append((item[:2], item[3:]))
                if item[0] in "RC":
                    index += 1  # a rename is followed by its old name
            index += 1
        return entries

    def blob_id(self, revision_path: str) -> str | None:
        """The object id of `REV:path`, or None when that revision has no such file."""
        try:
            return self.git("rev-parse", "--verify", "--quiet", revision_path).strip() or None
        except GitError:
            return None

    def hash_object(self, path: str, data: bytes) -> str:
        """The blob id git would give `data` as the content of `path` (its filters applied)."""
        return run(self.top, "hash-object", f"--path={path}", "--stdin", data=data).strip()

    def tracked(self, paths: list[str]) -> set[str]:
        return {name for name in self.git("ls-files", "-z", "--", *paths).split("\0") if name}


def program_settings(folder: Path) -> list[tuple[str, str]]:
    """(key, value) of each setting of the repository's own config (`.git/config` and what
    it includes) that makes git run a program; none outside a repository."""
    try:
        raw = run(
            folder, "config", "--local", "--includes", "--null", "--get-regexp", PROGRAM_SETTINGS
        )
    except GitError:  # none set (git says so with exit code 1), or no repository
        return []
    found = []
    for item in raw.split("\0"):
        key, _, value = item.partition("\n")
        if key:
            found.append((key, value))
    return found


def distrust(folders: list[Path], keys: list[str]) -> None:
    """Switch off `keys` (program settings) for git commands run at or under `folders` (the
    workspace and its repository's top), for the rest of this process; no keys: none."""
    overrides: list[str] = []
    for key in keys:
        lowered = key.lower()
        if lowered == "core.hookspath":
            value = os.devnull  # no hooks at all: the repository chose where they live
        elif lowered.startswith("gpg."):
            value = "gpg"  # signing, if the person signs, with the usual program
        else:
            value = ""  # a filter or driver switched off
        overrides += ["-c", f"{key}={value}"]
    for folder in folders:
        if overrides:
            _distrusted[str(folder)] = tuple(overrides)
        else:
            _distrusted.pop(str(folder), None)


def is_distrusted(folder: Path) -> bool:
    """Whether program settings are switched off for git at `folder`."""
    return bool(_overrides(folder))


def _overrides(cwd: Path) -> tuple[str, ...]:
    where = str(cwd)
    for folder, overrides in _distrusted.items():
        if where == folder or where.startswith(folder.rstrip(os.sep) + os.sep):
            return overrides
    return ()


def listed_files(folder: Path) -> list[str]:
    """Tracked and untracked, not ignored files under `folder`, relative to it."""
    raw = run(folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard", text=False)
    return [name for name in raw.split("\0") if name]


def names(folder: Path, *args: str) -> list[str]:
    """The file names a command prints (diff --name-only, log --name-only); none if it fails."""
    try:
        output = run(folder, *args, text=False)
    except GitError:
        return []
    return [name for name in output.replace("\0", "\n").splitlines() if name]


def run(cwd: Path, *args: str, text: bool = True, data: bytes | None = None) -> str:
    """`git ARGS` in `cwd` (given `data` on its standard input): its output, or GitError with
    git's message. With text=False the output keeps undecodable file names (surrogate
    escapes), as the file system spells them."""
    plain = ["--no-ext-diff", "--no-textconv"] if args and args[0] in DIFFING else []
    command = ["git", *ALWAYS, *_overrides(cwd), *args[:1], *plain, *args[1:]]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            timeout=TIMEOUT,
            input=data,
            stdin=subprocess.DEVNULL if data is None else None,
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except (OSError, subprocess.SubprocessError) as error:
        raise GitError(f"git {args[0]} could not run: {error}") from None
    errors = "replace" if text else "surrogateescape"
    if done.returncode != 0:
        message = "\n".join(
            part.decode("utf-8", "replace").strip()
            for part in (done.stdout, done.stderr)
            if part.strip()
        )
        raise GitError(message or f"git {args[0]} failed (exit code {done.returncode})")
    return done.stdout.decode("utf-8", errors)
