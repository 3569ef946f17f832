"""The git repository a workspace is in: what the git tools and the workspace ask of it. Its
commands run through gitrun (`run`, `names`); the git tools reach git through GitPython
(`Repository.library`, imported only when a git tool runs: the import costs about 140 ms), whose
every command gitrun runs too.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hephaistus.runtime.gitlocation import is_disabled, locate
from hephaistus.runtime.gitrun import GitError, run

if TYPE_CHECKING:
    from hephaistus.workspace.gitlibrary import RunnerGit


@dataclass(frozen=True)
class Repository:
    """The git repository a workspace is in, and the git commands the tools and the workspace
    run."""

    top: Path  # the working tree's top folder
    cwd: Path  # where commands run (the workspace, which may be a subfolder of `top`)

    @classmethod
    def find(cls, folder: Path) -> Repository | None:
        """The repository around `folder` (its `.git`), or None: none, git missing, or git
        switched off there until the workspace is trusted."""
        located = locate(folder)
        if located is None or is_disabled(folder):
            return None
        try:
            run(folder, "rev-parse", "--git-dir")
        except GitError:
            return None
        return cls(located[0], folder)

    def git(self, *args: str, literal: bool = False) -> str:
        """`git ARGS` here; `literal`: the paths in ARGS are file names, never patterns."""
        return run(self.cwd, *args, literal=literal)

    def relative(self, path: Path) -> str:
        """A path as git names it: relative to the top of the working tree."""
        return path.resolve().relative_to(self.top.resolve()).as_posix()

    # -- what the git tools ask, through GitPython --------------------------------------------
    @functools.cached_property
    def library(self) -> RunnerGit:
        """GitPython's git command for this repository, its commands run by `run` (imported
        here, when a git tool first asks: no other run pays for the import)."""
        from hephaistus.workspace.gitlibrary import RunnerGit

        return RunnerGit(self.top)

    def command(self, verb: str, *args: str, literal: bool = False) -> str:
        """`git VERB ARGS` through GitPython, in the working tree's top folder (name files by
        absolute path); `literal`: those paths are file names, never patterns."""
        call = getattr(self.library, verb.replace("-", "_"))
        asked = {"GIT_LITERAL_PATHSPECS": "1"} if literal else {}
        with self.library.custom_environment(**asked):
            return str(call(*args))

    def has_commits(self) -> bool:
        """Whether HEAD names a commit (a new repository has none)."""
        try:
            self.command("rev-parse", "--verify", "--quiet", "HEAD")
        except GitError:
            return False
        return True

    def branch(self) -> str:
        """The current branch's name, saying so when it has no commits, or the detached HEAD's
        commit."""
        try:
            name = self.command("symbolic-ref", "--short", "HEAD").strip()
        except GitError:  # not on a branch
            return f"detached HEAD at {self.command('rev-parse', '--short=10', 'HEAD').strip()}"
        return name if self.has_commits() else f"{name} (no commits yet)"

    def head_id(self) -> str:
        """The full id of the commit HEAD names."""
        return self.command("rev-parse", "HEAD").strip()

    def changes(self) -> list[tuple[str, str]]:
        """(two-letter status, path from the top) of every changed or untracked file."""
        raw = self.command("status", "--porcelain=v1", "-z", "--untracked-files=all")
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

    def committed_blob(self, path: str) -> str | None:
        """The object id HEAD's tree gives `path` (named from the top), or None when it has no
        such file."""
        return self.blob_at("HEAD", path)

    def blob_at(self, revision: str, path: str) -> str | None:
        """The object id `revision`'s tree gives `path` (named from the top), or None."""
        try:
            found = self.command("rev-parse", "--verify", "--quiet", f"{revision}:{path}")
        except GitError:
            return None
        return found.strip() or None

    def hash_object(self, path: str, data: bytes) -> str:
        """The blob id git would give `data` as the content of `path` (its filters applied)."""
        found = self.library.hash_object(f"--path={path}", "--stdin", istream=io.BytesIO(data))
        return str(found).strip()

    def tracked(self, paths: list[str]) -> set[str]:
        """Which of `paths` git tracks, named as `relative` names them (from the top)."""
        listed = self.command("ls-files", "-z", "--full-name", "--", *paths, literal=True)
        return {name for name in listed.split("\0") if name}

    def log(self, count: int) -> str:
        """The last `count` commits, a line each."""
        return self.command("log", f"-{count}", "--oneline", "--decorate")
