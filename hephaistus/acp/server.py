"""`heph acp`: the Agent Client Protocol's agent side, for editors (Zed, JetBrains, Neovim).

Each `session/new` is a chat of its own in the folder the editor names (`cwd` is the
workspace): an Agent with a sink and an asker that speak to the editor. `session/prompt` runs
one task in that chat's conversation, so the agent state carries over ("it is incorrect"
works), and is answered with its stop reason. The turn runs in the main thread; the reader
thread turns a `session/cancel` (or a closed stdin) into the Ctrl-C the chat knows, so the
turn ends as interrupted with its session saved. Trust is never asked over ACP: an untrusted
workspace runs without the settings that need trust, and the first answer says so.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hephaistus.acp import commands, threads
from hephaistus.acp.commands import plan_entries
from hephaistus.acp.terminal import EditorTerminal
from hephaistus.acp.updates import AcpAsker, AcpSink, replayed, text_of
from hephaistus.acp.wire import (
    AUTH_REQUIRED,
    CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Channel,
)
from hephaistus.errors import HephError, KeyRejected, Terminated

PROTOCOL_VERSION = 1
STOP_REASONS = {"answered": "end_turn", "refused": "refusal", "interrupted": "cancelled"}


class ProtocolError(Exception):
    """A request heph cannot serve: (code, message) for the error response, and the exit
    code the CLI would give where a task failed."""

    def __init__(self, code: int, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.exit_code = exit_code


@dataclass
class _Session:
    agent: Any
    sink: AcpSink
    said: list[str] = field(default_factory=list)  # told once, at the first answer
    allow_auto: bool = False  # the person's own settings chose auto: it may be chosen here
    commands_sent: list[dict[str, Any]] | None = None  # the commands the editor was last sent


class AcpServer:
    """Serves one editor over `channel` until its stdin closes."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.sessions: dict[str, _Session] = {}
        self.running: str | None = None  # the session whose turn runs now
        self._last_opened: str | None = None  # the session session/new made last
        self.editor_files: dict[str, Any] = {}  # the editor's fs capabilities
        self.editor_terminal = False  # it runs commands in terminals it shows
        self._main = threading.main_thread()
        channel.on_notice = self._notice

    def serve(self) -> int:
        """Answer requests in order until stdin closes; 0."""
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a cancel is a Ctrl-C
        for name in ("SIGTERM", "SIGHUP"):
            signal.signal(getattr(signal, name), _terminate)
        self.channel.start()
        try:
            while True:
                message = self.channel.incoming.get()
                if message is CLOSED:
                    return 0
                self._handle(message)
        finally:
            for session in self.sessions.values():
                session.agent.close()

    def _handle(self, message: dict[str, Any]) -> None:
        ident, method = message.get("id"), message["method"]
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if "id" not in message:
            return  # a notification: a cancel is handled as it arrives
        handler = {
            "initialize": self.initialize,
            "session/new": self.new_session,
            "session/prompt": self.prompt,
            "session/load": self.load_session,
            "session/set_mode": self.set_mode,
        }.get(method)
        if handler is None:
            self.channel.error(ident, METHOD_NOT_FOUND, f"Method not found: {method}")
            return
        try:
            self.channel.answer(ident, handler(params))
            if method in ("session/new", "session/load"):  # the editor knows the session now
                self._commands_of(params.get("sessionId") or self._last_opened)
        except ProtocolError as error:
            self.channel.error(ident, error.code, str(error), error.exit_code)
        except Terminated:
            raise  # SIGTERM, SIGHUP: the process ends, whatever it was answering
        except KeyboardInterrupt:  # a cancel that came between turns
            self.channel.error(ident, INTERNAL_ERROR, "cancelled")
        except Exception as error:  # the process survives whatever one request does
            self.channel.error(ident, INTERNAL_ERROR, f"{type(error).__name__}: {error}")

    # -- the methods -------------------------------------------------------------------------
    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        """The protocol version and what heph can do; what the editor can do is kept."""
        given = params.get("clientCapabilities")
        files = given.get("fs") if isinstance(given, dict) else None
        self.editor_files = files if isinstance(files, dict) else {}
        self.editor_terminal = isinstance(given, dict) and given.get("terminal") is True
        return capabilities()

    def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """A chat in the folder `cwd` names: its workspace, config and agent. Its id names the
        conversation for good: every turn's session records it, so `session/load` finds them
        after any number of reconnects."""
        from hephaistus.records.session import new_session_id

        session_id = f"chat-{new_session_id()}"
        session = self._open(session_id, params.get("cwd"), "session/new", params.get("mcpServers"))
        threads.issue(session.agent.workspace.root, session_id)
        return {"sessionId": session_id, "modes": self._modes(session)}

    def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """A conversation of the folder `cwd` continued: the id `session/new` gave (its newest
        turn holds it all; one with no turn yet is empty), or any session heph recorded. Its
        conversation is replayed to the editor, and the next prompt carries on from it, saved
        under the same id."""
        session_id = str(params.get("sessionId") or "")
        session = self._open(
            session_id, params.get("cwd"), "session/load", params.get("mcpServers")
        )
        try:
            recorded = threads.recorded(session.agent, session_id)
        except (LookupError, OSError, ValueError) as error:
            self.sessions.pop(session_id, None)
            session.agent.close()
            raise ProtocolError(INVALID_PARAMS, f"session/load: {error}") from None
        session.agent.thread = session_id
        root = session.agent.workspace.root
        mode = threads.kept_mode(root, session_id) or (
            recorded.header.get("mode") if recorded else ""
        )
        if mode in commands.offered_modes(session.allow_auto):
            session.agent.set_mode(mode)  # as the editor left it
        if recorded is not None:
            session.agent.continue_conversation(recorded)
            for role, text in replayed(recorded.messages):
                kind = "user_message_chunk" if role == "user" else "agent_message_chunk"
                session.sink.text(kind, text)
        return {"modes": self._modes(session)}

    def set_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        """The session's mode, as the editor chose it (auto only where the person's own
        settings chose it)."""
        session = self._session(params, "session/set_mode")
        mode = params.get("modeId")
        offered = commands.offered_modes(session.allow_auto)
        if mode not in offered:
            raise ProtocolError(
                INVALID_PARAMS, f"session/set_mode: no mode {mode!r} here: {', '.join(offered)}"
            )
        session.agent.set_mode(mode)
        threads.keep_mode(session.agent.workspace.root, session.sink.session_id, mode)
        return {}

    def _session(self, params: dict[str, Any], method: str) -> _Session:
        session = self.sessions.get(str(params.get("sessionId")))
        if session is None:
            raise ProtocolError(INVALID_PARAMS, f"{method}: no such session")
        return session

    def _modes(self, session: _Session) -> dict[str, Any]:
        return commands.mode_state(session.agent.policy.mode, session.allow_auto)

    def _commands_of(self, session_id: Any) -> None:
        """heph's commands, the person's command files and the running MCP servers' prompts,
        to the editor (again only when they changed)."""
        session = self.sessions.get(str(session_id))
        if session is None:
            return
        listed = commands.available(*commands.foreign_commands(session.agent))
        if listed != session.commands_sent:
            session.commands_sent = listed
            update = {"sessionUpdate": "available_commands_update", "availableCommands": listed}
            session.sink.update(update)

    @staticmethod
    def _with_editor_servers(opened: Any, entries: Any) -> list[str]:
        """The editor's MCP servers join the person's (one of a name replaces theirs); what
        was left out, to say."""
        from dataclasses import replace

        from hephaistus.acp.editor_servers import editor_servers

        servers, said = editor_servers(entries)
        if servers:
            named = {server.name for server in servers}
            kept = [s for s in opened.config.mcp_servers if s.name not in named]
            opened.config = replace(opened.config, mcp_servers=(*kept, *servers))
        return said

    def _open(self, session_id: str, cwd: Any, method: str, servers: Any = None) -> _Session:
        if not isinstance(cwd, str) or not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise ProtocolError(INVALID_PARAMS, f"{method}: cwd must be an absolute folder")
        from hephaistus.settings.config import find_workspace
        from hephaistus.workspace import protected_part

        root = find_workspace(Path(cwd).resolve())  # the git top-level, as the CLI takes it
        inside = protected_part(root.parts)
        if inside or root == Path(root.anchor):
            where = f"inside a {inside}/ folder" if inside else "the file system's root"
            raise ProtocolError(
                INVALID_PARAMS, f"{method}: {root} is {where}; open a project folder"
            )
        from hephaistus.engine.opening import open_workspace

        try:  # trust is never asked here: an untrusted workspace opens without its settings
            opened = open_workspace(root)
            opened.choose_model(lambda line: print(line, file=sys.stderr))
            opened.said += self._with_editor_servers(opened, servers)
        except HephError as error:
            raise ProtocolError(INTERNAL_ERROR, error.message, error.exit_code) from None
        sink = AcpSink(self.channel, session_id, opened.workspace.root)
        agent = opened.agent(sink, opened.policy(AcpAsker(self.channel, sink)))
        sink.commands = {name: command.command for name, command in agent.commands.items()}
        if self.editor_files.get("readTextFile") is True:  # the editor's buffers win
            agent.buffer = sink.read_buffer
        sink.writes_through = self.editor_files.get("writeTextFile") is True
        if self.editor_terminal:  # the shell's commands run where the person watches them
            agent.executor.terminal = EditorTerminal(self.channel, sink)
        agent.thread = session_id
        if agent.mcp is not None:  # started meanwhile: the first call finds them, prompts listed
            agent.mcp.warm()
        allow_auto = opened.config.mode == "auto"  # no workspace file may say auto
        session = self.sessions[session_id] = _Session(agent, sink, opened.said, allow_auto)
        self._last_opened = session_id
        return session

    def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        """Run the prompt as a task of the session's chat (or one of heph's commands); its
        stop reason."""
        session = self._session(params, "session/prompt")
        task = text_of(params.get("prompt"))
        if not task.strip():
            raise ProtocolError(INVALID_PARAMS, "session/prompt: the prompt has no text")
        for line in session.said:  # the first answer says what the workspace's trust left out
            shown = line if line.startswith("heph:") else f"heph: {line}"
            session.sink.text("agent_message_chunk", f"{shown}\n")
        session.said = []
        slash = commands.slash_of(task)
        if slash is not None or commands.is_foreign(session.agent, task):
            say = session.sink.text
            carried = (
                self._command(session, slash)
                if slash
                else commands.foreign_task(session.agent, task, say)
            )
            if carried is None:
                return {"stopReason": "end_turn"}
            task = carried
        self.running = session.sink.session_id
        try:
            outcome = session.agent.execute(task)
        except Terminated:
            raise  # SIGTERM, SIGHUP: the process ends (the session was saved)
        except KeyboardInterrupt:
            return {"stopReason": "cancelled"}
        except KeyRejected as error:  # the endpoint refused the key: a setting to change
            raise ProtocolError(AUTH_REQUIRED, error.message, error.exit_code) from None
        except HephError as error:
            raise ProtocolError(INTERNAL_ERROR, error.message, error.exit_code) from None
        finally:
            self.running = None
            session.sink.end_open_call()
            self._commands_of(session.sink.session_id)  # a server's prompts, once it runs
        if outcome.status == "failed":
            if "step limit" in outcome.message:  # ACP's own stop reason for it
                session.sink.text("agent_message_chunk", outcome.message)
                return {"stopReason": "max_turn_requests"}
            # A model or server failure is no answer: the editor shows it as an error.
            raise ProtocolError(INTERNAL_ERROR, outcome.message, outcome.exit_code)
        if outcome.status == "refused":
            session.sink.text("agent_message_chunk", outcome.message)
        if outcome.status == "answered" and session.agent.policy.mode == "plan":
            session.sink.update({"sessionUpdate": "plan", "entries": plan_entries(outcome.message)})
        return {"stopReason": STOP_REASONS.get(outcome.status, "end_turn")}

    def _command(self, session: _Session, slash: commands.Slash) -> str | None:
        """Carry out one of heph's commands: the task it leaves for the model (/go), or None
        when it is done (its answer said)."""
        agent, say, sink = session.agent, session.sink.text, session.sink
        if slash.name == "help":
            return say("agent_message_chunk", commands.help_text())
        if slash.name == "undo":
            return say("agent_message_chunk", commands.undo_last(agent, sink, slash.argument))
        if slash.name == "mode":
            if slash.argument and slash.argument not in commands.offered_modes(session.allow_auto):
                return say("agent_message_chunk", f"no mode {slash.argument} here")
            self._switch(session, slash.argument or agent.policy.mode)
            return say("agent_message_chunk", f"mode: {agent.policy.mode}")
        if not agent.state.plan_session:  # /go
            return say("agent_message_chunk", "no plan yet: switch to plan mode, ask for one")
        chosen = commands.go_mode(agent.policy.mode, slash.argument, session.allow_auto)
        if isinstance(chosen, str):
            return say("agent_message_chunk", chosen)
        mode, again = chosen
        self._switch(session, mode)
        return "go again" if again else "go"

    def _switch(self, session: _Session, mode: str) -> None:
        """heph changes the session's mode itself: the editor is told."""
        if mode != session.agent.policy.mode:
            session.agent.set_mode(mode)
            threads.keep_mode(session.agent.workspace.root, session.sink.session_id, mode)
            session.sink.update({"sessionUpdate": "current_mode_update", "currentModeId": mode})

    # -- a cancel, as it arrives -------------------------------------------------------------
    def _notice(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/cancel":
            params = message.get("params")
            named = params.get("sessionId") if isinstance(params, dict) else None
            if self.running and named in (self.running, None):
                os.kill(os.getpid(), signal.SIGINT)  # the turn ends as Ctrl-C ends it


def capabilities() -> dict[str, Any]:
    """`initialize`'s answer: the protocol version and what heph can do."""
    from hephaistus import __version__

    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
        },
        "authMethods": [],
        "agentInfo": {"name": "hephaistus", "title": "Hephaistus", "version": __version__},
    }


def _terminate(number: int, _frame: Any) -> None:
    raise Terminated(signal.Signals(number).name)


def main() -> int:
    """Serve the editor on stdin/stdout; anything printed by mistake goes to stderr. SIGTERM
    and SIGHUP end the process (a turn ends first, its session saved)."""
    reader, writer = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries the protocol and nothing else
    channel = Channel(reader, writer)
    server = AcpServer(channel)
    closing = channel.closed

    def watch_close() -> None:
        closing.wait()
        if server.running:  # stdin closed mid-turn: end the turn, save the session
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch_close, daemon=True).start()
    try:
        return server.serve()
    except Terminated as ended:
        for session in server.sessions.values():
            session.agent.close()
        writer.flush()
        # The reader thread holds stdin's lock in its read: leave without the interpreter's
        # shutdown, which would wait on that lock and abort.
        os._exit(ended.exit_code)
