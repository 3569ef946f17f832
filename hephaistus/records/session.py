"""Sessions and Spans: every run recorded span by span in `.heph/sessions/<id>.jsonl`.

The file is append-only JSON lines, flushed after each record, so a crash loses at most the span
in flight. Records: one `session` header, then `message` and `span` records as they happen, and
one `end` record. `heph replay` and `heph sessions` need nothing but these files.

Every line is signed (see provenance; the header's signature binds the session to its
workspace): a session file that came with the workspace's files, or one whose lines were
changed or added to, is not one of the person's sessions, and is never listed, replayed,
continued or undone.
"""

from __future__ import annotations

import hmac
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from hephaistus.redact import hide_values, scrub_strings, secret_values
from hephaistus.textfile import read_real
from hephaistus.values import Message, Usage
from hephaistus.workspace import provenance

MAC = "mac"  # the field that signs each line
FORMAT_VERSION = 2  # 2: the header says the session's kind; TOOL spans say the approval decision
SPAN_KINDS = ("INPUT", "LLM", "TOOL", "HOOK", "MEMO", "ANSWER")
HEADER_TASK_CHARS = 2000  # the header's task is for listings; the INPUT span holds it whole
# Session kinds, in the header: an agent task, or a `heph docs --fix` run (not the agent protocol).
TASK_SESSION, DOCS_SESSION = "task", "docs"


class Memo:
    """The names of MEMO spans: what happened, as a field a reader can switch on."""

    MALFORMED_REPLY = "malformed_reply"
    COMPACTION = "compaction"
    ERROR = "error"
    DOCS_WRITTEN = "docstrings_written"
    DOCS_LEFT_UNCHANGED = "docs_left_unchanged"


@dataclass
class Span:
    """One recorded step of a run: its kind (INPUT, LLM, TOOL, MEMO, ANSWER), when it started and
    ended, what went in, what came out, and whether it worked."""

    kind: str
    name: str
    start: float
    end: float = 0.0
    args: dict[str, Any] = field(default_factory=dict)
    output: Any = None
    ok: bool = True
    error: str | None = None
    usage: dict[str, Any] | None = None  # prompt_tokens, completion_tokens (estimated: true)

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)

    def to_dict(self) -> dict[str, Any]:
        """The span's fields as they are (JSON values already): `asdict` would deep-copy every
        argument and output, a cost paid on every step."""
        return {name: getattr(self, name) for name in SPAN_FIELDS}


SPAN_FIELDS = tuple(f.name for f in fields(Span))


class Session:
    """One task from input to answer, written to disk as it goes."""

    def __init__(
        self,
        path: Path,
        header: dict[str, Any],
        *,
        secrets: list[str] | None = None,
        tee: Callable[[str], None] | None = None,
    ) -> None:
        self.id = header["id"]
        self.path = path
        self.header = header
        self.spans: list[Span] = []
        self.usage = Usage()
        self.steps = 0
        self._secrets = secrets or []  # values never written: the API key, tokens, passwords
        self._lock = threading.RLock()  # `heph docs --fix` records model calls from threads
        self._tee = tee  # also given each record as it is written (--output jsonl)
        self._last_mac = ""  # the signature of the line written last
        path.parent.mkdir(parents=True, exist_ok=True)
        # Exclusive: never two sessions in one file; readable by the person alone: it holds
        # their conversations. A lone surrogate (an undecodable file name) is written escaped.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        # Open as long as the session runs: closed at its end.
        self._file = open(fd, "w", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
        self._write({"type": "session", "version": FORMAT_VERSION, **header})

    def message(self, message: Message) -> None:
        """Record a message of the conversation."""
        self._write({"type": "message", **message})

    @contextmanager
    def span(self, kind: str, name: str, args: dict[str, Any] | None = None) -> Iterator[Span]:
        """Time a span; it is written when the block ends, failed if the block raised."""
        assert kind in SPAN_KINDS, kind
        span = Span(kind, name, time.time(), args=dict(args or {}))
        try:
            yield span
        except BaseException as exc:
            span.ok = False
            cancelled = "cancelled (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else ""
            span.error = span.error or cancelled or str(exc) or type(exc).__name__
            raise
        finally:
            span.end = time.time()
            with self._lock:
                self.spans.append(span)
                if span.usage:
                    self.usage = self.usage + Usage(**span.usage)
                if kind == "LLM":
                    self.steps += 1
                self._write({"type": "span", **span.to_dict()})

    def record(self, kind: str, name: str, output: Any, **args: Any) -> None:
        """A span that takes no time: the input, a memo, the answer."""
        with self.span(kind, name, args) as span:
            span.output = output

    def end(self, outcome: str, exit_code: int, message: str) -> None:
        """Write the end record (the outcome, exit code, steps and tokens) and close the file; a
        second call does nothing."""
        with self._lock:
            self._end(outcome, exit_code, message)

    def _end(self, outcome: str, exit_code: int, message: str) -> None:
        if self._file.closed:
            return
        self._write(
            {
                "type": "end",
                "outcome": outcome,
                "exit_code": exit_code,
                "message": message,
                "steps": self.steps,
                "usage": self.usage.to_dict(),
                "ended": _now(),
            }
        )
        self._file.close()

    def _write(self, record: dict[str, Any]) -> None:
        # No credential is kept: not the process's secrets, nor a key typed into a task.
        record = scrub_strings(record)
        line = hide_values(json.dumps(record, ensure_ascii=False), self._secrets)
        # Signed as it will be read back: a lone surrogate as its JSON escape.
        line = line.encode("utf-8", "backslashreplace").decode("utf-8")
        with self._lock:  # each line's signature takes in the one before: a chain
            self._last_mac = provenance.line_mac(self.id, self._last_mac + line)
            line = f'{line[:-1]}, "{MAC}": "{self._last_mac}"}}'
        with self._lock:
            if self._file.closed:  # a request that ended after the run stopped
                return
            self._file.write(line + "\n")
            self._file.flush()
            if self._tee:
                self._tee(line)


class SessionStore:
    """The sessions folder of a workspace."""

    def __init__(self, folder: Path, tee: Callable[[str], None] | None = None) -> None:
        self.folder = folder
        self.tee = tee  # given every record of the sessions it creates (--output jsonl)

    @property
    def workspace(self) -> str:
        """The workspace the sessions belong to (the folder holds `.heph/sessions`)."""
        return str(self.folder.parent.parent)

    def create(self, **header: Any) -> Session:
        """A new session whose id no other session has, in this or any other process. The
        header keeps a clipped copy of a long task (the INPUT span holds it whole)."""
        task = header.get("task")
        if isinstance(task, str) and len(task) > HEADER_TASK_CHARS:
            more = len(task) - HEADER_TASK_CHARS
            header = {**header, "task": f"{task[:HEADER_TASK_CHARS]}… ({more:,} more characters)"}
        while True:
            session_id = new_session_id()
            signed = provenance.signed("session", {"id": session_id, "workspace": self.workspace})
            header = {**header, "id": session_id, "started": _now(), **signed}
            try:
                return Session(
                    self.folder / f"{header['id']}.jsonl",
                    header,
                    secrets=secret_values(),
                    tee=self.tee,
                )
            except FileExistsError:  # another process took this id in the same microsecond
                continue

    def ids(self) -> list[str]:
        """The sessions heph recorded here, oldest first (files that came with the
        workspace are left out: see `foreign`)."""
        return [name for name in self.names() if self.is_ours(name)]

    def recent_ids(self, limit: int) -> list[str]:
        """The newest `limit` of `ids()`, oldest first, without reading every header."""
        found: list[str] = []
        for name in reversed(self.names()):
            if len(found) == limit:
                break
            if self.is_ours(name):
                found.append(name)
        return found[::-1]

    def foreign(self) -> list[str]:
        """Session files heph did not make on this machine."""
        return [name for name in self.names() if not self.is_ours(name)]

    def is_ours(self, session_id: str) -> bool:
        """Whether heph recorded this session here: its header signed for this id and this
        workspace, and every line signed as written (the last may be cut short by a crash)."""
        try:
            text = read_real(self.folder / f"{session_id}.jsonl")
        except OSError:
            return False
        lines = text.decode("utf-8", "surrogateescape").split("\n")
        complete = lines[:-1]  # what follows the last line feed is a line in flight
        previous = ""
        for line in complete:  # every line, in order, none left out
            previous = _signed_line(session_id, line, previous)
            if not previous:
                return False
        if not complete:
            return False
        try:
            header = json.loads(complete[0])
        except ValueError:
            return False
        body = {"id": session_id, "workspace": self.workspace}
        return (
            isinstance(header, dict)
            and header.get("type") == "session"
            and header.get("id") == session_id
            and provenance.is_ours("session", {**body, "signature": header.get("signature")})
        )

    def names(self) -> list[str]:
        """The names of the session files here, oldest first, whoever made them."""
        if not self.folder.is_dir() or self.folder.is_symlink():
            return []
        return sorted(
            p.stem for p in self.folder.glob("*.jsonl") if p.is_file() and not p.is_symlink()
        )

    def path_of(self, ref: str) -> Path:
        """The file of session `ref`: an id, a unique id prefix, or `last`."""
        if ref == "last":
            last = self.recent_ids(1)
            if not last:
                raise LookupError(f"no sessions recorded yet in {self.folder}")
            return self.folder / f"{last[0]}.jsonl"
        ids = self.ids()
        if not ids:
            raise LookupError(f"no sessions recorded yet in {self.folder}")
        matches = [i for i in ids if i == ref] or [i for i in ids if i.startswith(ref)]
        if len(matches) != 1:
            why = "matches several sessions" if matches else "matches no session"
            raise LookupError(f"'{ref}' {why}; `heph sessions` lists them")
        return self.folder / f"{matches[0]}.jsonl"


@dataclass
class RecordedSession:
    """A session file read back: header, messages, spans and (if it ended) the end record."""

    header: dict[str, Any]
    messages: list[Message]
    spans: list[Span]
    end: dict[str, Any] | None

    @property
    def outcome(self) -> str:
        return self.end["outcome"] if self.end else "unfinished"

    def to_dict(self) -> dict[str, Any]:
        """The session file's records, as `heph replay --json` prints them."""
        return {
            "session": self.header,
            "messages": self.messages,
            "spans": [span.to_dict() for span in self.spans],
            "end": self.end,
        }

    @property
    def kind(self) -> str:
        """task or docs (files from before format 2 say it only in their task text)."""
        kind = self.header.get("kind")
        if kind:
            return str(kind)
        return (
            DOCS_SESSION
            if str(self.header.get("task", "")).startswith("heph docs --fix")
            else TASK_SESSION
        )


SIGNED_LINE = re.compile(r'(.*), "mac": "([0-9a-f]{64})"\}\Z', re.S)


def _signed_line(session_id: str, line: str, previous: str) -> str:
    """The line's signature when it is the one heph wrote after the line signed `previous`,
    else ""."""
    found = SIGNED_LINE.match(line)
    if not found:
        return ""
    unsigned = found.group(1) + "}"
    expected = provenance.line_mac(session_id, previous + unsigned)
    return expected if hmac.compare_digest(found.group(2), expected) else ""


def load_session(path: Path) -> RecordedSession:
    """A session file read back, lines cut short by a crash skipped. It does not check signatures:
    callers find the file through SessionStore, which does."""
    header: dict[str, Any] = {}
    messages: list[Message] = []
    spans: list[Span] = []
    end = None
    text = read_real(path).decode("utf-8", "replace")
    for line in text.split("\n")[:-1]:  # what follows the last line feed is a line in flight
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        kind = record.pop("type", None)
        record.pop(MAC, None)
        if kind == "session":
            header = record
        elif kind == "message":
            messages.append({"role": record["role"], "content": record["content"]})
        elif kind == "span":
            spans.append(Span(**record))
        elif kind == "end":
            end = record
    return RecordedSession(header, messages, spans, end)


_last_id_time = 0


def new_session_id() -> str:
    """Sortable by creation time (to the microsecond, strictly increasing in this process) with
    random bits, so ids made at once by several processes differ too."""
    global _last_id_time
    micros = max(time.time_ns() // 1000, _last_id_time + 1)
    _last_id_time = micros
    stamp = datetime.fromtimestamp(micros // 1_000_000, timezone.utc)
    return f"{stamp:%Y%m%d-%H%M%S}.{micros % 1_000_000:06d}-{secrets.token_hex(3)}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class SessionRecorder(Protocol):
    """Where the engine records a run as it goes (see session.Session)."""

    id: str

    def message(self, message: Message) -> None:
        """A message of the conversation, as sent to or received from the model."""
        ...

    def span(
        self, kind: str, name: str, args: dict[str, Any] | None = None
    ) -> AbstractContextManager[Span]:
        """A timed step (a model request, a tool call), recorded when the block ends."""
        ...

    def record(self, kind: str, name: str, output: Any, **args: Any) -> None:
        """A step that took no time worth measuring, with its output."""
        ...
