"""The interactive chat: `heph` in a terminal.

A prompt_toolkit prompt with persistent history (Ctrl-R searches it), multi-line input
(Esc-Enter or Alt-Enter for a new line; a paste stays one message) and Tab completion of slash
commands and of workspace paths after `@`. Each line is a task for the agent, or a slash command;
a command's docstring is its /help line. Ctrl-C cancels the running turn and returns to the
prompt; Ctrl-C twice at an empty prompt, or Ctrl-D, leaves. Nothing is lost either way: every turn
is a session on disk, and its writes are checkpointed for /undo.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.text import Text

from hephaistus import __version__
from hephaistus.agent import Agent
from hephaistus.checkpoints import CheckpointStore, Interleaved, NotInside, UndoConflict
from hephaistus.llm import warm_up
from hephaistus.ui.approval import Approval
from hephaistus.ui.render import ConsoleSink


def history_path() -> Path:
    """The file the chat's input history is kept in, in heph's state folder."""
    from hephaistus.userdirs import state_dir

    return state_dir() / "history"


class ReplCompleter(Completer):
    """Slash commands at the start of the line; workspace paths after `@`."""

    def __init__(self, commands: Iterable[str], files: Callable[[], list[str]]) -> None:
        self.commands = sorted(commands)
        self.files = files

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        """The commands that start with what follows `/`; after `@`, the workspace files with
        that text at the start of their path or of a folder or file name in it."""
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            for name in self.commands:
                if name.startswith(text[1:]):
                    yield Completion("/" + name, start_position=-len(text))
            return
        word = text.split()[-1] if text.split() and not text.endswith(" ") else ""
        if word.startswith("@"):
            prefix = word[1:]
            for rel in self.files():
                if rel.startswith(prefix) or ("/" + prefix) in ("/" + rel):
                    yield Completion("@" + rel, start_position=-len(word))


class Repl:
    """The chat: reads lines, runs each as a task of `agent` or as a slash command."""

    def __init__(
        self,
        agent: Agent,
        sink: ConsoleSink,
        approval: Approval,
        *,
        input: Any = None,
        output: Any = None,
        history: Path | None = None,
    ) -> None:
        self.agent = agent
        self.sink = sink
        self.console = sink.out
        self.approval = approval
        self.turns: list[str] = []  # session ids of this chat, oldest first
        self.undone: list[str] = []  # session ids undone with /undo, newest last
        self._files: list[str] | None = None
        self._interrupted_at_prompt = False
        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-c")
        def _interrupt(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.text:  # Ctrl-C on a typed line clears it; on an empty one it counts
                buffer.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt())

        file_history = _history(history)
        self.prompt: PromptSession[str] = PromptSession(
            history=file_history,
            completer=ReplCompleter(self.commands(), self._workspace_files),
            key_bindings=bindings,
            enable_history_search=False,
            input=input,
            output=output,
            complete_while_typing=False,
            prompt_continuation=lambda width, *_: "." * (width - 1) + " ",
        )
        self._ask_session: PromptSession[str] = PromptSession(input=input, output=output)
        approval.ask = lambda question: self._ask_session.prompt(question)

    # -- the loop ----------------------------------------------------------------------
    def run(self) -> int:
        """Chat until Ctrl-D, /exit, or Ctrl-C twice at an empty prompt; the exit code is 0."""
        warm_up()
        model = self.agent.model.name
        where = self.agent.config.base_url or "api.openai.com"
        self.console.print(
            Text(
                f"heph {__version__} · {model} at {where} · {self.agent.workspace.root}",
                style="bold",
            )
        )
        self.console.print(
            Text(
                "Type a task, /help for commands, Ctrl-D to leave. Esc-Enter adds a line.",
                style="dim",
            )
        )
        while True:
            try:
                line = self.prompt.prompt("heph> ")
            except KeyboardInterrupt:
                if self._interrupted_at_prompt:
                    return 0
                self._interrupted_at_prompt = True
                self.console.print(Text("(Ctrl-C again or Ctrl-D to leave)", style="dim"))
                continue
            except EOFError:
                return 0
            self._interrupted_at_prompt = False
            if not self.handle(line):
                return 0

    def handle(self, line: str) -> bool:
        """Run one input line; False when the chat should end. A line that starts with a
        space, or with `//`, is a task even when it starts like a command; so is one whose
        first word is a path (`/src/app.py raises KeyError`)."""
        typed, line = line, line.strip()
        if not line:
            return True
        if line.startswith("//"):
            line = line[1:]
        elif line.startswith("/") and not typed[:1].isspace():
            name, _, argument = line[1:].partition(" ")
            command = getattr(self, f"cmd_{name}", None)
            if command is not None:
                return command(argument.strip()) is not False
            if not ("/" in name or "." in name):  # not a path either
                close = difflib.get_close_matches(name, self.commands(), n=1)
                hint = f"did you mean /{close[0]}?" if close else "/help lists them"
                self.console.print(
                    Text(
                        f"unknown command /{name}; {hint} (to send it as a task, start the "
                        "line with // or a space)",
                        style="yellow",
                    )
                )
                return True
        self.run_turn(line)
        return True

    def run_turn(self, task: str) -> None:
        """Run `task` with the agent; a turn that was cancelled or did not answer says so."""
        self._files = None  # the task may create files: list them afresh for completion
        try:
            outcome = self.agent.execute(task)
        finally:
            self.sink.settle()
        if self.agent.session:
            self.turns.append(self.agent.session.id)
        if outcome.status == "interrupted":
            self.console.print(Text("cancelled; the session was saved", style="yellow"))
        elif outcome.status != "answered":
            self.console.print(Text(self.sink.safe(outcome.message), style="red"))

    # -- slash commands: the docstring is the /help line ---------------------------------
    def commands(self) -> list[str]:
        """The slash commands' names: the `cmd_` methods, sorted."""
        return sorted(name[4:] for name in dir(self) if name.startswith("cmd_"))

    def cmd_help(self, argument: str) -> None:
        """Show the commands."""
        for name in self.commands():
            doc = (getattr(self, f"cmd_{name}").__doc__ or "").strip()
            line = " ".join(doc.split("\n\n")[0].split())  # the first paragraph, whole
            self.console.print(Text(f"/{name:<10}", style="bold") + Text(line))
        self.console.print(
            Text(
                "Anything else is a task (a line starting with // or a space too, so "
                "'//etc/hosts is wrong' is one). @path completes file names.",
                style="dim",
            )
        )

    def cmd_exit(self, argument: str) -> bool:
        """Leave the chat (Ctrl-D does too)."""
        return False

    def cmd_undo(self, argument: str) -> None:
        """Undo the file changes of the last turn (--force: even if edited since)."""
        store = self._checkpoints()
        pending = [
            t for t in self.turns if t in store.sessions_with_changes() and not store.is_undone(t)
        ]
        if not pending:
            self.console.print("nothing to undo")
            return
        try:
            result = store.undo(pending[-1], force=argument == "--force")
        except (NotInside, LookupError) as moved:
            self.console.print(Text(self.sink.safe(f"not undone: {moved}"), style="yellow"))
            return
        except UndoConflict as conflict:
            self.console.print(
                Text(
                    self.sink.safe(
                        f"not undone: changed since heph wrote them: {', '.join(conflict.paths)} "
                        "(/undo --force to undo anyway)"
                    ),
                    style="yellow",
                )
            )
            return
        except Interleaved as tangled:
            from hephaistus.ui.undo import interleaved_message

            message = interleaved_message(tangled.taken).replace("--force", "/undo --force")
            self.console.print(Text(self.sink.safe(f"not undone: {message}"), style="yellow"))
            return
        self.undone.append(pending[-1])
        self._report("undone", result.restored, result.deleted)
        for rel in result.own_lines_only:
            self.console.print(
                self.sink.safe(f"  in {rel} only heph's lines: another run's stay"), markup=False
            )
        for rel, lines in result.taken.items():
            self.console.print(
                self.sink.safe(f"  in {rel}, {lines} lines another run wrote meanwhile are gone"),
                markup=False,
            )

    def cmd_redo(self, argument: str) -> None:
        """Redo what the last /undo undid."""
        if not self.undone:
            self.console.print("nothing to redo")
            return
        store = self._checkpoints()
        try:
            result = store.redo(self.undone[-1], force=argument == "--force")
        except (NotInside, LookupError) as moved:
            self.console.print(Text(self.sink.safe(f"not redone: {moved}"), style="yellow"))
            return
        except UndoConflict as conflict:
            self.console.print(
                Text(
                    self.sink.safe(
                        f"not redone: changed since the undo: {', '.join(conflict.paths)}"
                    ),
                    style="yellow",
                )
            )
            return
        self.undone.pop()
        self._report("redone", result.restored, result.deleted)

    def cmd_diff(self, argument: str) -> None:
        """Show every change heph made in this chat, as one diff."""
        from hephaistus.tools.writing import unified_diff

        states = self._checkpoints().before_states(self.turns)
        if not states:
            self.console.print("no changes in this chat yet")
            return
        for rel, before in states.items():
            path = self.agent.workspace.root / rel
            now = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
            old = before.decode("utf-8", "replace") if before is not None else ""
            diff = unified_diff(rel, old, now, created=before is None)
            if diff:
                self.sink.show_diff(diff)

    def cmd_commit(self, argument: str) -> None:
        """Commit the files heph changed in this chat: /commit [message]."""
        from hephaistus.tools import ToolContext
        from hephaistus.tools.git import git_commit

        changes = self.agent.changes
        if not changes:
            self.console.print("heph changed no files in this chat")
            return
        message = argument or _commit_message(sorted({c.path for c in changes}))
        context = ToolContext(
            self.agent.workspace, changed=list(changes), sessions=tuple(self.agent.session_ids)
        )
        result = git_commit(context, message)
        self.console.print(Text(self.sink.safe(result.output), style="" if result.ok else "red"))

    def cmd_init(self, argument: str) -> None:
        """Draft an AGENTS.md for this workspace (a diff to approve; /undo takes it back)."""
        from hephaistus.agents_md import create
        from hephaistus.errors import HephError

        try:
            result, session_id = create(self.agent.workspace, self.agent.config, self.approval)
        except HephError as error:
            self.console.print(Text(self.sink.safe(error.message), style="yellow"))
            return
        self.turns.append(session_id)
        if result.ok and not self.approval.dry_run:
            self.console.print(
                "wrote AGENTS.md: add what only you know; it is read with every task"
            )
        elif not result.ok:
            self.console.print(Text(self.sink.safe(result.output), style="yellow"))

    def cmd_clear(self, argument: str) -> None:
        """Start a new conversation (the agent state is kept)."""
        self.agent.messages = []
        self.console.print("new conversation; the agent state is kept (/state shows it)")

    def cmd_state(self, argument: str) -> None:
        """Show the agent state (sent with each task, then whenever it changes) and the
        project instructions the last task read."""
        self.console.print(self.sink.safe(self.agent.state.render()), markup=False)
        described = self.agent.instructions.describe()
        self.console.print(self.sink.safe(f"instructions: {described}"), markup=False)

    def cmd_tokens(self, argument: str) -> None:
        """Show the tokens used and how full the context window is."""
        compactor = self.agent.compactor
        used = compactor.size(self.agent.messages) if self.agent.messages else 0
        share = 100 * used / compactor.window if compactor.window else 0
        self.console.print(
            f"this chat: {self.sink.tokens:,} tokens used; context: about "
            f"{used:,} of {compactor.window:,} tokens ({share:.0f}%)\n{compactor.describe()}"
        )

    def cmd_model(self, argument: str) -> None:
        """Show the model, or switch to another: /model [name]."""
        if not argument:
            self.console.print(f"model: {self.agent.model.name}")
            return
        from hephaistus.compaction import Compactor, context_window
        from hephaistus.llm import ChatModel

        self.agent.config = replace(self.agent.config, model=argument)
        self.agent.model = ChatModel(self.agent.config)
        window, source = context_window(argument, self.agent.config.context_window)
        self.agent.compactor = Compactor(window, source, self.agent.config.max_reply_tokens)
        self.agent.window_asked = bool(self.agent.config.context_window)
        self.console.print(f"model: {argument}")

    def cmd_sessions(self, argument: str) -> None:
        """List the recorded sessions of this workspace."""
        from hephaistus.analytics import session_rows
        from hephaistus.ui.tables import sessions_table

        rows = session_rows(self.agent.sessions, 20)
        self.console.print(sessions_table(rows) if rows else "no sessions yet")

    def cmd_replay(self, argument: str) -> None:
        """Replay a recorded session: /replay [id] (default: the last)."""
        from hephaistus.session import load_session
        from hephaistus.ui.replay import replay

        try:
            path = self.agent.sessions.path_of(argument or "last")
        except LookupError as error:
            self.console.print(self.sink.safe(str(error)), markup=False)
            return
        replay(load_session(path), ConsoleSink(console=self.console))

    def cmd_approvals(self, argument: str) -> None:
        """Show the saved approvals of this workspace; /approvals clear forgets them."""
        saved = self.approval.saved
        if saved is None:
            self.console.print("approvals are not saved in this mode")
            return
        if argument == "clear":
            saved.clear()
            self.approval.writes_approved = self.approval.yes
            self.console.print("approvals cleared: every write will be asked again")
            return
        if saved.writes:
            self.console.print(
                self.sink.safe(f"writes are approved for this workspace (in {saved.path})"),
                markup=False,
            )
        else:
            self.console.print("no saved approvals: every write is asked")
        if self.approval.writes_approved and not saved.writes:
            self.console.print("writes are approved for this chat ([a]ll)", markup=False)
        if self.approval.all_commands or self.approval.commands_approved:
            named = ", ".join(sorted(self.approval.commands_approved)) or "all"
            self.console.print(self.sink.safe(f"commands approved for this chat: {named}"))

    # -- helpers -------------------------------------------------------------------------
    def _checkpoints(self) -> CheckpointStore:
        return CheckpointStore(self.agent.workspace.root, self.agent.workspace.heph_dir)

    def _workspace_files(self) -> list[str]:
        if self._files is None:
            self._files = self.agent.workspace.files()
        return self._files

    def _report(self, verb: str, restored: list[str], deleted: list[str]) -> None:
        for rel in restored:
            self.console.print(self.sink.safe(f"{verb}: {rel}"), markup=False)
        for rel in deleted:
            self.console.print(self.sink.safe(f"{verb}: {rel} (removed)"), markup=False)


def _commit_message(paths: list[str]) -> str:
    """A message from what changed: `heph: update a.py, b.py` (or how many files)."""
    named = ", ".join(paths[:3])
    more = f" and {len(paths) - 3} more files" if len(paths) > 3 else ""
    return f"heph: update {named}{more}"


def _history(path: Path | None) -> Any:
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileHistory(str(path))
    except OSError:
        return InMemoryHistory()
