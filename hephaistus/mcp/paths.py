"""What a call may send a person's MCP server that runs on the host or with the network: no
path that would make it run settings a command wrote, or a clone's. A command can make a git
repository in the workspace, or in the sandbox's cache folder (both writable inside), and a
clone can commit a bare one, with settings git runs (`core.fsmonitor`, hooks, `uploadpack`): a
git server given a path there runs them as the person (mcp-server-git with no `--repository`
takes any path the model sends). The workspace's own `.git`, and the repositories nested in it
before the run, are read-only inside; one a command made is not.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hephaistus.runtime.secret_files import is_secret_name


def refused_paths(args: Any, root: Path, cache: Path, start: str) -> str | None:
    """Why the call's arguments (`args`, JSON's kinds) may not go to a person's server on the
    host or with the network, in words, or None: a path (`~` and `$HOME` read as the server
    would, any other `$VAR` refused, a `file:` URI as its path, relative ones from `start`, the
    folder the server runs in) into a repository nested in the workspace, into the sandbox's
    `cache` folder, or to the workspace (in it, or a folder holding it) while it holds a
    repository made during this run or settings beyond a clone's it is not trusted with (git
    there looks into every repository below)."""
    top, cache_folder = os.path.realpath(root), os.path.realpath(cache)

    @functools.cache
    def reaching_workspace() -> str | None:  # asked at most once a call: it walks the tree
        return _reaching(top)

    for text in _strings(args):
        word = _home_expanded(_uri_path(text))
        named = VARIABLE.search(word)
        if named:  # the server's environment is not heph's (OLDPWD, its entry's env)
            return f"{text} names an environment variable (${named.group(1)}) the server may expand"
        try:
            path = os.path.realpath(os.path.join(start, word))
            spelled = os.path.normpath(os.path.join(start, word))
        except (OSError, ValueError):  # a NUL: a server may read the path up to it
            return f"{text!r} is no path heph can check"
        if _within(spelled, (str(root), top)) and not _within(path, (top,)):
            return f"{text} leads out of the workspace through a link (to {path})"
        if _within(path, (top,)) and is_secret_name(os.path.relpath(path, top)):
            return f"{text} is a secret file of the workspace, which heph does not read"
        why = _why(path, top, cache_folder, reaching_workspace)
        if why:
            return f"{text} {why}"
    return None


VARIABLE = re.compile(r"\$\{?([A-Za-z_]\w*)")


def _home_expanded(text: str) -> str:
    """`~`, `$HOME` and `${HOME}` read as the person's home, as the server reads them."""
    home = os.path.expanduser("~")
    return os.path.expanduser(text).replace("${HOME}", home).replace("$HOME", home)


def _within(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _uri_path(text: str) -> str:
    """A `file:` URI's path, percent-decoded; any other text as it is."""
    if not text.lower().startswith("file:"):
        return text
    from urllib.parse import unquote, urlsplit

    return unquote(urlsplit(text).path)


def _strings(args: Any) -> list[str]:
    """Every string in `args`, however deep."""
    if isinstance(args, str):
        return [args]
    if isinstance(args, dict):  # a key may be a path too (a tool writing {path: text})
        args = [*args.keys(), *args.values()]
    if isinstance(args, list):
        return [text for value in args for text in _strings(value)]
    return []


def _why(
    path: str, top: str, cache: str, reaching_workspace: Callable[[], str | None]
) -> str | None:
    if _within(path, (cache,)):
        return "is in the sandbox's cache folder, where commands write the settings git runs"
    inside = _within(path, (top,))
    if not inside and not _within(top, (path,)):
        return None
    at = path
    while at.startswith(top + "/") or (at == top and inside):
        if (at != top and os.path.lexists(os.path.join(at, ".git"))) or _git_folder(at):
            return f"is in a repository nested in the workspace ({at}), whose settings git runs"
        at = os.path.dirname(at)
    return reaching_workspace()


def _reaching(top: str) -> str | None:
    """Why no path may reach the workspace's repository (or one git status goes into from
    it), or None."""
    from hephaistus.runtime.before_commands import Unreadable

    try:
        made = made_repositories(Path(top))
    except Unreadable as unknown:
        return f"would reach a submodule ({unknown}) git status goes into and heph cannot read"
    if made:
        return (
            f"would reach a repository a command made in the workspace ({made[0]}), whose git "
            "settings it would run"
        )
    from hephaistus.runtime.gitlocation import is_disabled

    if is_disabled(Path(top)):  # its .git holds what a clone would not, and is not trusted
        return "would reach the workspace's repository, whose git settings you have not trusted"
    return None


def _git_folder(folder: str) -> bool:
    """Whether git takes `folder` itself for a repository's folder (a bare repository, or one
    named by a `gitdir:` file): its own settings, which no `.git` in it announces."""
    parts = ("objects", "refs", "commondir", "config")  # HEAD may be a link to nowhere
    return os.path.lexists(os.path.join(folder, "HEAD")) and any(
        os.path.lexists(os.path.join(folder, part)) for part in parts
    )


def made_repositories(root: Path) -> list[Path]:
    """The repositories in the workspace (its own included) a command may have made, in this
    run or an earlier one: a `.git` made or changed since this process first started one, or
    since heph first ran a command in a workspace holding this one, or not where it was (by
    inode) before heph first ran a command here. Their settings may be a command's, and git
    status from any folder goes into a submodule's and runs them."""
    from hephaistus.runtime.before_commands import (
        enclosing_first_command,
        repositories_before_commands,
        repository_marks,
    )
    from hephaistus.runtime.sandbox import first_started

    since = [t for t in (first_started(), enclosing_first_command(root)) if t is not None]
    before = repositories_before_commands(root)
    if not since and before is None:  # no command has run here: none can have made one
        return []
    made = []
    for rel, marked in repository_marks(root).items():
        newer = any(marked.st_ctime >= t for t in since)
        if newer or (before is not None and before.get(rel) != marked.st_ino):
            made.append(root / rel)
    return made
