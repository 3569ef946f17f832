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
import math
import re
from collections.abc import Callable
from fractions import Fraction

from hephaistus.textfile import indentation
from hephaistus.tools.editing.matching import Finder, Lines, Match, NoMatch, locate

ELISION = re.compile(r"^\s*(?:#|//|--|;|/\*|<!--)?\s*(?:\.\.\.|…)\s*(?:\*/|-->)?\s*$")
SIMILAR = 0.6  # a new line this close to an old line the model mis-spaced is built from it


class Unsafe(NoMatch):
    """The snippet was found, but the edit cannot be written without guessing."""


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
            finder, old, context=frozenset(alignment.values()), consistent=_indentation_consistent
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


# -- indentation ------------------------------------------------------------------------------


def indentation_mapper(
    old: Lines, window: Lines, file: Lines, new: Lines, *, skip: int | None = None
) -> Callable[[str], str]:
    """How to re-indent the model's new lines into the file's indentation.

    Learned from the matched lines, each reading a rule that every one of them obeys: the
    file's indentation is the model's with a prefix added or removed, or the same nesting in
    another unit (2 spaces for 4, tabs for spaces), or each indentation seen maps to the file's
    for it (and a depth never seen to nothing: one drifted line must not decide a depth it does
    not show), or the model's own indentation. Of the readings that give every new line an
    indentation, the first that puts them on the file's grid wins, the model's own last (a
    context line that lost its diff marker must not shift the rest by one space). When none
    does, the edit is refused, naming the lines.
    """
    pairs = [
        (indentation(m), indentation(f))
        for i, (m, f) in enumerate(zip(old, window, strict=True))
        if i != skip and m.strip() and f.strip()
    ]
    # The grid breaks ties between readings; only a proven unit turns tabs into spaces.
    kind, unit, proven = file_kind(file), file_unit(file), proven_unit(file)
    indents = [indentation(line) for line in new if line.strip()]
    readings = [h(pairs) for h in (_same, _added_prefix, _removed_prefix)]
    readings += [_linear(pairs), _other_unit(pairs, proven), _each_known(pairs)]
    readings.append(lambda indent: indent)
    usable: list[Mapping] = []
    for reading in readings:
        if reading is None:
            continue
        mapped = [reading(indent) for indent in indents]
        if all(m is not None for m in mapped):
            styled = [_in_file_style(m, kind, proven) for m in mapped if m is not None]
            if all(s is not None and _on_grid(s, unit) for s in styled):
                usable.insert(0, reading)
                break
            usable.append(reading)
    if not usable:
        known = {m for m, _ in pairs}
        unmapped = [line.strip() for line in new if line.strip() and indentation(line) not in known]
        named = "; ".join(repr(line) for line in unmapped[:3]) or "the new lines"
        raise Unsafe(
            "cannot tell how to indent the new lines in the file: the old text's lines do "
            "not show how its indentation maps to the file's at the depth of "
            f"{named}; copy the old lines with their exact indentation"
        )
    chosen = usable[0]

    def reindent(line: str) -> str:
        if not line.strip():
            return line  # a blank line is written as sent: it has no depth to map
        indent = _in_file_style(chosen(indentation(line)) or "", kind, proven)
        if indent is None:
            if kind == "\t":
                raise Unsafe(
                    f"the new line {line.strip()!r} is indented with spaces, the file "
                    "with tabs; send it indented with tabs, as the file is"
                )
            raise Unsafe(
                f"the new line {line.strip()!r} is indented with tabs, and the file's spaces "
                "do not show how many make one level; send it indented with spaces, as the "
                "file is"
            )
        return indent + line.lstrip(" \t")

    return reindent


def _indentation_consistent(snippet: Lines, window: Lines) -> bool:
    """Whether the window's indentation is the snippet's, shifted or in another unit."""
    pairs = [
        (indentation(m), indentation(f))
        for m, f in zip(snippet, window, strict=True)
        if m.strip() and f.strip()
    ]
    readings = [h(pairs) for h in (_same, _added_prefix, _removed_prefix, _linear)]
    return any(r is not None for r in readings) or _other_unit(pairs, file_unit(window)) is not None


Mapping = Callable[[str], "str | None"]
Pairs = list[tuple[str, str]]


def _same(pairs: Pairs) -> Mapping | None:
    return (lambda indent: indent) if all(m == f for m, f in pairs) else None


def _added_prefix(pairs: Pairs) -> Mapping | None:
    if not pairs or not all(f.endswith(m) for m, f in pairs):
        return None
    prefixes = {f[: len(f) - len(m)] for m, f in pairs}
    if len(prefixes) != 1:
        return None
    prefix = prefixes.pop()
    return lambda indent: prefix + indent


def _removed_prefix(pairs: Pairs) -> Mapping | None:
    if not pairs or not all(m.endswith(f) for m, f in pairs):
        return None
    prefixes = {m[: len(m) - len(f)] for m, f in pairs}
    if len(prefixes) != 1:
        return None
    prefix = prefixes.pop()
    return lambda indent: indent[len(prefix) :] if indent.startswith(prefix) else None


def _linear(pairs: Pairs) -> Mapping | None:
    """A rule every matched line obeys, for any depth: the file's indentation width is the
    model's times one ratio plus one offset (a tab for 4 spaces; 2-space units a level off),
    fitted on two depths and checked on every line. One depth fixes it only where the units'
    characters differ (tabs for spaces): of spaces for spaces, one depth reads as a shift."""
    kinds = [(_kind(m), _kind(f)) for m, f in pairs]
    if not pairs or any(None in kind for kind in kinds):
        return None
    model_kind = {k for k, _ in kinds if k} or {" "}
    file_kind = {k for _, k in kinds if k} or {" "}
    if len(model_kind) != 1 or len(file_kind) != 1:
        return None
    (model_char,), (file_char,) = model_kind, file_kind
    points = sorted({(len(m), len(f)) for m, f in pairs})
    widths = {m for m, _ in points}
    if len(widths) != len(points):
        return None  # one model depth, two file depths: no rule
    if len(points) >= 2:
        (m1, f1), (m2, f2) = points[0], points[-1]
        ratio = Fraction(f2 - f1, m2 - m1)
        offset = f1 - ratio * m1
    elif model_char != file_char and points[0][0]:
        ratio, offset = Fraction(points[0][1], points[0][0]), Fraction(0)
    else:
        return None
    if ratio <= 0 or any(ratio * m + offset != f for m, f in points):
        return None
    if ratio == 1 and offset == 0 and model_char == file_char:
        return None  # the same indentation: `_same` tells

    def mapped(indent: str) -> str | None:
        if indent and set(indent) != {model_char}:
            return None
        width = ratio * len(indent) + offset
        return file_char * int(width) if width.denominator == 1 and width >= 0 else None

    return mapped


def _kind(indent: str) -> str | None:
    """The one character an indentation is made of ("" for none, None when mixed)."""
    if not indent:
        return ""
    return indent[0] if len(set(indent)) == 1 else None


def _other_unit(pairs: Pairs, unit: str | None) -> Mapping | None:
    """The same nesting in another unit, shifted: file level = model level + k, in the file's
    unit as its own lines prove it (see `proven_unit`; never one an aligned line made)."""
    model_unit = _unit_of([m for m, _ in pairs])
    if not pairs or model_unit is None or unit is None:
        return None
    shifts = set()
    for model, file in pairs:
        model_level, file_level = _levels(model, model_unit), _levels(file, unit)
        if model_level is None or file_level is None:
            return None
        shifts.add(file_level - model_level)
    if len(shifts) != 1:
        return None
    shift = shifts.pop()

    def mapped(indent: str) -> str | None:
        level = _levels(indent, model_unit)
        if level is None or level + shift < 0:
            return None
        return unit * (level + shift)

    return mapped


def _each_known(pairs: Pairs) -> Mapping:
    """Each indentation the matched lines show maps to the file's for it, and nothing else."""
    known: dict[str, str] = {}
    for model, file in pairs:
        if known.setdefault(model, file) != file:
            known[model] = "\0"  # one model indent, two file indents: cannot tell
    known = {m: f for m, f in known.items() if f != "\0"}
    return known.get


def file_unit(file: Lines) -> str | None:
    """One level of the file's indentation: a tab, or its number of spaces."""
    return _unit_of([indentation(line) for line in file if line.strip()])


def file_kind(file: Lines) -> str | None:
    """What the file indents with: "\t", " ", or None (nothing is indented)."""
    unit = file_unit(file)
    return None if unit is None else unit[0]


def proven_unit(file: Lines) -> str | None:
    """The file's unit when its lines prove it, else None: a tab, or a number of spaces that
    is both the greatest common divisor of its indentation and the step by which its blocks
    most often go deeper. A continuation line aligned under a bracket breaks the divisor (17
    spaces in a file of 4): then no tab the model sent is turned into spaces, and no level of
    another unit is mapped by it."""
    unit = file_unit(file)
    if unit is None or unit == "\t":
        return unit
    widths = [len(i) for i in map(indentation, filter(str.strip, file)) if i and set(i) == {" "}]
    steps: dict[int, int] = {}
    previous = 0
    for width in [len(indentation(line)) for line in file if line.strip()]:
        if width > previous:
            steps[width - previous] = steps.get(width - previous, 0) + 1
        previous = width
    most = max(steps.values(), default=0)
    common = {step for step, seen in steps.items() if seen == most}
    return unit if widths and common == {len(unit)} else None


def _unit_of(indents: list[str]) -> str | None:
    tabs = sum(1 for i in indents if i.startswith("\t"))
    spaces = [len(i) for i in indents if i and set(i) == {" "}]
    if tabs > len(spaces):
        return "\t"
    if not spaces:
        return None
    width = 0
    for size in spaces:
        width = math.gcd(width, size)
    return " " * width if width > 1 else (" " if width == 1 else None)


def _levels(indent: str, unit: str) -> int | None:
    if not indent:
        return 0
    if unit == "\t":
        return len(indent) if set(indent) == {"\t"} else None
    if set(indent) != {" "} or len(indent) % len(unit):
        return None
    return len(indent) // len(unit)


def _on_grid(indent: str, unit: str | None) -> bool:
    if unit is None or not indent:
        return True
    if unit == "\t":
        return set(indent) == {"\t"}
    return set(indent) == {" "} and len(indent) % len(unit) == 0


def _in_file_style(indent: str, kind: str | None, unit: str | None) -> str | None:
    """Tabs in a file indented with spaces become its unit of spaces, when its lines prove
    one (else None: refused); spaces in a file indented with tabs cannot be told apart from
    alignment, so they are refused (None)."""
    if kind is None or not indent:
        return indent
    if kind == " ":
        if "\t" not in indent:
            return indent
        return indent.replace("\t", unit) if unit else None
    return None if " " in indent else indent


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
                consistent=_indentation_consistent,
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
