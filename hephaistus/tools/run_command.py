"""run_command: run one of the project's named commands, safely.

Only configured or detected commands run, by name. The model's extra arguments are appended only
when they are plain words (a test id, a path inside the workspace), never shell syntax, and no
shell ever sees them; every path in them, bare, after `=` or glued to a short option, passes the
workspace's check. No standard input, a timeout that kills the whole process group, an
environment of allowed variables only (no credentials), and the end of the output kept (the
failures summary is at the end), with anything that looks like a credential scrubbed.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Iterable

from hephaistus.approvals import CommandRequest
from hephaistus.redact import CREDENTIAL_TEXT, SECRET_NAME, scrub
from hephaistus.tools.context import ToolContext
from hephaistus.tools.results import CommandRun, ToolResult, clip
from hephaistus.workspace import PathError

PLAIN_ARG = re.compile(r"^[\w./:=@%+,\[\]-]+$")
# Where a path can hide inside one argument: after '=', ':', ',' or '@', or glued to a short
# option (-C/tmp).
ARG_PIECES = re.compile(r"[=:,@]")
SHORT_OPTION_VALUE = re.compile(r"^-[A-Za-z](.+)$")
# The variables a command's child gets: what toolchains need to run, never credentials. The
# project config adds its own (`pass_env`).
CHILD_ENV = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CI",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "PYTHONDONTWRITEBYTECODE",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "NODE_PATH",
    "NVM_DIR",
    "GEM_HOME",
    "GEM_PATH",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "MAKEFLAGS",
    "DOTNET_ROOT",
}
CHILD_ENV_PREFIXES = ("LC_", "XDG_")
SHELL_OPERATORS = re.compile(r"&&|\|\||[|;<>`$]")
KILL_GRACE = 2.0
FAILED_TEST = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def run_command(ctx: ToolContext, name: str, args: str | None = None) -> ToolResult:
    """Run a project command; `args` are appended (a test id).

    Args:
        ctx: the run's workspace, approver and limits (given by heph, not by the model)
        name: the command's name, e.g. test or lint
        args: extra arguments separated by spaces, e.g. tests/test_app.py::test_add
    """
    command = ctx.commands.get(name)
    if command is None:
        known = ", ".join(ctx.commands) or "none are configured"
        return ToolResult(
            False,
            f"no project command named '{name}' (available: {known}); "
            "only configured or detected commands can run",
        )
    try:
        extra = plain_arguments(ctx, args or "")
    except ValueError as error:
        return ToolResult(False, f"run_command: {error}")
    argv = command_argv(command, extra)
    # As configured, with the model's arguments: never the `sh -c '...' "$@"` it runs as.
    shown_line = " ".join([command, *(shlex.quote(a) for a in extra)])
    decision = ctx.approve(CommandRequest(name, shown_line, ctx.command_sources.get(name, "")))
    if decision == "refuse":
        return ToolResult(False, f"command not approved: `{name}` did not run", decision=decision)
    if decision == "decline":
        return ToolResult(False, f"the user declined to run `{name}`", decision=decision)
    if decision == "skip":
        return ToolResult(True, f"dry run: would run `{name}`", decision=decision)
    exit_code, output, seconds = execute(argv, ctx)
    shown = " ".join(shlex.quote(a) for a in [*shlex.split(command), *extra])
    status = "timed out" if exit_code is None else f"exit code {exit_code}"
    header = f"$ {shown}\n{status} after {seconds:.1f} s\n"
    body = clip(output, max(1000, ctx.observation_limit - len(header) - 100), keep="tail")
    return ToolResult(
        exit_code == 0, scrub(header + body), command=CommandRun(name, summarize(exit_code, output))
    )


def plain_arguments(ctx: ToolContext, text: str) -> list[str]:
    """The words of `text`, each a plain argument (a test id, a flag, a path inside the workspace
    that may be read); ValueError naming the first that is not."""
    if "\n" in text:
        raise ValueError("arguments must be on one line")
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ValueError(f"cannot read the arguments: {error}") from None
    for word in words:
        if not PLAIN_ARG.match(word):
            raise ValueError(
                f"'{word}' is not a plain argument: no shell syntax, quotes or "
                "special characters; give test ids, paths or -flags"
            )
        if ".." in word:
            raise ValueError(f"'{word}' contains '..'; name paths inside the workspace directly")
        for piece in _path_pieces(word):
            if piece.startswith("/"):
                raise ValueError(
                    f"'{word}' names an absolute path; arguments may only name "
                    "places inside the workspace, relative to it"
                )
            if not ("/" in piece or "." in piece or (ctx.workspace.root / piece).exists()):
                continue  # a test name or option value, not a path
            try:
                ctx.workspace.check(piece, allow_secrets=ctx.allow_secrets)
            except PathError as error:
                raise ValueError(f"'{word}': {error}") from None
    return words


def _path_pieces(word: str) -> list[str]:
    """The parts of an argument that could be paths: the word, its values after '=' and the
    like, and a short option's glued value."""
    pieces = [word, *ARG_PIECES.split(word)]
    glued = SHORT_OPTION_VALUE.match(word)
    if glued:
        pieces.append(glued.group(1))
    return [p for p in dict.fromkeys(pieces) if p and not p.startswith("-")]


def command_argv(command: str, extra: list[str]) -> list[str]:
    """The configured command with the extra arguments; a command the user wrote with shell
    operators runs in `sh -c`, the extra arguments passed as "$@", never spliced into it."""
    if SHELL_OPERATORS.search(command):
        return ["sh", "-c", f'{command} "$@"', "sh", *extra]
    return [*shlex.split(command), *extra]


def child_environment(pass_env: Iterable[str] = ()) -> dict[str, str]:
    """The allowed variables of this process, without credentials, plus those the project
    config names (`pass_env`, glob patterns), which the user chose to share."""
    named = tuple(pass_env)
    return {
        name: value
        for name, value in os.environ.items()
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in named)
        or (
            (name in CHILD_ENV or name.startswith(CHILD_ENV_PREFIXES))
            and not SECRET_NAME.search(name)
            and not CREDENTIAL_TEXT.search(value)
        )
    }


def execute(argv: list[str], ctx: ToolContext) -> tuple[int | None, str, float]:
    """(exit code or None on timeout, output, seconds); Ctrl-C kills the whole group."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            cwd=ctx.workspace.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=child_environment(ctx.pass_env),
            start_new_session=True,
        )
    except OSError as error:
        return 127, f"cannot start {argv[0]}: {error.strerror or error}", 0.0
    try:
        output, _ = process.communicate(timeout=ctx.command_timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        _kill_group(process)
        try:
            output, _ = process.communicate(timeout=KILL_GRACE)
        except subprocess.TimeoutExpired:  # something escaped the group and holds the pipe
            output = b""
        code = None
        output += f"\n[stopped after {ctx.command_timeout:g} s: the command timed out]".encode()
    except BaseException:
        _kill_group(process)
        raise
    return code, output.decode("utf-8", "replace"), time.monotonic() - started


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            if sig == signal.SIGTERM:
                # The leader is gone; make sure nothing of its group lingers.
                os.killpg(process.pid, signal.SIGKILL)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


def summarize(exit_code: int | None, output: str) -> str:
    """passed, or failed with the failing test ids pytest names."""
    if exit_code == 0:
        return "passed"
    if exit_code is None:
        return "timed out"
    failing = list(dict.fromkeys(FAILED_TEST.findall(output)))[:10]
    return "failed" + (f": {', '.join(failing)}" if failing else f" (exit code {exit_code})")


TOOLS = ((run_command, False),)
