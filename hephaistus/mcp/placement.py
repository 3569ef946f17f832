"""Where an MCP server's process runs, and in which folder.

A workspace's server runs in the sandbox, and so does the person's (with the network: it is their
server), unless their entry says `on_host = true`: on the host, whatever it is handed (an
argument, its folder, a path the model sends) could make it run what a command wrote, and heph
cannot see what a server does with it. An `on_host` server runs as the person only in a
workspace they trusted, and never with the workspace (or a folder in it) as its current folder:
`python -m` and `-c` put that folder first on the import path, node and npm look for code in it,
so a file a model wrote there would stand in for their server's code or its libraries. It runs
in a folder of heph's own instead, new and empty at each start, or in the folder its entry's
`cwd` names outside the workspace. An entry that itself names the workspace (its `cwd`, its
command, an argument, `.` among them, a path in its `env`) would run the workspace's code, or
work on what a model wrote there (`uvx --from .` builds it, a git server runs its fsmonitor):
that server runs in the sandbox, without the network, `on_host` or not."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hephaistus.settings.mcp_config import McpServerConfig, expanded_env, live

IN_THE_SANDBOX = (
    " (your servers run in the sandbox, with the network, unless their entry says "
    "on_host = true: then as you, in a workspace you trusted)"
)
UNTRUSTED = (
    " (your servers run in the sandbox in a workspace you have not trusted, so that its files' "
    "code never runs as you: `heph trust` lets them run as you here)"
)


class Placement:
    """Where the MCP servers of the workspace at `root` run. `command_line` makes a sandboxed
    server's command line (Contained.command_line); `contain_persons`: the person's own servers
    run in the sandbox too (a workspace they have not trusted)."""

    def __init__(
        self,
        root: Path,
        environ: dict[str, str],
        command_line: Callable[..., list[str]] | None,
        *,
        contain_persons: bool,
    ) -> None:
        self.root = root
        self.environ = environ
        self.command_line = command_line
        self.contain_persons = contain_persons
        # Whether the sandbox's commands (and a workspace's servers) have the network: its
        # settings, held by the executor whose command line this is.
        owner = getattr(command_line, "__self__", None)
        self.sandbox_network = bool(getattr(owner, "network", False))

    def contained(self, server: McpServerConfig) -> bool:
        """Whether `server`'s process runs in the sandbox (a server at a URL runs nowhere)."""
        return bool(server.command) and (server.from_workspace or bool(self.why_contained(server)))

    def why_contained(self, server: McpServerConfig) -> str:
        """Why the person's `server` runs in the sandbox here, in words ("" where it does not,
        and for a workspace's server, which always does)."""
        if server.from_workspace or not server.command:
            return ""
        if self.contain_persons:
            return UNTRUSTED
        code = workspace_code(server, self.root, self.environ)
        if code is None:
            return IN_THE_SANDBOX if not server.on_host else ""
        return (
            f" (it would run the workspace's code, which a model can change: {code}; so it runs "
            "in the sandbox without the network, trusted or not)"
        )

    def offline(self, server: McpServerConfig) -> bool:
        """Whether `server` runs in the sandbox without the network."""
        if not self.contained(server):
            return False
        return not self.sandbox_network if server.from_workspace else not self.networked(server)

    def offline_hint(self, server: McpServerConfig) -> str:
        """What to do where `server` is started by a program that downloads its package
        (`npx -y pkg`, `uvx pkg`) in the sandbox without the network ("" elsewhere): there
        it runs only what is installed, and fails at once, rather than waiting for a network."""
        runner = downloader([server.command, *server.args])
        if runner is None or not self.offline(server):
            return ""
        fix = (
            "give the sandbox the network ([sandbox] network = true) or move the entry to "
            "your user config"
            if server.from_workspace
            else "keep the workspace out of its entry"
        )
        return (
            f" ({runner} cannot download its package in the sandbox without the network, so it "
            f"stopped at once: install the package and name its program, or {fix})"
        )

    def argv(self, server: McpServerConfig) -> list[str]:
        """The command line that starts `server`: on the host as the entry says; in the
        sandbox, a workspace's with the network its settings give, the person's with the
        network (their server) unless it would run the workspace's code.
        OSError where it must run in the sandbox and there is none."""
        if not self.contained(server):  # an argument `.` is the folder they chose
            return [server.command, *server.args]
        argv = [server.command, *server.args]
        code = None if server.from_workspace else workspace_code(server, self.root, self.environ)
        # The sandbox starts in the workspace: the entry's folder is gone to, and a person's
        # server with the network starts in the sandbox's own empty /tmp, where no file a model
        # wrote stands in for its code (`python -m`, npx look in the folder they start in).
        networked = not server.from_workspace and code is None  # (in the sandbox: see networked)
        folder = _resolved(server.cwd, self.root) if server.cwd else ""
        folder = folder or ("/tmp" if networked else "")
        if folder:
            argv = ["/bin/sh", "-c", 'cd -- "$0" && unset OLDPWD && exec "$@"', folder, *argv]
        if self.command_line is None:
            raise OSError("there is no sandbox to run it in")
        if server.from_workspace:
            return self.command_line(argv)
        from hephaistus.runtime.tmp_shown import named_in_tmp

        shown = named_in_tmp([server.command, *server.args], self.root)  # the sandbox's /tmp is new
        cache = servers_cache(self.root)  # no command can leave a package there for npx or uv
        return self.command_line(argv, network=networked, shown=shown, cache=cache)

    def networked(self, server: McpServerConfig) -> bool:
        """Whether the person's `server` reaches the network from the sandbox (or runs on the
        host): what a call sends it must reach no settings a command wrote (see mcp_paths)."""
        if server.from_workspace or not server.command:
            return False
        return not self.contained(server) or workspace_code(server, self.root, self.environ) is None

    def refused(self, server: McpServerConfig, args: dict[str, Any]) -> str:
        """Why `args` are not sent to `server` ("": they are): one with the network (on the
        host, or the person's in the sandbox) is sent no path to settings a command wrote,
        which would run as the person. Refused, not asked."""
        if not self.networked(server):
            return ""
        from hephaistus.mcp.paths import refused_paths
        from hephaistus.runtime.sandbox import cache_folder

        start = self.start_folder(server)
        why = refused_paths(args, self.root, cache_folder(self.root), start)
        if not why:
            return ""
        return (
            f"not sent to {server.name}, which runs with the network and the person's "
            f"settings for it: {why}"
        )

    def start_folder(self, server: McpServerConfig) -> str:
        """The folder a networked person's `server` takes relative paths from, as the host
        names it: the entry's `cwd`, else the sandbox's own /tmp, or on the host a folder of
        heph's own (one of `folder`'s, at the same depth)."""
        if server.cwd:
            return _resolved(server.cwd, self.root)
        if self.contained(server):
            return "/tmp"
        from hephaistus.settings.userdirs import workspace_folder

        return str(workspace_folder(self.root, "mcp-cwd") / "server")

    @contextmanager
    def folder(self, server: McpServerConfig) -> Iterator[str]:
        """The folder one start of `server` runs in, for as long as it runs: the workspace in
        the sandbox; on the host the entry's `cwd` (outside the workspace, or it would be
        contained), else a folder of heph's own, removed when the server has ended."""
        if self.contained(server):
            yield str(self.root)
        elif server.cwd:
            yield _resolved(server.cwd, self.root)
        else:
            made = own_folder(self.root)
            try:
                yield str(made)
            finally:
                shutil.rmtree(made, ignore_errors=True)


def workspace_code(server: McpServerConfig, root: Path, environ: dict[str, str]) -> str | None:
    """What of the workspace at `root` the person's `server` entry names, in words, or None:
    its `cwd` (the workspace or in it); its command, an argument (its `=value`, a short
    option's value: `-r.`) or a path in an `env` value that is the workspace, in it, or a
    folder that holds it (relative ones taken from the entry's `cwd`, else the workspace; links
    followed: `.` is the workspace, or with `cwd = ".."` the folder holding it); an argument or
    `env` value that spells out the workspace's path (`sh -c "cd ~/project && ..."`); or heph's
    own folder for it, when the user's state folder lies in the workspace. A model can write
    all of these."""
    server = live(server, environ)
    where = (str(root), os.path.realpath(root))
    spelled = _spellings(root, where)
    if server.cwd and _names(server.cwd, where, str(root), holding=False):
        return f"its cwd {server.cwd} is the workspace or in it"
    # Relative paths are taken from where the server resolves them: its cwd on the host, or
    # the workspace, where it runs in the sandbox.
    base = _resolved(server.cwd, root) if server.cwd else str(root)
    if "/" in server.command and _names(server.command, where, base):
        return f"{server.command} is in the workspace"
    for arg in server.args:
        # `.` is the workspace, for the server to work on: a server that builds, runs or asks
        # git about what it is pointed at (`uvx --from .`, mcp-server-git) runs what a model
        # wrote there; so is a folder that holds it.
        if any(_names(word, where, base) for word in _words(arg)) or _spells(arg, where, spelled):
            return f"its argument {arg} names the workspace"
    for name, value in expanded_env(server, environ).items():
        parts = [part for part in value.split(os.pathsep) if part]
        if any(_names(part, where, base) for part in parts) or _spells(value, where, spelled):
            return f"its env {name} names the workspace"
    from hephaistus.settings.userdirs import state_dir

    if not server.cwd and _names(str(state_dir()), where, str(root), holding=False):
        return f"heph's state folder {state_dir()} is in the workspace (XDG_STATE_HOME moves it)"
    return None


def servers_cache(root: Path) -> Path:
    """The cache folder of the person's servers in the sandbox of the workspace at `root`:
    beside the commands' (see runtime.sandbox.cache_folder), which commands write."""
    from hephaistus.runtime.sandbox import cache_folder

    commands = cache_folder(root)
    return commands.with_name(commands.name + "-servers")


def own_folder(root: Path) -> Path:
    """A new, empty folder of heph's own for one start of a person's server on the host: made
    by heph alone (exclusive, for the person only) in the user's state folder, which the sandbox
    hides, and in no link a process could have put there."""
    import stat
    import tempfile

    from hephaistus.settings.userdirs import workspace_folder

    parent = workspace_folder(root, "mcp-cwd")
    found = os.lstat(parent)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        raise OSError(f"{parent} is not a folder of heph's own (remove it: heph makes it again)")
    return Path(tempfile.mkdtemp(prefix="server-", dir=parent))


def _words(arg: str) -> list[str]:
    """The paths an argument may give: itself, an option's `=value`, and a short option's
    value written against it (`-r.`, or after other letters: `-vr.`)."""
    words = [arg, arg.partition("=")[2]]
    if arg.startswith("-") and not arg.startswith("--"):
        words += [arg[start:] for start in range(2, len(arg))]  # -r. and -vr., as click reads
    return [word for word in words if word]


def _names(word: str, where: tuple[str, str], base: str, *, holding: bool = True) -> bool:
    """Whether `word` is a path to the workspace, into it, or (`holding`) to a folder that
    holds it: absolute, or relative to `base`, as written or once resolved."""
    try:
        path = os.path.join(base, word)  # an absolute word stays itself
        if not os.path.isabs(word) and not os.path.lexists(path):
            return False
        candidates = (os.path.normpath(path), os.path.realpath(path))
    except (OSError, ValueError):  # a NUL in it: no path at all
        return False
    for p in candidates:
        for w in where:
            inside = p == w or p.startswith(w.rstrip("/") + "/")
            if inside or (holding and w.startswith(p.rstrip("/") + "/")):
                return True
    return False


PATH_IN_TEXT = re.compile(r"/[^\s\"'`;:|&<>(){}=,@]+")  # a path written in a line or an option


def _spells(text: str, where: tuple[str, str], spelled: re.Pattern[str]) -> bool:
    """Whether `text` (a shell line, an option) spells out the workspace's path, or a path to
    it, in it or holding it (through a link too): quotes dropped, `~` and `$HOME` read as the
    home folder, `//` and `/./` as `/` (`cd "$HOME"/proj`, `file:///link/to/it`)."""
    home = os.path.realpath(Path.home())
    plain = re.sub(r"\$\{?HOME\}?|(?<![\w/])~(?=/|$)", home, text.replace('"', "").replace("'", ""))
    while True:
        shorter = plain.replace("/./", "/").replace("//", "/")
        if shorter == plain:
            break
        plain = shorter
    if spelled.search(text) or spelled.search(plain):
        return True
    return any(_names(path, where, "/") for path in PATH_IN_TEXT.findall(plain))


def _spellings(root: Path, where: tuple[str, str]) -> re.Pattern[str]:
    """The workspace's path as a shell line or an option may spell it: as given, resolved, or
    from the home folder (`~/`, `$HOME/`), followed by no more of a name."""
    spellings = {w.rstrip("/") or "/" for w in where}
    home = os.path.realpath(Path.home())
    for path in where:
        if path.startswith(home + "/"):
            rest = path[len(home) :]
            spellings |= {"~" + rest, "$HOME" + rest, "${HOME}" + rest}
    either = "|".join(re.escape(s) for s in sorted(spellings, key=len, reverse=True))
    return re.compile(f"(?:{either})(?![\\w.-])")


def _resolved(cwd: str, root: Path) -> str:
    """The entry's `cwd` as a real path: a relative one is taken from the workspace."""
    return os.path.realpath(os.path.join(root, cwd))


RUNNERS = {"npx": (), "pnpx": (), "bunx": (), "uvx": (), "npm": ("exec",), "pnpm": ("dlx",)}
RUNNERS |= {"yarn": ("dlx",), "pipx": ("run",), "uv": ("tool", "run")}
OFFLINE = {"npm_config_offline": "true", "UV_OFFLINE": "1"}  # they fail at once, saying why


def downloader(argv: list[str]) -> str | None:
    """The program (and subcommand) in `argv` that downloads the package it runs, or None."""
    name = os.path.basename(argv[0]) if argv else ""
    words = RUNNERS.get(name)
    if words is None or tuple(argv[1 : 1 + len(words)]) != words:
        return None
    return " ".join([name, *words])
