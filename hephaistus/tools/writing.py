"""The write path every writing tool shares: check the path, read the file, prepare the change
with its diff (for the runtime to decide), and write it under the workspace's lock,
checkpointed and atomic (the one write transaction, which `heph docs` uses too).

A change is written only if the file still holds what was read, or, when another run wrote it
meanwhile, made again on what it holds now where it can be (an append, an edit, a patch; see
`write_change`). The REPL's /diff shows changes with the same unified diff. A change that
replaces a whole file (write_file, a patch from /dev/null) lands only on content the model has
seen: what it last read, or wrote itself, in this conversation (see `Seen`). A file without
write permission is never replaced.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from hephaistus.records.transaction import ChangedOnDisk, write_checkpointed
from hephaistus.textfile import (
    MAX_WHOLE_FILE_BYTES,
    NEW_FILE,
    READ_ONLY,
    NotTextError,
    TextFile,
    atomic_write,
    digest_of,
    may_write,
    read_text,
    split_lines,
)
from hephaistus.tools.context import ToolContext, as_buffered
from hephaistus.values import FileChange, Proposal, ToolResult
from hephaistus.wording import counted
from hephaistus.workspace import PathError
from hephaistus.workspace.diffs import line_list, unified_diff


def open_for_write(ctx: ToolContext, path: str) -> tuple[str, Path, TextFile | None] | ToolResult:
    """(workspace-relative path, real path, the file as read or None when it is new) for a
    write to `path`, or a failed ToolResult saying why it cannot be written: a path heph may
    not write, a file over 1 MB, not text or without write permission."""
    try:
        rel, real = ctx.workspace.check(path, allow_secrets=ctx.allow_secrets, for_write=True)
    except PathError as exc:
        return ToolResult(False, str(exc))
    if not real.exists():
        return rel, real, None
    try:
        found = _writable_text(rel, real)
    except FileNotFoundError:  # another run deleted it a moment ago
        return rel, real, None
    return found if isinstance(found, ToolResult) else (rel, real, as_buffered(ctx, real, found))


def _writable_text(rel: str, real: Path) -> TextFile | ToolResult:
    """The existing file `rel` as read, or why it cannot be written (FileNotFoundError when
    there is none)."""
    if real.stat().st_size > MAX_WHOLE_FILE_BYTES:
        return ToolResult(False, f"{rel} is over 1 MB; heph does not rewrite files that large")
    if not may_write(real):
        return ToolResult(False, read_only(rel), target=rel)
    try:
        return read_text(real, rel)
    except NotTextError as exc:
        return ToolResult(False, str(exc))
    except FileNotFoundError:
        raise
    except OSError as exc:
        return ToolResult(False, f"cannot read {rel}: {exc.strerror or exc}")


def write_change(
    ctx: ToolContext,
    rel: str,
    real: Path,
    old: TextFile | None,
    content: str,
    rebase: Callable[[TextFile | None], str] | None = None,
    told: str = "",
    whole: str = "",
) -> ToolResult | Proposal:
    """The write of `content` to `rel`, prepared for the runtime to decide (nothing to do when
    the file holds it already). Carried out, it writes unless the file changed since `old` was
    read: then `rebase` (when the change can be made again on the new text, as an append can)
    works out the content anew, or nothing is written. `told` is what the model is told of a
    change that is exactly what it sent, instead of the change's hunks. `whole` names the tool
    when the change replaces all of an existing file: refused unless the model saw what the
    file holds."""
    before = old.text if old else ""
    after = content.replace("\r\n", "\n")
    if old is not None and after == before:
        if whole:  # it knows what the file holds: it sent all of it
            Seen(ctx).note(rel, old.digest)
        return ToolResult(True, f"{rel} already has that content; nothing written", target=rel)
    if whole and old is not None and old.text.strip():
        unseen = Seen(ctx).why_unseen(rel, old, whole)
        if unseen:
            return ToolResult(False, unseen, target=rel)
    diff = unified_diff(rel, before, after, created=old is None)
    change = FileChange(rel, diff, old is None, old_text=before, new_text=after)

    def carry_out() -> ToolResult:
        seen = Seen(ctx)
        known = bool(whole) or old is None or seen.digest(rel) == old.digest
        try:
            found, written = write_checkpointed(
                ctx.workspace, ctx.checkpoints, rel, real, old, after, rebase
            )
        except ChangedOnDisk:
            return ToolResult(False, changed_on_disk(rel), target=rel)
        except NotTextError as exc:
            return ToolResult(False, f"{exc}; nothing was written", target=rel)
        except OSError as exc:  # made read-only since the change was prepared, or another
            why = exc.strerror or str(exc)
            refusal = read_only(rel) if why == READ_ONLY else f"cannot write {rel}: {why}"
            return ToolResult(False, refusal, target=rel)
        made, said = change, told
        if found != old:  # rebased on what another program wrote meanwhile
            diff = unified_diff(rel, found.text if found else "", written, created=found is None)
            made, said = FileChange(rel, diff, found is None), ""  # its lines moved: show them
        elif known:  # what it holds now is what the model knew with its change made
            seen.note(rel, digest_of((found or NEW_FILE).encode(written)))
        return ToolResult(
            True,
            _summary(rel, made, found, written, said),
            made.diff,
            changed=(made,),
            target=rel,
        )

    return Proposal(
        "write", change, carry_out, f"{rel} was not changed", target=rel, diff=change.diff
    )


def changed_on_disk(rel: str) -> str:
    """What the model is told when a file changed between its read and heph's write."""
    return (
        f"{rel} changed on disk since heph read it (another program wrote it); nothing was "
        "written. Read it again and redo the change."
    )


def read_only(rel: str) -> str:
    """What the model is told of a change to a file the person made read-only."""
    return (
        f"{rel} is read-only (no write permission), so heph leaves it as it is; nothing was "
        f"written. If it should change, ask the user to make it writable (chmod u+w {rel})."
    )


class Seen:
    """What the model has seen of each workspace file in this conversation: the digest of the
    content it last read whole or in part, or that its own change left. Kept in the user's
    state folder, which no repository and no command can write, one record per conversation
    (named by its first session), so the chat's later turns and `--continue` know what was
    read, and another run or a new conversation does not."""

    MAX_FILES = 2000  # files remembered per conversation, the oldest forgotten first

    def __init__(self, ctx: ToolContext) -> None:
        from hephaistus.settings.userdirs import workspace_folder

        first = ctx.sessions[0] if ctx.sessions else "outside-a-conversation"
        name = re.sub(r"[^\w.-]", "_", first)
        self.path = workspace_folder(ctx.workspace.root, "seen") / f"{name}.json"

    def digest(self, rel: str) -> str | None:
        """The digest of `rel` as the model last saw it, or None when it has not."""
        return self._all().get(rel)

    def note(self, rel: str, digest: str | None) -> None:
        """The model has seen `rel` holding the content of `digest` (None: it no longer knows
        what the file holds)."""
        records = self._all()
        if digest is not None and list(records.items())[-1:] == [(rel, digest)]:
            return  # as it was (the same file read again, in parts): no write, no fsync
        records.pop(rel, None)
        if digest is not None:
            records[rel] = digest
        kept = dict(list(records.items())[-self.MAX_FILES :])
        atomic_write(self.path, json.dumps(kept, indent=0).encode(), mode=0o600)

    def why_unseen(self, rel: str, current: TextFile, tool: str) -> str:
        """Why `tool` may not replace all of `rel`, which holds `current`: the model has not
        read it, or it changed since; "" when it may."""
        seen = self.digest(rel)
        if seen == current.digest:
            return ""
        if seen is None:
            why = f"you have not read {rel} in this conversation"
        else:
            why = f"{rel} changed since you last read it (another editor, a run or a command)"
        return (
            f"{tool}: {why}, so replacing all of it could lose what it holds now. Nothing was "
            "written: read it again (read_file) and redo the change on what it holds, or "
            "change only part of it with edit_file."
        )

    def _all(self) -> dict[str, str]:
        try:
            records = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        return records if isinstance(records, dict) else {}


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
    return summary + "\n" + "".join(line_list(hunks)[2:])  # without the ---/+++ lines
