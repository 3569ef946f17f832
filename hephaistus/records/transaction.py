"""The write transaction, the one way heph writes a workspace file (the writing tools and
`heph docs --fix` alike): under the workspace's lock, which undo holds too (one lock file: one
for each of a command's 5,000 files made undo take seconds to start), the file is read again,
and written only if it still holds what the change was made from; the new content is
checkpointed first (undo can always bring back what was there), then written atomically,
keeping the file's encoding and line endings. A delete and a move are the same transaction: a
move writes the new path and deletes the old one, both checkpointed before either happens.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

from hephaistus.locks import workspace_lock
from hephaistus.records.checkpoints import Checkpoints
from hephaistus.textfile import (
    NEW_FILE,
    Changed,
    TextFile,
    atomic_write,
    read_real,
    read_text,
    unlink_real,
)
from hephaistus.workspace import Workspace


class ChangedOnDisk(Exception):
    """The file changed since it was read, and the change cannot be made again on it."""


def write_checkpointed(
    workspace: Workspace,
    checkpoints: Checkpoints | None,
    rel: str,
    real: Path,
    old: TextFile | None,
    after: str,
    rebase: Callable[[TextFile | None], str] | None = None,
) -> tuple[TextFile | None, str]:
    """Write `after` to `rel` (at the checked path `real`) if it still holds `old` (None: it did
    not exist). When it no longer does, `rebase` makes the change again on what it holds now,
    or ChangedOnDisk is raised and nothing is written. Returns (the file as it was, the text
    written)."""
    if not workspace.heph_dir.is_dir():
        workspace.ensure_heph_dir()  # for the lock, kept out of git
    with workspace_lock(workspace.heph_dir):  # no other heph run writes between check and write
        now = _current(real, rel)
        # By the bytes: the text may be an editor's (unsaved changes made over these bytes).
        if (now.digest if now else None) != (old.digest if old else None):
            if rebase is None:
                raise ChangedOnDisk(rel)
            old, after = now, rebase(now).replace("\r\n", "\n")
        data = (old or NEW_FILE).encode(after)
        if checkpoints:
            checkpoints.record(rel, data)
        try:  # checked again just before the rename, so nothing written meanwhile is lost
            expected = old.digest if old else ""
            atomic_write(real, data, temp_dir=workspace.temp_dir, real=True, expected=expected)
        except Changed:
            raise ChangedOnDisk(rel) from None
    return old, after


def _current(real: Path, rel: str) -> TextFile | None:
    """The file as it is now (None: it does not exist)."""
    try:
        return read_text(real, rel)
    except FileNotFoundError:
        return None


class InTheWay(Exception):
    """A move's destination exists already."""


def move_checkpointed(
    workspace: Workspace,
    checkpoints: Checkpoints | None,
    source: tuple[str, Path],
    expected: bytes,
    to: tuple[str, Path] | None = None,
    content: bytes | None = None,
) -> None:
    """Delete the file `source` (workspace-relative name, checked real path) if it still holds
    `expected`, else ChangedOnDisk; with `to`, move it there first (InTheWay when something is
    there already), holding `content` when given (a patch that changes and moves a file)."""
    if not workspace.heph_dir.is_dir():
        workspace.ensure_heph_dir()
    with workspace_lock(workspace.heph_dir):
        rel, real = source
        if not real.is_file() or read_real(real) != expected:
            raise ChangedOnDisk(rel)
        mode = stat.S_IMODE(real.stat().st_mode)
        if to is not None:
            if to[1].exists() or to[1].is_symlink():
                raise InTheWay(to[0])
            data = expected if content is None else content
            if checkpoints:
                checkpoints.record(to[0], data, mode)
                checkpoints.record(rel, None)
            atomic_write(to[1], data, temp_dir=workspace.temp_dir, real=True, mode=mode)
        elif checkpoints:
            checkpoints.record(rel, None)
        unlink_real(real)
