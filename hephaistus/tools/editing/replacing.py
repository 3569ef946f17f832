"""Replacing a located snippet with the model's new lines, writing nothing the model did not send.

The rule, checked in code before anything is written: each line put in the matched place is
either a line of the file the edit keeps, byte for byte, or a line the model sent with only its
indentation changed (to the file's, where the model's copy was shifted or used another unit).
Lines are never re-spaced. Where that cannot be done with confidence (an indentation that cannot
be told, new text built from a line the model copied with other spacing), the edit is refused.

A line of `...` (or `# ...`, `// ...`) in the old text stands for lines the edit leaves alone,
when the new text has one at the same place and every piece is found once, in order.
"""

from __future__ import annotations

import difflib
import re

from hephaistus.tools.editing.indenting import Unsafe, indentation_consistent, indentation_mapper
from hephaistus.tools.editing.matching import Finder, Lines, Match, NoMatch, locate

ELISION = re.compile(r"^\s*(?:#|//|--|;|/\*|<!--)?\s*(?:\.\.\.|…)\s*(?:\*/|-->)?\s*$")
SIMILAR = 0.6  # a new line this close to an old line the model mis-spaced is built from it


Alignment = dict[int, int]  # index in the new lines -> index in the old lines it keeps


def replace(
    file: Lines | Finder, old: Lines, new: Lines, *, alignment: Alignment | None = None
) -> Lines:
    """`file` with `old` (found tolerantly, uniquely) replaced by `new`. `alignment` says which
    new lines are old ones kept (a diff's context lines); by default it is worked out. A Finder
    may stand for the file, to share its keys between several tries."""
    finder = file if isinstance(file, Finder) else Finder(file)
    alignment = align(old, new) if alignment is None else alignment
    try:
        match = locate(
            finder, old, context=frozenset(alignment.values()), consistent=indentation_consistent
        )
    except NoMatch as miss:
        if miss.places or not any(ELISION.match(line) for line in old):
            raise
        return _replace_elided(finder, old, new)
    return (
        finder.file[: match.start]
        + rewrite(finder.file, match, new, alignment)
        + finder.file[match.end :]
    )


def rewrite(file: Lines, match: Match, new: Lines, alignment: Alignment) -> Lines:
    """The lines to put where `match` was found, for the snippet's new lines `new`."""
    window = file[match.start : match.end]
    old = match.snippet
    first, last = match.offset, match.offset + len(old)
    # New lines kept from blank old lines the match left out are framing, not content.
    framing = {j for j, i in alignment.items() if not first <= i < last}
    new_lines = [line for j, line in enumerate(new) if j not in framing]
    renumbered = {j: n for n, j in enumerate(j for j in range(len(new)) if j not in framing)}
    kept = {renumbered[j]: i - first for j, i in alignment.items() if j not in framing}
    if match.tier.name == "exact" and match.differs is None:
        return new_lines
    if match.tier.name == "spacing":
        _refuse_respelled_sources(old, window, new_lines, kept)
    changed = [line for index, line in enumerate(new_lines) if index not in kept]
    reindent = (
        indentation_mapper(old, window, file, changed, skip=match.differs)
        if not match.tier.same_indent
        else (lambda line: line)
    )
    result = [
        window[kept[index]] if index in kept else reindent(line)  # kept: file's bytes
        for index, line in enumerate(new_lines)
    ]
    check_only_indentation_changed(new_lines, result, {i: window[j] for i, j in kept.items()})
    return result


def check_only_indentation_changed(new: Lines, result: Lines, kept: dict[int, str]) -> None:
    """The invariant: every line written is a file line the edit keeps, or a line the model
    sent with only its indentation changed."""
    if len(result) != len(new):
        raise Unsafe("the rewritten text has a different number of lines than was sent")
    for index, (sent, written) in enumerate(zip(new, result, strict=True)):
        if index in kept:
            if written != kept[index]:
                raise Unsafe(f"line {index + 1} of the new text would not keep the file's line")
        elif written.lstrip(" \t") != sent.lstrip(" \t"):
            raise Unsafe(f"line {index + 1} of the new text would be written otherwise than sent")


# -- which lines the edit keeps -------------------------------------------------------------


def align(old: Lines, new: Lines) -> Alignment:
    """Which new lines keep old ones: the common first and last lines, then a diff of the
    middle (so a kept line is paired with its own place, not a look-alike further on)."""
    a, b = [line.rstrip() for line in old], [line.rstrip() for line in new]
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    pairs = {j: j for j in range(head)}
    pairs.update({len(b) - 1 - k: len(a) - 1 - k for k in range(tail)})
    middle = difflib.SequenceMatcher(
        None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False
    )
    for block in middle.get_matching_blocks():
        pairs.update({head + block.b + k: head + block.a + k for k in range(block.size)})
    return pairs


def _refuse_respelled_sources(old: Lines, window: Lines, new: Lines, kept: dict[int, int]) -> None:
    """In a match that ignored spacing, a new line built from an old line the model copied
    with other spacing would carry that spacing into the file: refuse instead of guessing."""
    respelled = [
        i
        for i, (mine, theirs) in enumerate(zip(old, window, strict=True))
        if mine.strip() != theirs.strip()
    ]
    kept_old = set(kept.values())
    for i in respelled:
        if i in kept_old:
            continue
        for j, line in enumerate(new):
            if j in kept:
                continue
            ratio = difflib.SequenceMatcher(None, old[i].strip(), line.strip()).ratio()
            if ratio >= SIMILAR:
                raise Unsafe(
                    f"the old text's line {i + 1} is spaced otherwise than the file's "
                    f"({window[i].strip()!r}), and the new text changes it; copy the line "
                    "exactly as the file has it, then change it"
                )


# -- elided lines -----------------------------------------------------------------------------


def _replace_elided(finder: Finder, old: Lines, new: Lines) -> Lines:
    """Each piece of old between `...` lines replaced by the same piece of new, each found
    once and in order; the lines the `...` stand for stay as they are."""
    old_pieces, new_pieces = _pieces(old), _pieces(new)
    if len(old_pieces) != len(new_pieces):
        raise NoMatch(
            "it has '...' lines that the new text does not have at the same places; "
            "put '...' in both, or write the lines out"
        )
    file = finder.file
    matches = []
    for number, (piece, replacement) in enumerate(zip(old_pieces, new_pieces, strict=True), 1):
        if not any(line.strip() for line in piece):
            if any(line.strip() for line in replacement):
                raise NoMatch(
                    f"piece {number} of the old text is empty around a '...', so there "
                    "is no telling where its new lines go"
                )
            continue
        alignment = align(piece, replacement)
        try:
            match = locate(
                finder,
                piece,
                context=frozenset(alignment.values()),
                consistent=indentation_consistent,
            )
        except NoMatch as miss:
            raise NoMatch(
                f"its piece {number} (between '...' lines) {miss.reason}", miss.places
            ) from None
        matches.append((match, replacement, alignment))
    for (first, _, _), (second, _, _) in zip(matches, matches[1:], strict=False):
        if second.start < first.end:
            raise NoMatch("its pieces between '...' lines are not in the file in that order")
    result = list(file)
    for match, replacement, alignment in reversed(matches):
        result[match.start : match.end] = rewrite(file, match, replacement, alignment)
    return result


def _pieces(lines: Lines) -> list[Lines]:
    pieces: list[Lines] = [[]]
    for line in lines:
        if ELISION.match(line):
            pieces.append([])
        else:
            pieces[-1].append(line)
    return pieces
