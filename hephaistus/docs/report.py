"""What `heph docs --fix` says while it works: one block per file on standard output, in the
order files finish, and on a terminal a progress line on standard error (files done of all,
docstrings written, time, the files being waited on). Without a terminal (pre-commit, CI) a
request that takes long is named once, so a waiting commit is never silent.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

from hephaistus.escape import visible
from hephaistus.wording import counted

SLOW_SECONDS = 15.0  # a request this old is named (once) when there is no progress line
CLEAR_LINE = "\r\x1b[K"


class Reporter:
    """Says what `--fix` did, one block per file, and how far it has come."""

    def __init__(
        self,
        stream: TextIO | None = None,
        progress: TextIO | None | bool = None,
        slow_after: float = SLOW_SECONDS,
    ) -> None:
        self.stream = stream or sys.stdout
        self.slow_after = slow_after
        if progress is None:  # a live line only where a person watches
            progress = sys.stderr if sys.stderr.isatty() else False
        self.progress = None if isinstance(progress, bool) else progress
        self.notices: TextIO = sys.stderr
        self.total = 0
        self.done = 0
        self.written = 0
        self.started = time.monotonic()
        self._named: set[str] = set()
        self._shown = False

    def start(self, total: int) -> None:
        """The run is about to work on `total` files; the clock starts now."""
        self.total = total
        self.started = time.monotonic()

    def fixed(
        self, rel: str, written: list[str], missed: list[str], refused: dict[str, str]
    ) -> None:
        """File `rel` was written: the docstrings in it, those the model gave none for
        (`missed`), and why any were not placed (`refused`)."""
        self.written += len(written)
        line = f"{rel}: wrote {counted(len(written), 'docstring')} ({', '.join(written)})"
        if missed:
            line += f"; the model gave none for {', '.join(missed)}"
        self._file_done([line, *(f"  {name}: not placed: {why}" for name, why in refused.items())])

    def diff(self, rel: str, diff: str, written: list[str]) -> None:
        """A dry run's change to file `rel`: `diff` is printed, `written` counted as if written."""
        self.written += len(written)
        self._file_done([diff.rstrip("\n")])

    def error(self, rel: str, message: str) -> None:
        """File `rel` was left unchanged, for this reason."""
        self._file_done([f"{rel}: left unchanged: {message}"])

    def waiting(self, running: list[tuple[str, float]]) -> None:
        """A tick while requests run: redraw the progress line, or name a slow request."""
        if self.progress is not None:
            self._draw(running)
            return
        for rel, seconds in running:
            if seconds >= self.slow_after and rel not in self._named:
                self._named.add(rel)
                print(
                    visible(f"heph docs: waiting for the model on {rel} ({seconds:.0f} s)"),
                    file=self.notices,
                    flush=True,
                )

    def finish(self) -> None:
        """The run is over: the progress line is cleared."""
        self._clear()

    def stopped(self) -> None:
        """Ctrl-C: what became of the run."""
        self._clear()
        print(
            f"heph docs: stopped after {self.done} of {self.total} files; what was written is "
            "kept (`heph undo` reverts it)",
            file=self.notices,
            flush=True,
        )

    def _file_done(self, lines: list[str]) -> None:
        self.done += 1
        self._clear()
        print(visible("\n".join(lines)), file=self.stream, flush=True)
        if self.progress is not None and self.done < self.total:
            self._draw([])

    def _draw(self, running: list[tuple[str, float]]) -> None:
        assert self.progress is not None
        elapsed = time.monotonic() - self.started
        written = counted(self.written, "docstring")
        line = f"[{self.done}/{self.total} files] {written} written, {elapsed:.0f} s"
        if running:
            line += f"; waiting on {', '.join(rel for rel, _ in running)}"
        width = shutil.get_terminal_size().columns - 1  # a wrapped line could not be redrawn
        self.progress.write(CLEAR_LINE + visible(line)[:width])
        self.progress.flush()
        self._shown = True

    def _clear(self) -> None:
        if self._shown and self.progress is not None:
            self.progress.write(CLEAR_LINE)
            self.progress.flush()
            self._shown = False
