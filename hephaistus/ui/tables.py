"""The tables people read: the session list, the per-model stats and the models, as rich Tables.

In a terminal rich fits them to its width: only one column (a task, a model's name) is cut,
with an ellipsis, so an id can always be copied into `heph replay`; into a pipe or a file every
row stays one whole line. Cell text from session files is shown safely.
"""

from __future__ import annotations

from rich.table import Table

from hephaistus.analytics import ModelStats, SessionRow
from hephaistus.discovery import ModelInfo
from hephaistus.ui.escape import visible


def sessions_table(rows: list[SessionRow]) -> Table:
    """The sessions as `heph sessions` lists them, the task cut to fit."""
    cells = [
        [
            row.id,
            row.started,
            visible(row.mode),
            str(row.steps),
            str(row.tokens),
            row.outcome,
            visible(row.task),
        ]
        for row in rows
    ]
    return _table(("ID", "STARTED (UTC)", "MODE", "STEPS", "TOKENS", "OUTCOME", "TASK"), cells)


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
