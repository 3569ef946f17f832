"""Taking back heph's own change from a file someone else changed too.

When another run (or program) wrote a file between two of heph's writes, restoring the file as
it was before heph would also take away their lines. Instead each of heph's writes is reversed
on its own, newest first: every hunk of it (with its context) must be found exactly once in the
file as it is now, and is put back as it was. When one is not, the change cannot be told apart
from the other's, and nothing is reversed.
"""

from __future__ import annotations

import difflib

CONTEXT = 3  # lines around a hunk that must match too, as patch wants them


def reverse(content: bytes, before: bytes, after: bytes) -> bytes | None:
    """`content` with the change `before` → `after` taken back, or None when a hunk of it is
    not found exactly once in `content`."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    lines = content.splitlines(keepends=True)
    groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(CONTEXT))
    for group in reversed(groups):  # from the end: what is put back cannot be found again
        written = b[group[0][3] : group[-1][4]]
        replaced = a[group[0][1] : group[-1][2]]
        if not written:
            return None  # a hunk that only removed lines, with no context to find it by
        places = [
            start
            for start in range(len(lines) - len(written) + 1)
            if lines[start : start + len(written)] == written
        ]
        if len(places) != 1:
            return None
        lines[places[0] : places[0] + len(written)] = replaced
    return b"".join(lines)


def taken_away(changes: list[tuple[bytes, bytes]]) -> int:
    """How many lines the others' changes (before, after) added or changed: what restoring
    the file as it was before heph would take away."""
    count = 0
    for before, after in changes:
        matcher = difflib.SequenceMatcher(
            None, before.splitlines(), after.splitlines(), autojunk=False
        )
        count += sum(j2 - j1 for tag, _, _, j1, j2 in matcher.get_opcodes() if tag != "equal")
    return count
