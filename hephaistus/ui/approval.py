"""Asking the user before each write: `[y]es / [n]o / [a]ll / [d]iff`.

Without a terminal and without --yes nothing can be asked, so writes are refused; --dry-run shows
each change and writes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from hephaistus.tools.context import Decision, FileChange
from hephaistus.ui.render import ConsoleSink

PREVIEW_LINES = 40


class Approval:
    def __init__(
        self,
        sink: ConsoleSink,
        *,
        yes: bool = False,
        dry_run: bool = False,
        interactive: bool | None = None,
        ask: Callable[[str], str] = input,
    ) -> None:
        self.sink = sink
        self.approve_all = yes
        self.dry_run = dry_run
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.ask = ask

    def __call__(self, change: FileChange) -> Decision:
        if self.dry_run:
            self.sink.show_diff(change.diff)
            return "skip"
        if self.approve_all:
            return "write"
        if not self.interactive:
            return "refuse"
        return self._prompt(change)

    def _prompt(self, change: FileChange) -> Decision:
        lines = change.diff.splitlines()
        preview = "\n".join(lines[:PREVIEW_LINES])
        if len(lines) > PREVIEW_LINES:
            preview += f"\n… {len(lines) - PREVIEW_LINES} more lines ([d] shows all)"
        self.sink.show_diff(preview + "\n")
        verb = "Create" if change.created else "Change"
        subject = change.path if change.path.startswith("git ") else f"{verb} {change.path}"
        while True:
            try:
                answer = self.ask(f"{subject[0].upper()}{subject[1:]}? [y]es / [n]o / [a]ll / "
                                  "[d]iff: ")
            except EOFError:
                return "refuse"
            choice = answer.strip().lower()[:1]
            if choice == "y":
                return "write"
            if choice == "a":
                self.approve_all = True
                return "write"
            if choice == "n":
                return "decline"
            if choice == "d":
                self.sink.show_diff(change.diff)
