"""Finding a snippet of lines in a file when the model's copy drifted from the real text.

Models copy code imperfectly: trailing spaces lost, indentation shifted, CRLF turned to LF, spaces
around operators added or dropped. `locate` tries ever looser comparisons, one tier at a time, and
accepts a tier's answer only when it is unique: an ambiguous match is refused, never guessed.
`rewrite` then adapts the replacement to where the match was found (re-indenting it, keeping the
file's own spelling of lines the edit did not change).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

Lines = list[str]  # lines without their line breaks


def _rstrip(line: str) -> str:
    return line.rstrip()


def _squash(line: str) -> str:
    return "".join(line.split())


@dataclass(frozen=True)
class Tier:
    name: str
    key: Callable[[str], str]
    dedent: bool  # compare after removing each side's common indentation


TIERS = (
    Tier("exact", lambda line: line, False),
    Tier("trailing whitespace", _rstrip, False),
    Tier("indentation", _rstrip, True),
    Tier("whitespace inside lines", _squash, True),
)


@dataclass(frozen=True)
class Match:
    start: int  # first matched line, 0-based
    end: int  # one past the last matched line
    tier: Tier
    trimmed: Lines  # the snippet as matched (leading/trailing blank lines may be dropped)


class NoMatch(ValueError):
    """The snippet is nowhere in the file, or in several places."""

    def __init__(self, reason: str, places: list[int] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.places = places or []  # 1-based first lines of each place, when ambiguous


def locate(file: Lines, snippet: Lines, *, tiers: tuple[Tier, ...] = TIERS) -> Match:
    """The unique place of `snippet` in `file`, by the strictest tier that finds one."""
    variants = [snippet]
    trimmed = _trim_blank(snippet)
    if trimmed != snippet and trimmed:
        variants.append(trimmed)
    for tier in tiers:
        for variant in variants:
            starts = _find_all(file, variant, tier)
            if len(starts) == 1:
                return Match(starts[0], starts[0] + len(variant), tier, variant)
            if len(starts) > 1:
                raise NoMatch(f"it matches {len(starts)} places", [s + 1 for s in starts])
    raise NoMatch("it was not found")


def rewrite(file: Lines, match: Match, new: Lines) -> Lines:
    """The replacement for the matched lines, adapted to the file where the match was loose."""
    if match.tier.name in ("exact", "trailing whitespace"):
        return list(new)
    window = file[match.start:match.end]
    indent = _indent_mapper(match.trimmed, window)
    shifted = [indent(line) for line in new]
    if match.tier.name == "indentation":
        return shifted
    # Lines the edit kept keep the file's own spelling; new lines take its spacing habit.
    old_keys = [_indent_and_squash(line) for line in match.trimmed]
    new_keys = [_indent_and_squash(line) for line in new]
    matcher = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    spaced = _spaces_operators(window)
    result: Lines = []
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            result.extend(window[a1:a2])
        else:
            result.extend(_respace(line, spaced) for line in shifted[b1:b2])
    return result


def closest(file: Lines, snippet: Lines, *, context: int = 2) -> tuple[int, Lines]:
    """The 1-based first line and the lines of the file most like `snippet`, with context."""
    size = max(1, len(_trim_blank(snippet)) or len(snippet))
    wanted = "\n".join(_squash(line) for line in _trim_blank(snippet) or snippet)
    best, best_score = 0, -1.0
    candidates = []
    for start in range(max(1, len(file) - size + 1)):
        text = "\n".join(_squash(line) for line in file[start:start + size])
        quick = difflib.SequenceMatcher(None, wanted, text, autojunk=False).quick_ratio()
        candidates.append((quick, start, text))
    candidates.sort(reverse=True)
    for _quick, start, text in candidates[:8]:
        score = difflib.SequenceMatcher(None, wanted, text, autojunk=False).ratio()
        if score > best_score:
            best, best_score = start, score
    first = max(0, best - context)
    return first + 1, file[first:best + size + context]


def numbered(first: int, lines: Lines) -> str:
    width = len(str(first + len(lines)))
    return "\n".join(f"{first + i:>{width}}  {line}" for i, line in enumerate(lines))


# -- helpers -------------------------------------------------------------------------------

def _trim_blank(lines: Lines) -> Lines:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _find_all(file: Lines, snippet: Lines, tier: Tier) -> list[int]:
    if not snippet or len(snippet) > len(file):
        return []
    wanted = _keys(snippet, tier)
    first = wanted[0]
    size = len(snippet)
    found = []
    for start in range(len(file) - size + 1):
        # Cheap pre-check on the first line (exact key when not dedenting).
        if not tier.dedent and tier.key(file[start]) != first:
            continue
        if _keys(file[start:start + size], tier) == wanted:
            found.append(start)
    return found


def _keys(lines: Lines, tier: Tier) -> Lines:
    if tier.dedent:
        indent = _common_indent(lines)
        lines = [line[len(indent):] if line.strip() else "" for line in lines]
    return [tier.key(line) for line in lines]


def _common_indent(lines: Lines) -> str:
    indents = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    if not indents:
        return ""
    prefix = indents[0]
    for indent in indents[1:]:
        while not indent.startswith(prefix):
            prefix = prefix[:-1]
    return prefix


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _indent_and_squash(line: str) -> str:
    return _indent_of(line) + _squash(line) if line.strip() else ""


def _indent_mapper(old: Lines, window: Lines) -> Callable[[str], str]:
    """How to re-indent a line written in the model's indentation into the file's.

    Matched lines pair the model's indents with the file's; an indent seen there maps exactly
    (this also converts 4-space levels to the file's 2, or spaces to tabs). Other indents get the
    common offset between the two, which keeps the model's relative structure.
    """
    pairs: dict[str, str] = {}
    for model_line, file_line in zip(old, window, strict=False):
        if model_line.strip() and file_line.strip():
            pairs.setdefault(_indent_of(model_line), _indent_of(file_line))
    old_common, file_common = _common_indent(old), _common_indent(window)

    def reindent(line: str) -> str:
        if not line.strip():
            return line
        indent = _indent_of(line)
        if indent in pairs:
            return pairs[indent] + line.lstrip()
        deeper = [i for i in pairs if indent.startswith(i)]
        if deeper:  # nested below a known level: keep the extra part as the model wrote it
            base = max(deeper, key=len)
            return pairs[base] + indent[len(base):] + line.lstrip()
        if line.startswith(old_common):
            return file_common + line[len(old_common):]
        return file_common + line.lstrip()

    return reindent


# Spacing habit: whether the file puts spaces around binary operators. Learned from the matched
# lines only, applied only to the lines the edit adds, and only where the file is consistent.
_OPERATOR = re.compile(r"\*\*|//|==|!=|<=|>=|->|[-+*/%<>=]")


def _spaces_operators(window: Lines) -> bool:
    seen = [spaced for line in window for _start, _end, spaced in _binary_operators(line)]
    return bool(seen) and all(seen)


def _binary_operators(line: str) -> list[tuple[int, int, bool]]:
    """(start, end, spaced on both sides) of each binary operator in a line of plain code."""
    if any(mark in line for mark in "\"'#"):
        return []  # strings and comments: nothing safe to learn or change
    found = []
    for hit in _OPERATOR.finditer(line):
        before, after = line[: hit.start()], line[hit.end():]
        if not before.strip() or not after.strip() or before.rstrip()[-1] in "([{,=:*/+-<>!":
            continue  # a sign, a line-leading operator, or part of a longer one
        if hit.group() == "=" and before.count("(") > before.count(")"):
            continue  # keyword argument: no spaces by convention
        found.append((hit.start(), hit.end(), before.endswith(" ") and after.startswith(" ")))
    return found


def _respace(line: str, spaced: bool) -> str:
    if not spaced:
        return line
    out, last = [], 0
    for start, end, _ in _binary_operators(line):
        out.append(line[last:start].rstrip() + " " + line[start:end] + " ")
        last = end
        while last < len(line) and line[last] == " ":
            last += 1
    out.append(line[last:])
    return "".join(out)
