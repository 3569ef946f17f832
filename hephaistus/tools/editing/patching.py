"""Unified diffs as models write them, parsed with `unidiff` and applied by context.

Models write diffs loosely: `@@ ... @@` without numbers, no `---`/`+++` headers, fences or
`<code>` around them, wrong line counts, empty context lines without their leading space.
`parse_patch` normalises those forms into a well-formed diff for `unidiff`. `apply_hunks` then
places each hunk by its context and removed lines, never by its line numbers, tolerating the same
drift as edit_file; a hunk that matches nowhere, or in more than one place, fails the whole patch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hephaistus.textfile import numbered
from hephaistus.tools.editing import matching
from hephaistus.tools.editing.replacing import Unsafe, replace

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
FUZZ = ((1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 1), (1, 2), (2, 2))


class PatchError(ValueError):
    """A patch that cannot be parsed or applied; the message is for the model."""


@dataclass(frozen=True)
class Hunk:
    """One hunk of a patch, as the lines it expects (`before`) and the lines it leaves (`after`)."""

    number: int  # 1-based position in the patch
    header: str
    before: list[str]  # context and removed lines, in order
    after: list[str]  # context and added lines, in order
    lead: int  # context lines before the first change
    trail: int  # context lines after the last change
    size: int  # lines in the hunk's body: context, removed and added
    # index in `after` -> index in `before` of each context line (the lines the hunk keeps)
    kept: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class FilePatch:
    """The hunks of a patch for one file, with the paths its headers name."""

    source: str | None  # path from the `---` header; None for /dev/null or no header
    target: str | None  # path from the `+++` header; None for /dev/null or no header
    hunks: list[Hunk]
    moved_to: str | None = None  # `*** Move to:` or git's `rename to`: the file moves there

    @property
    def creates(self) -> bool:
        return self.source is None and self.target is not None

    @property
    def deletes(self) -> bool:
        """`+++ /dev/null` (or `*** Delete File:`): the file goes, once its lines are taken."""
        return self.source is not None and self.target is None and self.moved_to is None


def parse_patch(text: str) -> list[FilePatch]:
    """The file sections of a (possibly loose) unified diff."""
    import unidiff

    sections = _sections(_unwrap(text))
    if not sections:
        raise PatchError(
            "the diff has no hunks: each change needs a line starting with @@ "
            "followed by ' ' (context), '-' (removed) and '+' (added) lines"
        )
    with_hunks = [section for section in sections if section.hunks]
    normalised = "".join(_render(s.source, s.target, s.hunks) for s in with_hunks)
    try:
        parsed = iter(unidiff.PatchSet(normalised)) if with_hunks else iter(())
    except unidiff.UnidiffParseError as exc:
        raise PatchError(f"the diff could not be parsed: {exc}") from None
    patches = []
    for section in sections:
        patched = next(parsed) if section.hunks else []
        headers = [body[0].strip() for body in section.hunks]
        hunks = [
            _hunk(n, header, h)
            for n, (header, h) in enumerate(zip(headers, patched, strict=True), 1)
        ]
        patches.append(FilePatch(section.source, section.target, hunks, section.moved_to))
    return patches


def apply_hunks(lines: list[str], hunks: list[Hunk]) -> list[str]:
    """`lines` with every hunk applied in order, or PatchError naming the hunk that failed."""
    for hunk in hunks:
        lines = _apply_one(lines, hunk)
    return lines


# -- applying ------------------------------------------------------------------------------


def _apply_one(lines: list[str], hunk: Hunk) -> list[str]:
    if not any(line.strip() for line in hunk.before):
        if not any(line.strip() for line in lines):
            return list(hunk.after)  # adding to an empty file needs no context
        raise PatchError(
            f"hunk {hunk.number} ({hunk.header}) has no context or removed lines, "
            "so there is no way to tell where it goes; include a few unchanged "
            "lines around the change. Nothing changed."
        )
    finder = matching.Finder(lines)  # the file's keys, shared by every try below
    try:
        return replace(finder, hunk.before, hunk.after, alignment=hunk.kept)
    except Unsafe as unsafe:
        raise _unsafe(hunk, unsafe) from None
    except matching.NoMatch as miss:
        if miss.places:
            raise _ambiguous(hunk, miss) from None
    # Like patch's fuzz factor: let up to two outer context lines differ, nothing else.
    for lead, trail in FUZZ:
        if lead > hunk.lead or trail > hunk.trail:
            continue
        before = hunk.before[lead : len(hunk.before) - trail]
        if not any(line.strip() for line in before):
            continue
        kept = {
            j - lead: i - lead
            for j, i in hunk.kept.items()
            if lead <= i < lead + len(before) and lead <= j < len(hunk.after) - trail
        }
        try:
            return replace(
                finder, before, hunk.after[lead : len(hunk.after) - trail], alignment=kept
            )
        except Unsafe as unsafe:
            raise _unsafe(hunk, unsafe) from None
        except matching.NoMatch as miss:
            if miss.places:
                raise _ambiguous(hunk, miss) from None
    first, near = matching.closest(lines, hunk.before)
    raise PatchError(
        f"hunk {hunk.number} ({hunk.header}) did not apply: its context and removed lines were "
        "not found in the file, not even ignoring whitespace. Nothing changed. The closest lines "
        f"in the file are:\n{numbered(first, near)}\n"
        f"The hunk expected:\n{_quote(hunk.before)}\n"
        "Make the context and '-' lines match the file exactly and send the patch again."
    )


def _unsafe(hunk: Hunk, unsafe: Unsafe) -> PatchError:
    return PatchError(
        f"hunk {hunk.number} ({hunk.header}) was found, but {unsafe.reason}. Nothing changed."
    )


def _ambiguous(hunk: Hunk, miss: matching.NoMatch) -> PatchError:
    where = ", ".join(map(str, miss.places))
    return PatchError(
        f"hunk {hunk.number} ({hunk.header}) is ambiguous: its context matches "
        f"{len(miss.places)} places (lines {where}); include more unchanged lines "
        "so it fits only one. Nothing changed."
    )


def _quote(lines: list[str], limit: int = 12) -> str:
    shown = "\n".join(f"    {line}" for line in lines[:limit])
    return shown + (f"\n    … {len(lines) - limit} more lines" if len(lines) > limit else "")


# -- parsing -------------------------------------------------------------------------------

SKIPPED_LINES = (
    "diff --git ",
    "index ",
    "new file mode",
    "deleted file mode",
    "similarity ",
    "*** Begin Patch",
    "*** End Patch",
    "*** End of File",
)


def _unwrap(text: str) -> list[str]:
    """The diff's lines without fences, <code> wrappers or git's extended headers; the
    `*** Update File:` / `*** Add File:` sections of the Codex patch format become ---/+++ headers.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    # A <code> wrapper around the whole diff goes; <code> inside a line is content.
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and lines[0].strip().startswith("<code>"):
        lines[0] = lines[0].strip()[len("<code>") :]
    if lines and lines[-1].strip() == "</code>":
        lines.pop()
    kept = []
    for line in lines:
        # A fence wraps the diff only from the first column; " ```" is a line of context.
        if line.startswith(("```", "~~~")) or line.startswith(SKIPPED_LINES):
            continue
        if line.startswith(("*** Update File: ", "*** Add File: ")):
            path = line.split(": ", 1)[1].strip()
            added = line.startswith("*** Add")
            kept += ["--- /dev/null" if added else f"--- a/{path}", f"+++ b/{path}"]
            if added:
                kept.append("@@ -0,0 +1 @@")
            continue
        if line.startswith("*** Delete File: "):
            kept += [f"--- a/{line.split(': ', 1)[1].strip()}", "+++ /dev/null"]
            continue
        if line.startswith("*** Move to: "):
            kept.append(f"rename to {line.split(': ', 1)[1].strip()}")  # as git says it
            continue
        kept.append(line)
    return kept


@dataclass
class _Section:
    """The part of a diff about one file, as read: its headers' paths, where it moves, and its
    hunks (each its @@ line and body lines)."""

    source: str | None
    target: str | None
    hunks: list[list[str]] = field(default_factory=list)
    moved_to: str | None = None

    @property
    def kept(self) -> bool:
        """Whether it does something: hunks, a delete, or a move."""
        return bool(self.hunks or self.moved_to or (self.source and not self.target))


def _sections(lines: list[str]) -> list[_Section]:
    """Split into one section per file."""
    sections: list[_Section] = []
    current: _Section | None = None
    hunk: list[str] | None = None
    moving_from: str | None = None  # git's `rename from`, before its `rename to`
    index = 0
    while index < len(lines):
        line = lines[index]
        nxt = lines[index + 1] if index + 1 < len(lines) else ""
        if line.startswith("--- ") and nxt.startswith("+++ "):
            source, target = _header_path(line), _header_path(nxt)
            if current and current.moved_to and not current.hunks and source == current.source:
                current.target = target  # the headers after git's rename lines
            else:
                current = _Section(source, target)
                sections.append(current)
            hunk = None
            index += 2
            continue
        if line.startswith("rename from "):
            moving_from, hunk = line[len("rename from ") :].strip(), None
        elif line.startswith("rename to "):
            moved_to = line[len("rename to ") :].strip()
            if current is None or current.hunks or (moving_from and current.source != moving_from):
                current = _Section(moving_from, moving_from)
                sections.append(current)
            current.moved_to, moving_from, hunk = moved_to, None, None
        elif line.startswith("@@"):
            if current is None:
                current = _Section(None, None)
                sections.append(current)
            hunk = [line]
            current.hunks.append(hunk)
        elif hunk is not None and (line[:1] in (" ", "-", "+", "\\") or line == ""):
            hunk.append(line)
        elif hunk is None and current is None and line[:1] in ("-", "+") and line[1:2] != line[:1]:
            current = _Section(None, None)  # a hunk body with no @@ line at all
            sections.append(current)
            hunk = ["@@ ... @@", line]
            current.hunks.append(hunk)
        else:
            hunk = None  # prose after a hunk ends it
        index += 1
    for section in sections:
        for body in section.hunks:
            while len(body) > 1 and body[-1] == "":
                body.pop()  # blank lines after a hunk are separators, not context
        if not any(len(body) > 1 for body in section.hunks):
            section.hunks = []  # only a delete or a move, if anything
    return [s for s in sections if s.kept]


def _header_path(line: str) -> str | None:
    path = line[4:].split("\t")[0].strip()
    if path == "/dev/null" or not path:
        return None
    return path[2:] if path.startswith(("a/", "b/")) else path


def _render(source: str | None, target: str | None, hunks: list[list[str]]) -> str:
    """A well-formed diff for unidiff: headers present, hunk line counts recomputed."""
    out = [
        f"--- {'a/' + source if source else '/dev/null'}\n",
        f"+++ {'b/' + target if target else 'b/' + (source or 'file')}\n",
    ]
    for hunk in hunks:
        header, body = hunk[0], [line if line else " " for line in hunk[1:]]
        old = sum(1 for line in body if line[0] in " -")
        new = sum(1 for line in body if line[0] in " +")
        numbers = HUNK_HEADER.match(header)
        start = int(numbers.group(1)) if numbers else 1
        old_start = 0 if old == 0 else max(start, 1)
        new_start = 0 if new == 0 else max(int(numbers.group(3)) if numbers else 1, 1)
        out.append(f"@@ -{old_start},{old} +{new_start},{new} @@\n")
        out.extend(line + "\n" for line in body)
    return "".join(out)


def _hunk(number: int, header: str, parsed: object) -> Hunk:
    before, after, kinds = [], [], []
    for line in parsed:  # type: ignore[attr-defined]
        value = line.value.rstrip("\n")
        if line.is_context:
            before.append(value)
            after.append(value)
            kinds.append(" ")
        elif line.is_removed:
            before.append(value)
            kinds.append("-")
        elif line.is_added:
            after.append(value)
            kinds.append("+")
    changes = [i for i, kind in enumerate(kinds) if kind != " "]
    lead = changes[0] if changes else len(kinds)
    trail = len(kinds) - 1 - changes[-1] if changes else 0
    kept, in_before, in_after = {}, 0, 0
    for kind in kinds:
        if kind == " ":
            kept[in_after] = in_before
        in_before += kind != "+"
        in_after += kind != "-"
    return Hunk(number, header, before, after, lead, trail, len(kinds), kept)
