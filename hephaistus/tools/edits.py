"""Edit tools: replace a snippet (edit_file) or apply a unified diff (patch_file).

Both land edits the model meant even when its copy of the file drifted (whitespace, indentation,
line numbers), refuse what is ambiguous, change nothing when they fail, and say why with the
file's real lines, so the model can correct itself in one step.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hephaistus.records.transaction import ChangedOnDisk
from hephaistus.textfile import TextFile, digest_of, numbered, read_real, split_lines
from hephaistus.tools.context import ToolContext
from hephaistus.tools.editing import matching
from hephaistus.tools.editing.patching import FilePatch, PatchError, apply_hunks, parse_patch
from hephaistus.tools.editing.replacing import Unsafe
from hephaistus.tools.editing.replacing import replace as replace_lines
from hephaistus.tools.moving import delete_proposal, move_proposal
from hephaistus.tools.writing import changed_on_disk, open_for_write, write_change
from hephaistus.values import Proposal, ToolResult

BOM_CHARACTER = "\ufeff"  # a UTF-8 byte-order mark, as decoded text


def edit_file(ctx: ToolContext, path: str, old: str, new: str) -> ToolResult | Proposal:
    """Replace `old` (exact lines of the file, found once) with `new`.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: file to edit, relative to the workspace root
        old: the text to replace, copied from the file
        new: the text to put in its place
    """
    found = open_for_write(ctx, path)
    if isinstance(found, ToolResult):
        return found
    rel, real, current = found
    if current is None:
        return ToolResult(False, f"{rel} does not exist; use write_file to create it")
    old, new = _lf(old), _lf(new)
    if current.bom and old.startswith(BOM_CHARACTER):
        # The model was shown the file's raw bytes; the file keeps its mark as it is.
        old, new = old[1:], new.removeprefix(BOM_CHARACTER)
    return replace(_edit(ctx, rel, real, current, old, new), target=rel)


def _edit(
    ctx: ToolContext, rel: str, real: Path, current: TextFile, old: str, new: str
) -> ToolResult | Proposal:
    edited = _edited(rel, current.text, old, new)
    if isinstance(edited, ToolResult):
        return edited
    after, told = edited

    def again(now: TextFile | None) -> str:
        """The same edit made on what another run wrote meanwhile, as a call made now would
        make it; when it no longer applies so, nothing is written."""
        redone = _edited(rel, now.text, old, new) if now else None
        if not isinstance(redone, tuple):
            raise ChangedOnDisk(rel)
        return redone[0]

    return write_change(ctx, rel, real, current, after, rebase=again, told=told)


def _edited(rel: str, text: str, old: str, new: str) -> tuple[str, str] | ToolResult:
    """(`text` with `old` replaced by `new`, what to tell the model of where `new` is), or
    the ToolResult saying why not (or that the edit was made before)."""
    if not old.strip():
        if not text.strip():  # filling an empty file needs nothing to match
            return new, ""
        return ToolResult(False, "'old' is empty; give the exact text to replace")
    count = text.count(old)
    if count == 1 and _extension_already_there(text, old, new):
        return ToolResult(
            True,
            f"{rel} already contains the new text (the edit was applied before); nothing changed",
        )
    if count == 1 and _cut_line(text, old, new):
        line = _cut_line(text, old, new)
        return ToolResult(
            False,
            f"edit_file: 'old' matches only the beginning of this line of "
            f"{rel}:\n{line}\nso adding to its end could double what "
            "follows; give the whole line in 'old' and 'new'. Nothing "
            "changed.",
        )
    if count == 1 and _in_place(text, old, new):
        return text.replace(old, new, 1), _where_new_is(text, old, new)
    if count > 1:
        lines = ", ".join(map(str, _occurrence_lines(text, old)))
        return ToolResult(
            False,
            f"edit_file: 'old' occurs {count} times in {rel} (lines "
            f"{lines}); include more surrounding lines so it is unique. "
            "Nothing changed.",
        )
    try:
        return splice(text, _lines(old), _lines(new)), ""
    except matching.NoMatch as miss:
        if _applied_before(miss, text, old, new):
            return ToolResult(
                True,
                f"{rel} already contains the new text (the edit was applied "
                "before); nothing changed",
            )
        return ToolResult(False, f"edit_file: 'old' {_explain(miss, text, _lines(old), rel)}")


def _extension_already_there(text: str, old: str, new: str) -> bool:
    """Whether `new` is `old` with text added before or after it, and that text already
    stands there in the file: the edit was made before, and making it again would double it."""
    start = text.find(old)
    end = start + len(old)
    if new.startswith(old) and len(new) > len(old):
        return text.startswith(new[len(old) :], end)
    if new.endswith(old) and len(new) > len(old):
        added = new[: len(new) - len(old)]
        return text[:start].endswith(added)
    return False


def _cut_line(text: str, old: str, new: str) -> str | None:
    """The file's line, when `old` ends inside it and `new` only adds to the end of `old`:
    the model most likely meant the whole line and remembers it as it was."""
    end = text.find(old) + len(old)
    if old.endswith("\n") or not new.startswith(old):
        return None
    line_end = text.find("\n", end)
    rest = text[end : line_end if line_end != -1 else len(text)]
    if not rest.strip():
        return None
    start = text.rfind("\n", 0, end - 1) + 1
    return text[start:end] + rest


def _where_new_is(text: str, old: str, new: str) -> str:
    """Where `new` stands once it replaced `old` exactly: all the model needs to know of a
    change it sent itself."""
    first = text.count("\n", 0, text.find(old)) + 1
    count = len(split_lines(new))
    if not count:
        return "the text of 'old' was removed, nothing else changed"
    lines = f"line {first}" if count == 1 else f"lines {first}-{first + count - 1}"
    return f"'new' is at {lines} as sent, nothing else changed"


def _in_place(text: str, old: str, new: str) -> bool:
    """Whether `old`, found once as it is, can be swapped for `new` as plain text: not when it
    spans whole lines but starts after some of its first line's indentation (the model copied
    the lines with less indentation; the line-wise match re-indents what it sent). A snippet
    that ends inside a line is no such copy: it is swapped where it stands, as sent."""
    start = text.find(old)
    before = text[text.rfind("\n", 0, start) + 1 : start]
    end = start + len(old)
    ends_mid_line = not old.endswith("\n") and text[end : end + 1] not in ("", "\n")
    return not before or bool(before.strip()) or ends_mid_line


def splice(text: str, old: list[str], new: list[str]) -> str:
    """`text` with the lines `old` (located tolerantly, uniquely) replaced by `new`."""
    lines, final_newline = _split(text)
    return _join(replace_lines(lines, old, new), final_newline)


def _applied_before(miss: matching.NoMatch, text: str, old: str, new: str) -> bool:
    """Whether the whole intended result is already there: `old` is gone and `new` stands
    once, with lines of `old` it keeps (so the place is proven, not a coincidence)."""
    if miss.places or isinstance(miss, Unsafe) or not new.strip() or text.count(new) != 1:
        return False
    kept = {line.strip() for line in split_lines(old)} & {line.strip() for line in split_lines(new)}
    return any(kept)


def _explain(miss: matching.NoMatch, text: str, snippet: list[str], rel: str) -> str:
    """Why a snippet did not apply, with the file's real lines the model should have copied."""
    lines, _ = _split(text)
    if isinstance(miss, Unsafe):
        return f"was found in {rel}, but {miss.reason}. Nothing changed."
    if miss.places:
        where = ", ".join(map(str, miss.places))
        return (
            f"{miss.reason} in {rel} (lines {where}), even allowing for whitespace; include "
            "more surrounding lines so it is unique. Nothing changed."
        )
    first, near = matching.closest(lines, snippet)
    return (
        f"was not found in {rel}, not even ignoring whitespace and indentation. Nothing "
        f"changed. The closest lines in the file are:\n{numbered(first, near)}\n"
        "Copy the text exactly from the file (without line numbers) and try again."
    )


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _lines(snippet: str) -> list[str]:
    return snippet[:-1].split("\n") if snippet.endswith("\n") else snippet.split("\n")


def _split(text: str) -> tuple[list[str], bool]:
    return split_lines(text), text.endswith("\n")


def _join(lines: list[str], final_newline: bool) -> str:
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if final_newline else "")


def patch_file(ctx: ToolContext, path: str, diff: str) -> ToolResult | Proposal:
    """Apply a unified diff.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: file to patch, relative to the workspace root
        diff: the unified diff (lines starting with ' ', '-', '+', hunks starting with @@)
    """
    found = open_for_write(ctx, path)
    if isinstance(found, ToolResult):
        return found
    rel, real, current = found
    return replace(_patch(ctx, rel, real, current, diff, path), target=rel)


def _patch(
    ctx: ToolContext, rel: str, real: Path, current: TextFile | None, diff: str, named: str
) -> ToolResult | Proposal:
    try:
        patches = parse_patch(diff)
        moves = {fp.moved_to for fp in patches if fp.moved_to}
        # The headers may name the file as the model did (a link's name) or as it really is.
        others = sorted(
            {
                p
                for fp in patches
                for p in (fp.source, fp.target)
                if p and not _same_path(p, rel) and not _same_path(p, named) and p not in moves
            }
        )
        if others:
            raise PatchError(
                f"the diff is for {', '.join(others)}, not {rel}; send one "
                "patch_file call per file, with that file's path"
            )
        if len(patches) > 1 and (moves or any(fp.deletes for fp in patches)):
            raise PatchError(
                f"the diff deletes or moves {rel} and also has other parts; send one "
                "patch_file call per file"
            )
        if current is None and not all(fp.creates or fp.source is None for fp in patches):
            raise PatchError(f"{rel} does not exist; use write_file to create it")
        # A diff that creates the file (from /dev/null) gives all of it, as write_file does.
        whole = current is not None and len(patches) == 1 and patches[0].creates
        base = "" if whole or current is None else current.text
        lines, final_newline = _with_hunks(base, patches)
        if current is not None and (patches[0].deletes or patches[0].moved_to):
            return _delete_or_move(ctx, rel, real, current, patches[0], lines, final_newline)
    except PatchError as error:
        return ToolResult(False, f"patch_file: {error}")
    after = _join(lines, final_newline or current is None or whole)
    if current is None or whole:
        return write_change(ctx, rel, real, current, after, whole="patch_file" if whole else "")

    def again(now: TextFile | None) -> str:
        """The hunks applied to what another run wrote meanwhile, located as a call made now
        would locate them; when they no longer apply, nothing is written."""
        try:
            if now is not None:
                return _join(*_with_hunks(now.text, patches))
        except PatchError:
            pass
        raise ChangedOnDisk(rel)

    return write_change(ctx, rel, real, current, after, rebase=again)


def _with_hunks(text: str, patches: list[FilePatch]) -> tuple[list[str], bool]:
    """The lines of `text` with every hunk of `patches` applied, and whether it ends with a
    line break."""
    lines, final_newline = _split(text)
    for file_patch in patches:
        lines = apply_hunks(lines, file_patch.hunks)
    return lines, final_newline


def _delete_or_move(
    ctx: ToolContext,
    rel: str,
    real: Path,
    current: TextFile,
    file_patch: FilePatch,
    lines: list[str],
    final_newline: bool,
) -> ToolResult | Proposal:
    """A diff that deletes the file (`+++ /dev/null`: never emptying it) or moves it, as
    delete_file and move_file would; its hunks applied first."""
    try:
        data = read_real(real)  # what the file must still hold when the change is made
    except FileNotFoundError:
        data = b""
    if digest_of(data) != current.digest:  # the hunks were checked against another content
        return ToolResult(False, f"patch_file: {changed_on_disk(rel)}", target=rel)
    if file_patch.deletes:
        left = [line for line in lines if line.strip()]
        if left and file_patch.hunks:  # `*** Delete File:` alone names the file, no lines
            raise PatchError(
                f"the diff deletes {rel} (+++ /dev/null), but its hunks leave "
                f"{len(left)} of its lines; nothing changed. Remove every line, or use "
                "delete_file"
            )
        return delete_proposal(ctx, rel, real, data)
    # A rename alone keeps the bytes as they are, whatever their line endings.
    content = current.encode(_join(lines, final_newline)) if file_patch.hunks else None
    return move_proposal(ctx, rel, real, data, str(file_patch.moved_to), content)


TOOLS = ((edit_file, "write"), (patch_file, "write"))


def _same_path(header: str, rel: str) -> bool:
    header = header.removeprefix("./")
    return header == rel or rel.endswith("/" + header) or header.endswith("/" + rel)


def _occurrence_lines(text: str, snippet: str) -> list[int]:
    lines, start = [], 0
    while (index := text.find(snippet, start)) != -1:
        lines.append(text.count("\n", 0, index) + 1)
        start = index + 1
    return lines
