"""The session list, shared by `heph sessions` and the REPL's /sessions."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hephaistus.session import SessionStore, load_session


@dataclass(frozen=True)
class SessionRow:
    id: str
    started: str
    steps: int
    tokens: int
    outcome: str
    task: str


def session_rows(store: SessionStore, limit: int) -> list[SessionRow]:
    rows = []
    for session_id in store.ids()[-limit:]:
        recorded = load_session(store.path_of(session_id))
        end = recorded.end or {}
        usage = end.get("usage") if end else None
        tokens = sum(usage.values()) if usage else sum(
            sum((s.usage or {}).values()) for s in recorded.spans)
        steps = end.get("steps", sum(1 for s in recorded.spans if s.kind == "LLM"))
        task = " ".join(str(recorded.header.get("task", "")).split())
        started = str(recorded.header.get("started", ""))[:19].replace("T", " ")
        rows.append(SessionRow(session_id, started, int(steps), int(tokens), recorded.outcome,
                               task))
    return rows


def as_dicts(rows: list[SessionRow]) -> list[dict]:
    return [asdict(row) for row in rows]


def format_rows(rows: list[SessionRow], task_width: int = 60) -> list[str]:
    """Aligned plain-text lines, a header first."""
    header = ("ID", "STARTED (UTC)", "STEPS", "TOKENS", "OUTCOME", "TASK")
    cells = [header] + [(r.id, r.started, str(r.steps), str(r.tokens), r.outcome,
                         r.task[:task_width]) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(5)]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:5])) + "  " + row[5]
            for row in cells]
