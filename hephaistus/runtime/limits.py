"""How many processes (threads included) and how much memory a sandboxed command may have at
once, so a fork bomb or a runaway allocation ends at the limit, not with the machine.

Two ways, because the kernel's per-user process limit (RLIMIT_NPROC) never binds root:
- as root, cgroups of the command's own (`pids.max`, and the memory limit), where the cgroup
  file system is writable (cgroup v1's pids and memory hierarchies, or v2 where the
  controllers can be given to a child of heph's cgroup): the command joins them before it
  starts, and they are removed after;
- as anyone else, RLIMIT_NPROC and RLIMIT_DATA set inside the sandbox (by util-linux's
  `prlimit`, run by absolute path, just before the command): the sandbox's user namespace
  counts only its own processes, so the process limit is the command's alone, not the
  person's other programs'; the memory limit binds each process (its heap and private
  mappings: the address space a runtime only reserves does not count).
Where neither works (root without a writable cgroup, no `prlimit`), commands run unlimited.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

PROCESSES = 1024  # processes and threads a command may have at once
MEMORY_SHARE = 2  # a command may use 1/MEMORY_SHARE of the machine's memory
CGROUP_ROOT = Path("/sys/fs/cgroup")
REMOVE_TRIES, REMOVE_PAUSE = 20, 0.005  # waiting for a cgroup's last processes to be reaped
_numbers = itertools.count()


def memory_limit() -> int:
    """Bytes of memory a command may use: a share of the machine's."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // MEMORY_SHARE


class ProcessLimit:
    """The limits of one command: made before it starts, `enter`ed by it before it runs
    (between fork and exec: async-signal-safe calls only), released after it ends. Without
    `cgroup` (a process another library starts), root's commands are not limited."""

    def __init__(
        self, processes: int | None = None, memory: int | None = None, *, cgroup: bool = True
    ) -> None:
        self.processes = processes or PROCESSES
        self.memory = memory or memory_limit()
        self.cgroups: list[Path] = []
        self._procs: list[int] = []  # each cgroup's cgroup.procs, open for the command to join
        self.prlimit: str | None = None
        if os.getuid() == 0:
            if cgroup:
                self._make_cgroups()
        else:
            from hephaistus.runtime.programs import find

            self.prlimit = find("prlimit")

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` as the sandbox runs it: under `prlimit` where that sets the limits."""
        if self.prlimit is None:
            return argv
        limits = [f"--nproc={self.processes}", f"--data={self.memory}"]
        return [self.prlimit, *limits, "--", *argv]

    def enter(self) -> None:
        """In the command's process, before it starts anything: join the cgroups."""
        for procs in self._procs:
            os.write(procs, b"0")

    def release(self) -> None:
        """After the command ended (its whole group killed): remove its cgroups."""
        for procs in self._procs:
            os.close(procs)
        self._procs = []
        for folder in self.cgroups:
            _remove(folder, tries=REMOVE_TRIES)
        self.cgroups = []

    def _make_cgroups(self) -> None:
        wanted = {"pids": str(self.processes), "memory": str(self.memory)}
        made: dict[Path, Path] = {}  # parent -> the command's cgroup in it (v2: one for both)
        for controller, value in wanted.items():
            parent = _parent(controller)
            if parent is None:
                continue
            if parent not in made:
                folder = _made_in(parent)
                if folder is None:
                    continue
                made[parent] = folder
            folder = made[parent]
            try:
                for name in LIMIT_FILES[controller]:
                    if (folder / name).exists():
                        (folder / name).write_text(value)
                        break
            except OSError:
                continue
        for folder in made.values():
            try:
                self._procs.append(os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
                self.cgroups.append(folder)
            except OSError:
                _remove(folder)


# Where each limit is written: cgroup v2's name, else v1's.
LIMIT_FILES = {"pids": ("pids.max",), "memory": ("memory.max", "memory.limit_in_bytes")}


def _made_in(parent: Path) -> Path | None:
    """A new cgroup for one command in `parent` (stale ones of ended runs removed first)."""
    _remove_stale(parent)
    folder = parent / f"heph-{os.getpid()}-{next(_numbers)}"
    try:
        folder.mkdir()
    except OSError:
        return None
    return folder


def _parent(controller: str) -> Path | None:
    """The cgroup folder heph's commands' cgroups for `controller` are made in: heph's own in
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
