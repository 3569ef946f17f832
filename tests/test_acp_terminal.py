"""The shell's commands in the editor's terminal (ACP terminal/*), driven by the SDK's client
with a terminal of its own that starts processes as editors do (their own environment, an
input of their own, the group killed on terminal/kill): still heph's sandbox inside."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)
from test_acp import Editor, run
from test_acp_editor import connected, last_turn

from hephaistus.runtime.sandbox import unavailable
from hephaistus.testing import act, final

WHY_NOT = unavailable()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
EDITORS_OWN = "EDITOR_HOLDS_THIS_KEY"


class EditorWithTerminal(Editor):
    """An editor that runs what terminal/create names as a process of its own, in its own
    environment (plus the variables given), with an open input, and keeps its output."""

    def __init__(self, answers, refuse=False):
        super().__init__(answers)
        self.refuse = refuse
        self.created = []  # (command, args, env given)
        self.killed = []
        self.released = []
        self.processes = {}
        self.output = {}

    async def create_terminal(self, command, session_id, args=None, cwd=None, env=None, **kw):
        if self.refuse:
            raise RequestError(-32603, "Permission denied for terminal/create")
        given = {variable.name: variable.value for variable in env or []}
        self.created.append((command, args, given))
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env={**os.environ, EDITORS_OWN: "sk-editor", **given},
            stdin=asyncio.subprocess.PIPE,  # what the person types there
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        process.stdin.write(b"typed\n")
        terminal = f"term-{len(self.created)}"
        self.processes[terminal] = process
        self.output[terminal] = bytearray()
        asyncio.get_running_loop().create_task(self._collect(terminal, process))
        return CreateTerminalResponse(terminal_id=terminal)

    async def _collect(self, terminal, process):
        while chunk := await process.stdout.read(65536):
            self.output[terminal] += chunk

    async def wait_for_terminal_exit(self, session_id, terminal_id, **kwargs):
        code = await self.processes[terminal_id].wait()
        if code < 0:
            return WaitForTerminalExitResponse(signal=signal.Signals(-code).name)
        return WaitForTerminalExitResponse(exit_code=code)

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        process = self.processes[terminal_id]
        await asyncio.sleep(0.05)  # the last of the output read
        code = process.returncode
        status = None if code is None else TerminalExitStatus(exit_code=max(code, 0))
        text = self.output[terminal_id].decode("utf-8", "replace")
        return TerminalOutputResponse(output=text, truncated=False, exit_status=status)

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        self.killed.append(terminal_id)
        try:
            os.killpg(self.processes[terminal_id].pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    async def release_terminal(self, session_id, terminal_id, **kwargs):
        self.released.append(terminal_id)


def shows_terminals():
    return ClientCapabilities(terminal=True)


def one_turn(chat_server, home, workspace, editor):
    """One prompt in a session of `editor`, which shows terminals; then it disconnects."""

    async def scenario():
        process, connection, _ = await connected(
            editor, home, chat_server.url, workspace, client_capabilities=shows_terminals()
        )
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await last_turn(connection, process, sid, "run it")

    run(scenario())
    return editor


def observations(chat_server):
    """What heph told the model after each step, from the requests it sent."""
    return [
        m["content"]
        for request in chat_server.requests
        for m in request["messages"][-1:]
        if m["content"].startswith("Observation")
    ]


def test_a_shell_command_runs_in_the_editors_terminal_sandboxed_and_its_output_reaches_the_model(
    chat_server, home, workspace, tmp_path
):
    outside = tmp_path / "outside-the-workspace"
    script = (
        f'echo "key=${EDITORS_OWN}"; read line && echo "got:$line"; '
        f"echo made > made.txt; touch {outside}; exit 3"
    )
    chat_server.reply(act("shell", command=script))
    chat_server.reply(final("Done."))
    editor = one_turn(chat_server, home, workspace, EditorWithTerminal(["allow_once"]))
    [(command, args, given)] = editor.created
    assert args[-3:] == ["/bin/sh", "-c", script]  # the editor shows the command itself
    assert "bwrap" not in " ".join([command, *args])  # the sandbox's line travels unseen
    assert list(given) == ["HEPH_LAUNCH"]
    assert editor.released == ["term-1"]
    seen = observations(chat_server)[0]
    assert "exit code 3" in seen
    assert "key=\n" in seen  # nothing of the editor's own environment
    assert "typed" not in seen  # no input: what is typed in the editor's terminal is not read
    assert (workspace / "made.txt").read_text() == "made\n"
    assert not outside.exists()  # still heph's sandbox: only the workspace is writable
    shown = [
        u
        for u in editor.updates
        if u.session_update == "tool_call_update"
        and any(getattr(c, "terminal_id", None) == "term-1" for c in u.content or [])
    ]
    assert shown[0].status == "in_progress"  # shown while it runs
    assert shown[-1].status == "failed"  # and kept at the end, beside the output
    assert "exit code 3" in shown[-1].content[-1].content.text


def test_a_command_past_its_timeout_is_killed_through_the_editor(chat_server, home, workspace):
    chat_server.reply(act("shell", command="echo started; sleep 60", timeout=1))
    chat_server.reply(final("It hung."))
    began = time.monotonic()
    editor = one_turn(chat_server, home, workspace, EditorWithTerminal(["allow_once"]))
    took = time.monotonic() - began
    assert editor.killed == ["term-1"] and took < 20
    seen = observations(chat_server)[0]
    assert "timed out" in seen and "started" in seen


def test_a_cancel_kills_the_editors_terminal_and_ends_the_turn(chat_server, home, workspace):
    chat_server.reply(act("shell", command="sleep 60"))

    async def scenario():
        editor = EditorWithTerminal(["allow_once"])
        process, connection, _ = await connected(
            editor, home, chat_server.url, workspace, client_capabilities=shows_terminals()
        )
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        turn = asyncio.ensure_future(
            connection.prompt(session_id=sid, prompt=[text_block("run it")])
        )
        while not editor.processes:
            await asyncio.sleep(0.05)
        began = time.monotonic()
        await connection.cancel(session_id=sid)
        done = await turn
        took = time.monotonic() - began
        process.stdin.close()
        assert await process.wait() == 0
        return editor, done, took

    editor, done, took = run(scenario())
    assert done.stop_reason == "cancelled" and took < 5
    assert editor.killed == ["term-1"] and editor.released == ["term-1"]
    assert editor.processes["term-1"].returncode is not None


def test_a_terminal_the_editor_refuses_is_a_command_that_did_not_run(chat_server, home, workspace):
    chat_server.reply(act("shell", command="echo ran > ran.txt"))
    chat_server.reply(final("It was not run."))
    one_turn(chat_server, home, workspace, EditorWithTerminal(["allow_once"], refuse=True))
    assert not (workspace / "ran.txt").exists()  # never run behind the editor's back
    seen = observations(chat_server)[0]
    assert "the editor did not start it: Permission denied for terminal/create" in seen


class ProgramTerminal:
    """A terminal as another program keeps one: it starts the launch in its own environment,
    leaving a file of its own open (`kept`, a pipe holding a secret), as editors do."""

    def __init__(self):
        self.started = []

    def run(self, started, *, cwd, timeout):
        import subprocess

        from hephaistus.runtime.executor import Completed

        self.started.append(started)
        readable, writable = os.pipe()
        os.write(writable, b"SECRET-THROUGH-A-FILE\n")
        try:
            done = subprocess.run(
                [started.command, *started.args],
                cwd=cwd,
                env={**os.environ, EDITORS_OWN: "sk-editor", **started.env},
                capture_output=True,
                text=True,
                timeout=timeout,
                pass_fds=(readable,),
            )
        finally:
            os.close(readable)
            os.close(writable)
        return Completed(done.returncode, done.stdout + done.stderr, 0.0)


def test_the_command_gets_no_file_the_starting_program_left_open_and_no_site_of_its_own(
    workspace,
):
    from hephaistus.runtime.sandbox import Contained
    from hephaistus.settings.config_sections import SandboxConfig

    box = Contained(workspace, SandboxConfig())
    box.terminal = terminal = ProgramTerminal()
    done = box.run(
        ["/bin/ls", "/proc/self/fd"],
        cwd=workspace,
        env={"PATH": os.environ["PATH"]},
        timeout=20,
        shown=True,
    )
    assert done.exit_code == 0, done.output
    assert set(done.output.split()) <= {"0", "1", "2", "3"}  # 3: ls's own, of the folder
    [started] = terminal.started
    assert started.args[:2] == ["-I", "-S"]  # no .pth file of a virtual environment runs
    assert not Path(started.command).is_relative_to(workspace)
    assert started.command == os.path.realpath(sys.executable)  # never a link to it


def test_an_interpreter_in_the_workspace_is_never_handed_to_the_editor(tmp_path):
    from hephaistus.runtime.launch import launch

    inside = Path(os.path.realpath(sys.executable)).parent
    assert launch(["/bin/true"], {}, ["/bin/true"], False, inside) is None
    assert launch(["/bin/true"], {}, ["/bin/true"], False, tmp_path) is not None


def test_with_the_network_shared_the_launched_line_reaches_no_host_abstract_socket(workspace):
    import socket
    import sys

    from hephaistus.runtime.landlock import scoping
    from hephaistus.runtime.sandbox import Contained
    from hephaistus.settings.config_sections import SandboxConfig

    box = Contained(workspace, SandboxConfig(network=True))
    if not callable(scoping(box._box().bwrap)):
        pytest.skip(f"the host's abstract sockets stay reachable here: {scoping('bwrap')}")
    box.terminal = ProgramTerminal()
    name = f"heph-terminal-test-{os.getpid()}"
    probe = "import os, socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n"
    probe += "    s.connect('\\0' + sys.argv[1]); print('reached')\nexcept OSError as e:\n"
    probe += f"    print('no', e)\nprint('key', os.environ.get({EDITORS_OWN!r}))"
    argv = [sys.executable, "-c", probe, name]
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("\0" + name)
        listener.listen()
        done = box.run(
            argv, cwd=workspace, env={"PATH": os.environ["PATH"]}, timeout=20, shown=True
        )
        unshown = box.run(argv, cwd=workspace, env={"PATH": os.environ["PATH"]}, timeout=20)
    assert done.exit_code == 0 and done.output.startswith("no "), done.output
    assert "key None" in done.output
    assert done.output == unshown.output  # the same sandbox as heph's own start gives


def test_the_launcher_runs_only_the_line_that_ends_with_the_command_shown(tmp_path):
    import subprocess

    from hephaistus.runtime.launch import launch

    line, env = ["/bin/echo", "hidden"], {"PATH": "/usr/bin:/bin"}
    started = launch(line, env, ["/bin/echo", "hidden"], False, tmp_path)
    shown = [*started.args[:-2], "/bin/echo", "shown"]  # the editor shows one thing, runs another
    done = subprocess.run(
        [started.command, *shown], env=started.env, capture_output=True, text=True
    )
    assert done.returncode != 0 and "does not run the command shown" in done.stderr
    assert "hidden" not in done.stdout
    done = subprocess.run(
        [started.command, *started.args], env=started.env, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, "hidden\n")


def test_an_exit_status_the_editor_garbles_is_no_success_and_no_timeout(
    chat_server, home, workspace
):
    class Garbling(EditorWithTerminal):
        async def wait_for_terminal_exit(self, session_id, terminal_id, **kwargs):
            await self.processes[terminal_id].wait()
            return WaitForTerminalExitResponse()  # neither a code nor a signal

        async def terminal_output(self, session_id, terminal_id, **kwargs):
            text = self.output[terminal_id].decode()
            return TerminalOutputResponse(output=text, truncated=False)

    chat_server.reply(act("shell", command="echo ran"))
    chat_server.reply(final("unclear"))
    one_turn(chat_server, home, workspace, Garbling(["allow_once"]))
    seen = observations(chat_server)[0]
    assert "exit code -1" in seen and "timed out" not in seen
    assert "the editor gave no exit status heph can read" in seen and "ran" in seen
