"""Snapshots of the workspace around each command heph runs, so what a command created, changed
or deleted becomes effects like any write: shown as a diff, recorded, and undone by `heph undo`.

A snapshot is a git tree in heph's own repository (its own index and objects: the person's
index, objects and `git status` stay as they were), kept in the user's state folder, one per
workspace: never in the workspace, where a clone could commit a store whose config runs its
filters, nor anywhere a sandboxed command can write or read (the sandbox hides the state
folder). It is taken with none of the person's or the workspace's git settings, and no
attribute of the workspace's changes what is kept (no filter, no line-ending or encoding
conversion: heph's own `info/attributes` unsets them all). The workspace's `.gitignore` files
are honoured, so ignored files (a `.venv`, build output) are not snapshotted; `.git/`, `.heph/`
and heph's own folders (its config, state and cache, which a home folder holds: the store itself)
never are. Outside git this works the same: git is only heph's tool here.

What a command did to what the pictures leave out, and what needs a word of its own (a git
repository it made, which undo removes; a setuid file; a file too large to keep a copy of, which
is never read whole): see leftovers.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from hephaistus.records.filestate import LARGEST_KEPT
from hephaistus.records.leftovers import (
    SPECIAL,
    Remarks,
    Watch,
    changed_since,
    repositories_in,
    special_name,
)
from hephaistus.records.snapshot_contents import Changed, Named, read_changes
from hephaistus.runtime.gitrun import GitError, run_private
from hephaistus.runtime.secret_files import places_in
from hephaistus.values import FileChange

if TYPE_CHECKING:
    from hephaistus.records.checkpoints import Checkpoints
    from hephaistus.workspace.repository import Repository

FOLDER = "snapshots"
REGULAR = ("100644", "100755")  # what is restored: files and links (a submodule is left alone)
LINK = "120000"
LINK_MODE = stat.S_IFLNK | 0o777  # a side of a change that is a symbolic link
# The store's own attributes, which come before the workspace's `.gitattributes`: a file is kept
# byte for byte (no filter runs, no line ending or encoding is converted).
NO_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -diff -merge\n"
# git streams a file over this into the store instead of mapping it whole into its memory
# (compressed quickly, as git's loose objects are).
STREAMED = ("-c", f"core.bigFileThreshold={LARGEST_KEPT}", "-c", "pack.compression=1")


class Snapshots:
    """Takes the workspace's picture before and after a command, and says what changed."""

    def __init__(self, root: Path, store: Path | None = None) -> None:
        self.root = root
        self._store = store  # heph's repository (the state folder's for the workspace)
        self._modes: dict[str, dict[str, int]] = {}  # tree -> its files' unusual modes
        self._repository: Repository | None = None  # the person's, once looked for
        self._kept: list[str] | None = None  # its tracked files a .gitignore names
        # The repositories inside the workspace, as the last picture holds them (a commit id).
        self._nested: frozenset[str] = frozenset()
        self._looked = False
        self._last: tuple[str, list[tuple[bytes, bytes, bytes]]] | None = None  # tree, entries
        self._left_out: frozenset[str] = frozenset()  # what the last picture could not hold
        # Where the workspace holds a `.git`: before the command, and in the last picture.
        self._repositories: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        self._remarks = Remarks()  # on the command since the picture before it

    def take(self, *, modes: bool = True) -> str | None:
        """The workspace as a tree id now; None when no snapshot can be taken (no git, a
        workspace git cannot read): then a command's changes are not heph's to undo. With
        `modes`, the files' exact permission bits are kept with it (for a picture taken
        before a command: what undo restores)."""
        if modes:  # a new command's: nothing is said of it yet, whatever comes of this
            self._remarks = Remarks()
            self._repositories = (self._repositories[1], self._repositories[1])
        try:
            self._ready()
        except (GitError, OSError):
            return None
        try:
            self._git(*STREAMED, "add", "--all", "--ignore-errors", "--", ".")
        except GitError:
            pass  # an unreadable file: what could be read is in the picture all the same
        # What the person's repository tracks though ignored: asked before a command, and the
        # same list taken again after it (a command seldom changes what git tracks).
        if modes or self._kept is None:
            self._kept = self._tracked_though_ignored()
        kept = self._kept
        if kept:
            try:
                self._git(*STREAMED, "add", "--force", "--ignore-errors", "--", *kept)
            except GitError:
                pass
        tree, entries = self._tree()
        if tree and self._holds_own(entries):
            self._drop_own()
            tree, entries = self._tree()
        if not tree:
            return None
        self._last = (tree, entries)
        self._nested = frozenset(
            os.fsdecode(path) + "/" for mode, _, path in entries if mode == b"160000"
        )
        self._left_out = self._not_held()
        folders = {
            raw if mode == b"160000" else raw.rpartition(b"/")[0] for mode, _, raw in entries
        }
        found = {os.fsdecode(folder) for folder in folders}  # a few names, not the files'
        repositories = repositories_in(self.root, found, self._left_out)
        self._repositories = (repositories if modes else self._repositories[0], repositories)
        if modes:  # kept for the next picture's changes, no longer
            unusual = self._unusual_modes(entries)
            self._modes = {**dict(list(self._modes.items())[-1:]), tree: unusual}
        return tree

    def _tree(self) -> tuple[str, list[tuple[bytes, bytes, bytes]]]:
        """The index as a tree ("" when git cannot write one), and its entries (read once a
        picture: its nested repositories and modes)."""
        try:
            tree = self._git("write-tree").decode().strip()
        except GitError:
            return "", []
        return tree, self._index()

    def _holds_own(self, entries: list[tuple[bytes, bytes, bytes]]) -> bool:
        """Whether the picture holds a file of heph's own folders."""
        own = tuple(os.fsencode(rel) + b"/" for rel in self._own)
        return bool(own) and any(path.startswith(own) for _, _, path in entries)

    def _not_held(self) -> frozenset[str]:
        """What the picture just taken leaves out, as git names it (a folder for all it holds):
        what git ignores, and the repositories nested without a commit, which git cannot add."""
        own = (f"--exclude={_pattern(rel)}" for rel in self._own)
        try:
            raw = self._git(
                "ls-files", "--others", "--directory", "--no-empty-directory", *own, "-z"
            )
        except GitError:
            return frozenset()
        names = (os.fsdecode(name) for name in raw.split(b"\0") if name)
        return frozenset(name for name in names if name.split("/")[0] != ".heph")

    def repositories_made(self) -> list[str]:
        """The `.git`s that are in the last picture's workspace and were not before."""
        before, now = self._repositories
        return sorted(now - before)

    @property
    def remarks(self) -> list[str]:
        """What the command since the picture before it did that needs a word of its own: the
        repositories it made, its setuid files, its files too large to keep a copy of."""
        return self._remarks.lines(self.repositories_made())

    def _index(self) -> list[tuple[bytes, bytes, bytes]]:
        """(mode, blob id, path) of every entry of the picture just taken."""
        try:
            raw = self._git("ls-files", "--stage", "-z")
        except GitError:
            return []
        entries = []
        for entry in filter(None, raw.split(b"\0")):
            head, _, path = entry.partition(b"\t")
            mode, sha = head.split(b" ")[:2]
            entries.append((mode, sha, path))
        return entries

    def _tracked_though_ignored(self) -> list[str]:
        """The files the person's repository tracks although a .gitignore names them (a
        `build/keep.txt` added with -f): theirs to keep, so in the picture too. Asked of their
        repository only where heph runs git there (see trust)."""
        from hephaistus.runtime.gitlocation import is_disabled
        from hephaistus.workspace.repository import Repository

        if not self._looked:
            self._looked = True
            self._repository = None if is_disabled(self.root) else Repository.find(self.root)
        if self._repository is None:
            return []
        try:
            listed = self._repository.git("ls-files", "-z", "--cached", "-i", "--exclude-standard")
        except GitError:
            return []
        return [name for name in listed.split("\0") if name and not name.startswith(".heph/")]

    def _unusual_modes(self, entries: list[tuple[bytes, bytes, bytes]]) -> dict[str, int]:
        """The permission bits of each file git would not restore as they are (git keeps
        only whether a file is executable: 644 or 755), so undo can (a private 600 file)."""
        unusual = {}
        base = os.fsencode(self.root) + b"/"  # bytes, no Path: thousands of files a command
        for kind, _, raw in entries:
            if kind not in (b"100644", b"100755"):
                continue
            try:
                mode = os.lstat(base + raw).st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode) and stat.S_IMODE(mode) not in (0o644, 0o755):
                unusual[os.fsdecode(raw)] = stat.S_IMODE(mode)
        return unusual

    def changes(self, before: str, after: str) -> Iterator[Changed]:
        """The files that differ between two snapshots, with both sides' content; and, when
        `after` is the last picture, those whose permission bits alone changed (git sees only
        the executable bit). Read from the store a few at a time: a command's thousands of
        files, or its huge ones, are never in memory at once."""
        named = self._content_changes(before, after) if before != after else []
        named += self._mode_changes(before, after, {n.path for n in named})
        return read_changes(self._git, named)

    def _mode_changes(self, before: str, after: str, changed: set[str]) -> list[Named]:
        was = self._modes.get(before)
        if was is None or self._last is None or self._last[0] != after:
            return []
        entries = self._last[1]
        now = self._unusual_modes(entries)
        found = []
        for kind, sha, raw in entries:
            path = os.fsdecode(raw)
            if kind not in (b"100644", b"100755") or path in changed:
                continue
            usual = 0o755 if kind == b"100755" else 0o644
            old, new = was.get(path, usual), now.get(path, usual)
            if old != new:
                mode, blob = kind.decode(), sha.decode()
                found.append(Named(path, (mode, blob, old), (mode, blob, new)))
        return found

    def _content_changes(self, before: str, after: str) -> list[Named]:
        raw = self._git("diff-tree", "-r", "-z", "--no-renames", before, after)
        fields = raw.split(b"\0")
        found = []
        for head, name in zip(fields[0::2], fields[1::2], strict=False):
            if not head.startswith(b":"):
                continue
            old_mode, new_mode, old_sha, new_sha, _ = head[1:].decode().split(" ")
            path = os.fsdecode(name)
            if (old_mode, new_mode) == ("000000", "000000"):
                continue
            kinds = ("000000", LINK, *REGULAR)
            if old_mode not in kinds or new_mode not in kinds:
                continue  # a submodule: not heph's to write back
            was = _side(old_mode, old_sha, self._modes.get(before, {}).get(path))
            found.append(Named(path, was, _side(new_mode, new_sha, self._mode_now(path))))
        return found

    def _mode_now(self, rel: str) -> int | None:
        try:
            info = os.lstat(self.root / rel)
        except OSError:
            return None
        return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None

    def effect(self, change: Changed) -> FileChange:
        """A change as an effect of the command, with its diff; a file too large to keep
        and a setuid or setgid one are noted for `remarks`."""
        from hephaistus.workspace.diffs import bytes_diff

        after = change.after
        if after is not None and after[1] & SPECIAL:  # (a link's mode has no such bit)
            self._remarks.special.append(special_name(self.root, change.path))
        old, new = (side[0] if side else None for side in (change.before, after))
        sides = [side for side in (change.before, after) if side]
        if any(data is None for data, _ in sides):
            self._remarks.unkept.append(change.path)
            what = "deleted" if after is None else "written"
            sizes = " -> ".join(str(size) for size in change.sizes)
            diff = f"Large file {change.path} {what} ({sizes} bytes): heph kept no copy\n"
        else:
            diff = bytes_diff(change.path, old, new)
        return FileChange(change.path, diff, change.before is None, deleted=after is None)

    def watch_ignored(self) -> Watch | None:
        """What snapshots leave out (what git ignores: a `.venv`, build output; and nested
        repositories, which git keeps as a commit id), and a mark on the file system's own
        clock, so `ignored_changes` can say what a command did there. Taken after the picture
        before the command; `ignored_changes` after the picture after it."""
        try:
            mark = self.git_dir / "started"
            mark.write_bytes(b"")
            own = frozenset(os.path.join(self.root, rel) for rel in self._own)
            return Watch(self._left_out | self._nested, mark.stat().st_ctime_ns, own)
        except OSError:
            return None

    def ignored_changes(self, watch: Watch | None) -> list[str]:
        """The ignored files and folders (as git names them: a folder for all it holds) and
        the nested repositories that appeared, went or hold something changed since `watch`;
        the setuid and setgid files among them go into `remarks`."""
        if watch is None:
            return []
        now = self._left_out | self._nested  # as the picture after the command found them
        return changed_since(self.root, watch, now, self._remarks.special)

    @property
    def git_dir(self) -> Path:
        """heph's own repository of snapshots for this workspace."""
        if self._store is None:
            from hephaistus.settings.userdirs import workspace_folder

            self._store = workspace_folder(self.root, FOLDER)
        return self._store

    @functools.cached_property
    def _own(self) -> tuple[str, ...]:
        """heph's own folders in the workspace (a home folder holds its state: this store),
        workspace-relative: never in a picture."""
        from hephaistus.workspace import own_folders

        return tuple(rel for rel in places_in(self.root, own_folders()) if rel)

    def _ready(self) -> None:
        """heph's own repository, made once, blind to `.heph/`, to heph's own folders and to
        every attribute."""
        exclude = self.git_dir / "info" / "exclude"
        wanted = "".join(f"{_pattern(rel)}\n" for rel in (".heph", *self._own))
        if (self.git_dir / "HEAD").exists():
            if self._own and (not exclude.is_file() or exclude.read_text() != wanted):
                exclude.write_text(wanted)  # a store an earlier heph made, or another home
            return
        self.git_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._git("init", "--quiet")
        (self.git_dir / "info").mkdir(exist_ok=True)
        exclude.write_text(wanted)
        (self.git_dir / "info" / "attributes").write_text(NO_ATTRIBUTES)

    def _drop_own(self) -> None:
        """Take heph's own folders out of the picture being taken, whatever put them in it: a
        `!` pattern of a `.gitignore` wins over the store's exclude, a store an earlier heph
        made holds them, the person's repository may track a file there."""
        if self._own:  # (found in the picture's entries: the common case runs no more git)
            try:
                self._git("rm", "-rf", "--cached", "--quiet", "--ignore-unmatch", "--", *self._own)
            except GitError:
                pass

    def _git(self, *args: str, data: bytes | None = None) -> bytes:
        return run_private(self.git_dir, self.root, *args, data=data)


def _pattern(rel: str) -> str:
    """An exclude pattern for the folder `rel` alone (anchored; git's wildcards escaped)."""
    return "/" + re.sub(r"([\\*?\[\]!# ])", r"\\\1", rel) + "/"


def _side(mode: str, sha: str, bits: int | None) -> tuple[str, str, int] | None:
    """One side of a change as git names it, with its permission bits: LINK_MODE for a link,
    else git's 644 or 755 unless `bits` knows better; None where there was no file."""
    if mode == "000000":
        return None
    if mode == LINK:
        return mode, sha, LINK_MODE
    return mode, sha, bits if bits is not None else 0o755 if mode == "100755" else 0o644


def command_effects(
    snapshots: Snapshots, before: str | None, checkpoints: Checkpoints | None
) -> tuple[FileChange, ...]:
    """What the command run since the snapshot `before` did to the workspace's files: each
    change checkpointed (so undo takes it back; the repositories it made too) and as a
    FileChange with its diff. What needs a word of its own goes into `snapshots.remarks`."""
    after = snapshots.take(modes=False) if before else None
    if before is None or after is None:
        return ()
    made = []
    with checkpoints.deferred() if checkpoints else nullcontext():
        for change in snapshots.changes(before, after):
            if checkpoints is not None:
                checkpoints.record_change(change.path, change.before, change.after)
            made.append(snapshots.effect(change))
        repositories = snapshots.repositories_made()
        if repositories and checkpoints is not None:
            checkpoints.record_repositories(repositories)
    return tuple(made)
