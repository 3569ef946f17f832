"""The write transaction, the one way heph writes a workspace file (the writing tools and
`heph docs --fix` alike): under the file's lock the file is read again, and written only if it
still holds what the change was made from; the new content is checkpointed first (undo can
always bring back what was there), then written atomically, keeping the file's encoding and
line endings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hephaistus.checkpoints import Checkpoints
from hephaistus.locks import file_lock
from hephaistus.textfile import NEW_FILE, TextFile, atomic_write, read_text
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
    with file_lock(workspace.heph_dir, rel):  # no other heph run writes between check and write
        now = _current(real, rel)
        if now != old:
            if rebase is None:
                raise ChangedOnDisk(rel)
            old, after = now, rebase(now).replace("\r\n", "\n")
        data = (old or NEW_FILE).encode(after)
        if checkpoints:
            checkpoints.record(rel, data)
        atomic_write(real, data, temp_dir=workspace.temp_dir, real=True)
    return old, after


def _current(real: Path, rel: str) -> TextFile | None:
    """The file as it is now (None: it does not exist)."""
    try:
        return read_text(real, rel)
    except FileNotFoundError:
        return None
