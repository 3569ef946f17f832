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
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPress
from rich.text import Text

from hephaistus import __version__
from hephaistus.engine.agent import Agent
from hephaistus.errors import ConfigError
from hephaistus.model.llm import warm_up
from hephaistus.settings.permissions import decide, next_mode
from hephaistus.ui.approval import TerminalAsker, key_meaning
from hephaistus.ui.chat_commands import ChatCommands
from hephaistus.ui.render import ConsoleSink


def history_path() -> Path:
    """The file the chat's input history is kept in, in heph's state folder."""
    from hephaistus.settings.userdirs import state_dir

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


class Repl(ChatCommands):
    """The chat: reads lines, runs each as a task of `agent` or as a slash command. `asker`
    puts the policy's questions; the chat's own prompt asks them."""

    def __init__(
        self,
        agent: Agent,
        sink: ConsoleSink,
        asker: TerminalAsker | None = None,
        *,
        input: Any = None,
        output: Any = None,
        history: Path | None = None,
    ) -> None:
        self.agent = agent
        self.sink = sink
        self.console = sink.out
        self.turns: list[str] = []  # session ids of this chat, oldest first
        self.tasks: dict[str, str] = {}  # the task of each turn, by session id
        self.undone: list[str] = []  # session ids undone with /undo, newest last
        self._files: list[str] | None = None
        self._interrupted_at_prompt = False
        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("s-tab")
        def _next_mode(event: Any) -> None:
            self.agent.set_mode(next_mode(self.agent.policy.mode))
            event.app.invalidate()  # the prompt shows the new mode

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
        self.asking: str | None = None  # the question waiting for its key
        self._kept: list[str] = []  # typed ahead of questions: the next prompt's text
        if asker is not None:
            asker.ask, asker.ask_line = self.ask_key, self.ask_line

    # -- the loop ----------------------------------------------------------------------
    def run(self) -> int:
        """Chat until Ctrl-D, /exit, or Ctrl-C twice at an empty prompt; the exit code is 0."""
        warm_up()
        model = self.agent.model.name
        where = self.agent.config.base_url or "api.openai.com"  # shown short, as people say it
        self.console.print(
            Text(
                f"heph {__version__} · {model} at {where} · {self.agent.workspace.root}",
                style="bold",
            )
        )
        self.console.print(
            Text(
                "Type a task, /help for commands, Ctrl-D to leave. Esc-Enter adds a line; "
                "Shift+Tab switches the mode (ask, edits, plan).",
                style="dim",
            )
        )
        while True:
            try:
                completer: Any = self.prompt.completer  # the servers' prompts, as they run
                extra = [*self._prompt_commands(), *self._custom_commands()]
                completer.commands = sorted({*self.commands(), *extra})
                line = self.prompt.prompt(self._prompt_line, default=self._take_kept())
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
            if name.startswith("mcp__"):  # a server's prompt (chat_commands.run_prompt)
                return self.run_prompt(name, argument.strip())
            if name in (custom := self._custom_commands()):  # the person's own (a file's)
                return self.run_custom(custom[name], argument.strip())
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
            with unechoed(self.prompt.input):
                outcome = self.agent.execute(task)
        except ConfigError as error:  # a task that cannot start ("go" with no plan): say why
            self.console.print(Text(self.sink.safe(error.message), style="yellow"))
            return
        finally:
            self.sink.settle()
        if self.agent.session:
            self.turns.append(self.agent.session.id)
            self.tasks[self.agent.session.id] = task
        if outcome.status == "interrupted":
            self.console.print(Text("cancelled; the session was saved", style="yellow"))
        elif outcome.status != "answered":
            self.console.print(Text(self.sink.safe(outcome.message), style="red"))

    def ask_key(self, question: str) -> str:
        """Ask `question` and return the one key pressed after it appeared (see
        approval.key_meaning). What was typed before it (a next task typed while the model
        worked) is no answer: it waits, unsent, at the next prompt. Keys that came with the
        answer (a "yes" typed whole) are dropped: they would answer the next question."""
        from prompt_toolkit.input.typeahead import clear_typeahead

        self._keep_typed_ahead()
        self.asking = question
        try:
            return one_key_question(question, self.prompt.input, self.prompt.output).run()
        finally:
            self.asking = None
            clear_typeahead(self.prompt.input)

    def ask_line(self, question: str) -> str:
        """Ask `question` and return the line typed after it appeared (a field of a server's
        form); what was typed before it waits at the next prompt, as with ask_key."""
        self._keep_typed_ahead()
        self.asking = question
        try:
            return PromptSession(input=self.prompt.input, output=self.prompt.output).prompt(
                question
            )
        finally:
            self.asking = None

    # -- helpers -------------------------------------------------------------------------
    def _keep_typed_ahead(self) -> None:
        """Move what was typed and not yet read as an answer into the next prompt's text."""
        from prompt_toolkit.input.typeahead import get_typeahead

        source = self.prompt.input
        keys = get_typeahead(source)  # read by an earlier question or prompt, left unused
        with source.raw_mode():  # a line typed without Enter is readable too
            while batch := source.read_keys():
                keys.extend(batch)
            keys.extend(source.flush_keys())
        self._kept.append(typed_text(keys))

    def _take_kept(self) -> str:
        kept, self._kept = "".join(self._kept).strip("\n"), []
        return kept

    def _prompt_line(self) -> str:
        """The prompt, with the mode in it (Shift+Tab and /mode change it), and whether writes
        the mode would ask about are approved (an [a]ll answer, or one saved for good)."""
        policy = self.agent.policy
        if decide(policy.mode, "write") == "ask" and policy.verdict("write") == "allow":
            return f"heph [{policy.mode}, writes approved]> "
        return f"heph [{policy.mode}]> "

    def _workspace_files(self) -> list[str]:
        if self._files is None:
            self._files = self.agent.workspace.files()
        return self._files


@contextmanager
def unechoed(source: Any) -> Iterator[None]:
    """While the model works, what the person types is not echoed over the progress line: it
    waits in the terminal, and the next prompt (or question) reads it. Nothing where the input
    is no terminal."""
    try:
        import termios
    except ImportError:  # Windows
        yield
        return
    try:
        fd = source.fileno()
        before = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError, NotImplementedError, AttributeError):
        yield
        return
    quiet = termios.tcgetattr(fd)
    quiet[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, before)


def one_key_question(question: str, source: Any, output: Any) -> Application[str]:
    """The question, answered by the next key (see approval.key_meaning), which stays shown
    after it; Ctrl-C raises KeyboardInterrupt, Ctrl-D EOFError."""
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    pressed = [""]
    bindings = KeyBindings()

    @bindings.add(Keys.Any)
    def _answer(event: Any) -> None:
        try:
            key = key_meaning(event.data)
        except (KeyboardInterrupt, EOFError) as stop:
            event.app.exit(exception=stop)
            return
        pressed[0] = key if key.isprintable() else ""
        event.app.exit(result=key)

    shown = FormattedTextControl(lambda: [("", question + pressed[0])], show_cursor=True)
    return Application(
        layout=Layout(Window(shown, wrap_lines=True, dont_extend_height=True)),
        key_bindings=bindings,
        input=source,
        output=output,
    )


def typed_text(keys: Iterable[KeyPress]) -> str:
    """The text of key presses: their characters and line breaks (a paste whole); other keys
    (arrows, a terminal's reports) leave nothing."""
    from prompt_toolkit.keys import Keys

    parts = []
    for press in keys:
        character = len(press.data) == 1 and press.data.isprintable()
        if press.key in (Keys.ControlM, Keys.ControlJ):
            parts.append("\n")
        elif character or press.key == Keys.BracketedPaste:
            parts.append(press.data)
    return "".join(parts)


def _history(path: Path | None) -> Any:
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return ScrubbedHistory(path)
    except OSError:
        return InMemoryHistory()


class ScrubbedHistory(FileHistory):
    """The chat's history file, in prompt_toolkit's format: only the person may read it (0600),
    and no line keeps a credential (redact.scrub): a key typed or pasted into a task is not kept
    on disk for whoever reads the file later. A file an older heph kept is scrubbed once."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path
        if path.exists():
            _scrub_file(path)

    def append_string(self, string: str) -> None:
        """Kept scrubbed in this chat's memory (the Up key) too."""
        super().append_string(_scrubbed(string))

    def store_string(self, string: str) -> None:
        """Appended as prompt_toolkit's FileHistory does, to a file made private."""
        import datetime

        lines = "".join(f"+{line}\n" for line in string.split("\n"))
        entry = f"\n# {datetime.datetime.now()}\n{lines}".encode()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fd = os.open(self.path, flags, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, entry)
        finally:
            os.close(fd)


def _scrubbed(text: str) -> str:
    from hephaistus.redact import scrub

    return scrub(text)


def _scrub_file(path: Path) -> None:
    """The history file, private and without the credentials an older heph kept in it."""
    from hephaistus.textfile import atomic_write

    path.chmod(0o600)
    data = path.read_bytes()
    text = data.decode("utf-8", "surrogateescape")
    clean = _scrubbed(text)
    if clean != text:
        # (a history the person keeps elsewhere through a link stays a link)
        atomic_write(path.resolve(), clean.encode("utf-8", "surrogateescape"), mode=0o600)
