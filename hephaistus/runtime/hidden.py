"""What the sandbox hides from a command: the person's credential stores (a maintained list,
where their XDG folders put them too; a store that is a link hides what it points to), heph's
own config and state folders, the workspace's secret files at any depth (ignored ones too, in git
or not), the host's sockets and the person's other projects (of one that holds a toolchain the
command uses, its secrets and records). Every path is a real one: bubblewrap mounts nothing
through a link (a home folder reached through one). (The git configuration a command reads is
shown without its credentials: see gitconfigs.)
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from hephaistus.runtime.secret_files import (
    CREDENTIAL_STORES,
    ROOT_SECRETS,
    host_keys,
    is_env_file,
    is_secret_name,
)

# Where an XDG variable moves the stores listed under the home folder's default for it.
XDG_FOLDERS = {
    ".config/": "XDG_CONFIG_HOME",
    ".local/share/": "XDG_DATA_HOME",
    ".local/state/": "XDG_STATE_HOME",
    ".cache/": "XDG_CACHE_HOME",
}


def real_home() -> Path:
    """The home folder's real path."""
    return Path(os.path.realpath(Path.home()))


def hidden_paths(workspace: Path, secrets: list[str]) -> tuple[Path, ...]:
    """What the sandbox hides: the person's credential stores, heph's own config and state
    folders, the machine's secrets only root may read, and the workspace's secret files
    (`secrets`, workspace-relative), by their real paths (see real_paths)."""
    from hephaistus.settings.userdirs import config_dir, state_dir

    paths = [*credential_stores(real_home()), *home_secrets(real_home()), config_dir(), state_dir()]
    paths += [Path(name) for name in (*ROOT_SECRETS, *host_keys())]
    paths += [workspace / rel for rel in secrets]
    return tuple(real_paths(paths, workspace))


def credential_stores(home: Path) -> list[Path]:
    """The person's credential stores: each under `home`, and, of those in a folder an XDG
    variable moves (`~/.config/gh` with `$XDG_CONFIG_HOME`), where the variable puts it."""
    moved = {
        prefix: os.environ[name]
        for prefix, name in XDG_FOLDERS.items()
        if os.path.isabs(os.environ.get(name, ""))
    }
    paths = [home / name for name in CREDENTIAL_STORES]
    for name in CREDENTIAL_STORES:
        for prefix, folder in moved.items():
            if name.startswith(prefix):
                paths.append(Path(folder, name.removeprefix(prefix)))
    return paths


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
                found.internals.extend(_editable_checkouts(Path(entry.path), root))
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


def _editable_checkouts(folder: Path, root: Path) -> list[str]:
    """The `.git` of each checkout pip made for an editable install from git, when `folder` is
    a virtual environment (`src/NAME/.git`): the walk and git's listing pass over a `.venv`."""
    if not (folder / "pyvenv.cfg").is_file():
        return []
    try:
        names = [entry for entry in os.scandir(folder / "src") if entry.is_dir()]
    except OSError:
        return []
    inner = [Path(entry.path, ".git") for entry in names]
    return [os.path.relpath(path, root) for path in inner if os.path.lexists(path)]


UNTRACKED = ("ls-files", "-z", "--cached", "--others", "--exclude-standard")
IGNORED = ("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")


def _git_listed(root: Path) -> list[str]:
    """Every file git sees under `root` (tracked, untracked, ignored: an ignored folder as one
    name ending in /), relative to it. In a repository the person's git lists them (none where
    heph runs no git there: an untrusted odd `.git`); outside one, heph's own snapshot store
    over the workspace does, once it exists (the picture before a command makes it)."""
    from hephaistus.runtime.gitlocation import is_disabled, locate
    from hephaistus.runtime.gitrun import GitError, names, run_private
    from hephaistus.settings.userdirs import workspace_folder

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
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue  # gone, or in another mount namespace
        real = Path(os.path.realpath(path))  # bound through a link (a linked home)
        if real not in found:
            found.append(real)
    return found


# -- other projects of the person's -----------------------------------------------------------

PROJECT_MARKS = (".git", ".heph", ".env")  # a folder holding one is a project, with its secrets
# Home's dot-folders that are no other project whatever they hold (many keep them in git): the
# person's settings and data, which every program reads, and the toolchain managers' homes (a
# virtual environment's Python is pyenv's; rustup's proxies on PATH run what ~/.rustup holds).
KEPT_DOT_FOLDERS = {".config", ".local", ".cache"}
KEPT_DOT_FOLDERS |= {".pyenv", ".rbenv", ".nvm", ".cargo", ".rustup", ".asdf", ".sdkman"}
KEPT_DOT_FOLDERS |= {".volta", ".bun", ".deno", ".rye", ".juliaup", ".ghcup", ".opam", ".conda"}


@dataclass(frozen=True)
class Projects:
    """The person's projects around the workspace (real paths), found once per sandbox."""

    around: tuple[Path, ...]  # beside the way from the workspace to home: hidden unless used
    shown: tuple[Path, ...]  # always shown, their secrets not (see exposed_secrets)


def projects_around(workspace: Path, git_dirs: list[Path]) -> Projects:
    """The person's other projects a command could read (their `.env`, a remote's token in
    their `.git/config`, heph's records of them): the folders holding a `.git`, `.heph` or
    `.env` among the siblings of every folder between the workspace and the home folder (one
    level into a sibling that is none: `~/code/orgB/other` beside `~/code/orgA/ws`), and home's
    dot-folders that hold one (`~/.dotfiles`). Outside home: the workspace's siblings and
    home's. Shown: the projects that hold the workspace, its repository (`git_dirs`: a
    worktree's main one) and home's kept dot-folders (KEPT_DOT_FOLDERS)."""
    home = real_home()
    way = [workspace]
    if home in workspace.parents:
        way += [folder for folder in workspace.parents if home in folder.parents]
    found: list[Path] = []
    for parent in dict.fromkeys([*(folder.parent for folder in way), home]):
        for folder in _folders(parent, dots=parent == home):
            if _is_project(folder):
                found.append(folder)
            elif not folder.name.startswith("."):  # a dot-folder of home: never looked into
                found += [inner for inner in _folders(folder) if _is_project(inner)]
    shown = [folder for folder in way[1:] if _is_project(folder)]
    shown += [path.parent for path in git_dirs if path.name == ".git" and path.parent != workspace]
    shown += [home / name for name in sorted(KEPT_DOT_FOLDERS) if _is_project(home / name)]
    return Projects(tuple(dict.fromkeys(found)), tuple(dict.fromkeys(shown)))


def used_folders(argv: list[str], env: dict[str, str]) -> list[Path]:
    """The folders a command's programs come from: its own program's, its PATH's entries and
    its virtual environment (never hidden as another project's)."""
    named = [argv[0]] if argv and os.path.isabs(argv[0]) else []
    named += [entry for entry in env.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]
    named += [env["VIRTUAL_ENV"]] if env.get("VIRTUAL_ENV") else []
    return [Path(name) for name in named]


def other_projects(
    projects: Projects, workspace: Path, used: list[Path]
) -> tuple[list[Path], list[Path]]:
    """(hidden, shown) of the `projects` around the workspace, for a command that uses the
    folders `used` (its PATH entries, its virtual environment, the workspace's repository):
    a project holding one of them, or the workspace, is shown (its secrets hidden: see
    exposed_secrets); one inside the workspace or a used folder is neither; the rest are
    hidden whole. A used folder is taken by its real path, but in the workspace, whose links
    are a clone's or a command's to set (one to another project shows nothing of it)."""
    root = str(workspace)
    kept = [_real(str(path)) for path in used if not _nested(str(path), root)]
    inside = tuple(folder.rstrip("/") + "/" for folder in [root, *kept])
    holders = {parent for folder in [root, *kept] for parent in _parents(folder)}
    hidden: list[Path] = []
    shown = list(projects.shown)
    for folder in projects.around:
        name = str(folder)
        if (name + "/").startswith(inside) or folder in projects.shown:
            continue
        (shown if name in holders else hidden).append(folder)
    return hidden, shown


@functools.lru_cache(maxsize=512)
def _real(path: str) -> str:
    """`path`'s real path, looked up once per process (a command's PATH, at every command)."""
    return os.path.realpath(path)


def _parents(path: str) -> list[str]:
    """The folders that hold `path` (absolute, as a string), up to /."""
    found = []
    while (parent := os.path.dirname(path)) != path:
        found.append(parent)
        path = parent
    return found


def exposed_secrets(project: Path, workspace: Path) -> list[Path]:
    """What stays hidden of a project the sandbox shows (a toolchain's: a command runs its
    code): heph's records of it (`.heph`), its secret files at its top and one folder down
    (secret_files.is_secret_name; a link's target), and deeper, as far as the walk reaches,
    those but a library's files (`secrets.py`, `cacert.pem`, `credentials.py`: Python's own
    `secrets` module; hidden, they would break the toolchain), and `.env` files (inside a
    `.venv` or `node_modules`, only at its top). Not the workspace's, which its
    own walk finds. No git runs in it: it is not the workspace."""
    found: list[Path] = []
    pending = [(project, 0, True)]  # a folder, its depth, whether to go into its folders
    seen = 0
    while pending and seen < SECRET_WALK_ENTRIES:
        folder, depth, deeper = pending.pop()
        for entry in _entries(folder):
            seen += 1
            path = Path(entry.path)
            rel = os.path.relpath(path, project)
            secret = _secret_entry(entry, rel) and (depth < 2 or not _library_file(entry.name))
            secret = secret or is_env_file(entry.name)
            if entry.name == ".heph" or secret:
                found.append(path)
            elif deeper and depth < SECRET_WALK_DEPTH and _walked_into(entry, workspace):
                pending.append((path, depth + 1, entry.name not in SKIPPED_FOLDERS))
    return real_paths(found, workspace)


# Deep in a toolchain these are a library's, whatever their names say (`secrets.py`,
# `credentials.py`, `cacert.pem`): hidden, the toolchain would break.
LIBRARY_SUFFIXES = {".py", ".pyc", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".rb", ".go", ".pem"}
LIBRARY_SUFFIXES |= {".java", ".class", ".so", ".crt", ".cer", ".h", ".c", ".rs", ".pm"}


def _library_file(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in LIBRARY_SUFFIXES


def _walked_into(entry: os.DirEntry[str], workspace: Path) -> bool:
    """Whether the walk of a project goes into `entry`: a folder, not its `.git` (its config is
    shown cleaned) nor the workspace."""
    return (
        entry.is_dir(follow_symlinks=False)
        and entry.name != ".git"
        and entry.path != str(workspace)
    )


def _secret_entry(entry: os.DirEntry[str], rel: str) -> bool:
    """Whether a folder's entry (`rel`, relative to the project) is a secret file, or a
    folder of secrets (`.ssh`)."""
    return is_secret_name(rel + "/x" if entry.is_dir(follow_symlinks=False) else rel)


def real_paths(paths: list[Path], workspace: Path) -> list[Path]:
    """`paths` by their real paths (a link hides what it points to), without those that are
    the workspace or hold it (a `.env -> ..` hides nothing of the rest), each once."""
    found: list[Path] = []
    for path in paths:
        real = Path(os.path.realpath(path))
        if real != workspace and real not in workspace.parents and real not in found:
            found.append(real)
    return found


def _is_project(folder: Path) -> bool:
    """Whether `folder` holds a `.git`, `.heph` or `.env`, or any secret file at its top (a
    `~/notes` holding `api.env` is hidden as a project is)."""
    if any(os.path.lexists(os.path.join(folder, mark)) for mark in PROJECT_MARKS):
        return True
    return any(is_secret_name(entry.name) for entry in _entries(folder))


def home_secrets(home: Path) -> list[Path]:
    """The secret files (and folders of them) right in the home folder (`~/api.env`)."""
    return [Path(entry.path) for entry in _entries(home) if _secret_entry(entry, entry.name)]


def _nested(inner: str, outer: str) -> bool:
    """Whether the path `inner` is `outer` or lies in it (both absolute, as strings)."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def _entries(folder: Path | str) -> list[os.DirEntry[str]]:
    """The entries of `folder` (none where it cannot be read)."""
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []


def _folders(parent: Path, dots: bool = False) -> list[Path]:
    """The folders in `parent` (links not followed), those whose names start with a dot only
    with `dots`, never the kept dot-folders."""
    return [
        Path(entry.path)
        for entry in _entries(parent)
        if (dots or not entry.name.startswith("."))
        and entry.name not in KEPT_DOT_FOLDERS
        and entry.is_dir(follow_symlinks=False)
    ]
