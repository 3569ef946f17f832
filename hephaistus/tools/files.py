"""File tools: list, read, search, write and append workspace files.

Every path passes Workspace.resolve (containment, protected folders); secrets are refused unless
the config allows them; binary files are refused; writes go through approval and are atomic.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from hephaistus.textfile import (
    BINARY_SNIFF_BYTES,
    MAX_WHOLE_FILE_BYTES,
    NotTextError,
    TextFile,
    decode,
    numbered,
    open_file,
    read_real,
    read_text,
    split_lines,
)
from hephaistus.tools.context import ToolContext
from hephaistus.tools.writing import Seen, open_for_write, write_change
from hephaistus.values import Proposal, ToolResult
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
    candidates = [path] if real.is_file() else ctx.workspace.files(path)
    hits: list[str] = []
    skipped_secrets = 0
    deadline = time.monotonic() + ctx.search_seconds
    stopped = False
    for name in candidates:
        try:  # every file found, named or walked, passes the same check
            rel, _ = ctx.workspace.check(name, allow_secrets=ctx.allow_secrets)
        except PathError:
            skipped_secrets += 1
            continue
        file = ctx.workspace.root / rel
        if file.stat().st_size > MAX_WHOLE_FILE_BYTES:
            continue
        try:
            text = read_text(file, rel)
        except (NotTextError, OSError):
            continue
        for number, line in enumerate(split_lines(text.text), 1):
            try:  # a pattern that backtracks without end must not hang the run
                found = compiled.search(line, timeout=max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                stopped = True
                break
            if found:
                hits.append(f"{rel}:{number}: {line.strip()[:SEARCH_LINE_CHARS]}")
                if len(hits) > SEARCH_CAP:
                    break
        if len(hits) > SEARCH_CAP or stopped:
            break
    if stopped:
        hits.append(
            f"[search stopped after {ctx.search_seconds:g} s: the pattern is too slow "
            "(nested repetition backtracks); simplify it or search a smaller path]"
        )
    if not hits:
        note = f" ({skipped_secrets} secret files not searched)" if skipped_secrets else ""
        return ToolResult(True, f"no matches for {pattern!r} in '{path}'{note}")
    if len(hits) > SEARCH_CAP:
        hits = hits[:SEARCH_CAP] + [f"[... more than {SEARCH_CAP} matches; narrow the search]"]
    return ToolResult(True, "\n".join(hits))


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
        return rel, real, read_text(real, rel)
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
