"""The git repository a workspace is in: every git call heph makes goes through here.

heph runs the `git` command itself (no library: importing one would cost every run a tenth of a
second). Output is read in its machine formats (`-z`, `--porcelain`), and every failure becomes
a GitError carrying git's own message.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 60.0


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
    try:
        done = subprocess.run(
            ["git", *args],
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
