"""What the snapshot store holds of a command's changes: each side's content read in batches of
at most READ_AT_ONCE bytes, and a content over LARGEST_KEPT never read (only its size)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hephaistus.records.filestate import LARGEST_KEPT, Side

READ_AT_ONCE = 64 * 2**20  # bytes of the store's contents read in one go, at most
Git = Callable[..., bytes]  # a git command on the store: git("cat-file", ..., data=...)


@dataclass(frozen=True)
class Changed:
    """One file a command created, changed or deleted: before and after (content and mode;
    None where it did not exist), and the size of each side."""

    path: str
    before: Side | None
    after: Side | None
    sizes: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class Named:
    """A change as git names it: each side's git mode, blob id and permission bits."""

    path: str
    before: tuple[str, str, int] | None
    after: tuple[str, str, int] | None

    def blobs(self) -> list[str]:
        """The blob ids of the sides that exist."""
        return [side[1] for side in (self.before, self.after) if side]


def read_changes(git: Git, named: list[Named]) -> Iterator[Changed]:
    """The changes with their contents, read in batches of at most READ_AT_ONCE bytes; a
    content over LARGEST_KEPT is never read."""
    sizes = _sizes(git, {sha for change in named for sha in change.blobs()})
    kept = {sha for sha, size in sizes.items() if size <= LARGEST_KEPT}
    batch: list[Named] = []
    load = 0
    for change in named:
        cost = sum(sizes[sha] for sha in change.blobs() if sha in kept)
        if batch and load + cost > READ_AT_ONCE:
            yield from _filled(git, batch, sizes, kept)
            batch, load = [], 0
        batch.append(change)
        load += cost
    yield from _filled(git, batch, sizes, kept)


def _filled(
    git: Git, batch: list[Named], sizes: dict[str, int], kept: set[str]
) -> Iterator[Changed]:
    contents = _contents(git, {sha for change in batch for sha in change.blobs()} & kept)

    def side(named: tuple[str, str, int] | None) -> Side | None:
        return None if named is None else (contents.get(named[1]), named[2])

    for change in batch:
        old, new = (sizes.get(s[1], 0) if s else 0 for s in (change.before, change.after))
        yield Changed(change.path, side(change.before), side(change.after), (old, new))


def _sizes(git: Git, blobs: set[str]) -> dict[str, int]:
    """The size of each blob, asked of the store in one go."""
    if not blobs:
        return {}
    raw = git("cat-file", "--batch-check", data="\n".join(blobs).encode() + b"\n")
    sizes = {}
    for line in raw.decode().splitlines():
        sha, kind, size = (line.split(" ") + ["", ""])[:3]
        if kind == "blob":
            sizes[sha] = int(size)
    return sizes


def _contents(git: Git, blobs: set[str]) -> dict[str, bytes]:
    """The content of each blob, read from the store in one go."""
    if not blobs:
        return {}
    raw = git("cat-file", "--batch", data="\n".join(blobs).encode() + b"\n")
    contents, at = {}, 0
    while at < len(raw):
        end = raw.index(b"\n", at)
        sha, kind, size = (raw[at:end].decode().split(" ") + ["", ""])[:3]
        at = end + 1
        if kind == "blob":  # (a blob the store named is never missing)
            contents[sha] = raw[at : at + int(size)]
            at += int(size) + 1
    return contents
