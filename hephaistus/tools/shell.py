"""shell: one shell command line, run in the sandbox.

`/bin/sh -c COMMAND` in the workspace root through the run's executor, which must be the
sandbox: there is no unsandboxed shell (where no sandbox works, the tool is not offered, and
refuses if named). Like a project command it gets no standard input, an environment of allowed
variables only, a timeout that kills its whole process group, and its output's end, scrubbed.
In plan mode it runs with the workspace read-only. What it changes is snapshotted and undone
by the runtime, as for every command.
"""

from __future__ import annotations

from hephaistus.tools.context import ToolContext
from hephaistus.tools.run_command import child_environment, observed
from hephaistus.values import CommandRequest, CommandRun, Proposal, ToolResult

NAME = "shell"


def shell(ctx: ToolContext, command: str, timeout: int | None = None) -> ToolResult | Proposal:
    """Run a shell command line, sandboxed, in the workspace's top folder.

    Args:
        ctx: the run's workspace, executor and limits (given by heph, not by the model)
        command: a shell command line, e.g. `python -m pytest -x tests/test_app.py`
        timeout: seconds it may run (at most the configured command_timeout)
    """
    sandboxed = getattr(ctx.executor, "sandboxed", None)
    if sandboxed is None or not sandboxed():
        return ToolResult(
            False, "shell: there is no sandbox here, and heph has no shell without one"
        )
    if not command.strip():
        return ToolResult(False, "shell: the command line is empty")
    seconds = min(float(timeout), ctx.command_timeout) if timeout else ctx.command_timeout
    if seconds <= 0:
        return ToolResult(False, "shell: timeout must be at least 1 second")

    def carry_out() -> ToolResult:
        ran = ctx.executor.run(
            ["/bin/sh", "-c", command],
            cwd=ctx.workspace.root,
            env=child_environment(ctx.pass_env),
            timeout=seconds,
            read_only=ctx.read_only,
            shown=True,  # in the editor's terminal, where heph runs in one
        )
        status = "passed" if ran.exit_code == 0 else "failed"
        return ToolResult(
            ran.exit_code == 0, observed(ctx, command, ran), command=CommandRun(NAME, status)
        )

    return Proposal(
        "command",
        CommandRequest(NAME, command),
        carry_out,
        "the shell command did not run",
        name=NAME,
    )


TOOLS = ((shell, "command"),)
