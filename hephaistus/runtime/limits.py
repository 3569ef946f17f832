"""How many processes (threads included) and how much memory a sandboxed command may have, so a
fork bomb or a runaway allocation ends at the limit, not with the machine (the sandbox's tmpfs
folders, /tmp among them, are bounded too: see RUN_BYTES).

The limits are set inside the sandbox by util-linux's `prlimit` (run by absolute path, just
before the command): RLIMIT_DATA for memory, which binds each process (its heap and private
mappings: the address space a runtime only reserves does not count), and RLIMIT_NPROC for
processes, which the sandbox's user namespace counts for the command alone, not the person's
other programs. The kernel's process limit never binds root, so as root heph moves itself, once
a run, into a pids cgroup of its own (`pids.max`: the commands' limit plus heph's own threads),
where the cgroup file system is writable (cgroup v1's pids hierarchy, or v2 where the
controller can be given to a child of heph's cgroup); every command it starts is in it. (A
cgroup per command cost each command its move there: 15 ms.) A memory cgroup joined the same
way bounds what no data limit counts: shared mappings and tmpfs files. Where neither works (no
`prlimit`; root without a writable cgroup), commands run without that limit.
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path

PROCESSES = 1024  # processes and threads a command may have at once
MEMORY_SHARE = 2  # a command may use 1/MEMORY_SHARE of the machine's memory
# A tmpfs is memory no process's limit counts: the sandbox's /tmp holds at most the memory
# limit, its /run (and $XDG_RUNTIME_DIR) and each empty folder that hides one of the host's
# far less.
RUN_BYTES = 16 << 20  # pid files, sockets and locks
HIDING_BYTES = 1 << 20  # a program's lock or settings file written where a folder is hidden
OWN_THREADS = 64  # heph's own threads and processes, on top of a command's, in its cgroup
OWN_MEMORY = 1 << 30  # heph's own memory, on top of a command's, in its cgroup
COMMAND_OOM_SCORE = 500  # a command's oom_score_adj: the OOM killer's choice before heph
CGROUP_ROOT = Path("/sys/fs/cgroup")
_joined: dict[str, Path | None] = {}  # controller -> heph's cgroup of this run, once joined


def memory_limit() -> int:
    """Bytes of memory a command may use: a share of the machine's."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // MEMORY_SHARE


class ProcessLimit:
    """The limits of the commands heph starts in the sandbox."""

    def __init__(self, processes: int | None = None, memory: int | None = None) -> None:
        from hephaistus.runtime.programs import find

        self.processes = processes or PROCESSES
        self.memory = memory or memory_limit()
        self.root = os.getuid() == 0
        self.prlimit = find("prlimit")
        # A shared mapping, a memfd or a tmpfs file is memory no process's data limit counts,
        # nor the OOM killer's count of a process: filling the memory there, heph would be
        # the biggest process. A command's raised OOM score makes it the first to go.
        self.choom = find("choom")
        if self.root:
            join_own_cgroup("pids", {"pids.max": self.processes + OWN_THREADS})
            join_own_cgroup("memory", memory_settings(self.memory + OWN_MEMORY))

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` as the sandbox runs it: under `prlimit` where that sets the limits, and with
        an OOM score that makes it killed before heph (util-linux's `choom`; raising one's own
        score takes no privilege)."""
        if self.prlimit is not None:
            limits = [f"--data={self.memory}"]
            limits += [] if self.root else [f"--nproc={self.processes}"]
            argv = [self.prlimit, *limits, "--", *argv]
        return [self.choom, "-n", str(COMMAND_OOM_SCORE), "--", *argv] if self.choom else argv


def unlimited() -> str | None:
    """What the sandbox's commands run without here, in words, or None: without `prlimit`
    there is no memory limit (nor, but as root, a process limit)."""
    from hephaistus.runtime.programs import find

    if find("prlimit") is not None:
        return None
    what = "a memory limit" if os.getuid() == 0 else "a memory or process limit"
    return f"commands run without {what}: heph finds no prlimit (util-linux) on PATH"


def memory_settings(limit: int) -> dict[str, int]:
    """The files that bound a memory cgroup to `limit` bytes: cgroup v1's or v2's."""
    if (CGROUP_ROOT / "cgroup.controllers").is_file() and not (CGROUP_ROOT / "memory").is_dir():
        return {"memory.max": limit, "memory.swap.max": 0}
    return {"memory.limit_in_bytes": limit}


def join_own_cgroup(controller: str, settings: dict[str, int]) -> Path | None:
    """heph's cgroup of this run for `controller` (pids, memory), made with `settings` and
    joined the first time (as root): every process heph starts from then on is counted in it.
    None where it cannot be."""
    if controller in _joined:
        return _joined[controller]
    _joined[controller] = None
    parent = _parent(controller)
    if parent is None:
        return None
    _remove_stale(parent)
    folder = parent / f"heph-{os.getpid()}"
    try:
        folder.mkdir(exist_ok=True)
        for name, value in settings.items():
            _set(folder / name, value)
        (folder / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        _remove(folder)
        return None
    atexit.register(_leave, folder, parent)
    _joined[controller] = folder
    return folder


def _set(control: Path, value: int) -> None:
    """Write a cgroup setting; one this kernel does not have (swap's, without swap) is left."""
    try:
        control.write_text(str(value))
    except FileNotFoundError:
        if not control.name.startswith("memory.swap"):
            raise


def _leave(folder: Path, parent: Path) -> None:
    """At heph's end: back to the cgroup it came from, its own removed (or by a later run)."""
    try:
        (parent / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return
    _remove(folder)


def _parent(controller: str) -> Path | None:
    """The cgroup folder heph's own cgroup for `controller` is made in: heph's current one in
    cgroup v1's hierarchy of it, else in cgroup v2 where the controller is (or can be) given
    to children; None where neither is writable."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    own = dict(line.split(":", 2)[1:] for line in lines if line.count(":") >= 2)
    v1 = next((path for names, path in own.items() if controller in names.split(",")), None)
    if v1 is not None and (CGROUP_ROOT / controller).is_dir():
        folder = CGROUP_ROOT / controller / v1.lstrip("/")
        return folder if os.access(folder, os.W_OK) else None
    v2 = own.get("")
    if v2 is None or not (CGROUP_ROOT / "cgroup.controllers").is_file():
        return None
    folder = CGROUP_ROOT / v2.lstrip("/")
    control = folder / "cgroup.subtree_control"
    try:
        if controller not in control.read_text().split():
            control.write_text(f"+{controller}")  # refused where heph's cgroup has processes
    except OSError:
        return None
    return folder


def _remove(folder: Path) -> None:
    """Remove a cgroup of heph's (possible once it holds no process)."""
    try:
        folder.rmdir()
    except OSError:
        pass  # still busy, or gone: a later run removes it (_remove_stale)


def _remove_stale(parent: Path) -> None:
    """Remove the cgroups of heph runs that have ended."""
    try:
        names = [entry.name for entry in os.scandir(parent) if entry.name.startswith("heph-")]
    except OSError:
        return
    for name in names:
        pid = name.split("-")[1]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            _remove(parent / name)
