"""run_command: run one of the project's named commands, safely.

Only configured or detected commands run, by name. The model's extra arguments are appended only
when they are plain words (a test id, a path inside the workspace), never shell syntax, and no
shell ever sees them; every path in them, bare, after `=` or glued to a short option, passes the
workspace's check. The tool prepares the run and the runtime decides it; it runs through the
run's executor (no standard input, a timeout that kills the whole process group) with an
environment of allowed variables only (no credentials), and the end of the output is kept (the
failures summary is at the end), with anything that looks like a credential scrubbed.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable

from hephaistus.redact import CREDENTIAL_TEXT, MIN_SECRET_CHARS, SECRET_NAME, scrub
from hephaistus.runtime.executor import Completed, Executor
from hephaistus.settings.mcp_config import MODEL_KEY
from hephaistus.tools.context import ToolContext
from hephaistus.values import CommandRequest, CommandRun, Proposal, ToolResult, clip
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
FAILED_TEST = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def run_command(ctx: ToolContext, name: str, args: str | None = None) -> ToolResult | Proposal:
    """Run a project command; `args` are appended (a test id).

    Args:
        ctx: the run's workspace, executor and limits (given by heph, not by the model)
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

    def carry_out() -> ToolResult:
        ran = ctx.executor.run(
            argv,
            cwd=ctx.workspace.root,
            env=child_environment(ctx.pass_env),
            timeout=ctx.command_timeout,
        )
        shown = " ".join(shlex.quote(a) for a in [*shlex.split(command), *extra])
        summary = summarize(ran.exit_code, ran.output)
        return ToolResult(
            ran.exit_code == 0, observed(ctx, shown, ran), command=CommandRun(name, summary)
        )

    return Proposal(
        "command",
        CommandRequest(name, shown_line, ctx.command_sources.get(name, "")),
        carry_out,
        f"`{name}` did not run",
        name=name,
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
    config names (`pass_env`, glob patterns), which the user chose to share. A glob passes no
    credential (a name or a value that looks like one): only a pattern that names it exactly
    does. The model's key, and any variable holding it, never passes."""
    from hephaistus.runtime.programs import command_path

    named = tuple(pass_env)
    model_key = os.environ.get(MODEL_KEY, "")
    chosen = {
        name: value
        for name, value in os.environ.items()
        if not _holds_model_key(name, value, model_key) and _passes(name, value, named)
    }
    if "PATH" in chosen:  # the PATH heph started with (its own leaves the workspace out)
        chosen["PATH"] = command_path()
    return chosen


def _passes(name: str, value: str, named: tuple[str, ...]) -> bool:
    """Whether a variable (not the model's key) goes to commands, by the rule above."""
    if name in named:
        return True
    if SECRET_NAME.search(name) or CREDENTIAL_TEXT.search(value):
        return False
    return (
        name in CHILD_ENV
        or name.startswith(CHILD_ENV_PREFIXES)
        or any(fnmatch.fnmatchcase(name, pattern) for pattern in named)
    )


def _holds_model_key(name: str, value: str, model_key: str) -> bool:
    """Whether the variable is the model's key or holds its value (a copy under another name,
    a header made of it)."""
    if name == MODEL_KEY:
        return True
    if len(model_key) < MIN_SECRET_CHARS:  # a local server's placeholder ("x") is no secret
        return bool(model_key) and value == model_key
    return model_key in value


def observed(ctx: ToolContext, shown: str, ran: Completed) -> str:
    """What the model sees of a command: the line, how it ended and how long it took, and the
    end of its output (where failures are summed up), credentials scrubbed. A command that
    failed in the sandbox is told what the sandbox keeps from it (it may be why)."""
    status = "timed out" if ran.exit_code is None else f"exit code {ran.exit_code}"
    header = f"$ {shown}\n{status} after {ran.seconds:.1f} s\n"
    limit = max(1000, ctx.observation_limit - len(header) - 100)
    body = clip(ran.output, limit, keep="tail", total=ran.size)
    return scrub(header + body) + (_sandbox_note(ctx.executor) if ran.exit_code != 0 else "")


def _sandbox_note(executor: Executor) -> str:
    """What a sandboxed command could not do, said where it may explain a failure."""
    sandboxed = getattr(executor, "sandboxed", None)
    if sandboxed is None or not sandboxed():
        return ""
    kept = "no input" if getattr(executor, "network", False) else "no network, no input"
    return f"\n(In the sandbox: {kept}; only the workspace is writable, not .git/.)"


def summarize(exit_code: int | None, output: str) -> str:
    """passed, or failed with the failing test ids pytest names."""
    if exit_code == 0:
        return "passed"
    if exit_code is None:
        return "timed out"
    failing = list(dict.fromkeys(FAILED_TEST.findall(output)))[:10]
    return "failed" + (f": {', '.join(failing)}" if failing else f" (exit code {exit_code})")


TOOLS = ((run_command, "command"),)
