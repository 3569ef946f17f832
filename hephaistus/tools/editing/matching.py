"""Finding a snippet of lines in a file when the model's copy drifted from the real text.

Models copy code imperfectly: trailing spaces lost, indentation shifted or re-unitised, spaces
around operators added or dropped, one context line misremembered. `locate` tries ever looser
comparisons, one tier at a time, and accepts a tier's answer only when it is unique: an ambiguous
match is refused, never guessed. The loosest tiers never look inside string literals, so
`"hello world"` is never taken for `"helloworld"`. What is written in the matched place is
decided by `replacing`, which never changes the text of a line beyond its indentation.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate

Lines = list[str]  # lines without their line breaks

STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"?|\'(?:[^\'\\\n]|\\.)*\'?|`(?:[^`\\\n]|\\.)*`?')
SPACES = re.compile(r"\s+")
AROUND_PUNCTUATION = re.compile(r" ?([^\w\s]) ?")
WORD = re.compile(r"\w+")
MAX_VOTING_WORDS = 80  # of a snippet's distinct words, for `closest`
MAX_PLACES_PER_WORD = 50  # a word found more often says little about where the snippet is


def spacing_key(line: str) -> str:
    """The line with the spacing between tokens made irrelevant: spaces next to punctuation
    dropped, runs of spaces between words made one. String literals are kept as they are."""
    stripped = line.strip()
    parts, last = [], 0
    for literal in STRING.finditer(stripped):
        parts += [_squeeze(stripped[last : literal.start()]), literal.group()]
        last = literal.end()
    parts.append(_squeeze(stripped[last:]))
    return "".join(parts)


def _squeeze(code: str) -> str:
    return AROUND_PUNCTUATION.sub(r"\1", SPACES.sub(" ", code))


NO_WHITESPACE = str.maketrans("", "", " \t\f\v\r\n")


def _without_whitespace(line: str) -> str:
    return line.translate(NO_WHITESPACE)


@dataclass(frozen=True)
class Tier:
    """One way of comparing lines (TIERS go from exact to loose): lines match when their keys do."""

    name: str
    key: Callable[[str], str]
    same_indent: bool  # the key keeps the indentation, so a match has the file's indentation
    # A cheaper, coarser key that lines with equal keys share: places are found by it, and
    # the real key is worked out only for the lines of those places.
    coarse: Callable[[str], str] | None = None


TIERS = (
    Tier("exact", str, True),
    Tier("trailing whitespace", str.rstrip, True),
    Tier("indentation", str.strip, False),
    Tier("spacing", spacing_key, False, _without_whitespace),
)


@dataclass(frozen=True)
class Match:
    """Where a snippet was found in a file, and by which tier."""

    start: int  # first matched line of the file, 0-based
    end: int  # one past the last matched line
    tier: Tier
    snippet: Lines  # the snippet lines matched (leading/trailing blank lines may be dropped)
    offset: int = 0  # blank lines dropped from the start of the snippet that was asked for
    tail: int = 0  # and from its end
    differs: int | None = None  # index in `snippet` of a context line the file spells otherwise


class NoMatch(ValueError):
    """The snippet is nowhere in the file, or in several places."""

    def __init__(self, reason: str, places: list[int] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.places = places or []  # 1-based first lines of each place, when ambiguous


@dataclass
class Finder:
    """A file's lines with their keys per tier, computed once, for all the lookups of an edit."""

    file: Lines
    _coarse: dict[str, Lines] = field(default_factory=dict)
    _where: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    _keys: dict[tuple[str, int], str] = field(default_factory=dict)

    def coarse(self, tier: Tier) -> Lines:
        """Each line's coarse key (its key, for tiers whose key is cheap)."""
        if tier.name not in self._coarse:
            self._coarse[tier.name] = list(map(tier.coarse or tier.key, self.file))
        return self._coarse[tier.name]

    def where(self, tier: Tier, coarse_key: str) -> list[int]:
        """The lines whose coarse key is `coarse_key`."""
        found = self._where.get((tier.name, coarse_key))
        if found is None:
            found = self._where[tier.name, coarse_key] = [
                number for number, key in enumerate(self.coarse(tier)) if key == coarse_key
            ]
        return found

    def key(self, tier: Tier, number: int) -> str:
        """The key of line `number` for `tier`, worked out once."""
        if tier.coarse is None:
            return self.coarse(tier)[number]
        cached = self._keys.get((tier.name, number))
        if cached is None:
            cached = self._keys[tier.name, number] = tier.key(self.file[number])
        return cached

    def differences(
        self, tier: Tier, start: int, keys: Lines, coarse: Lines, limit: int
    ) -> list[int]:
        """Indices where the window at `start` differs from the snippet's keys (up to `limit`
        + 1 of them)."""
        found = []
        file_coarse = self.coarse(tier)
        for i, (want, rough) in enumerate(zip(keys, coarse, strict=True)):
            if file_coarse[start + i] != rough or (
                tier.coarse is not None and self.key(tier, start + i) != want
            ):
                found.append(i)
                if len(found) > limit:
                    break
        return found


def locate(
    file: Lines | Finder,
    snippet: Lines,
    *,
    context: frozenset[int] = frozenset(),
    consistent: Callable[[Lines, Lines], bool] | None = None,
) -> Match:
    """The unique place of `snippet` in `file`, by the strictest tier that finds one.

    `context` holds the indices of snippet lines the edit keeps; one of them may differ from
    the file (as patch's fuzz allows) when everything else places the snippet uniquely.
    `consistent(snippet, window)` breaks ties between places found with loose indentation.
    """
    finder = file if isinstance(file, Finder) else Finder(file)
    variants = _variants(snippet)
    for tier in TIERS:
        for variant, offset, tail in variants:
            starts = _starts(finder, variant, tier)
            if len(starts) > 1 and not tier.same_indent and consistent is not None:
                starts = [
                    s for s in starts if consistent(variant, finder.file[s : s + len(variant)])
                ] or starts
            if len(starts) == 1:
                return Match(starts[0], starts[0] + len(variant), tier, variant, offset, tail)
            if len(starts) > 1:
                raise NoMatch(f"it matches {len(starts)} places", [s + 1 for s in starts])
    for tier in TIERS:
        for variant, offset, tail in variants:
            shifted = frozenset(i - offset for i in context if 0 <= i - offset < len(variant))
            found = _starts_with_one_difference(finder, variant, tier, shifted)
            if len(found) == 1:
                ((start, differs),) = found
                return Match(start, start + len(variant), tier, variant, offset, tail, differs)
            if len(found) > 1:
                raise NoMatch(
                    f"with one context line differing it matches {len(found)} places",
                    sorted(s + 1 for s, _ in found),
                )
    raise NoMatch("it was not found")


def closest(file: Lines, snippet: Lines, *, context: int = 2) -> tuple[int, Lines]:
    """The 1-based first line and the lines of the file most like `snippet`, with context.

    Each word of the snippet votes for the places where it occurs, rare words more; each word
    is looked for once in the whole text, so a large file costs little.
    """
    wanted = _trim_blank(snippet) or snippet
    size = max(1, len(wanted))
    text = "\n".join(file)
    starts = list(accumulate((len(line) + 1 for line in file), initial=0))
    line_words = [set(WORD.findall(line)) for line in wanted]
    where: dict[str, list[int]] = {}
    for word in sorted(set().union(*line_words))[:MAX_VOTING_WORDS]:
        places = _places_of(word, text, starts)
        if 0 < len(places) <= MAX_PLACES_PER_WORD:
            where[word] = places
    votes: dict[int, float] = defaultdict(float)
    for word, places in where.items():
        for offset, words in enumerate(line_words):
            if word in words:
                for place in places:
                    votes[place - offset] += 1.0 / len(places)
    best = max(votes, key=lambda start: (votes[start], -start)) if votes else 0
    best = min(max(best, 0), max(0, len(file) - size))
    first = max(0, best - context)
    return first + 1, file[first : best + size + context]


def _places_of(word: str, text: str, starts: list[int]) -> list[int]:
    """The lines where `word` stands as a whole word (stopping once it is too common)."""
    places: list[int] = []
    at = text.find(word)
    seen = 0
    while at != -1 and len(places) <= MAX_PLACES_PER_WORD and seen < 20 * MAX_PLACES_PER_WORD:
        seen += 1
        end = at + len(word)
        if (at == 0 or not _is_word_char(text[at - 1])) and (
            end == len(text) or not _is_word_char(text[end])
        ):
            places.append(bisect_right(starts, at) - 1)
        at = text.find(word, at + 1)
    return places if seen < 20 * MAX_PLACES_PER_WORD else places + [-1] * MAX_PLACES_PER_WORD


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


# -- helpers -------------------------------------------------------------------------------


def _variants(snippet: Lines) -> list[tuple[Lines, int, int]]:
    """The snippet, and without its leading and trailing blank lines (how many of each)."""
    variants = [(snippet, 0, 0)]
    start, end = 0, len(snippet)
    while start < end and not snippet[start].strip():
        start += 1
    while end > start and not snippet[end - 1].strip():
        end -= 1
    if (start, end) != (0, len(snippet)) and end > start:
        variants.append((snippet[start:end], start, len(snippet) - end))
    return variants


def _trim_blank(lines: Lines) -> Lines:
    variants = _variants(lines)
    return variants[-1][0] if any(line.strip() for line in lines) else []


def _anchors(coarse: Lines) -> list[int]:
    """Indices of the snippet's non-blank lines, longest (so likely rarest) first."""
    present = [i for i, key in enumerate(coarse) if key.strip()]
    return sorted(present, key=lambda i: -len(coarse[i]))


def _keys(snippet: Lines, tier: Tier) -> tuple[Lines, Lines]:
    keys = [tier.key(line) for line in snippet]
    return keys, [tier.coarse(line) for line in snippet] if tier.coarse else keys


def _starts(finder: Finder, snippet: Lines, tier: Tier) -> list[int]:
    keys, coarse = _keys(snippet, tier)
    anchors = _anchors(coarse)
    if not anchors or len(snippet) > len(finder.file):
        return []
    anchor, size = anchors[0], len(snippet)
    found = []
    for position in finder.where(tier, coarse[anchor]):
        start = position - anchor
        if 0 <= start <= len(finder.file) - size and not finder.differences(
            tier, start, keys, coarse, 0
        ):
            found.append(start)
    return found


MIN_LINES_FOR_FUZZ = 3  # a differing line is tolerated only where the others prove the place


def _starts_with_one_difference(
    finder: Finder, snippet: Lines, tier: Tier, context: frozenset[int]
) -> list[tuple[int, int]]:
    """(start, index of the differing line) of each place where every line but one context
    line matches."""
    keys, coarse = _keys(snippet, tier)
    anchors = _anchors(coarse)
    if not context or len(anchors) < MIN_LINES_FOR_FUZZ or len(snippet) > len(finder.file):
        return []
    size = len(snippet)
    starts = {
        position - anchor
        for anchor in anchors[:2]
        for position in finder.where(tier, coarse[anchor])
    }
    found = []
    for start in sorted(starts):
        if not 0 <= start <= len(finder.file) - size:
            continue
        different = finder.differences(tier, start, keys, coarse, 1)
        if len(different) == 1 and different[0] in context and snippet[different[0]].strip():
            found.append((start, different[0]))
    return found
