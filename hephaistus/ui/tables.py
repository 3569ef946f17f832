"""The tables people read: the session list, the per-model stats and the models, as rich Tables.

In a terminal rich fits them to its width: only one column (a task, a model's name) is cut,
with an ellipsis, so an id can always be copied into `heph replay`; into a pipe or a file every
row stays one whole line. Cell text from session files is shown safely.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

from hephaistus.analytics import ModelStats, SessionRow
from hephaistus.discovery import ModelInfo
from hephaistus.ui.escape import visible


def sessions_table(rows: list[SessionRow]) -> _LeavingOut:
    """The sessions as `heph sessions` lists them, the task cut to fit. In a terminal too
    narrow to show some of the task beside the rest, STARTED is left out: the id begins with
    the same time."""
    cells = [
        [
            row.id,
            row.started,
            visible(row.mode) + (" (dry)" if row.dry_run else ""),
            str(row.steps),
            str(row.tokens),
            row.outcome,
            visible(row.task),
        ]
        for row in rows
    ]
    headers = ("ID", "STARTED (UTC)", "MODE", "STEPS", "TOKENS", "OUTCOME", "TASK")
    return _LeavingOut(headers, cells, optional=1)


class _LeavingOut:
    """A table whose `optional` column goes when the width leaves the last one (cut to fit)
    fewer than TASK_ROOM characters."""

    TASK_ROOM = 24

    def __init__(self, headers: tuple[str, ...], cells: list[list[str]], optional: int) -> None:
        self.headers, self.cells, self.optional = headers, cells, optional

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The whole table where it fits, else the one without the optional column."""
        fixed = sum(
            max([len(header), *(len(row[index]) for row in self.cells)]) + 2
            for index, header in enumerate(self.headers[:-1])
        )
        if fixed + self.TASK_ROOM <= options.max_width:
            yield _table(self.headers, self.cells)
            return
        keep = [i for i in range(len(self.headers)) if i != self.optional]
        yield _table(
            tuple(self.headers[i] for i in keep), [[row[i] for i in keep] for row in self.cells]
        )


def models_table(models: list[ModelInfo], configured: str | None) -> Table:
    """The served models, `*` marking the one `configured`, the name cut to fit."""
    cells = [
        [
            "*" if model.id == configured else "",
            visible(model.id),
            f"{model.window:,}" if model.window else "-",
            model.schema,
        ]
        for model in models
    ]
    return _table(("", "MODEL", "CONTEXT", "SCHEMA"), cells, cut=1)


def stats_table(rows: list[ModelStats]) -> Table:
    """One row per model, as `heph stats` shows it, the model's name cut to fit."""
    cells = [
        [
            visible(s.model),
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
    return _table(headers, cells, cut=0)


def _table(headers: tuple[str, ...], rows: list[list[str]], cut: int = -1) -> Table:
    """Every column but the one at `cut` (default: the last) as wide as its widest cell,
    never cut; that one takes what is left, cut with an ellipsis."""
    table = Table(
        box=None, pad_edge=False, show_edge=False, header_style="bold", padding=(0, 2, 0, 0)
    )
    cut = cut % len(headers)
    for index, header in enumerate(headers):
        if index == cut:
            table.add_column(header, no_wrap=True, overflow="ellipsis")
        else:
            width = max([len(header), *(len(row[index]) for row in rows)])
            table.add_column(header, no_wrap=True, min_width=width)
    for row in rows:
        table.add_row(*row)
    return table


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"
