"""`--output jsonl`: a run as a stream of JSON objects on standard output, one per line, as it
happens, for CI jobs and editors. The stream carries every record the session file gets (the
session header, the conversation's messages, each span: INPUT, LLM with its usage, TOOL with its
arguments, output and diff, MEMO, ANSWER, and the end with the outcome), plus the notices and
failures a person would see on the terminal. The README documents the schema.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from hephaistus.escape import json_safe, takes_utf8
from hephaistus.eventsink import NullSink
from hephaistus.redact import hide_values, secret_values


class EventStream(NullSink):
    """The sink of `--output jsonl`: the session's records, and the notices and failures, as
    JSON lines; what else a run shows is in the records."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def record(self, line: str) -> None:
        """A session record, as the session file got it (secrets already hidden)."""
        self.stream.write(json_safe(line, ascii_only=not takes_utf8(self.stream)) + "\n")
        self.stream.flush()

    def notice(self, text: str) -> None:
        """The notice as a `{"type": "notice"}` line."""
        self._emit({"type": "notice", "text": text})

    def failure(self, message: str) -> None:
        """The failure as a `{"type": "failure"}` line."""
        self._emit({"type": "failure", "message": message})

    def _emit(self, event: dict[str, Any]) -> None:
        line = json.dumps(event, ensure_ascii=False)
        self.record(hide_values(line, secret_values()))
