"""The editor's terminal (ACP's terminal/*): where the `shell` tool's command runs while the
person watches it, when the editor has one (`clientCapabilities.terminal`).

The editor starts heph's own sandbox line (runtime/launch.py: the same bubblewrap line, the
same environment and no input, as heph's executor would give), shows it as the tool call's
embedded terminal, and heph waits for its end: the timeout and a cancel kill it through the
editor (terminal/kill), its output and exit status come back through terminal/output, and the
terminal is released. Snapshots and undo are the runtime's, around it, as for every command.
A command the editor will not start did not run, and the model is told why.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hephaistus.acp.updates import AcpSink
from hephaistus.acp.wire import Asked, Cancelled, Channel
from hephaistus.runtime.executor import KEPT_OUTPUT, KILL_GRACE, Completed, timed_out
from hephaistus.runtime.launch import Launch

ANSWER_SECONDS = 10.0  # how long heph waits for the editor to answer about a terminal


@dataclass(frozen=True)
class Refused:
    """Why the editor started no terminal."""

    message: str


class EditorTerminal:
    """Runs a sandboxed command in the editor's terminal, for one session."""

    def __init__(self, channel: Channel, sink: AcpSink) -> None:
        self.channel = channel
        self.sink = sink

    def run(self, started: Launch, *, cwd: Path, timeout: float) -> Completed:
        """Start it in the editor's terminal, shown in the tool call, and wait for its end
        (killed at `timeout`). One the editor refuses to start did not run (it may have
        asked the person, who said no): heph never runs it behind the editor's back."""
        began = time.monotonic()
        terminal = self._create(started, cwd)
        if not isinstance(terminal, str):
            return Completed(126, f"[the editor did not start it: {terminal.message}]", 0.0)
        self.sink.show_terminal(terminal)
        ids = self._ids(terminal)
        try:
            code, ended = self._wait(ids, timeout)
            said = self._ask("terminal/output", ids)
        except KeyboardInterrupt:
            self._ask("terminal/kill", ids)  # a cancel ends it as Ctrl-C ends heph's own
            raise
        finally:
            self._ask("terminal/release", ids)
        said = said if isinstance(said, dict) else {}
        given = said.get("output")
        output = given[-KEPT_OUTPUT:] if isinstance(given, str) else ""  # as heph keeps its own
        if said.get("truncated") is True:
            output = "[the start of the output was cut by the editor]\n" + output
        if ended:
            return Completed(code, output + ended, time.monotonic() - began)
        status = said.get("exitStatus")
        if code is None and isinstance(status, dict):  # the wait said nothing: the output does
            code = exit_code(status)
        if code is None:  # it ended (no timeout) without a status heph can read: no success
            code, output = -1, output + "\n[the editor gave no exit status heph can read]"
        return Completed(code, output, time.monotonic() - began)

    def _create(self, started: Launch, cwd: Path) -> str | Refused:
        """The terminal's id; or why the editor did not start one. Waited for as long as the
        editor takes: it may be asking the person."""
        params = {
            "sessionId": self.sink.session_id,
            "command": started.command,
            "args": started.args,
            "env": [{"name": name, "value": value} for name, value in started.env.items()],
            "cwd": str(cwd),
            "outputByteLimit": KEPT_OUTPUT,
        }
        asked = self.channel.ask("terminal/create", params)
        try:
            made = asked.answer()
        except Cancelled as error:
            return Refused(str(error)[:300] or "the connection closed")
        except KeyboardInterrupt:  # a cancel before the editor answered: end what it starts
            self._end(asked)
            raise
        return _named(made) or Refused("its answer named no terminal")

    def _end(self, asked: Asked) -> None:
        """Kill and release the terminal a create asked for, once the editor names it."""
        try:
            terminal = _named(asked.answer(ANSWER_SECONDS))
        except (Cancelled, TimeoutError):
            return
        if terminal:
            self._ask("terminal/kill", self._ids(terminal))
            self._ask("terminal/release", self._ids(terminal))

    def _ids(self, terminal: str) -> dict[str, str]:
        return {"sessionId": self.sink.session_id, "terminalId": terminal}

    def _wait(self, ids: dict[str, str], timeout: float) -> tuple[int | None, str]:
        """Its exit code (None: it did not end by itself), and what to add to its output
        where heph ended it (the timeout) or the editor stopped answering about it."""
        try:
            ended = self.channel.request("terminal/wait_for_exit", ids, timeout=timeout)
        except TimeoutError:
            self._ask("terminal/kill", ids)
            self._ask("terminal/wait_for_exit", ids, KILL_GRACE * 2)
            return None, timed_out(timeout)
        except Cancelled as error:
            self._ask("terminal/kill", ids)
            return 1, f"\n[the editor's terminal failed: {error}]"
        return (exit_code(ended) if isinstance(ended, dict) else None), ""

    def _ask(self, method: str, params: dict[str, Any], wait: float = ANSWER_SECONDS) -> Any:
        """The editor's answer, or None where it gave none in time."""
        try:
            return self.channel.request(method, params, timeout=wait)
        except (Cancelled, TimeoutError):
            return None


def _named(made: Any) -> str | None:
    """The terminal an editor's answer to terminal/create names."""
    terminal = made.get("terminalId") if isinstance(made, dict) else None
    return terminal if isinstance(terminal, str) and terminal else None


def exit_code(status: dict[str, Any]) -> int | None:
    """An exit status as a process's return code: the code, or minus the signal's number."""
    code, name = status.get("exitCode"), status.get("signal")
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    if isinstance(name, str):
        known = getattr(signal, name if name.startswith("SIG") else f"SIG{name}", None)
        return -int(known) if isinstance(known, signal.Signals) else -1
    return None
