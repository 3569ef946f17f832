"""The sandbox every process heph starts runs in (bubblewrap, on Linux): an Executor that wraps
the command in `bwrap`, so it sees the machine read-only, writes only the workspace, a private
/tmp and a cache folder of its own, cannot reach the network, the host's sockets or processes,
and finds the person's credential stores, heph's own files and the workspace's secrets empty.

Whether bubblewrap works here is probed once per process (a launch costs ~11 ms); where it does
not, there is no sandbox, and heph says so and fails closed (the runtime's policy asks about
every command; the shell is not offered).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from hephaistus.runtime.before_commands import kept_internals, remember_repositories
from hephaistus.runtime.devices import NOBODY, private_devices
from hephaistus.runtime.executor import Completed, LocalExecutor, Terminal
from hephaistus.runtime.gitconfigs import cleaned_git_configs, repository_dirs
from hephaistus.runtime.hidden import (
    Projects,
    exposed_secrets,
    hidden_paths,
    host_sockets,
    other_projects,
    projects_around,
    used_folders,
    walk,
)
from hephaistus.runtime.landlock import scoped_line, scoping
from hephaistus.runtime.launch import launch
from hephaistus.runtime.limits import HIDING_BYTES, RUN_BYTES, ProcessLimit, memory_limit
from hephaistus.runtime.programs import (
    command_path,
    find,
    missing,
    own_installation,
    sandbox_caches,
)
from hephaistus.runtime.tmp_shown import toolchains_in_tmp
from hephaistus.settings.config_sections import SandboxConfig

# Tools' caches point into the sandbox's own cache folder (the rest of home is read-only).
CACHE_VARIABLES = {
    "XDG_CACHE_HOME": "xdg",
    "PIP_CACHE_DIR": "pip",
    "UV_CACHE_DIR": "uv",
    "npm_config_cache": "npm",
    "GOCACHE": "go",
}
EMPTY_FILE = "empty"  # in heph's state folder: what a hidden file shows inside
PROBE_SECONDS = 5.0


@dataclass
class Sandbox:
    """An Executor that runs each command in a bubblewrap sandbox around `workspace`."""

    workspace: Path
    cache: Path  # the sandbox's cache folder for this workspace (pip, uv, npm, go)
    hidden: tuple[Path, ...] = ()  # files and folders that look empty inside
    kept: tuple[Path, ...] = ()  # nested repositories' .git (read-only), nested .heph (hidden)
    network: bool = False
    read_only: bool = False  # the workspace too (plan mode's shell)
    bwrap: str = "bwrap"
    local: LocalExecutor = field(default_factory=LocalExecutor)
    _hidden_line: list[str] | None = field(default=None, repr=False, compare=False)
    _projects: Projects | None = field(default=None, repr=False, compare=False)
    _git_dirs: list[Path] | None = field(default=None, repr=False, compare=False)
    _exposed: dict[Path, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        read_only: bool = False,
        terminal: Terminal | None = None,
    ) -> Completed:
        """Run `argv` inside the sandbox, as the local executor runs it outside: no standard
        input, a group of its own that a timeout or Ctrl-C kills whole. In `terminal` where
        one is given: the same sandbox's line with the same environment."""
        self.cache.mkdir(parents=True, exist_ok=True)
        inside = {**env, **{name: str(self.cache / sub) for name, sub in CACHE_VARIABLES.items()}}
        # The workspace is a mount of its own inside: git in a workspace that is a folder of a
        # repository would stop at it, not finding the repository.
        inside["GIT_DISCOVERY_ACROSS_FILESYSTEM"] = "1"
        box = replace(self, read_only=True) if read_only else self
        line = box.command(argv, cwd, inside, ProcessLimit())
        # With the network shared, the host's abstract sockets are in reach: Landlock scopes
        # them (the only step between fork and exec: without one a process starts faster).
        scoped = scoping(self.bwrap) if self.network else None
        before_start = scoped if callable(scoped) else None
        if terminal is not None:  # where heph's interpreter is outside the workspace
            started = launch(line, inside, argv, before_start is not None, self.workspace)
            if started is not None:
                return terminal.run(started, cwd=cwd, timeout=timeout)
        return self.local.run(line, cwd=cwd, env=inside, timeout=timeout, before_start=before_start)

    def _hiding(self, empty: Path) -> list[str]:
        """The part of the line that hides `hidden`: worked out once per sandbox (a hundred
        paths looked at), as `hidden` itself is."""
        if self._hidden_line is None:
            size = _size(self.bwrap, HIDING_BYTES)
            self._hidden_line = [arg for path in self.hidden for arg in _hide(path, empty, size)]
        return self._hidden_line

    def _around(self) -> Projects:
        """The person's projects around the workspace: found once per sandbox, as the
        workspace's secrets are (a project made during a run is hidden from the next)."""
        if self._projects is None:
            self._projects = projects_around(self.workspace, self._repository())
        return self._projects

    def _repository(self) -> list[Path]:
        """The workspace repository's git folders (a worktree's main one, which may lie in
        another project): located once per sandbox, as the repository is once per run."""
        if self._git_dirs is None:
            self._git_dirs = repository_dirs(self.workspace)
        return self._git_dirs

    def _exposing(self, project: Path, empty: Path) -> list[str]:
        """The part of the line that hides the secrets and records of a project the sandbox
        shows (see hidden.exposed_secrets): worked out once per sandbox and project."""
        if project not in self._exposed:
            size = _size(self.bwrap, HIDING_BYTES)
            secrets = exposed_secrets(project, self.workspace)
            self._exposed[project] = [arg for path in secrets for arg in _hide(path, empty, size)]
        return self._exposed[project]

    def command(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str] | None = None,
        limit: ProcessLimit | None = None,
        shown: list[Path] | None = None,
    ) -> list[str]:
        """The bwrap command line that runs `argv` in `cwd`, inside (with `env`, whose PATH
        and VIRTUAL_ENV say where the toolchain is), under `limit`'s process limit, with the
        paths under /tmp the person named (`shown`) read-only."""
        if not _started:  # the first process of heph's: may write from now
            remember_repositories(self.workspace)
            _started.append(time.time())
        root = str(self.workspace)
        line = isolated(self.bwrap, self.network, limit.memory if limit else memory_limit())
        runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
        if runtime_dir and Path(runtime_dir).is_dir():
            runtime_dir = os.path.realpath(runtime_dir)
            line += [*_size(self.bwrap, RUN_BYTES), "--tmpfs", runtime_dir]
        # Binds come after the tmpfs mounts: a workspace under /tmp stays reachable.
        line += ["--ro-bind" if self.read_only else "--bind", root, root]
        for path in [self.workspace / ".git", self.workspace / ".heph", *self.kept]:
            if not path.exists() or path.is_symlink():
                continue
            # heph's records are its own (sessions, state): not even read inside.
            hide = path.name == ".heph" and path.is_dir()
            mount = ["--tmpfs", str(path), "--remount-ro"] if hide else ["--ro-bind", str(path)]
            line += [*mount, str(path)]
        for path in own_installation(self.workspace):  # heph's own code: never a command's
            line += ["--ro-bind", str(path), str(path)]
        line += ["--bind", str(self.cache), str(self.cache)]
        toolchains = toolchains_in_tmp(argv, env or {}, self.workspace) + (shown or [])
        for toolchain in toolchains:
            line += ["--ro-bind", str(toolchain), str(toolchain)]
        empty = empty_file()
        used = [*toolchains, *used_folders(argv, env or {})]
        used += self._repository()  # a worktree's main repository, beside it
        hidden_projects, shown_projects = other_projects(self._around(), self.workspace, used)
        for project in hidden_projects:
            line += [*_size(self.bwrap, HIDING_BYTES), "--tmpfs", str(project)]
        line += self._hiding(empty)
        for project in shown_projects:
            line += self._exposing(project, empty)
        for path in host_sockets([self.workspace, *toolchains]):
            line += ["--ro-bind", str(empty), str(path)]
        nested = [path for path in self.kept if path.name == ".git" and path.is_dir()]
        nested += [path / ".git" for path in shown_projects if (path / ".git").is_dir()]
        own = own_folder(self.workspace)
        for config, copy in cleaned_git_configs(own, [*self._repository(), *nested]):
            line += ["--ro-bind", str(copy or empty), str(config)]
        return [*line, "--chdir", str(cwd), "--", *(limit.wrap(argv) if limit else argv)]


def isolated(bwrap: str, network: bool, tmp_bytes: int | None = None) -> list[str]:
    """The start of every bwrap line: new namespaces (the network's too, unless `network`),
    no capabilities, a new session, gone with heph; the machine read-only, a fresh /dev and
    /proc, a private /tmp and /dev/shm of at most half `tmp_bytes` each (memory: a tmpfs is
    in memory, and no process's limit counts it), and /run (the host's sockets) empty, small."""
    line = [bwrap, "--die-with-parent", "--new-session", "--unshare-all"]
    line += ["--share-net"] if network else []
    line += ["--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if os.getuid() == 0:  # root outside is nobody inside (tools that refuse root then run)
        line += ["--uid", str(NOBODY), "--gid", str(NOBODY)]
        for node, name in private_devices():
            line += ["--dev-bind", str(node), f"/dev/{name}"]
    # /dev is a tmpfs too: its shm as /tmp, the rest read-only (its nodes are mounts of their own).
    # The two share the limit: together they fit beside heph in its memory cgroup (limits.py).
    half = tmp_bytes // 2 if tmp_bytes else None
    line += [*_size(bwrap, half), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    line += [*_size(bwrap, half), "--tmpfs", "/tmp"]
    return [*line, *_size(bwrap, RUN_BYTES if tmp_bytes else None), "--tmpfs", "/run"]


def _size(bwrap: str, size: int | None) -> list[str]:
    """The option that bounds the next tmpfs to `size` bytes, where this bubblewrap takes it
    (0.7 and later, not installed setuid: see _probe)."""
    return ["--size", str(size)] if size and _sized.get(bwrap, True) else []


_started: list[float] = []  # when heph first started a process in a sandbox


def first_started() -> float | None:
    """When heph first started a sandboxed process (None: not yet): no command wrote before."""
    return _started[0] if _started else None


def own_folder(workspace: Path) -> Path:
    """heph's folder of what it shows inside the sandbox of `workspace` (cleaned copies): in
    the user's state folder, which no command can write or read."""
    from hephaistus.settings.userdirs import workspace_folder

    return workspace_folder(workspace, "sandbox")


def empty_file() -> Path:
    """An empty file heph made in its state folder, which no command can write or replace
    (the sandbox hides it): what a hidden file shows inside. Made with an exclusive, no-follow
    open and checked before each use; never written through (a link or a named pipe planted
    where heph looks is an error, not a target)."""
    from hephaistus.settings.userdirs import state_dir

    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / EMPTY_FILE
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444))
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_size or info.st_uid != os.getuid():
        raise OSError(f"{path} is not the empty file heph made; remove it and run heph again")
    return path


def _hide(path: Path, empty: Path, size: list[str]) -> list[str]:
    """What makes `path` look empty inside: an empty folder over a folder (`size`: the
    option that keeps what a command writes there small), an empty file over a file (not
    /dev/null: a device is refused on the sandbox's mounts)."""
    if path.is_symlink() or not path.exists():
        return []
    if path.is_dir():
        return [*size, "--tmpfs", str(path)]
    return ["--ro-bind", str(empty), str(path)]


def cache_folder(workspace: Path) -> Path:
    """The sandbox's cache folder for `workspace`, outside it: in the user's cache folder (by
    its real path: bubblewrap mounts nothing through a link)."""
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
    return Path(os.path.realpath(sandbox_caches()), digest)


_probed: dict[str, str | None] = {}
_sized: dict[str, bool] = {}  # by bwrap path: whether it bounds a tmpfs's size


def unavailable(bwrap: str = "bwrap") -> str | None:
    """Why bubblewrap cannot sandbox a command here (not found, namespaces refused), or None
    when it can. Asked of the system once per process."""
    if bwrap not in _probed:
        _probed[bwrap] = _probe(bwrap)
    return _probed[bwrap]


def _probe(bwrap: str) -> str | None:
    """Why `bwrap` makes no sandbox here, or None. One that makes one but takes no `--size`
    (before 0.7, or setuid) makes it without sizes (a command can fill the memory from /tmp
    there)."""
    found = find(bwrap)
    if found is None:
        return f"bubblewrap: {missing(bwrap)}"
    env = {"PATH": os.environ.get("PATH", "")}  # a probe needs none of heph's secrets
    try:
        for tmp_bytes in (memory_limit(), None):  # the second: where bwrap takes no --size
            done = subprocess.run(
                [*isolated(found, False, tmp_bytes), "--", "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_SECONDS,
                env=env,
            )
            if done.returncode == 0 or b"size" not in done.stderr:
                break
            _sized[found] = False
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap did not start: {error}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap cannot make a sandbox here: {said[-1] if said else done.returncode}"
    return None


class Contained:
    """The executor of a run: the sandbox, made on the first command (the probe, the walk for
    secrets and the bind list cost nothing to a run that starts no process). Where no sandbox
    works it runs nothing unsandboxed unasked: `contained()` says so to the policy, which then
    asks about every command."""

    def __init__(self, workspace: Path, settings: SandboxConfig) -> None:
        self.workspace = workspace
        self.settings = settings
        self.terminal: Terminal | None = None  # where a command `shown` runs (an editor's)
        self._sandbox: Sandbox | None = None

    def why_not(self) -> str | None:
        """Why commands run unsandboxed (the sandbox turned off, or none works here), or None."""
        if not self.settings.enabled:
            return "the sandbox is turned off ([sandbox] enabled = false in your user config)"
        return unavailable(self.settings.bwrap)

    def contained(self) -> bool:
        """Whether a command runs in a sandbox, or unsandboxed as the person chose."""
        return not self.settings.enabled or unavailable(self.settings.bwrap) is None

    def sandboxed(self) -> bool:
        """Whether commands run in a sandbox here (the shell runs nowhere else)."""
        return self.why_not() is None

    @property
    def network(self) -> bool:
        """Whether its commands reach the network (`[sandbox] network`)."""
        return self.settings.network

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        read_only: bool = False,
        shown: bool = False,
    ) -> Completed:
        """Run `argv` in the sandbox, or where there is none (asked about first, by the
        policy) as this user; `shown`, in the terminal where there is one."""
        if self.why_not() is not None:
            return LocalExecutor().run(argv, cwd=cwd, env=env, timeout=timeout)
        terminal = self.terminal if shown else None
        box = self._box()
        return box.run(
            argv, cwd=cwd, env=env, timeout=timeout, read_only=read_only, terminal=terminal
        )

    def command_line(
        self,
        argv: list[str],
        *,
        network: bool | None = None,
        shown: list[Path] | None = None,
        cache: Path | None = None,
    ) -> list[str]:
        """The line that runs `argv` in the sandbox, in the workspace root, for a process that
        keeps running and is spoken to (an MCP server); OSError where there is no sandbox:
        such a process never runs outside one. `network`: reachable or not, whatever the
        settings say (None: as they say); `shown`: paths under /tmp the person's entry names;
        `cache`: a cache folder of its own (one commands cannot write: the person's servers')."""
        why = self.why_not() if self.settings.enabled else "the sandbox is turned off"
        if why is not None:
            raise OSError(f"a workspace's MCP server runs only in the sandbox, and {why}")
        box = replace(self._box(), cache=cache or self._box().cache)
        box.cache.mkdir(parents=True, exist_ok=True)
        box = box if network is None else replace(box, network=network)
        line = box.command(argv, self.workspace, {"PATH": command_path()}, ProcessLimit(), shown)
        return scoped_line(line) if box.network else line

    def _box(self) -> Sandbox:
        if self._sandbox is None:
            root = self.workspace
            walked = walk(root)
            self._sandbox = Sandbox(
                root,
                cache_folder(root),
                hidden=hidden_paths(root, walked.secrets),
                kept=tuple(root / rel for rel in kept_internals(root, walked.internals)),
                network=self.settings.network,
                bwrap=find(self.settings.bwrap) or self.settings.bwrap,
            )
        return self._sandbox
