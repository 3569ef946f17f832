"""What undo says it did: each file put back, heph's own lines taken back from a file another
run wrote too, or another's lines taken away under --force; and why it refused."""

from __future__ import annotations

from typing import Any


def refusal(error: Exception, force: str = "--force", verb: str = "undo") -> str:
    """Why an undo (or redo) was refused, the same words in the chat and on the command line;
    `force` is how the person would insist."""
    from hephaistus.records.checkpoints import Interleaved, UndoConflict

    done = f"not {verb}ne"
    if isinstance(error, UndoConflict):
        since = "heph wrote them" if verb == "undo" else "the undo"
        return (
            f"{done}: these files changed since {since}: {', '.join(error.paths)}. "
            f"Going on would lose those changes; {force} to {verb} anyway"
        )
    if isinstance(error, Interleaved):
        return f"{done}: {_interleaved(error.taken, force)}"
    return f"{done}: {error}"


def _interleaved(taken: dict[str, int], force: str) -> str:
    """Which files another writer changed between heph's writes, and how many of their lines
    forcing would take away."""
    from hephaistus.wording import counted

    files = ", ".join(
        f"{path} ({counted(lines, 'line')} of theirs)" for path, lines in taken.items()
    )
    return (
        f"another run or program also wrote {files} between heph's writes, and heph's lines "
        f"there cannot be told from theirs. Undoing would take theirs away too; {force} "
        "to undo anyway, taking them away"
    )


def undo_report(result: Any, verb: str = "restored") -> list[str]:
    """One line a file: what undo (or redo) did to it."""
    from hephaistus.records.filestate import LARGEST_KEPT
    from hephaistus.wording import counted

    lines = []
    for path in result.restored:
        if path in result.own_lines_only:
            lines.append(f"  {verb} {path}: heph's lines taken back, another run's kept")
        elif path in result.taken:
            taken = counted(result.taken[path], "line")
            lines.append(f"  {verb} {path}, taking away {taken} another run wrote meanwhile")
        else:
            lines.append(f"  {verb} {path}")
    for path in result.deleted:
        lines.append(
            f"  deleted  {path} (heph had created it; too large to keep a copy of: redo cannot "
            "bring it back)"
            if path in result.unkept
            else f"  deleted  {path} (heph had created it)"
        )
    made = result.repositories
    lines += [f"  removed  {path} (a git repository a command made)" for path in made]
    lines += [
        f"  kept     {path} as it is: it was over {LARGEST_KEPT // 2**20} MB when a command "
        "changed or deleted it, so heph kept no copy of what it held"
        for path in result.unkept
        if path not in result.deleted
    ]
    return lines
