"""All terminal output goes through here: progress on stderr, the answer on stdout.

Without a terminal, or with NO_COLOR or TERM=dumb, rich writes plain text with no escape codes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text

from hephaistus.protocol import Action
from hephaistus.tools import ToolResult

SHORT_OBSERVATION_LINES = 3
ARG_PREVIEW_CHARS = 60


def make_console(*, stderr: bool) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    # In a terminal rich wraps to its width; into a pipe or file, lines stay whole.
    return Console(file=stream, highlight=False, soft_wrap=not stream.isatty())


class ConsoleSink:
    """Shows each step as it happens: thought, tool call, short observation, diffs."""

    def __init__(self, *, verbose: bool = False, quiet: bool = False) -> None:
        self.err = make_console(stderr=True)
        self.out = make_console(stderr=False)
        self.verbose = verbose
        self.quiet = quiet
        self._diffs_shown: set[str] = set()

    def step_started(self, step: int) -> None:
        if self.verbose:
            self.err.print(Text(f"── step {step}", style="dim"))

    def thought(self, text: str) -> None:
        if not self.quiet:
            self.err.print(Text(text, style="italic dim"))

    def tool_called(self, action: Action) -> None:
        if not self.quiet:
            self.err.print(Text("→ ", style="cyan") + Text(describe_call(action), style="bold"))

    def tool_finished(self, action: Action, result: ToolResult) -> None:
        if result.diff and result.diff not in self._diffs_shown and not result.refused:
            self.show_diff(result.diff)
        if self.quiet:
            return
        mark, style = ("✓", "green") if result.ok else ("✗", "red")
        lines = result.output.splitlines() or [""]
        if result.diff and result.ok:
            lines = lines[:1]  # the diff was shown; "updated x.py (12 lines)" is enough
        shown = lines if self.verbose else lines[:SHORT_OBSERVATION_LINES]
        body = "\n    ".join(shown)
        if len(lines) > len(shown):
            body += f"\n    … {len(lines) - len(shown)} more lines"
        self.err.print(Text(f"  {mark} ", style=style) + Text(body, style="dim"))

    def show_diff(self, diff: str) -> None:
        self._diffs_shown.add(diff)
        if self.quiet:
            return
        if self.err.is_terminal:
            self.err.print(Syntax(diff.rstrip("\n"), "diff", theme="ansi_dark",
                                  background_color="default"))
        else:
            self.err.print(diff.rstrip("\n"), markup=False)

    def format_error(self, problem: str) -> None:
        if not self.quiet:
            self.err.print(Text(f"  ! malformed reply: {problem}", style="yellow"))

    def notice(self, text: str) -> None:
        self.err.print(Text(f"  ! {text}", style="yellow"))

    def final(self, message: str) -> None:
        if self.out.is_terminal:
            self.out.print(Markdown(message))
        else:
            self.out.print(message, markup=False)

    def failure(self, message: str) -> None:
        self.err.print(Text(f"heph: {message}", style="bold red"))


# Bulky arguments of write tools: their diff is shown, so the call line only gives their size.
BULKY_ARGS = {"content", "old", "new", "diff"}


def describe_call(action: Action) -> str:
    parts = []
    for name, value in action.args.items():
        if name in BULKY_ARGS and isinstance(value, str):
            parts.append(f"{name}=<{len(value.splitlines()) or 1} lines>")
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        if len(text) > ARG_PREVIEW_CHARS:
            text = text[:ARG_PREVIEW_CHARS] + f"… ({len(str(value))} chars)"
        parts.append(f"{name}={text}")
    return f"{action.tool} " + " ".join(parts)


def print_json(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    sys.stdout.flush()
