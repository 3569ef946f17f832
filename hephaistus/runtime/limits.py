"""How many processes (threads included) a sandboxed command may have at once, so a fork bomb
ends at the limit, not with the machine.

Two ways, because the kernel's per-user limit (RLIMIT_NPROC) never binds root:
- as root, a pids cgroup of the command's own (`pids.max`), where the cgroup file system is
  writable (cgroup v1's pids hierarchy, or v2 where the pids controller can be given to a
  child of heph's cgroup): the command joins it before it starts, and it is removed after;
- as anyone else, RLIMIT_NPROC set inside the sandbox (by util-linux's `prlimit`, run by
  absolute path, just before the command): the sandbox's user namespace counts only its own
  processes, so the limit is the command's alone, not the person's other programs'.
Where neither works (root without a writable cgroup, no `prlimit`), commands run unlimited.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

PROCESSES = 1024  # processes and threads a command may have at once
CGROUP_ROOT = Path("/sys/fs/cgroup")
REMOVE_TRIES, REMOVE_PAUSE = 20, 0.005  # waiting for a cgroup's last processes to be reaped
_numbers = itertools.count()


class ProcessLimit:
    """The limit of one command: made before it starts, `enter`ed by it before it runs
    (between fork and exec: async-signal-safe calls only), released after it ends. Without
    `cgroup` (a process another library starts), root's commands are not limited."""

    def __init__(self, processes: int | None = None, *, cgroup: bool = True) -> None:
        self.processes = processes or PROCESSES
        self.cgroup: Path | None = None
        self._procs = -1  # the cgroup's cgroup.procs, open for the command to join
        self.prlimit: str | None = None
        if os.getuid() == 0:
            if cgroup:
                self._make_cgroup()
        else:
            from hephaistus.runtime.programs import find

            self.prlimit = find("prlimit")

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` as the sandbox runs it: under `prlimit` where that sets the limit."""
        if self.prlimit is None:
            return argv
        return [self.prlimit, f"--nproc={self.processes}", "--", *argv]

    def enter(self) -> None:
        """In the command's process, before it starts anything: join the cgroup."""
        if self._procs >= 0:
            os.write(self._procs, b"0")

    def release(self) -> None:
        """After the command ended (its whole group killed): remove its cgroup."""
        if self._procs >= 0:
            os.close(self._procs)
            self._procs = -1
        if self.cgroup is not None:
            _remove(self.cgroup, tries=REMOVE_TRIES)
            self.cgroup = None

    def _make_cgroup(self) -> None:
        parent = _pids_parent()
        if parent is None:
            return
        _remove_stale(parent)
        folder = parent / f"heph-{os.getpid()}-{next(_numbers)}"
        try:
            folder.mkdir()
        except OSError:
            return
        try:
            (folder / "pids.max").write_text(str(self.processes))
            self._procs = os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            _remove(folder)
            return
        self.cgroup = folder


def _pids_parent() -> Path | None:
    """The cgroup folder heph's commands' cgroups are made in: heph's own in cgroup v1's pids
    hierarchy, else in cgroup v2 where the pids controller is (or can be) given to children;
    None where neither is writable."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    own = dict(line.split(":", 2)[1:] for line in lines if line.count(":") >= 2)
    v1 = next((path for names, path in own.items() if "pids" in names.split(",")), None)
    if v1 is not None and (CGROUP_ROOT / "pids").is_dir():
        folder = CGROUP_ROOT / "pids" / v1.lstrip("/")
        return folder if os.access(folder, os.W_OK) else None
    v2 = own.get("")
    if v2 is None or not (CGROUP_ROOT / "cgroup.controllers").is_file():
        return None
    folder = CGROUP_ROOT / v2.lstrip("/")
    control = folder / "cgroup.subtree_control"
    try:
        if "pids" not in control.read_text().split():
            control.write_text("+pids")  # refused where heph's cgroup holds processes
    except OSError:
        return None
    return folder


def _remove(folder: Path, tries: int = 1) -> None:
    """Remove a command's cgroup (empty once its processes are reaped)."""
    for _ in range(tries):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(REMOVE_PAUSE)  # the last processes being reaped
    # still busy: removed by a later run (_remove_stale)


def _remove_stale(parent: Path) -> None:
    """Remove the cgroups of heph runs that have ended (a cgroup still busy at its end)."""
    try:
        names = [entry.name for entry in os.scandir(parent) if entry.name.startswith("heph-")]
    except OSError:
        return
    for name in names:
        pid = name.split("-")[1]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            _remove(parent / name)
