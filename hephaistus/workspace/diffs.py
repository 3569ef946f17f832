"""Diffs as heph shows them: a unified diff of two texts (as git counts lines), or of two file
contents, where a binary or huge side is named rather than shown."""

from __future__ import annotations

import difflib


def unified_diff(
    rel: str, before: str, after: str, *, created: bool, deleted: bool = False, context: int = 3
) -> str:
    """The change from `before` to `after` as a unified diff of `rel` with `context` lines around
    each change; `created` (`deleted`) diffs from (to) /dev/null, as git shows a new (deleted)
    file."""
    lines = difflib.unified_diff(
        line_list(before),
        line_list(after),
        fromfile="/dev/null" if created else f"a/{rel}",
        tofile="/dev/null" if deleted else f"b/{rel}",
        n=context,
    )
    no_newline = "\n\\ No newline at end of file\n"
    return "".join(ln if ln.endswith("\n") else ln + no_newline for ln in lines)


DIFFED_BYTES = 1 << 20  # larger files are named, not diffed


def bytes_diff(rel: str, before: bytes | None, after: bytes | None) -> str:
    """The change of `rel` from `before` to `after` (None: no file) as a unified diff; a binary
    or huge file is named, never poured into the session and the screen."""
    old, new = before or b"", after or b""
    if _shown_as_text(old) and _shown_as_text(new):
        return unified_diff(
            rel, old.decode(), new.decode(), created=before is None, deleted=after is None
        )
    what = "deleted" if after is None else "written"
    return f"Binary or large file {rel} {what} ({len(old)} -> {len(new)} bytes)\n"


def _shown_as_text(data: bytes) -> bool:
    """Whether a side of a change is text small enough to show as a diff."""
    return len(data) <= DIFFED_BYTES and is_text(data)


def is_text(data: bytes) -> bool:
    """Whether `data` is UTF-8 text with no NUL byte."""
    if b"\0" in data:
        return False
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def line_list(text: str) -> list[str]:
    """The lines of `text`, each with its LF: broken at LF only, as git counts them (a form feed
    or U+2028 inside a line is no line break, and no "No newline" marker in a diff)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # what follows the last LF
    return lines if lines[-1] else lines[:-1]
