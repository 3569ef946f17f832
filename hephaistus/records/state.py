"""AgentState: what the agent is working on, sent with each task and whenever it changes, so
follow-ups resolve.

It is derived from tool events (never from the model's prose), persisted in `.heph/state.json`
after every step that changes it, and restored when the next run starts, so
`heph "it is incorrect"` knows what "it" is. The file is signed (see provenance): a state that
came with the workspace's files is never read as the person's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from hephaistus.textfile import atomic_write, read_real
from hephaistus.workspace import provenance

MAX_LISTED = 8
ANSWER_CHARS = 600
PLAN_CHARS = 6000  # the plan being carried out is the work itself: it is kept longer
# Rows that list files, whose news is only a file the model's own call did not name.
_FILE_ROWS = ("last modified file", "recently created files", "active files")


@dataclass
class AgentState:
    """What the agent is working on, from the tool events of this and earlier tasks."""

    last_modified_file: str | None = None
    recently_created_files: list[str] = field(default_factory=list)
    active_files: list[str] = field(default_factory=list)  # most recent first
    last_task: str | None = None
    last_answer: str | None = None
    open_problems: list[str] = field(default_factory=list)  # "path: what failed", newest first
    failing_commands: dict[str, str] = field(default_factory=dict)  # name → failed: test ids
    plan_session: str | None = None  # the session whose answer is the last plan (plan mode)
    plan: str | None = None  # the plan being carried out (after "go"), until it is answered
    plan_done: str | None = None  # the session whose plan "go" last carried out to an answer
    todos: list[str] = field(default_factory=list)  # the todo list's lines (records.todos)

    def file_read(self, path: str) -> None:
        """A tool read `path`: it becomes the most recent active file."""
        self._touch(path)

    def file_written(self, path: str, *, created: bool) -> None:
        """A tool wrote `path` (`created`: a new file); its open problems are cleared."""
        self.last_modified_file = path
        self.open_problems = [p for p in self.open_problems if not p.startswith(f"{path}: ")]
        if created:
            self.recently_created_files = _front(self.recently_created_files, path)
        self._touch(path)

    def file_deleted(self, path: str) -> None:
        """A tool deleted `path` (or moved it away): it is no file to work on any more."""
        if self.last_modified_file == path:
            self.last_modified_file = None
        self.recently_created_files = [p for p in self.recently_created_files if p != path]
        self.active_files = [p for p in self.active_files if p != path]
        self.open_problems = [p for p in self.open_problems if not p.startswith(f"{path}: ")]

    def problem(self, path: str, what: str) -> None:
        """A failure the model should not forget (a failed edit); cleared when the file is
        written successfully."""
        entry = f"{path}: {what}" if path else what
        self.open_problems = [entry, *[p for p in self.open_problems if p != entry]][:5]

    def command_ran(self, name: str, summary: str) -> None:
        """A project command's last result; kept while it fails."""
        if summary == "passed":
            self.failing_commands.pop(name, None)
        else:
            self.failing_commands[name] = summary

    def task_started(self, task: str) -> None:
        """A new task began: it is the last task from now on."""
        self.last_task = task

    def answered(self, message: str, *, carried_out: bool = True) -> None:
        """The task ended with this answer, kept for the next task's follow-ups; a plan that
        was being carried out is done (the answer says what became of it), unless nothing was
        `carried_out` (a dry run)."""
        self.last_answer = message
        if self.plan is not None and carried_out:
            self.plan_done = self.plan_session
        self.plan = None

    def planned(self, session_id: str) -> None:
        """The answer of session `session_id` is a plan (saved beside its session)."""
        self.plan_session = session_id

    def carry_out(self, plan: str) -> None:
        """The next task carries out `plan`: it is in the state the model reads, instead of the
        answer that first proposed it (the person may have edited it since)."""
        self.plan = plan
        self.last_answer = None

    def _touch(self, path: str) -> None:
        self.active_files = _front(self.active_files, path)

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) of every field that has a value, as the model reads them."""
        rows = [
            ("last modified file", self.last_modified_file or ""),
            ("recently created files", ", ".join(self.recently_created_files)),
            ("active files", ", ".join(self.active_files)),
            # Both clipped: a task too large for the window must not make the next one so too.
            ("last task", _clipped(self.last_task)),
            ("last answer", _clipped(self.last_answer)),
            ("plan to carry out", _clipped(self.plan, PLAN_CHARS)),
            ("todo list", _clipped(" | ".join(self.todos), PLAN_CHARS)),
        ]
        rows.append(("open problems", "; ".join(self.open_problems)))
        rows += [
            (f"failing command {name}", summary) for name, summary in self.failing_commands.items()
        ]
        return [(name, value) for name, value in rows if value]

    def render(self) -> str:
        """The whole state as the model sees it, at the end of a user message."""
        body = "\n".join(f"{name}: {value}" for name, value in self.rows())
        return f"<agent_state>\n{body or '(nothing yet)'}\n</agent_state>"

    def render_changes(self, sent: list[tuple[str, str]], shown: Iterable[str] = ()) -> str:
        """What changed since the state `sent` (rows()), or "" when nothing that matters did.
        The conversation shows the model's own calls: the order of the files, or a file its
        last call named (`shown`) becoming active, modified or created, is not news."""
        before, now = dict(sent), dict(self.rows())
        known = set(shown)

        def same(name: str) -> bool:
            if name in _FILE_ROWS:
                added = set(now.get(name, "").split(", ")) - set(before.get(name, "").split(", "))
                return added <= known | {""}
            return before.get(name) == now.get(name)

        changed = [name for name in dict.fromkeys([*before, *now]) if not same(name)]
        if not changed:
            return ""
        body = "\n".join(f"{name}: {now.get(name, '(none now)')}" for name in changed)
        return f"<agent_state update>\n{body}\n</agent_state>"

    # -- persistence -----------------------------------------------------------------------
    def fields(self) -> dict[str, object]:
        """The state as plain values (a copy), to tell whether it changed since a save."""
        return asdict(self)

    def save(self, path: Path, unless: bytes | None = None) -> bytes:
        """Write the state to `path` (atomically) unless it is `unless`, what the last save
        wrote: most steps change nothing, and an fsync a step adds up. Returns what is saved."""
        from hephaistus.redact import scrub_strings

        # No credential a task or an answer held is kept on disk (nor read back).
        record = provenance.signed(_kind(path), scrub_strings(asdict(self)))
        data = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
        encoded = data.encode("utf-8", "backslashreplace")  # lone surrogates too
        if encoded != unless:  # the temporary file in .heph/tmp, beside the state
            atomic_write(path, encoded, temp_dir=path.parent / "tmp", mode=0o600)
        return encoded

    @classmethod
    def load(cls, path: Path) -> AgentState:
        """The saved state, or a fresh one when there is none, it cannot be read, or heph did
        not make it here (`foreign(path)` tells)."""
        try:  # never through a link, never from a named pipe: see textfile.read_real
            data = json.loads(read_real(path).decode("utf-8"))
        except (OSError, ValueError):
            return cls()
        if not provenance.is_ours(_kind(path), data):
            return cls()
        known = {f.name for f in fields(cls)}
        state = cls(**{k: v for k, v in data.items() if k in known})
        return state if state._well_typed() else cls()

    @staticmethod
    def foreign(path: Path) -> bool:
        """Whether a state file is there that heph did not make on this machine."""
        try:
            data = json.loads(read_real(path).decode("utf-8"))
        except (OSError, ValueError):
            return os.path.lexists(path)
        return not provenance.is_ours(_kind(path), data)

    def _well_typed(self) -> bool:
        lists = (self.recently_created_files, self.active_files, self.open_problems, self.todos)
        texts = (
            self.last_modified_file,
            self.last_task,
            self.last_answer,
            self.plan_session,
            self.plan,
            self.plan_done,
        )
        lists_ok = all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in lists)
        commands_ok = isinstance(self.failing_commands, dict) and all(
            isinstance(v, str) for v in self.failing_commands.values()
        )
        return lists_ok and commands_ok and all(v is None or isinstance(v, str) for v in texts)


def _kind(path: Path) -> str:
    """What a state file's signature is for: this workspace's (`.heph/state.json` in it), so
    one linked or copied in from another project is not this one's."""
    return f"state {path.parent.parent}"


def _clipped(text: str | None, limit: int = ANSWER_CHARS) -> str:
    if text and len(text) > limit:
        return text[:limit] + " [...]"
    return text or ""


def _front(items: list[str], item: str) -> list[str]:
    return [item, *[i for i in items if i != item]][:MAX_LISTED]
