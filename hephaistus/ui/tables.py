"""The tables people read: the session list, the per-model stats and the models.

In a terminal each is fitted to its width: only one column (a task, a model's name) is cut,
with an ellipsis, so an id can always be copied into `heph replay` (rich left to itself squeezes
every column, ids and all); into a pipe or a file every row stays one whole line. Every cell
is text from outside (a session file, a server): shown as written, never read as markup.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

from hephaistus.escape import outside_text
from hephaistus.model.discovery import ModelInfo
from hephaistus.records.analytics import ModelStats, SessionRow


def sessions_table(rows: list[SessionRow]) -> _Fitted:
    """The sessions as `heph sessions` lists them, the task cut to fit. In a terminal too
    narrow to show some of the task beside the rest, STARTED is left out: the id begins with
    the same time."""
    cells = [
        [
            row.id,
            row.started,
            row.mode + (" (dry)" if row.dry_run else ""),
            str(row.steps),
            str(row.tokens),
            row.outcome,
            row.task,
        ]
        for row in rows
    ]
    headers = ("ID", "STARTED (UTC)", "MODE", "STEPS", "TOKENS", "OUTCOME", "TASK")
    return _Fitted(headers, cells, optional=1)


def models_table(models: list[ModelInfo], configured: str | None) -> _Fitted:
    """The served models, `*` marking the one `configured`, the name cut to fit."""
    cells = [
        [
            "*" if model.id == configured else "",
            model.id,
            f"{model.window:,}" if model.window else "-",
            model.schema,
        ]
        for model in models
    ]
    return _Fitted(("", "MODEL", "CONTEXT", "SCHEMA"), cells, cut=1)


def stats_table(rows: list[ModelStats]) -> _Fitted:
    """One row per model, as `heph stats` shows it, the model's name cut to fit."""
    cells = [
        [
            s.model,
            str(s.sessions),
            str(s.answered),
            str(s.steps),
            _percent(s.well_formed_rate),
            f"{_percent(s.edit_success_rate)} of {s.edits}",
            f"{s.prompt_tokens + s.completion_tokens:,}",
        ]
        for s in rows
    ]
    headers = ("MODEL", "SESSIONS", "ANSWERED", "STEPS", "WELL-FORMED", "EDITS OK", "TOKENS")
    return _Fitted(headers, cells, cut=0)


class _Fitted:
    """A table fitted to the width it is drawn in: every column but the one at `cut` (default:
    the last) as wide as its widest cell, never cut; that one takes what is left, cut with an
    ellipsis. When that leaves it fewer than CUT_ROOM characters, the `optional` column (if
    any) is left out first."""

    CUT_ROOM = 24

    def __init__(
        self,
        headers: tuple[str, ...],
        cells: list[list[str]],
        cut: int = -1,
        optional: int | None = None,
    ) -> None:
        self.headers = headers
        self.cells = [[outside_text(cell) for cell in row] for row in cells]
        self.cut, self.optional = cut % len(headers), optional

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The table for `options.max_width`."""
        shown = list(range(len(self.headers)))
        widths = [
            max([len(header), *(len(row[index]) for row in self.cells)])
            for index, header in enumerate(self.headers)
        ]
        fixed = sum(widths[i] + 2 for i in shown if i != self.cut)
        if self.optional is not None and fixed + self.CUT_ROOM > options.max_width:
            shown.remove(self.optional)
            fixed -= widths[self.optional] + 2
        table = Table(
            box=None, pad_edge=False, show_edge=False, header_style="bold", padding=(0, 2, 0, 0)
        )
        for index in shown:
            header, width = self.headers[index], widths[index]
            if index == self.cut:  # what is left: rich would squeeze the other columns first
                room = max(1, min(width, options.max_width - fixed))
                table.add_column(header, no_wrap=True, overflow="ellipsis", max_width=room)
            else:
                table.add_column(header, no_wrap=True, min_width=width, max_width=width)
        for row in self.cells:
            table.add_row(*(row[i] for i in shown))
        yield table


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"
