"""The tables people read: the session list, the per-model stats and the models, as rich Tables.

In a terminal rich fits them to its width (a long task is cut with an ellipsis); into a pipe or a
file every row stays one whole line. Cell text from session files is shown safely.
"""

from __future__ import annotations

from rich.table import Table

from hephaistus.analytics import ModelStats, SessionRow
from hephaistus.discovery import ModelInfo
from hephaistus.ui.escape import visible


def sessions_table(rows: list[SessionRow]) -> Table:
    table = _table("ID", "STARTED (UTC)", "STEPS", "TOKENS", "OUTCOME", "TASK")
    for row in rows:
        table.add_row(
            row.id, row.started, str(row.steps), str(row.tokens), row.outcome, visible(row.task)
        )
    return table


def models_table(models: list[ModelInfo], configured: str | None) -> Table:
    table = _table("", "MODEL", "CONTEXT")
    for model in models:
        window = f"{model.window:,}" if model.window else "-"
        table.add_row("*" if model.id == configured else "", visible(model.id), window)
    return table


def stats_table(rows: list[ModelStats]) -> Table:
    table = _table("MODEL", "SESSIONS", "ANSWERED", "STEPS", "WELL-FORMED", "EDITS OK", "TOKENS")
    for s in rows:
        table.add_row(
            visible(s.model),
            str(s.sessions),
            str(s.answered),
            str(s.steps),
            _percent(s.well_formed_rate),
            f"{_percent(s.edit_success_rate)} of {s.edits}",
            f"{s.prompt_tokens + s.completion_tokens:,}",
        )
    return table


def _table(*headers: str) -> Table:
    table = Table(
        box=None, pad_edge=False, show_edge=False, header_style="bold", padding=(0, 2, 0, 0)
    )
    for header in headers[:-1]:
        table.add_column(header, no_wrap=True)
    table.add_column(headers[-1], no_wrap=True, overflow="ellipsis")
    return table


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"
