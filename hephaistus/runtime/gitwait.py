"""Waiting for one of heph's git commands to end, when a named pipe in the work tree would keep
it waiting: git opens each `.gitignore` it meets, and opening a pipe waits for a writer forever
(a command can make one; heph's after-command snapshot then hung for the git timeout, each
command). While git runs long, heph gives each pipe a reader waits on an end."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

PIPE_CHECK = 2.0  # seconds of git's running before heph looks for a named pipe it waits on
PIPE_POLL = 0.05  # seconds between tries of the pipes found
WALKED_FOR_PIPES = 200_000  # files and folders looked at for one, at most, each time


def waited(
    process: subprocess.Popen[bytes], data: bytes | None, timeout: float, cwd: Path
) -> tuple[bytes, bytes]:
    """git's output once it ends, or TimeoutExpired. While it takes long, each named pipe in
    `cwd` it waits on (a `.gitignore` a command made one) is given an end, as an empty file
    reads: git opens each `.gitignore` it meets, and an open pipe waits for a writer forever.
    Once pipes are found they are tried often (git meets them one after another)."""
    deadline = time.monotonic() + timeout
    pipes: list[str] = []
    looked = time.monotonic()
    while True:
        left = deadline - time.monotonic()
        wait = PIPE_POLL if pipes else PIPE_CHECK
        try:
            return process.communicate(data, timeout=max(0.0, min(left, wait)))
        except subprocess.TimeoutExpired:
            if left <= wait:
                raise
        data = None  # given already
        if not pipes or time.monotonic() - looked >= PIPE_CHECK:
            pipes, looked = pipes_under(cwd), time.monotonic()
        for path in pipes:
            _give_an_end(path)


def pipes_under(root: Path, budget: int = WALKED_FOR_PIPES) -> list[str]:
    """The named pipes under `root`, `.git` folders included (git opens a nested repository's
    `HEAD`, the ref it names, its `commondir`), among the first `budget` entries."""
    found: list[str] = []
    folders = [str(root)]
    while folders and budget > 0:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    budget -= 1
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                        found += [entry.path] if _is_pipe(entry.path) else []
        except OSError:
            continue  # gone, or unreadable: git cannot wait on what is in it either
    return found


def _is_pipe(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.lstat(path).st_mode)
    except OSError:
        return False


def _give_an_end(path: str) -> None:
    """Open the named pipe at `path` for writing and close it, where a reader waits on it (the
    reader reads an empty file; refused without blocking where none does)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
    except OSError:
        pass  # gone, or no reader waits on it
