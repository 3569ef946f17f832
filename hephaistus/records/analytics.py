"""What the recorded sessions say, read from their files alone: the session list (`heph
sessions`) and per model how it did (`heph stats`): sessions and outcomes, steps, the share of
well-formed replies, the share of edits that applied, and tokens."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hephaistus.records.session import DOCS_SESSION, Memo, SessionStore, load_session
from hephaistus.redact import scrub


@dataclass(frozen=True)
class SessionRow:
    """One line of `heph sessions`: the session's id, when it started (UTC), its steps, tokens
    and outcome, its task on one line, the permission mode it ran in ("-" for a session of no
    task's, `heph docs --fix`'s), and whether it was a dry run."""

    id: str
    started: str
    steps: int
    tokens: int
    outcome: str
    task: str
    mode: str = "-"
    dry_run: bool = False


def session_rows(store: SessionStore, limit: int) -> list[SessionRow]:
    """The newest `limit` sessions, oldest first, each as a SessionRow."""
    rows = []
    for session_id in store.recent_ids(limit):
        recorded = load_session(store.folder / f"{session_id}.jsonl")
        end = recorded.end or {}
        usage = end.get("usage") if end else None
        tokens = (
            sum(usage.values())
            if usage
            else sum(sum((s.usage or {}).values()) for s in recorded.spans)
        )
        steps = end.get("steps", sum(1 for s in recorded.spans if s.kind == "LLM"))
        task = scrub(" ".join(str(recorded.header.get("task", "")).split()))  # an older file's
        started = str(recorded.header.get("started", ""))[:19].replace("T", " ")
        mode = str(recorded.header.get("mode") or "-")
        dry = recorded.header.get("dry_run") is True
        rows.append(
            SessionRow(
                session_id, started, int(steps), int(tokens), recorded.outcome, task, mode, dry
            )
        )
    return rows


def as_dicts(rows: list[SessionRow]) -> list[dict]:
    """The rows as `heph sessions --json` prints them."""
    return [asdict(row) for row in rows]


EDIT_TOOLS = {"edit_file", "patch_file", "write_file", "append_file"}


@dataclass
class ModelStats:
    """How one model did over the workspace's task sessions: sessions and answers, steps,
    malformed replies, edits and those that applied, and tokens."""

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
        """The counts and both rates, as `heph stats --json` prints them."""
        return {
            **asdict(self),
            "well_formed_rate": self.well_formed_rate,
            "edit_success_rate": self.edit_success_rate,
        }


def collect(store: SessionStore) -> list[ModelStats]:
    """The stats of every model the workspace's task sessions used, most sessions first; docs
    sessions are left out (their requests do not use the agent protocol)."""
    by_model: dict[str, ModelStats] = {}
    for session_id in store.ids():
        recorded = load_session(store.folder / f"{session_id}.jsonl")
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
                if output.get("decision") in (None, "allow", "write"):
                    stats.edits += 1
                    stats.edits_applied += bool(span.ok)
    return sorted(by_model.values(), key=lambda s: -s.sessions)
