"""A file as heph's records know it (whether it existed, its mode, the hash of its content, and
whether a copy of that content was kept), and whether a workspace file is in such a state now.

A file over LARGEST_KEPT that a command made or changed is not copied (a 512 MB file would cost
that much memory and disk): its record keeps only the hash of what the command left, read a
piece at a time, so undo can still tell that such a file is as the command left it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from hephaistus.textfile import open_file, read_real

LARGEST_KEPT = 16 * 2**20  # bytes: a larger file a command made or changed is not copied
Side = tuple[bytes | None, int]  # a file's content (None: over LARGEST_KEPT, not read), mode


@dataclass
class FileState:
    """A file as heph saw it: whether it existed, its mode, and the sha256 of its content (the
    name of the blob that holds it)."""

    exists: bool
    mode: int | None = None  # permission bits; with S_IFLNK, a link (its blob: the target)
    sha: str | None = None
    kept: bool = True  # whether its content was kept (not over LARGEST_KEPT)

    @property
    def link(self) -> bool:
        """Whether it is a symbolic link (a command made or removed one)."""
        return self.mode is not None and stat.S_ISLNK(self.mode)


def holds(root: Path, rel: str, state: FileState) -> bool:
    """Whether the file `rel` of the workspace `root` is in `state` now. Past a link on its
    way (a command made a folder a link) there is no file of the workspace's: none exists."""
    path = os.path.join(root, rel)  # strings: undo asks this of thousands of files
    try:
        found = None if _through_link(str(root), rel) else os.lstat(path)
    except OSError:
        found = None
    if found is None or not state.exists:
        return found is None and not state.exists
    if state.link:
        target = os.fsencode(os.readlink(path)) if stat.S_ISLNK(found.st_mode) else None
        return target is not None and hashlib.sha256(target).hexdigest() == state.sha
    if not stat.S_ISREG(found.st_mode):
        return False
    if not state.kept:
        return state.sha is not None and file_sha(Path(path)) == state.sha
    return hashlib.sha256(read_real(Path(path))).hexdigest() == state.sha


def _through_link(root: str, rel: str) -> bool:
    """Whether a folder on the way to `rel` is a link."""
    folder = root
    for part in rel.split("/")[:-1]:
        folder = os.path.join(folder, part)
        if os.path.islink(folder):
            return True
    return False


def file_sha(path: Path) -> str | None:
    """The sha256 of the regular file at `path` (a real path), read a piece at a time (it may
    be huge); None when it is no such file."""
    digest = hashlib.sha256()
    try:
        with open_file(path) as handle:
            while piece := handle.read(2**20):
                digest.update(piece)
    except OSError:
        return None
    return digest.hexdigest()
