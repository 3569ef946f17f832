"""What a repository's `.git/` holds beyond what a clone brings: the part of it that is the
repository author's to decide, when it came unpacked from an archive.

`git clone` writes a plain `.git/`: a folder, config keys for the remote and the branch, no
hooks. Anything else there can run a program when heph runs git (a filter, a driver, signing, a
promisor's fetch, an fsmonitor, a hook), or lead git to another repository (a `gitdir:` file, a
`commondir`, alternates, linked refs). Listed here exactly, with the file each comes from, for
the trust question; an allow-list, so that a key added to git later counts too.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from hephaistus.gitlocation import locate
from hephaistus.repository import GitError, run

# What `git clone` and `git init` write, and the little a person adds: nothing runs from these.
PLAIN_CONFIG = re.compile(
    r"(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase"
    r"|precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath)"
    r"|remote\.[^.\n]+\.(url|fetch|pushurl|tagopt|prune)"
    r"|branch\..+\.(remote|merge|rebase|pushremote)"
    r"|user\.(name|email)|init\.defaultbranch|pull\.(rebase|ff)|push\.default|fetch\.prune"
    r"|extensions\.objectformat)"
)
# Format version 1 only allows extensions; each other extension (a promisor's, say) is a key of
# its own that needs trust. A SHA-256 repository's clone writes these two.
PLAIN_VALUES = {
    "core.repositoryformatversion": {"0", "1"},
    "core.bare": {"false"},
    "extensions.objectformat": {"sha1", "sha256"},
}
# Paths in a git directory that lead elsewhere, or are not what a clone makes.
ODD_ENTRIES = ("commondir", "objects/info/alternates", "config.worktree")
LINKED_ENTRIES = ("config", "HEAD", "objects", "refs", "hooks", "info", "packed-refs")
# Files git reads that must be plain files (a named pipe there would hang every git command).
FILE_ENTRIES = ("config", "HEAD", "index", "packed-refs", "info/exclude", "info/attributes")
# The hooks `git commit` runs.
COMMIT_HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
)


@dataclass(frozen=True)
class Item:
    """One thing in a repository's git setup that a clone would not have made: where it is, and
    what it sets."""

    source: str  # ".git/config", ".git/config.worktree", "tools/git.cfg", ".git/hooks", ".git"
    key: str
    value: str


def beyond_a_clone(root: Path) -> list[Item]:
    """Everything of the `.git` around `root` that a clone would not have written."""
    located = locate(root)
    if located is None:
        return []
    work_tree, git_dir = located
    found = _layout(work_tree, git_dir)
    if any(item.value == "not a plain file" for item in found):
        return found  # git itself would wait on it for ever: it is not asked
    found += _config(root, work_tree)
    found += _hooks(root, work_tree, git_dir)
    return found


def _layout(work_tree: Path, git_dir: Path) -> list[Item]:
    marker = work_tree / ".git"
    if marker.is_symlink():
        return [Item(".git", "layout", f"a link to {os.path.realpath(marker)}")]
    if not marker.is_dir():
        return [Item(".git", "layout", f"a file naming the git directory {git_dir}")]
    found = []
    for name in ODD_ENTRIES:
        if os.path.lexists(git_dir / name):
            found.append(Item(f".git/{name}", "layout", "leads git to other files"))
    for name in LINKED_ENTRIES:
        if os.path.islink(git_dir / name):
            target = os.path.realpath(git_dir / name)
            found.append(Item(f".git/{name}", "layout", f"a link to {target}"))
    for name in FILE_ENTRIES:
        try:
            mode = os.lstat(git_dir / name).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
            found.append(Item(f".git/{name}", "layout", "not a plain file"))
    return found


def _config(root: Path, work_tree: Path) -> list[Item]:
    """Keys of the repository's own config (and what it includes) beyond a clone's."""
    try:
        raw = run(root, "config", "--includes", "--show-origin", "--show-scope", "--null", "--list")
    except GitError:
        return []
    parts = raw.split("\0")
    found = []
    for scope, origin, item in zip(parts[0::3], parts[1::3], parts[2::3], strict=False):
        if scope not in ("local", "worktree"):
            continue  # the person's own (global, system) or heph's (command)
        key, _, value = item.partition("\n")
        if PLAIN_CONFIG.fullmatch(key) and value in PLAIN_VALUES.get(key, {value}):
            continue
        found.append(Item(_origin(origin, work_tree), key, value))
    return found


def _origin(origin: str, work_tree: Path) -> str:
    """`file:/abs/.git/config` as `.git/config`; an included file by its own path."""
    path = origin.removeprefix("file:")
    try:
        return Path(path).resolve().relative_to(work_tree.resolve()).as_posix()
    except ValueError:
        return path


def commit_hooks(root: Path) -> list[str]:
    """The names of the hooks a commit in `root`'s repository would run, from whatever folder
    git takes them (the repository's own, or a `core.hooksPath`: the person's global one runs
    what the repository holds too, as pre-commit's does)."""
    located = locate(root)
    if located is None:
        return []
    try:
        entries = sorted(_hooks_folder(root, located[1]).iterdir())
    except OSError:
        return []
    return [entry.name for entry in entries if entry.name in COMMIT_HOOKS and _is_hook(entry)]


def _hooks_folder(root: Path, git_dir: Path) -> Path:
    """Where git takes the repository's hooks from (`core.hooksPath` heeded)."""
    try:
        return Path(run(root, "rev-parse", "--path-format=absolute", "--git-path", "hooks").strip())
    except GitError:
        return git_dir / "hooks"


def _is_hook(entry: Path) -> bool:
    """Whether git would run `entry` as a hook: executable, not a folder, not a `.sample`."""
    try:
        mode = os.lstat(entry).st_mode
    except OSError:
        return False
    executable = bool(mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
    return executable and not stat.S_ISDIR(mode) and not entry.name.endswith(".sample")


def _hooks(root: Path, work_tree: Path, git_dir: Path) -> list[Item]:
    """Each hook a commit would run (executable, not a `.sample`) from a folder the repository
    holds: a hooks folder of the person's own (a global `core.hooksPath`) is theirs. What
    cannot be read is listed too: a folder or a hook heph cannot see into must not pass for
    none."""
    where = _hooks_folder(root, git_dir)
    real = os.path.realpath(where)
    if not any(
        real == base or real.startswith(os.path.join(base, ""))
        for base in (os.path.realpath(git_dir), os.path.realpath(work_tree))
    ):
        return []
    shown = (
        _origin(f"file:{where}", git_dir.parent)
        if where.is_relative_to(git_dir.parent)
        else str(where)
    )
    try:
        entries = sorted(where.iterdir())
    except FileNotFoundError:
        return []
    except OSError as error:
        return [Item(shown, "(unreadable)", f"the hooks folder cannot be read: {error.strerror}")]
    found = []
    for entry in entries:
        if not _is_hook(entry):
            continue
        try:
            digest = hashlib.sha256(entry.read_bytes()).hexdigest()
            found.append(Item(shown, entry.name, f"a program git runs (sha256 {digest})"))
        except OSError as error:
            found.append(Item(shown, entry.name, f"a program heph cannot read ({error.strerror})"))
    return found
