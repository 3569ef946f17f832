"""File tools: list, read, search, write and append workspace files.

Every path passes Workspace.resolve (containment, protected folders); secrets are refused unless
the config allows them; binary files are refused; writes go through approval and are atomic.
"""

from __future__ import annotations

import codecs
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from hephaistus.textfile import (
    BINARY_SNIFF_BYTES,
    MAX_WHOLE_FILE_BYTES,
    UTF16_BOMS,
    NotTextError,
    TextFile,
    decode,
    looks_binary,
    numbered,
    open_file,
    read_real,
    read_text,
    split_lines,
)
from hephaistus.tools.context import ToolContext, as_buffered
from hephaistus.tools.writing import Seen, open_for_write, write_change
from hephaistus.values import Proposal, ToolResult
from hephaistus.wording import counted, listed
from hephaistus.workspace import CONTROL, PathError

LIST_CAP = 400
SEARCH_CAP = 200
SEARCH_LINE_CHARS = 300


def list_files(ctx: ToolContext, path: str = ".") -> ToolResult:
    """Files and their sizes under a folder.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: folder to list, relative to the workspace root (default: the whole workspace)
    """
    real = _existing(ctx, path)
    if isinstance(real, ToolResult):
        return real
    if real.is_file():
        return ToolResult(True, f"{path} ({real.stat().st_size} bytes) is a file, not a folder")
    files = ctx.workspace.files(path)
    if not files:
        return ToolResult(True, f"no files under '{path}'")
    lines = [f"{_spelled(rel)} ({_size(ctx.workspace.root / rel)})" for rel in files[:LIST_CAP]]
    if len(files) > LIST_CAP:
        lines.append(f"[... {len(files) - LIST_CAP} more files not listed; list a subfolder]")
    return ToolResult(True, "\n".join(lines))


def read_file(
    ctx: ToolContext, path: str, start_line: int | None = None, end_line: int | None = None
) -> ToolResult:
    """A text file, lines numbered.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: file to read, relative to the workspace root
        start_line: first line to show, counting from 1 (default: 1)
        end_line: last line to show, inclusive (default: as far as fits)
    """
    found = _open_text(ctx, path)
    if isinstance(found, ToolResult):
        return found
    rel, real, text = found
    lines = split_lines(text.text) if text else []
    total = len(lines) if text else None
    first = max(1, start_line or 1)
    last = end_line or sys.maxsize
    budget = ctx.observation_limit - 200
    shown: list[tuple[int, str]] = []
    size = 0
    for number, line in _numbered(lines, real, first, budget):
        if number > last:
            break
        size += len(line.encode("utf-8")) + 8
        if size > budget and shown:
            break
        shown.append((number, line))
    if not shown and total != 0:
        return ToolResult(
            False, f"{rel} has only {total} lines; start_line {first} is past it", target=rel
        )
    if text:  # a whole-file write may replace what the model has read
        Seen(ctx).note(rel, text.digest)
    if not shown:
        return ToolResult(True, f"{rel} is empty", read=(rel,), target=rel)
    body = numbered(shown[0][0], [line for _, line in shown])
    end_shown = shown[-1][0]
    of = f"{total}" if total is not None else f"? (a {real.stat().st_size / 1e6:.1f} MB file)"
    if first > 1 or total is None or end_shown < total:
        more = (
            ""
            if total is not None and end_shown >= total
            else f"; read on with start_line={end_shown + 1}"
        )
        body += f"\n[showing lines {first}-{end_shown} of {of}{more}]"
    return ToolResult(True, body, read=(rel,), target=rel)


def search(ctx: ToolContext, pattern: str, path: str = ".") -> ToolResult:
    """Lines matching a Python regex.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        pattern: regular expression to look for
        path: folder or file to search in, relative to the workspace root (default: everywhere)
    """
    import regex  # like re, but a match can be given a time limit

    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        return ToolResult(False, f"invalid regular expression {pattern!r}: {exc}")
    real = _existing(ctx, path)
    if isinstance(real, ToolResult):
        return real
    found = _Search(compiled, time.monotonic() + ctx.search_seconds)
    for name in [path] if real.is_file() else ctx.workspace.files(path):
        try:  # every file found, named or walked, passes the same check
            rel, _ = ctx.workspace.check(name, allow_secrets=ctx.allow_secrets)
        except PathError:
            found.secrets += 1
            continue
        if not found.file(rel, ctx.workspace.root / rel):
            break
    if real.is_file() and found.skipped:  # the one file named: never "no matches"
        why = UNSEARCHED[next(iter(found.skipped))]
        return ToolResult(True, f"{path} is {why}, so search cannot look into it")
    return ToolResult(True, found.answer(pattern, path, ctx.search_seconds))


SEARCH_PIECE = 1 << 20  # bytes of a line searched at once: a longer line is searched in pieces
UNSEARCHED = {  # why a file was not searched: what it is
    "binary": "a binary file",
    "UTF-16": "UTF-16 text (heph reads only UTF-8)",
    "unreadable": "a file heph cannot read",
}


class _Search:
    """One search's matches, as `path:line: text`, and what it could not search."""

    def __init__(self, compiled: Any, deadline: float) -> None:
        self.compiled, self.deadline = compiled, deadline
        self.hits: list[str] = []
        self.skipped: dict[str, list[str]] = {}  # why → files
        self.not_utf8: list[str] = []  # whose matched lines show undecodable bytes as U+FFFD
        self.secrets = 0
        self.stopped = ""  # where the time ran out

    def file(self, rel: str, real: Path) -> bool:
        """Search the file `rel`, a line at a time (bounded memory, whatever its size); False
        when the search must stop (the cap or the time is reached)."""
        try:
            with open_file(real) as handle:
                head = handle.read(BINARY_SNIFF_BYTES)
                if head.startswith(UTF16_BOMS) or looks_binary(head):
                    why = "UTF-16" if head.startswith(UTF16_BOMS) else "binary"
                    self.skipped.setdefault(why, []).append(rel)
                    return True
                handle.seek(0)
                return self._lines(rel, handle)
        except OSError:
            self.skipped.setdefault("unreadable", []).append(rel)
            return True

    def _lines(self, rel: str, handle: BinaryIO) -> bool:
        last = 0
        for number, line in _text_lines(handle):
            try:  # a pattern that backtracks without end must not hang the run
                left = self.deadline - time.monotonic()
                match = self.compiled.search(line, timeout=left) if left > 0 else None
            except TimeoutError:
                left = 0
            if left <= 0:
                self.stopped = f"{rel} at line {number}"
                return False
            if match and number != last:
                self.hits.append(f"{rel}:{number}: {_around(line, match)}")
                last = number
                if "\ufffd" in line and rel not in self.not_utf8:
                    self.not_utf8.append(rel)
                if len(self.hits) > SEARCH_CAP:
                    return False
        return True

    def answer(self, pattern: str, path: str, seconds: float) -> str:
        """The matches, capped, and what was not searched."""
        hits = self.hits[:SEARCH_CAP]
        if len(self.hits) > SEARCH_CAP:
            hits.append(f"[... more than {SEARCH_CAP} matches; narrow the search]")
        if self.stopped:
            hits.append(
                f"[search stopped after {seconds:g} s, in {self.stopped}: the pattern is too "
                "slow (nested repetition backtracks) or the files too large; simplify it or "
                "search a smaller path]"
            )
        if self.not_utf8 and hits:
            hits.append(
                f"[{listed(self.not_utf8, 3)} is not UTF-8: its undecodable bytes show as \ufffd]"
            )
        if hits:
            return "\n".join(hits)
        note = f" ({self.secrets} secret files not searched)" if self.secrets else ""
        skipped = [
            f"{counted(len(files), why + ' file')} ({listed(files, 3)})"
            for why, files in self.skipped.items()
        ]
        if skipped:
            note += f"\n[not searched: {', '.join(skipped)}]"
        return f"no matches for {pattern!r} in '{path}'{note}"


def _text_lines(handle: BinaryIO) -> Iterator[tuple[int, str]]:
    """(number, text) of each line of an open text file, read a piece at a time and decoded as
    read_file decodes a large file (undecodable bytes as U+FFFD); a line longer than a piece
    comes in pieces, each under its line's number."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
    number, rest = 1, ""
    while piece := handle.read(SEARCH_PIECE):
        lines = (rest + decoder.decode(piece)).split("\n")
        rest = lines.pop()
        for line in lines:
            yield number, line.removesuffix("\r")
            number += 1
        if len(rest) > SEARCH_PIECE:
            yield number, rest
            rest = ""
    rest += decoder.decode(b"", final=True)
    if rest:
        yield number, rest.removesuffix("\r")


def _around(line: str, match: Any) -> str:
    """The line of a match as shown, cut to SEARCH_LINE_CHARS around the match."""
    text = line.strip()
    if len(text) <= SEARCH_LINE_CHARS:
        return text
    start = max(0, match.start() - SEARCH_LINE_CHARS // 3)
    shown = line[start : start + SEARCH_LINE_CHARS]
    return (
        ("..." if start else "") + shown + ("..." if start + SEARCH_LINE_CHARS < len(line) else "")
    )


def write_file(ctx: ToolContext, path: str, content: str) -> ToolResult | Proposal:
    """Create a file or replace all of it.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: file to write, relative to the workspace root
        content: the complete new content of the file
    """
    found = open_for_write(ctx, path)
    if isinstance(found, ToolResult):
        return found
    rel, real, old = found
    return write_change(ctx, rel, real, old, content, whole="write_file")


def append_file(ctx: ToolContext, path: str, content: str) -> ToolResult | Proposal:
    """Add to the end of a file.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: file to append to, relative to the workspace root
        content: text to add at the end (a line break is added first if the file lacks one)
    """
    found = open_for_write(ctx, path)
    if isinstance(found, ToolResult):
        return found
    rel, real, old = found

    def appended(current: TextFile | None) -> str:
        base = current.text if current else ""
        return base + ("\n" if base and not base.endswith("\n") else "") + content

    # Appending again to what another program wrote meanwhile loses nothing of either.
    return write_change(ctx, rel, real, old, appended(old), rebase=appended)


# (tool function, its effect), in the order the system prompt lists them.
TOOLS = (
    (list_files, "read"),
    (read_file, "read"),
    (search, "read"),
    (write_file, "write"),
    (append_file, "write"),
)


def _existing(ctx: ToolContext, path: str) -> Path | ToolResult:
    """The resolved path, or the reason it cannot be used."""
    try:
        real = ctx.workspace.resolve(path)
    except PathError as exc:
        return ToolResult(False, str(exc))
    return real if real.exists() else ToolResult(False, f"'{path}' does not exist")


def _spelled(rel: str) -> str:
    """A name as the model can read it: one with a control character (a line break, an
    escape) spelled out, so it stays one entry."""
    return json.dumps(rel, ensure_ascii=False)[1:-1] if CONTROL.search(rel) else rel


def _size(path: Path) -> str:
    size = path.stat().st_size
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KB"


def _open_text(ctx: ToolContext, path: str) -> tuple[str, Path, TextFile | None] | ToolResult:
    """The file as read (None for a file too large to load: it is streamed)."""
    try:
        rel, real = ctx.workspace.check(path, allow_secrets=ctx.allow_secrets)
    except PathError as exc:
        return ToolResult(False, str(exc))
    if not real.exists():
        return ToolResult(False, f"{rel} does not exist")
    if real.is_dir():
        return ToolResult(False, f"{rel} is a folder; use list_files")
    try:
        if real.stat().st_size > MAX_WHOLE_FILE_BYTES:
            decode(read_real(real, BINARY_SNIFF_BYTES), rel)  # refuses binary files early
            return rel, real, None
        return rel, real, as_buffered(ctx, real, read_text(real, rel))
    except NotTextError as exc:
        return ToolResult(False, str(exc))
    except OSError as exc:
        return ToolResult(False, f"cannot read {rel}: {exc.strerror}")


def _numbered(lines: list[str], real: Path, first: int, cap: int) -> Iterator[tuple[int, str]]:
    """(number, line) from line `first` on, each line cut to about `cap` characters (saying
    so); a file too large to load is read in pieces of bounded size, never a whole line."""
    if lines:
        for number, line in enumerate(lines[first - 1 :], first):
            yield number, _cut(number, line, cap, len(line) - cap, "characters")
        return
    with open_file(real) as handle:
        for number, (raw, more) in enumerate(_bounded_lines(handle, cap), 1):
            if number >= first:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                yield number, _cut(number, line, cap, more, "bytes")


def _cut(number: int, line: str, cap: int, more: int, unit: str) -> str:
    if more <= 0:
        return line
    return f"{line[:cap]} [line {number} is cut here: {more:,} more {unit}]"


def _bounded_lines(handle: BinaryIO, cap: int) -> Iterator[tuple[bytes, int]]:
    """Each line's first `cap` bytes and how many bytes of it were skipped."""
    while True:
        raw = handle.readline(cap)
        if not raw:
            return
        skipped = 0
        while not raw.endswith(b"\n"):
            rest = handle.readline(1 << 16)
            if not rest:
                break
            skipped += len(rest.rstrip(b"\r\n"))
            if rest.endswith(b"\n"):
                break
        yield raw, skipped
