"""The workspace: its root, the one path check, its files, its repository, map, AGENTS.md, named
commands and trust. This module is the Workspace: out of the file tools' reach are `.git/` and
`.heph/` internals and heph's own config, state and cache folders; secret are credential files
by name (secret_files), the person's credential stores and the machine's secrets in it.

May import: `settings`, `runtime`."""

from __future__ import annotations

import functools
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from hephaistus.errors import HephError
from hephaistus.runtime.secret_files import is_secret_name, places_in, secrets_in, under_any

HEPH_DIR = ".heph"
# Folders nobody wants listed or searched, skipped when there is no git to ask.
SKIPPED_DIRS = {".git", HEPH_DIR, "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox"}
SKIPPED_DIRS |= {".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", "target", ".idea"}
PROTECTED_DIRS = {".git", HEPH_DIR}
SHORT_NAME = re.compile(r"(git|heph)~\d+")  # Windows' 8.3 names of .git and .heph
# Hidden folders a project keeps its own files in; any other is a tool's (.cache, .npm, .local).
PROJECT_DOT_DIRS = {".github", ".gitlab", ".circleci", ".devcontainer", ".vscode", ".husky"}
PROJECT_DOT_DIRS |= {".storybook", ".changeset"}
WALK_FILES = 50_000  # a walk outside git stops here (and after WALK_SECONDS)
WALK_SECONDS = 3.0
HEPH_FOLDERS = ("sessions", "checkpoints", "tmp", "locks", "cache", "prompts", "plans")
# A relative path without ".", ".." or empty parts: normalizing it changes nothing.
PLAIN_RELATIVE = re.compile(r"(?!/)(?:(?!\.\.?(?:/|$))[^/]+/)*(?!\.\.?$)[^/]+")
NAME_MAX = 255  # bytes in one file name, on every common file system
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class PathError(ValueError):
    """A path the tools refuse: outside the workspace, protected, or secret."""


@dataclass(frozen=True)
class Workspace:
    """The folder heph works in; every path a tool names is checked against it."""

    root: Path

    @classmethod
    def at(cls, root: Path | str) -> Workspace:
        """The workspace at `root`, as its real path (links resolved)."""
        return cls(Path(os.path.realpath(root)))

    @functools.cached_property
    def heph_dir(self) -> Path:
        """Where heph keeps its records of the workspace (see userdirs.records_folder); where
        the repository tracks files in `.heph/` (heph would rewrite them, a commit publish
        them), in the user's state folder too."""
        from hephaistus.settings.userdirs import records_folder, workspace_folder
        from hephaistus.workspace.gitsetup import tracks_files_in

        own = self.root / HEPH_DIR
        if os.path.lexists(own) and tracks_files_in(own):
            return workspace_folder(self.root, "records")
        return records_folder(self.root, HEPH_DIR)

    @property
    def temp_dir(self) -> Path:
        """Where writes make their temporary files, out of the user's sight."""
        return self.heph_dir / "tmp"

    def resolve(self, path: str, *, for_write: bool = False) -> Path:
        """The real path of `path`, which must lie inside the workspace (symlinks followed)."""
        if not isinstance(path, str) or not path.strip():
            raise PathError("path is empty")
        if CONTROL.search(path):
            raise PathError(f"{path!r} contains a control character; name files in plain text")
        try:
            encoded = os.fsencode(path)
        except UnicodeEncodeError:
            raise PathError(f"{path!r} is not valid text (a lone surrogate)") from None
        if any(len(part) > NAME_MAX for part in encoded.split(b"/")):
            raise PathError(f"a name in '{path[:60]}…' is longer than {NAME_MAX} bytes")
        candidate = Path(path) if os.path.isabs(path) else self.root / path
        followed = real_path(candidate)
        if followed is None:
            raise PathError(f"'{path}' goes through a link heph cannot follow")
        real = Path(followed)
        if real != self.root and self.root not in real.parents:
            raise PathError(
                f"'{path}' is outside the workspace ({self.root}); use a path relative to it"
            )
        # Their internals hold what is not the model's: a remote's token, heph's own state, the
        # person's settings and approvals (a config the model wrote would run what it says).
        own = None if real == self.root else under_any(self.relative(real), self.own_folders)
        protected = protected_part(real.relative_to(self.root).parts) or self._in_git_dir(real)
        if protected or own is not None:
            raise PathError(_out_of_reach(path, protected or own or ".", own is not None))
        if for_write and (real == self.root or real.is_dir()):
            raise PathError(f"'{path}' is a folder, not a file")
        return real

    @functools.cached_property
    def own_folders(self) -> tuple[str, ...]:
        """heph's own folders (see own_folders) in the workspace, workspace-relative ("" when
        the workspace lies in one)."""
        return places_in(self.root, own_folders())

    @functools.cached_property
    def _credential_places(self) -> tuple[str, ...]:
        """The credential stores and machine secrets in the workspace (secret_files)."""
        return secrets_in(self.root)

    @functools.cached_property
    def _git_internals(self) -> str | None:
        """The repository's git directory, when it lies in the workspace under another name
        than `.git` (a `gitdir:` file names it): as out of reach as `.git/` itself."""
        from hephaistus.runtime.gitlocation import locate

        located = locate(self.root)
        if located is None:
            return None
        real = os.path.realpath(located[1])
        inside = real.startswith(os.path.join(str(self.root), ""))
        return real if inside and ".git" not in Path(real).parts else None

    def _in_git_dir(self, real: Path | str) -> str | None:
        internals = self._git_internals
        if internals is None:
            return None
        where = str(real)
        inside = where == internals or where.startswith(os.path.join(internals, ""))
        return os.path.relpath(internals, self.root) if inside else None

    def relative(self, real: Path) -> str:
        """The workspace-relative POSIX spelling of a resolved path."""
        rel = real.relative_to(self.root).as_posix()
        return rel or "."

    def is_secret(self, path: str) -> bool:
        """Whether `path` holds a credential, by its own name or, for a link, its target's."""
        return self._secret(path, {})

    def without_secrets(self, paths: list[str]) -> list[str]:
        """`paths` less those is_secret() refuses, checked in one pass (the map's thousands)."""
        real_folders: dict[str, str] = {}
        return [path for path in paths if not self._secret(path, real_folders)]

    def _secret(self, path: str, real_folders: dict[str, str]) -> bool:
        spelled = self._spelled(path)
        if self._secret_name(spelled):
            return True
        named = os.path.join(self.root, spelled)  # strings, not Paths: this runs per file
        folder = os.path.dirname(named)
        if folder not in real_folders:
            real_folders[folder] = real_path(folder) or ""
        if real_folders[folder] == folder and not os.path.islink(named):
            return False  # neither the file nor a folder on the way is a link
        real = real_path(named) or ""  # a link heph cannot follow counts as leading out
        inside = real.startswith(os.path.join(self.root, ""))
        return not inside or self._secret_name(os.path.relpath(real, self.root))

    def _secret_name(self, rel: str) -> bool:
        """Whether the workspace-relative `rel` names a credential file or lies in a store."""
        return is_secret_name(rel) or under_any(rel, self._credential_places) is not None

    def check(
        self, path: str, *, allow_secrets: bool = False, for_write: bool = False
    ) -> tuple[str, Path]:
        """(workspace-relative name, real path) of a file the tools may use: inside the
        workspace and, unless allowed, no secret under its own name or its target's."""
        real = self.resolve(path, for_write=for_write)
        rel = self.relative(real)
        if not allow_secrets and (self._secret_name(self._spelled(path)) or self._secret_name(rel)):
            raise PathError(
                f"{rel} looks like a secret file; heph does not read or write it "
                "(allow_secrets = true in the user config, or in a trusted workspace's "
                ".heph.toml, lifts this)"
            )
        return rel, real

    def _spelled(self, path: str) -> str:
        """`path` as named, made relative to the root without following links."""
        if PLAIN_RELATIVE.fullmatch(path):
            return path  # already so (the common case, and the map's thousands of files)
        return os.path.relpath(os.path.normpath(self.root / path), self.root)

    def files(self, under: str = ".") -> list[str]:
        """Workspace-relative files under `under`, sorted, respecting .gitignore. A link that
        leads out of the workspace (or to no file) is left out, so no walk ever leaves it."""
        base = self.resolve(under)
        prefix = "" if base == self.root else self.relative(base) + "/"
        listed = self._git_files(base)
        if listed is None:
            listed = self._walk_files(base)
        return sorted(
            prefix + rel
            for rel in listed
            if not protected_part(rel.split("/"))
            and not self._in_git_dir(os.path.join(base, rel))
            and not self._own(prefix + rel)
            and self._contained_file(base / rel)
        )

    def _contained_file(self, path: Path) -> bool:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return False
        if stat.S_ISREG(mode):
            return True
        if not stat.S_ISLNK(mode):
            return False
        followed = real_path(path)
        if followed is None:
            return False
        real = Path(followed)
        if self.root not in real.parents or not real.is_file():
            return False
        rel = real.relative_to(self.root)
        return not protected_part(rel.parts) and not self._own(rel.as_posix())

    def _own(self, rel: str) -> bool:
        """Whether the workspace-relative `rel` lies in one of heph's own folders."""
        return under_any(rel, self.own_folders) is not None

    def git_dir(self) -> Path | None:
        """The git directory of the repository the workspace is in (it may be a subfolder),
        as `gitlocation.locate` finds it: the nearest `.git`, the person's own."""
        from hephaistus.runtime.gitlocation import locate

        located = locate(self.root)
        return located[1] if located else None

    def _own_git_dir(self) -> Path | None:
        """The git directory, when writing to it cannot lead elsewhere: only a real `.git`
        folder. A link is not followed, and a `.git` file (a worktree's, a submodule's, or one
        an unpacked archive made to name another repository) is left alone."""
        from hephaistus.runtime.gitlocation import locate

        located = locate(self.root)
        if located is None:
            return None
        marker = located[0] / ".git"
        if os.path.islink(marker) or not marker.is_dir() or not (marker / "HEAD").is_file():
            return None
        return marker

    def _git_files(self, base: Path) -> list[str] | None:
        if self.git_dir() is None:
            return None
        from hephaistus.runtime.gitrun import GitError, listed_files

        try:
            return [name for name in listed_files(base) if not _in_heph_dir(name)]
        except GitError:
            return None

    def _walk_files(self, base: Path) -> list[str]:
        """Outside git: every file the `.gitignore`s keep, leaving out tool folders (caches,
        environments) and hidden folders but a project's own (`.github`, ...), and stopping
        after WALK_FILES files or WALK_SECONDS (a home folder is no project)."""
        from hephaistus.workspace.ignore import IgnoreRules

        rules = IgnoreRules(self.root)
        at = "" if base == self.root else self.relative(base)  # rules are the root's
        found: list[str] = []
        deadline = time.monotonic() + WALK_SECONDS
        for folder, dirs, names in os.walk(base):
            rel_folder = os.path.relpath(folder, base)
            dirs[:] = sorted(
                d
                for d in dirs
                if d not in SKIPPED_DIRS
                and (not d.startswith(".") or d in PROJECT_DOT_DIRS)
                and not rules.ignored(_join(at or ".", _join(rel_folder, d)), is_dir=True)
            )
            for name in names:
                rel = _join(rel_folder, name)
                if not rules.ignored(_join(at or ".", rel), is_dir=False):
                    found.append(rel)
            if len(found) >= WALK_FILES or time.monotonic() > deadline:
                break
        return found

    def is_project_folder(self) -> bool:
        """Whether the workspace looks like a project (see userdirs.is_project_folder)."""
        from hephaistus.settings.userdirs import is_project_folder

        return is_project_folder(self.root)

    def check_heph_dir(self) -> None:
        """`.heph/` and the folders heph keeps in it are real folders of the workspace, or
        absent; else HephDirError, naming the link."""
        for path in (self.heph_dir, *(self.heph_dir / name for name in HEPH_FOLDERS)):
            if os.path.islink(path):
                raise HephDirError(
                    f"{path} is a link (did it come with the workspace's files?): heph keeps "
                    "its own records there and writes nowhere outside the workspace, so it "
                    "stops. Remove the link and run heph again"
                )
            if os.path.lexists(path) and not path.is_dir():
                raise HephDirError(
                    f"cannot create {path} (where heph keeps its own records): a file of that "
                    "name is in the way"
                )

    def ensure_heph_dir(self) -> Path:
        """Create `.heph/` and keep it out of git through `.git/info/exclude`. A `.heph` (or a
        folder of it) that is a link, as a repository can commit one, is refused: heph's own
        records would land wherever it leads."""
        self.check_heph_dir()
        self.heph_dir.mkdir(parents=True, exist_ok=True)
        _ignore_all_of(self.heph_dir)
        git_dir = self._own_git_dir() if self.heph_dir.parent == self.root else None
        if git_dir is not None:
            # Unanchored, so it also covers a workspace that is a subfolder of the repository.
            exclude = git_dir / "info" / "exclude"
            if os.path.islink(exclude) or os.path.islink(exclude.parent):
                return self.heph_dir  # an unpacked repository's link: never written through
            if os.path.lexists(exclude) and not exclude.is_file():
                return self.heph_dir  # a named pipe would block the read for ever
            existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
            if f"{HEPH_DIR}/" not in existing.splitlines():
                exclude.parent.mkdir(parents=True, exist_ok=True)
                sep = "" if not existing or existing.endswith("\n") else "\n"
                with exclude.open("a", encoding="utf-8") as handle:
                    handle.write(f"{sep}{HEPH_DIR}/\n")
        return self.heph_dir


def _ignore_all_of(folder: Path) -> None:
    """A `.gitignore` of `*` in `folder`: git ignores the folder whatever the repository's
    layout (a worktree's or a submodule's `.git` file, whose exclude heph does not write).
    Made only where none is, never through a link."""
    try:
        fd = os.open(folder / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW)
    except OSError:
        return  # there already (heph's, or the workspace's own), or not to be written
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("# heph's own records: never committed\n*\n")


class HephDirError(HephError):
    """`.heph/` (or a folder heph keeps in it) is a link or not a folder: the run stops."""


def real_path(path: Path | str) -> str | None:
    """`path` with its links followed, or None for a link heph may not read (`/proc/1/cwd`
    is EACCES even to root without ptrace rights) or one that loops."""
    try:
        return os.path.realpath(path)
    except (OSError, RuntimeError):
        return None


def own_folders() -> tuple[str, ...]:
    """heph's own folders: its config (the person's settings), its state (approvals, trust,
    its records of each workspace, the snapshot store) and its cache (the sandbox's caches),
    and where they are by default (a run without the XDG variables would use those). No file
    tool reaches them, wherever the workspace is."""
    from hephaistus.runtime.programs import sandbox_caches
    from hephaistus.settings.userdirs import APP, config_dir, state_dir

    defaults = (Path.home() / folder / APP for folder in (".config", ".local/state", ".cache"))
    return (str(config_dir()), str(state_dir()), str(sandbox_caches().parent), *map(str, defaults))


def _out_of_reach(path: str, folder: str, own: bool) -> str:
    """Why `path`, inside the protected `folder` (heph's `own` or `.git/`, `.heph/`), is refused,
    and where to look instead."""
    if own or folder.lower().rstrip(". ") == ".heph":
        where = "heph's own config and records are" if own else "heph keeps its own records"
        hint = f"{where} there: heph sessions, heph undo and /state show them"
    else:
        hint = "the git tools show what git knows"
    return (
        f"'{path}' is inside {folder}/, which the file tools never read, list, search or "
        f"write ({hint})"
    )


def protected_part(parts: tuple[str, ...] | list[str]) -> str | None:
    """The protected folder (`.git`, `.heph`) a path's parts lead through, at any depth (a
    vendored repository's `.git` too), or None. Spelled any way a file system may take for
    it: in another case (macOS, Windows), with trailing dots or spaces, or as Windows' short
    name (`GIT~1`)."""
    for part in parts:
        spelled = part.lower().rstrip(". ")
        if spelled in PROTECTED_DIRS or SHORT_NAME.fullmatch(spelled):
            return part
    return None


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}".replace(os.sep, "/")


def _in_heph_dir(rel: str) -> bool:
    return protected_part(rel.split("/")[:1]) is not None
