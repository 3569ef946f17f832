"""What the sandbox hides from a command: the person's credential stores (a maintained list; a
store that is a link hides what it points to), heph's own config and state folders, the
workspace's secret files at any depth (ignored ones too, in git or not), the host's sockets and
the person's other projects. (The git configuration a command reads is shown without its
credentials: see gitconfigs.)
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from hephaistus.secret_files import CREDENTIAL_STORES

# What only root may read on the machine (a sandbox run as root reads it otherwise).
ROOT_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private")


def hidden_paths(workspace: Path, secrets: list[str]) -> tuple[Path, ...]:
    """What the sandbox hides: the person's credential stores, heph's own config and state
    folders, the machine's secrets only root may read, and the workspace's secret files
    (`secrets`, workspace-relative). A store or secret that is a link hides what it points
    to, unless that holds the workspace (a clone's `.env -> ..` hides nothing of the rest)."""
    from hephaistus.userdirs import config_dir, state_dir

    home = Path.home()
    paths = [home / name for name in CREDENTIAL_STORES]
    paths += [config_dir(), state_dir()]
    paths += [Path(name) for name in ROOT_SECRETS] + _host_keys()
    paths += [workspace / rel for rel in secrets]
    hidden: list[Path] = []
    for path in paths:
        if path.is_symlink():
            path = Path(os.path.realpath(path))
            if path == workspace or path in workspace.parents:
                continue
        if path not in hidden:
            hidden.append(path)
    return tuple(hidden)


def _host_keys() -> list[Path]:
    """The machine's SSH host keys (private: root's alone)."""
    try:
        names = os.listdir("/etc/ssh")
    except OSError:
        return []
    return [Path("/etc/ssh", name) for name in names if name.endswith("_key")]


SKIPPED_FOLDERS = {".git", ".heph", "node_modules", ".venv", "venv", "__pycache__", ".tox"}
SECRET_WALK_DEPTH = 8
SECRET_WALK_ENTRIES = 20_000


@dataclass(frozen=True)
class Walked:
    """What a walk of the workspace found for the sandbox (workspace-relative names)."""

    secrets: list[str]  # secret files and folders: hidden inside
    internals: list[str]  # nested repositories' `.git` and heph's `.heph`: read-only inside


def walk(root: Path) -> Walked:
    """The workspace's secret files (`.env`, keys: secret_files.is_secret_name), ignored ones
    included, and the `.git` and `.heph` of repositories and workspaces nested in it (a
    vendored repository: a hook written there would run at the person's next commit in it).
    A bounded walk near the top, where these sit, then git's list of every file at any depth."""
    from hephaistus.secret_files import is_secret_name

    found = Walked([], [])
    pending = [(root, 0)]
    seen = 0
    while pending and seen < SECRET_WALK_ENTRIES:
        folder, depth = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            rel = os.path.relpath(entry.path, root)
            if entry.name in (".git", ".heph") and not entry.is_symlink():
                if folder != root:  # the workspace's own are bound read-only anyway
                    found.internals.append(rel)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_FOLDERS and depth < SECRET_WALK_DEPTH:
                    pending.append((Path(entry.path), depth + 1))
                if is_secret_name(rel + "/x"):  # a folder of secrets (.ssh inside)
                    found.secrets.append(rel)
            elif is_secret_name(rel):
                found.secrets.append(rel)
    # Deeper, or past the walk's bound: git lists every file at any depth in a few
    # milliseconds, ignored ones too (an ignored folder as one name).
    walked = set(found.secrets)
    for name in _git_listed(root):
        rel = name.rstrip("/")  # an ignored folder, or a nested repository, listed whole
        if rel not in walked and is_secret_name(rel + "/x" if name.endswith("/") else rel):
            found.secrets.append(rel)
            walked.add(rel)
        if name.endswith("/") and os.path.lexists(root / rel / ".git"):
            inner = f"{rel}/.git"
            if inner not in found.internals:
                found.internals.append(inner)  # a repository nested deeper than the walk
    return found


UNTRACKED = ("ls-files", "-z", "--cached", "--others", "--exclude-standard")
IGNORED = ("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")


def _git_listed(root: Path) -> list[str]:
    """Every file git sees under `root` (tracked, untracked, ignored: an ignored folder as one
    name ending in /), relative to it. In a repository the person's git lists them (none where
    heph runs no git there: an untrusted odd `.git`); outside one, heph's own snapshot store
    over the workspace does, once it exists (the picture before a command makes it)."""
    from hephaistus.gitlocation import is_disabled, locate
    from hephaistus.repository import GitError, names, run_private
    from hephaistus.userdirs import workspace_folder

    located = locate(root)
    if located is not None:
        return [] if is_disabled(root) else names(root, *UNTRACKED) + names(root, *IGNORED)
    store = workspace_folder(root, "snapshots")
    if not (store / "HEAD").is_file():
        return []
    listed: list[str] = []
    for args in (UNTRACKED, IGNORED):
        try:
            listed += os.fsdecode(run_private(store, root, *args)).split("\0")
        except GitError:
            continue
    return [name for name in listed if name]


def secret_files(root: Path) -> list[str]:
    """The workspace's secret files, to hide inside (see walk)."""
    return walk(root).secrets


# -- the host's Unix sockets ---------------------------------------------------------------


def host_sockets(shown: list[Path]) -> list[Path]:
    """The host's listening Unix sockets that a command could reach through the folders the
    sandbox shows (`shown`: the workspace, its toolchains; the rest of /tmp and /run are the
    sandbox's own): a socket is a door to a program outside (docker, an SSH or password
    agent), so each is hidden, wherever it lies. The kernel lists every bound one (in
    /proc/net/unix), so none is missed however deep."""
    try:
        with open("/proc/net/unix", "rb") as listing:
            lines = listing.read().decode("utf-8", "surrogateescape").splitlines()[1:]
    except OSError:
        return []
    found: list[Path] = []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed, or abstract (@name): the sandbox's network namespace hides those
        path = Path(fields[7])
        private = path.parts[1:2] in (("tmp",), ("run",))
        if private and not any(path.is_relative_to(folder) for folder in shown):
            continue
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode) and path not in found:
                found.append(path)
        except OSError:
            continue  # gone, or in another mount namespace
    return found


# -- other projects of the person's -----------------------------------------------------------

PROJECT_MARKS = (".git", ".heph", ".env")  # a folder holding one is a project, with its secrets


def other_projects(workspace: Path, shown: list[Path]) -> list[Path]:
    """The person's other projects a command could read (their `.env`, a remote's token in
    their `.git/config`, heph's records of them): folders beside the workspace, and folders in
    the home folder and one level down (not its dot-folders: toolchains live there), that hold
    a `.git`, `.heph` or `.env`. Neither the workspace nor a folder holding it, nor one holding
    a toolchain the command uses (`shown`: PATH entries, a virtual environment), is one."""
    home = Path.home()
    candidates = _folders(workspace.parent)
    for folder in _folders(home):
        candidates += [folder, *_folders(folder)]
    kept = [str(workspace), *(str(path) for path in shown)]  # and what is in them, or holds them
    found: list[Path] = []
    for folder in dict.fromkeys(candidates):
        name = str(folder)
        if any(_nested(name, other) or _nested(other, name) for other in kept):
            continue
        if any(os.path.lexists(os.path.join(name, mark)) for mark in PROJECT_MARKS):
            found.append(folder)
    return found


def _nested(inner: str, outer: str) -> bool:
    """Whether the path `inner` is `outer` or lies in it (both absolute, as strings: this runs
    for every folder of the home folder at every command)."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def _folders(parent: Path) -> list[Path]:
    """The folders in `parent` whose names do not start with a dot (links not followed)."""
    try:
        with os.scandir(parent) as entries:
            return [
                Path(entry.path)
                for entry in entries
                if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []
