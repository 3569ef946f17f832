"""Locks between heph processes working in one workspace.

A write reads a file, works out the new content, and writes it; two heph runs doing that to one
file at once would each lose the other's change. Each write and each undo (which checks and
restores many files) therefore happens under the workspace's lock. The locks are advisory
`flock`s on small files in `.heph/locks/` (a file's open description holds it, so two threads
of one run exclude each other too); the kernel releases them when a process dies, so a killed
run never leaves one behind.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, writes stay atomic but unlocked
    fcntl = None  # type: ignore[assignment]

WAIT_SECONDS = 30.0
POLL_SECONDS = 0.01


class LockTimeout(OSError):
    """Another process held a lock for longer than anyone should."""


@contextmanager
def locked(path: Path, what: str, *, wait: float = WAIT_SECONDS) -> Iterator[None]:
    """Hold the lock file `path` (created as needed) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _open_lock(path)
    try:
        deadline = time.monotonic() + wait
        while fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockTimeout(
                        f"another heph process has been writing {what} for "
                        f"{wait:g} s; try again when it is done"
                    ) from None
                time.sleep(POLL_SECONDS)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _open_lock(path: Path) -> int:
    """The lock file, never through a link: one a repository planted under `.heph/locks/` is
    removed (it is heph's folder), so no file is made wherever it leads."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags, 0o600)
    except OSError:
        if not os.path.islink(path):
            raise
        os.unlink(path)
        return os.open(path, flags, 0o600)


def workspace_lock(heph_dir: Path) -> AbstractContextManager[None]:
    """The lock of the workspace's files and checkpoints, held while writing, undoing or
    redoing."""
    return locked(heph_dir / "locks" / "workspace.lock", "the workspace")
