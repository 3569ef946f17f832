"""The git repository a workspace is in: every git call heph makes goes through here.

heph runs the `git` command itself (no library: importing one would cost every run a tenth of a
second). Output is read in its machine formats (`-z`, `--porcelain`), and every failure becomes
a GitError carrying git's own message.

A repository's own `.git/` can make git run programs: an fsmonitor hook on every status (heph
lists files at every start), hooks (`post-index-change` runs when a diff refreshes the index),
clean and smudge filters, external diff and textconv drivers, a hooks path, signing programs,
a promisor remote's upload-pack on a lazy fetch; and `core.worktree` can point git at a tree
outside the workspace. A clone brings none of these, but an unpacked archive can. So heph's git
never asks an fsmonitor, never fetches (no transport is allowed), runs no hook but a commit's,
never recurses into submodules (their own config could run programs), its diffs never run
external drivers, its pathspecs are literal where it names files (a file named `[.]env` is not
a pattern), and a repository whose top is not around the workspace is none. In a workspace the
person has not trusted, the repository's own program settings (trust lists them) are switched
off for every git command heph runs, and `git_commit` refuses (see `distrust`).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 60.0
# The settings of a repository's own config that make git run a program of its choosing, or
# work on another tree than the one around the workspace.
PROGRAM_SETTINGS = (
    r"^(filter\..+\.(clean|smudge|process)|diff\.external|diff\..+\.(command|textconv)"
    r"|merge\..+\.driver|core\.(hookspath|worktree|sshcommand|askpass|editor|pager|gitproxy"
    r"|alternaterefscommand)|sequence\.editor|gpg\..+|credential\..+"
    r"|remote\..+\.(uploadpack|receivepack|vcs)|uploadpack\..+)$"
)
OWN_SCOPES = {"local", "worktree"}  # .git/config, .git/config.worktree (and their includes)
# What every git command heph runs gets: no fsmonitor, and no transport, so no lazy fetch of a
# partial clone (its upload-pack could be the repository's program).
ALWAYS = ("-c", "core.fsmonitor=false", "-c", "protocol.allow=never")
NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")  # no hook runs but a commit's, asked for
# Commands that run no program and read the configuration as it is (`rev-parse --git-path
# hooks` must say where a commit's hooks would be): nothing is switched off for them.
AS_CONFIGURED = {"rev-parse", "config"}
DIFFING = {"diff", "log", "show"}  # their drivers are never run: heph reads plain diffs
NOT_RECURSING = {"diff", "status"}  # a submodule's own config could run its programs
NAMING_FILES = {"add", "commit", "rm", "ls-files", "diff", "hash-object"}  # literal pathspecs
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
        if not top:
            return None
        real_top, real_folder = os.path.realpath(top), os.path.realpath(folder)
        if real_folder != real_top and not real_folder.startswith(real_top.rstrip(os.sep) + os.sep):
            return None  # `core.worktree` names another tree: git would show files elsewhere
        return cls(Path(top), folder)

    def git(self, *args: str, literal: bool = False) -> str:
        """`git ARGS` here; `literal`: the paths in ARGS are file names, never patterns."""
        return run(self.cwd, *args, literal=literal)

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
        listed = self.git("ls-files", "-z", "--", *paths, literal=True)
        return {name for name in listed.split("\0") if name}


def program_settings(folder: Path) -> list[tuple[str, str]]:
    """(key, value) of each setting of the repository's own config (`.git/config`,
    `.git/config.worktree` and what they include) that makes git run a program or work on
    another tree; none outside a repository."""
    try:
        raw = run(
            folder,
            "config",
            "--includes",
            "--show-scope",
            "--null",
            "--get-regexp",
            PROGRAM_SETTINGS,
        )
    except GitError:  # none set (git says so with exit code 1), or no repository
        return []
    parts = raw.split("\0")
    found = []
    for scope, item in zip(parts[::2], parts[1::2], strict=False):  # a last empty part
        key, _, value = item.partition("\n")
        if key and scope in OWN_SCOPES:
            found.append((key, value))
    return found


def hooks(folder: Path) -> list[tuple[str, str]]:
    """(name, sha256) of each hook the repository holds (executable, not a `.sample`): a
    clone brings none, an unpacked archive can."""
    import hashlib

    try:
        where = Path(
            run(folder, "rev-parse", "--path-format=absolute", "--git-path", "hooks").strip()
        )
    except GitError:
        return []
    found = []
    try:
        entries = sorted(where.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.name.endswith(".sample") or not os.access(entry, os.X_OK) or not entry.is_file():
            continue
        try:
            found.append((entry.name, hashlib.sha256(entry.read_bytes()).hexdigest()))
        except OSError:
            continue
    return found


def distrust(folders: list[Path], keys: list[str]) -> None:
    """Switch off `keys` (program settings) for git commands run at or under `folders` (the
    workspace and its repository's top), for the rest of this process; no keys: none."""
    overrides: list[str] = []
    for key in keys:
        lowered = key.lower()
        if lowered in ("core.hookspath", "hooks"):
            key, value = "core.hooksPath", os.devnull  # no hooks: the repository's own
        elif lowered.startswith(("filter.", "diff.", "merge.")):
            value = ""  # a filter or driver switched off
        else:
            continue  # never used by heph's commands (no fetch, no editor, no pager), or a
            # commit's only (signing), and a commit is refused while any is switched off
        overrides += ["-c", f"{key}={value}"]
    if keys and not overrides:
        overrides = ["-c", "core.fsmonitor=false"]  # the mark that something is distrusted
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


def run(
    cwd: Path, *args: str, text: bool = True, data: bytes | None = None, literal: bool = False
) -> str:
    """`git ARGS` in `cwd` (given `data` on its standard input): its output, or GitError with
    git's message. With text=False the output keeps undecodable file names (surrogate
    escapes), as the file system spells them; with `literal`, paths are names, not patterns."""
    verb = args[0] if args else ""
    flags = ["--no-ext-diff", "--no-textconv"] if verb in DIFFING else []
    flags += ["--ignore-submodules=all"] if verb in NOT_RECURSING else []
    if verb in AS_CONFIGURED:
        switched_off: tuple[str, ...] = ()
    else:
        switched_off = (*(NO_HOOKS if verb != "commit" else ()), *_overrides(cwd))
    command = ["git", *ALWAYS, *switched_off, *args[:1], *flags, *args[1:]]
    environ = {**os.environ, "GIT_LITERAL_PATHSPECS": "1"} if literal else None
    if literal and verb not in NAMING_FILES:
        raise ValueError(f"literal pathspecs are for commands that name files, not git {verb}")
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            timeout=TIMEOUT,
            input=data,
            stdin=subprocess.DEVNULL if data is None else None,
            env=environ,
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
