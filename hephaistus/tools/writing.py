"""The write path every writing tool shares: check the path, read the file, prepare the change
with its diff (for the runtime to decide), and write it under the file's lock, checkpointed and
atomic (the one write transaction, which `heph docs` uses too).

A change is written only if the file still holds what was read; the REPL's /diff shows changes
with the same unified diff.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from hephaistus.textfile import (
    MAX_WHOLE_FILE_BYTES,
    NotTextError,
    TextFile,
    read_text,
    split_lines,
)
from hephaistus.tools.context import ToolContext
from hephaistus.transaction import ChangedOnDisk, write_checkpointed
from hephaistus.values import FileChange, Proposal, ToolResult
from hephaistus.wording import counted
from hephaistus.workspace import PathError


def open_for_write(ctx: ToolContext, path: str) -> tuple[str, Path, TextFile | None] | ToolResult:
    """(workspace-relative path, real path, the file as read or None when it is new) for a
    write to `path`, or a failed ToolResult saying why it cannot be written: a path heph may
    not write, a file over 1 MB or not text."""
    try:
        rel, real = ctx.workspace.check(path, allow_secrets=ctx.allow_secrets, for_write=True)
    except PathError as exc:
        return ToolResult(False, str(exc))
    if not real.exists():
        return rel, real, None
    if real.stat().st_size > MAX_WHOLE_FILE_BYTES:
        return ToolResult(False, f"{rel} is over 1 MB; heph does not rewrite files that large")
    try:
        return rel, real, read_text(real, rel)
    except NotTextError as exc:
        return ToolResult(False, str(exc))
    except OSError as exc:
        return ToolResult(False, f"cannot read {rel}: {exc.strerror or exc}")


def unified_diff(
    rel: str, before: str, after: str, *, created: bool, deleted: bool = False, context: int = 3
) -> str:
    """The change from `before` to `after` as a unified diff of `rel` with `context` lines around
    each change; `created` (`deleted`) diffs from (to) /dev/null, as git shows a new (deleted)
    file."""
    lines = difflib.unified_diff(
        _with_ends(before),
        _with_ends(after),
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


def _with_ends(text: str) -> list[str]:
    """The lines of `text`, each with its LF: broken at LF only, as git counts them (a form feed
    or U+2028 inside a line is no line break, and no "No newline" marker in a diff)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # what follows the last LF
    return lines if lines[-1] else lines[:-1]


def write_change(
    ctx: ToolContext,
    rel: str,
    real: Path,
    old: TextFile | None,
    content: str,
    rebase: Callable[[TextFile | None], str] | None = None,
    told: str = "",
) -> ToolResult | Proposal:
    """The write of `content` to `rel`, prepared for the runtime to decide (nothing to do when
    the file holds it already). Carried out, it writes unless the file changed since `old` was
    read: then `rebase` (when the change can be made again on the new text, as an append can)
    works out the content anew, or nothing is written. `told` is what the model is told of a
    change that is exactly what it sent, instead of the change's hunks."""
    before = old.text if old else ""
    after = content.replace("\r\n", "\n")
    if old is not None and after == before:
        return ToolResult(True, f"{rel} already has that content; nothing written", target=rel)
    diff = unified_diff(rel, before, after, created=old is None)
    change = FileChange(rel, diff, old is None, old_text=before, new_text=after)

    def carry_out() -> ToolResult:
        try:
            found, written = write_checkpointed(
                ctx.workspace, ctx.checkpoints, rel, real, old, after, rebase
            )
        except ChangedOnDisk:
            return ToolResult(
                False,
                f"{rel} changed on disk since heph read it (another program wrote it); nothing "
                "was written. Read it again and redo the change.",
                target=rel,
            )
        except NotTextError as exc:
            return ToolResult(False, f"{exc}; nothing was written", target=rel)
        except OSError as exc:
            return ToolResult(False, f"cannot write {rel}: {exc.strerror or exc}", target=rel)
        made = change
        if found != old:  # rebased on what another program wrote meanwhile
            diff = unified_diff(rel, found.text if found else "", written, created=found is None)
            made = FileChange(rel, diff, found is None)
        return ToolResult(
            True,
            _summary(rel, made, found, written, told),
            made.diff,
            changed=(made,),
            target=rel,
        )

    return Proposal(
        "write", change, carry_out, f"{rel} was not changed", target=rel, diff=change.diff
    )


def _summary(rel: str, change: FileChange, old: TextFile | None, after: str, told: str) -> str:
    """What the model is told of a write: where text it sent exactly now stands, and of a new
    file nothing more (it knows what it sent). Otherwise the hunks with one line of context (the
    path is named above). The person and the session get the whole diff."""
    verb = "created" if change.created else "updated"
    summary = f"{verb} {rel} ({counted(len(split_lines(after)), 'line')})"
    if told:
        return f"{summary}: {told}"
    if change.created:
        return summary
    hunks = unified_diff(rel, old.text if old else "", after, created=False, context=1)
    return summary + "\n" + "".join(_with_ends(hunks)[2:])  # without the ---/+++ lines
