"""Re-indenting the model's new lines into the file's indentation, or refusing to guess.

A model's copy of a snippet may be shifted, or use another unit (2 spaces for 4, tabs for
spaces). The matched lines show how its indentation maps to the file's; `indentation_mapper`
reads the rules they all obey and applies the one that fits, and where none can be told with
confidence the edit is refused (Unsafe), never re-spaced by a guess. `file_unit` and
`proven_unit` tell what one level of a file's indentation is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from hephaistus.textfile import indentation
from hephaistus.tools.editing.matching import Lines, NoMatch


class Unsafe(NoMatch):
    """The snippet was found, but the edit cannot be written without guessing."""


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


def indentation_consistent(snippet: Lines, window: Lines) -> bool:
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
