"""All terminal output goes through here.

One-shot runs put progress on stderr and the answer on stdout; the REPL uses one console for
both. Without a terminal, or with NO_COLOR or TERM=dumb, rich writes plain text with no escape
codes, and no spinner runs. Text that did not come from heph itself (the model's, a file's, a
server's) goes to rich only as escape.outside_text makes it: never markup, its control characters
spelled out and the environment's secrets hidden.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any

from rich.console import Console
from rich.text import Text

from hephaistus.escape import json_safe, outside_text, safe, takes_utf8
from hephaistus.tools import ToolResult
from hephaistus.values import Action, Usage

PARTIAL_THOUGHT = re.compile(r'"thought"\s*:\s*"((?:[^"\\]|\\.)*)')

SHORT_OBSERVATION_LINES = 3
COMMAND_HEADER_LINES = 2  # `$ the command`, then how it ended and how long it took
ARG_PREVIEW_CHARS = 60


def plain_requested() -> bool:
    """NO_COLOR (no-color.org) or a dumb terminal: plain text, no escape codes at all."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") in ("dumb", "unknown")


def make_console(*, stderr: bool) -> Console:
    """A console on stderr or stdout: plain text when NO_COLOR or a dumb terminal asks for it,
    lines wrapped only on a terminal."""
    stream = sys.stderr if stderr else sys.stdout
    if plain_requested():
        return Console(
            file=stream,
            highlight=False,
            soft_wrap=True,
            force_terminal=False,
            no_color=True,
            color_system=None,
        )
    # In a terminal rich wraps to its width; into a pipe or file, lines stay whole.
    return Console(file=stream, highlight=False, soft_wrap=not stream.isatty())


class ConsoleSink:
    """Shows each step as it happens: a spinner while the model works, the thought, the tool
    call, a short observation, the diff of every write, and the answer."""

    def __init__(
        self, *, verbose: bool = False, quiet: bool = False, console: Console | None = None
    ) -> None:
        self.err = console or make_console(stderr=True)
        self.out = console or make_console(stderr=False)
        self.verbose = verbose
        self.quiet = quiet
        self.tokens = 0  # used so far in this sink's lifetime
        self._diffs_shown: set[str] = set()
        self._status: Any = None
        self._waiting_since = 0.0
        self._partial = ""

    @property
    def spinning(self) -> bool:
        """Whether the spinner shows, while the model works."""
        return self._status is not None

    def waiting_line(self) -> str:
        """What the spinner line says now: elapsed time, tokens, the thought so far."""
        return _Waiting(self).__rich__().plain

    def safe(self, text: str) -> str:
        """`text` as it may reach the terminal: secrets hidden, control characters visible."""
        return safe(text)

    # -- the spinner while the model works ----------------------------------------------
    def step_started(self, step: int) -> None:
        """Start the spinner (on a terminal, unless quiet); with -v, a line names the step first."""
        if self.verbose:
            self._print(Text(f"── step {step}", style="dim"))
        if self.err.is_terminal and not self.quiet:
            self._waiting_since = time.monotonic()
            self._partial = ""
            self._status = self.err.status(_Waiting(self), spinner="dots")
            self._status.start()

    def reply_progress(self, text_so_far: str) -> None:
        """Keep the thought so far of a streaming reply, for the spinner line."""
        match = PARTIAL_THOUGHT.search(text_so_far)
        if match:
            self._partial = match.group(1).replace("\\n", " ").replace('\\"', '"')

    def model_replied(self, usage: Usage) -> None:
        """Stop the spinner and add the reply's tokens to the count it shows."""
        self._stop()
        self.tokens += usage.total

    def _stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def settle(self) -> None:
        """The turn is over, however it ended (Ctrl-C in the middle of a request too): no
        spinner may go on over the prompt."""
        self._stop()

    def _print(self, *items: Any, out: bool = False, **options: Any) -> None:
        self._stop()
        console = self.out if out else self.err
        if not options and _plain_lines(console, items):
            # Into a pipe or a file rich would write these very characters, at a third of a
            # millisecond a line: a step's lines cost more than the rest of the step's work.
            console.file.write(" ".join(item.plain for item in items) + "\n")
            console.file.flush()
            return
        console.print(*items, **options)

    def thought(self, text: str) -> None:
        """The thought, dim and in italics (not when quiet)."""
        if not self.quiet:
            self._print(outside_text(text, "italic dim"))

    def tool_called(self, action: Action) -> None:
        """The call in one line, `→ tool arg=value ...` (not when quiet)."""
        if not self.quiet:
            self._print(Text("→ ", style="cyan") + outside_text(describe_call(action), "bold"))

    def tool_finished(self, action: Action, result: ToolResult) -> None:
        """The write's diff if it was not shown yet, then ✓ or ✗ and a preview of the output
        (all of it with -v); only the diff when quiet."""
        if result.diff and result.diff not in self._diffs_shown and not result.refused:
            self.show_diff(result.diff)
        if self.quiet or (action.tool == "todo_write" and result.ok):
            return  # a new todo list was shown as such (todos_changed)
        mark, style = ("✓", "green") if result.ok else ("✗", "red")
        lines = self.safe(result.output).splitlines() or [""]
        body = "\n    ".join(lines if self.verbose else preview(lines, result))
        self._print(Text(f"  {mark} ", style=style) + Text(body, style="dim"))

    def todos_changed(self, todos: list[Any]) -> None:
        """The todo list, compact: how far it is, then an item a line, the one in progress
        bold (not shown when quiet)."""
        if self.quiet or not todos:
            return
        done = sum(1 for todo in todos if todo.status == "completed")
        shown = Text(f"  todo ({done}/{len(todos)} done)", style="bold")
        for todo in todos:
            style = {"completed": "dim", "in_progress": "bold"}.get(todo.status, "")
            shown += Text("\n    ") + outside_text(todo.line(), style)
        self._print(shown)

    def show_diff(self, diff: str) -> None:
        """The diff, coloured on a terminal, and remembered so tool_finished does not repeat it."""
        self._diffs_shown.add(diff)
        if self.quiet:
            return
        diff = self.safe(diff)
        if self.err.is_terminal and not self.err.no_color:
            from rich.syntax import Syntax

            self._print(
                Syntax(diff.rstrip("\n"), "diff", theme="ansi_dark", background_color="default")
            )
        else:
            self._print(Text(diff.rstrip("\n")))

    def format_error(self, problem: str) -> None:
        """A yellow line saying what was wrong with the reply (not when quiet)."""
        if not self.quiet:
            self._print(outside_text(f"  ! malformed reply: {problem}", "yellow"))

    def notice(self, text: str) -> None:
        """A yellow line, shown even when quiet."""
        self._print(outside_text(f"  ! {text}", "yellow"))

    def final(self, message: str) -> None:
        """The answer on stdout: Markdown on a terminal, plain text into a pipe or file. A link
        shows its target beside its text (`docs (https://...)`), never as a terminal hyperlink:
        the model's text would choose what the person reads and, apart, where a click goes."""
        message = self.safe(message)
        if self.out.is_terminal:
            from rich.markdown import Markdown

            self._print(Markdown(message, hyperlinks=False), out=True)
        else:
            self._print(Text(message), out=True)

    def failure(self, message: str) -> None:
        """`heph: ` and the message, in bold red on stderr."""
        self._print(outside_text(f"heph: {message}", "bold red"))


# Bulky arguments of write tools: their diff is shown, so the call line only gives their size.
BULKY_ARGS = {"content", "old", "new", "diff"}


class _Waiting:
    """The spinner's text, re-rendered on every refresh: elapsed time, tokens, the thought."""

    def __init__(self, sink: ConsoleSink) -> None:
        self.sink = sink

    def __rich__(self) -> Text:
        elapsed = time.monotonic() - self.sink._waiting_since
        text = Text(f"thinking… {elapsed:.1f}s · {self.sink.tokens:,} tokens", style="dim")
        if self.sink._partial:
            width = max(20, self.sink.err.width - len(text) - 6)
            text.append("  " + self.sink.safe(self.sink._partial[-width:]), style="italic dim")
        return text


def preview(lines: list[str], result: ToolResult) -> list[str]:
    """The lines of a result worth a glance: a command's line, how it ended and the end of its
    output (where failures are summed up, and what the model is sent); a write's first line
    (its diff was shown); else the first lines."""
    if result.command:
        head, rest = lines[:COMMAND_HEADER_LINES], lines[COMMAND_HEADER_LINES:]
        tail = rest[-SHORT_OBSERVATION_LINES:]
        skipped = len(rest) - len(tail)
        return [*head, *([f"… {skipped} lines before"] if skipped else []), *tail]
    if result.diff and result.ok:
        return lines[:1]  # "updated x.py (12 lines)" is enough
    shown = lines[:SHORT_OBSERVATION_LINES]
    more = len(lines) - len(shown)
    return [*shown, *([f"… {more} more lines"] if more else [])]


def describe_call(action: Action) -> str:
    """A tool call in one line: the tool and its arguments, line breaks as ⏎, long values cut,
    and the bulky ones (content, old, new, diff) given as their number of lines."""
    parts = []
    for name, value in action.args.items():
        if name in BULKY_ARGS and isinstance(value, str):
            parts.append(f"{name}=<{len(value.splitlines()) or 1} lines>")
            continue
        if name == "todos" and isinstance(value, list):  # the list is shown as such
            parts.append(f"todos=<{len(value)} item{'' if len(value) == 1 else 's'}>")
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        if len(text) > ARG_PREVIEW_CHARS:
            text = text[:ARG_PREVIEW_CHARS] + f"… ({len(str(value))} chars)"
        parts.append(f"{name}={text}")
    return f"{action.tool} " + " ".join(parts)


def print_json(payload: dict[str, Any]) -> None:
    """`payload` as one line of JSON on stdout, with no character in it a terminal would act on."""
    text = json.dumps(payload, ensure_ascii=False)
    sys.stdout.write(json_safe(text, ascii_only=not takes_utf8(sys.stdout)) + "\n")
    sys.stdout.flush()


def _plain_lines(console: Console, items: tuple[Any, ...]) -> bool:
    """Whether rich would print `items` as their plain text: styled text, no tab to expand,
    going somewhere that is not a terminal (rich then writes no styles and wraps no line)."""
    return (
        console.soft_wrap
        and all(type(item) is Text and "\t" not in item.plain for item in items)
        and not console.is_terminal
    )
