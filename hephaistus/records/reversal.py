"""Taking back heph's own change from a file someone else changed too.

When another run (or program) wrote a file between two of heph's writes, restoring the file as
it was before heph would take away their lines too. The checkpoints know every state: what
heph found before each write, what it left, and what the next write found (the others' change
in between). So heph's writes are taken back newest first, each by a three-way merge: the
file as heph left it is the base, the file before heph's write is one side, the file as it is
now the other. Where heph's change and the others' touch the same lines, or both insert at
one place (whose lines come first?), or heph's lines (with their neighbours) stand in the file
more than once now (the others copied them: which copy is heph's?), the two cannot be told
apart, and nothing is taken back.
"""

from __future__ import annotations

import difflib

Region = tuple[int, int, list[bytes]]  # base lines [start, end) become these lines


def merge(base: bytes, mine: bytes, theirs: bytes) -> bytes | None:
    """`base` with both sides' changes made: `mine` (the file before heph's write) and
    `theirs` (the file now), or None when they touch the same place."""
    lines = base.splitlines(keepends=True)
    ours, others = _regions(lines, mine), _regions(lines, theirs)
    now = theirs.splitlines(keepends=True)
    for region in ours:
        if any(_clash(region, other) for other in others):
            return None
        if not _once(lines, region, now):
            return None
    merged: list[bytes] = []
    at = 0
    for start, end, replacement in sorted(ours + others, key=lambda region: region[0]):
        merged += lines[at:start] + replacement
        at = end
    return b"".join(merged + lines[at:])


def _clash(one: Region, other: Region) -> bool:
    """Whether two changes of the base cannot both be made: they share a line, both insert
    at the same place, or one inserts inside the other's lines. Changes that only meet at a
    boundary (an append after heph's appended line) are apart."""
    (start, end, _), (other_start, other_end, _) = one, other
    if start < other_end and other_start < end:
        return True
    if start == end and other_start == other_end:
        return start == other_start
    if start == end:
        return other_start < start < other_end
    return other_start == other_end and start < other_start < end


def _once(base: list[bytes], region: Region, now: list[bytes]) -> bool:
    """Whether heph's lines of `region`, and they with a neighbour on each side, stand in the
    file exactly once."""
    start, end, _ = region
    written = base[start:end]
    around = base[max(0, start - 1) : end + 1]
    return all(_count(block, now) == 1 for block in (written, around) if block)


def _count(block: list[bytes], lines: list[bytes]) -> int:
    size = len(block)
    return sum(1 for i in range(len(lines) - size + 1) if lines[i : i + size] == block)


def _regions(base: list[bytes], changed: bytes) -> list[Region]:
    other = changed.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [
        (i1, i2, other[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


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
