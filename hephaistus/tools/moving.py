"""delete_file and move_file: a file taken away or put elsewhere, through the write path's checks.

Both are writes (the modes and approvals treat them as such) made by the one write transaction:
checkpointed before they happen, so `heph undo` brings a deleted file back and moves a moved
one back, byte for byte and mode included. `patch_file` maps a diff's deletes and moves to the
same proposals. A link is never deleted or moved (heph writes a link's target, and would here
take away what someone else's link points to), and a move never replaces a file.
"""

from __future__ import annotations

from pathlib import Path

from hephaistus.records.transaction import ChangedOnDisk, InTheWay, move_checkpointed
from hephaistus.textfile import read_real, split_lines
from hephaistus.tools.context import ToolContext
from hephaistus.values import FileChange, Proposal, ToolResult
from hephaistus.wording import counted
from hephaistus.workspace import PathError
from hephaistus.workspace.diffs import bytes_diff, is_text

MAX_KEPT_BYTES = 16 << 20  # a copy is kept for undo: larger files are the person's to delete


def delete_file(ctx: ToolContext, path: str) -> ToolResult | Proposal:
    """Delete a file.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: file to delete, relative to the workspace root
    """
    found = _existing(ctx, path, "delete_file")
    if isinstance(found, ToolResult):
        return found
    rel, real, data = found
    return delete_proposal(ctx, rel, real, data)


def move_file(ctx: ToolContext, path: str, to: str) -> ToolResult | Proposal:
    """Move or rename a file.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: file to move, relative to the workspace root
        to: its new path (an existing folder, or a path ending in /, keeps the file's name)
    """
    found = _existing(ctx, path, "move_file")
    if isinstance(found, ToolResult):
        return found
    rel, real, data = found
    return move_proposal(ctx, rel, real, data, to)


def delete_proposal(ctx: ToolContext, rel: str, real: Path, data: bytes) -> Proposal:
    """The delete of `rel` (at `real`, holding `data`), for the runtime to decide."""
    diff = bytes_diff(rel, data, None)
    change = FileChange(rel, diff, False, deleted=True)

    def carry_out() -> ToolResult:
        failed = _carried_out(ctx, (rel, real), data)
        if failed:
            return failed
        size = (
            counted(len(split_lines(data.decode())), "line")
            if is_text(data)
            else counted(len(data), "byte")
        )
        return ToolResult(
            True,
            f"deleted {rel} ({size}; heph undo brings it back)",
            diff,
            changed=(change,),
            target=rel,
        )

    return Proposal("write", change, carry_out, f"{rel} was not deleted", target=rel, diff=diff)


def move_proposal(
    ctx: ToolContext, rel: str, real: Path, data: bytes, to: str, content: bytes | None = None
) -> ToolResult | Proposal:
    """The move of `rel` (at `real`, holding `data`) to `to`, holding `content` when given (a
    patch that also changes it), for the runtime to decide; or why it cannot be made."""
    destination = _destination(ctx, rel, to)
    if isinstance(destination, ToolResult):
        return destination
    to_rel, to_real = destination
    diff = f"diff --git a/{rel} b/{to_rel}\nrename from {rel}\nrename to {to_rel}\n"
    if content is not None and content != data:
        diff += "".join(bytes_diff(to_rel, data, content).splitlines(keepends=True)[2:])
    change = FileChange(to_rel, diff, True, moved_from=rel)

    def carry_out() -> ToolResult:
        failed = _carried_out(ctx, (rel, real), data, (to_rel, to_real), content)
        if failed:
            return failed
        gone = FileChange(rel, "", False, deleted=True)
        changed = "" if content is None or content == data else ", with the patch applied"
        return ToolResult(
            True,
            f"moved {rel} to {to_rel}{changed}",
            diff,
            changed=(gone, change),
            target=to_rel,
        )

    untouched = f"{rel} was not moved"
    return Proposal("write", change, carry_out, untouched, target=rel, diff=diff)


def _existing(ctx: ToolContext, path: str, tool: str) -> tuple[str, Path, bytes] | ToolResult:
    """(workspace-relative name, real path, content) of the file `path` names, or why `tool`
    cannot take it: no such file, a folder, a link, a secret, too large to keep a copy of."""
    try:
        rel, real = ctx.workspace.check(path, allow_secrets=ctx.allow_secrets, for_write=True)
    except PathError as exc:
        return ToolResult(False, f"{tool}: {exc}")
    if _is_link(ctx, path):
        return ToolResult(
            False, f"{tool}: {path} is a link; heph deletes and moves files, never links"
        )
    missing = ToolResult(False, f"{tool}: {rel} does not exist; nothing was done", target=rel)
    if not real.is_file():
        return missing
    try:  # another run may delete or move it meanwhile
        data = read_real(real, MAX_KEPT_BYTES + 1)
    except FileNotFoundError:
        return missing
    except OSError as exc:
        return ToolResult(False, f"{tool}: cannot read {rel}: {exc.strerror or exc}")
    if len(data) > MAX_KEPT_BYTES:
        return ToolResult(
            False,
            f"{tool}: {rel} is over 16 MB, too large for heph to keep a copy for undo; "
            "nothing was done (the user can do this)",
            target=rel,
        )
    return rel, real, data


def _is_link(ctx: ToolContext, path: str) -> bool:
    """Whether `path` as named is itself a link (a folder link on the way is followed, as
    every tool follows it, and checked to stay inside)."""
    named = Path(path) if Path(path).is_absolute() else ctx.workspace.root / path
    return named.is_symlink()


def _destination(ctx: ToolContext, rel: str, to: str) -> tuple[str, Path] | ToolResult:
    """(name, real path) of where `rel` moves when `to` is named: inside the workspace, no
    secret, and nothing there yet."""
    named = Path(to) if Path(to).is_absolute() else ctx.workspace.root / to
    if to.endswith("/") or (named.is_dir() and not named.is_symlink()):
        to = f"{to.rstrip('/')}/{Path(rel).name}" if to.strip("/") else Path(rel).name
    try:
        to_rel, to_real = ctx.workspace.check(to, allow_secrets=ctx.allow_secrets, for_write=True)
    except PathError as exc:
        return ToolResult(False, f"move_file: {exc}; nothing was done")
    if to_rel == rel:
        return ToolResult(False, f"move_file: {rel} is already there; nothing was done")
    if to_real.exists() or Path(named).is_symlink():
        return ToolResult(
            False,
            f"move_file: {to_rel} exists already; heph never moves a file over another "
            "(delete it first if it should go). Nothing was done",
        )
    return to_rel, to_real


def _carried_out(
    ctx: ToolContext,
    source: tuple[str, Path],
    data: bytes,
    to: tuple[str, Path] | None = None,
    content: bytes | None = None,
) -> ToolResult | None:
    """None when the delete (or move) was made; else why nothing was done."""
    rel = source[0]
    try:
        move_checkpointed(ctx.workspace, ctx.checkpoints, source, data, to, content)
    except ChangedOnDisk:
        return ToolResult(
            False,
            f"{rel} changed on disk since heph read it (another program wrote or removed it); "
            "nothing was done",
            target=rel,
        )
    except InTheWay as exc:
        return ToolResult(False, f"{exc} appeared meanwhile; nothing was moved", target=rel)
    except OSError as exc:
        return ToolResult(False, f"cannot change {rel}: {exc.strerror or exc}", target=rel)
    return None


TOOLS = ((delete_file, "write"), (move_file, "write"))
