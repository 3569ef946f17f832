"""Abstract Unix sockets of the host, out of reach when a command shares the host's network.

An abstract socket (`@name`: an X server's, a session bus's) lives in a network namespace, not on
a file system: a sandbox with a network of its own never sees the host's, but one that shares the
host's network (`[sandbox] network = true`) could connect to them. Linux's Landlock (ABI 6, Linux
6.12) scopes them: a process in a Landlock domain that scopes abstract sockets reaches only those
made inside its domain. bubblewrap and everything it starts join such a domain before bubblewrap
runs; the domain restricts nothing else (no file system rule: bubblewrap's mounts still work).
Where Landlock is missing or older, or bubblewrap is setuid (the domain needs no_new_privs, which
a setuid program refuses), nothing is scoped and `scoping()` says so.
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
from collections.abc import Callable

CREATE_RULESET, RESTRICT_SELF = 444, 446  # syscall numbers, the same on every architecture
VERSION_FLAG = 1  # LANDLOCK_CREATE_RULESET_VERSION
SCOPE_ABSTRACT_UNIX_SOCKET = 1
SCOPED_FROM_ABI = 6
PR_SET_NO_NEW_PRIVS = 38


_made: dict[str, Callable[[], None] | str] = {}  # bwrap -> its scoping, made once a process


def scoping(bwrap: str) -> Callable[[], None] | str:
    """What a process runs before it becomes `bwrap` to put itself and all it starts in a
    domain that reaches no abstract socket of the host; or why that cannot be done here."""
    if bwrap not in _made:
        _made[bwrap] = _scoping(bwrap)
    return _made[bwrap]


def _scoping(bwrap: str) -> Callable[[], None] | str:
    try:
        if stat.S_IMODE(os.stat(bwrap).st_mode) & stat.S_ISUID:
            return "bubblewrap is setuid"
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError as error:
        return f"no C library to ask: {error}"
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), VERSION_FLAG)
    if version < SCOPED_FROM_ABI:
        return "Linux's Landlock cannot scope abstract sockets here (Linux 6.12 or later can)"
    attributes = ctypes.create_string_buffer(struct.pack("QQQ", 0, 0, SCOPE_ABSTRACT_UNIX_SOCKET))
    ruleset = libc.syscall(CREATE_RULESET, attributes, ctypes.c_size_t(24), 0)
    if ruleset < 0:
        return f"Landlock refused the domain: {os.strerror(ctypes.get_errno())}"

    def enter() -> None:  # between fork and exec: two system calls, nothing else
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) or libc.syscall(RESTRICT_SELF, ruleset, 0):
            raise OSError(ctypes.get_errno(), "cannot scope the sandbox's abstract sockets")

    return enter


LAUNCH = "from hephaistus.runtime.landlock import main; main(sys.argv[1:])"


def scoped_line(bwrap_line: list[str]) -> list[str]:
    """`bwrap_line` for a process another library starts (an MCP server's SDK), so no step runs
    between its fork and exec: heph's Python, entering the domain, then becoming bubblewrap.
    Unchanged where Landlock cannot scope here."""
    import sys
    from pathlib import Path

    if not callable(scoping(bwrap_line[0])):
        return bwrap_line
    # Isolated (-I): nothing of the current folder (the workspace) or the environment decides
    # what this Python imports; heph's own package is found where this one is.
    package = Path(__file__).resolve().parent.parent.parent
    start = f"import sys; sys.path.insert(0, {str(package)!r}); {LAUNCH}"
    return [sys.executable, "-I", "-c", start, *bwrap_line]


def main(argv: list[str]) -> None:
    """Enter the domain, then become `argv` (bubblewrap's line): what `scoped_line` runs."""
    enter = scoping(argv[0])
    if not callable(enter):
        raise SystemExit(f"heph: cannot scope the sandbox's abstract sockets: {enter}")
    enter()
    os.execv(argv[0], argv)
