"""`heph stats`: how each model has done in this workspace, from the recorded sessions alone.

Per model: sessions and their outcomes, steps (model requests), the share of replies that were
well-formed protocol objects, the share of edits (edit_file, patch_file, write_file, append_file)
that applied, and tokens.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hephaistus.session import DOCS_SESSION, Memo, SessionStore, load_session

EDIT_TOOLS = {"edit_file", "patch_file", "write_file", "append_file"}


@dataclass
class ModelStats:
    model: str
    sessions: int = 0
    answered: int = 0
    steps: int = 0
    malformed: int = 0
    edits: int = 0
    edits_applied: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def well_formed_rate(self) -> float | None:
        return (self.steps - self.malformed) / self.steps if self.steps else None

    @property
    def edit_success_rate(self) -> float | None:
        return self.edits_applied / self.edits if self.edits else None

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "well_formed_rate": self.well_formed_rate,
                "edit_success_rate": self.edit_success_rate}


def collect(store: SessionStore) -> list[ModelStats]:
    by_model: dict[str, ModelStats] = {}
    for session_id in store.ids():
        recorded = load_session(store.path_of(session_id))
        if recorded.kind == DOCS_SESSION:
            continue  # docs requests do not use the agent protocol
        model = str(recorded.header.get("model") or "?")
        stats = by_model.setdefault(model, ModelStats(model))
        stats.sessions += 1
        stats.answered += recorded.outcome == "answered"
        for span in recorded.spans:
            if span.kind == "LLM" and span.ok:
                stats.steps += 1
                stats.prompt_tokens += (span.usage or {}).get("prompt_tokens", 0)
                stats.completion_tokens += (span.usage or {}).get("completion_tokens", 0)
            elif span.kind == "MEMO" and span.name == Memo.MALFORMED_REPLY:
                stats.malformed += 1
            elif span.kind == "TOOL" and span.name in EDIT_TOOLS:
                output = span.output if isinstance(span.output, dict) else {}
                # A write the person declined, refused or only previewed says nothing of the
                # model's edits.
                if output.get("decision") in (None, "write"):
                    stats.edits += 1
                    stats.edits_applied += bool(span.ok)
    return sorted(by_model.values(), key=lambda s: -s.sessions)


def format_stats(rows: list[ModelStats]) -> list[str]:
    header = ("MODEL", "SESSIONS", "ANSWERED", "STEPS", "WELL-FORMED", "EDITS OK", "TOKENS")
    cells = [header] + [(
        s.model, str(s.sessions), str(s.answered), str(s.steps), _percent(s.well_formed_rate),
        f"{_percent(s.edit_success_rate)} of {s.edits}",
        f"{s.prompt_tokens + s.completion_tokens:,}",
    ) for s in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
            for row in cells]


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"
