"""Which files a workspace that is not a git repository ignores: its `.gitignore` files, read
as git reads them (pathspec's gitwildmatch: `!` negation, `**`, anchored and folder-only
patterns), the root one and every nested one, a deeper file's rules winning. In a git
repository git itself answers (`git ls-files`), so this is only the fallback.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from hephaistus.textfile import text_of


class IgnoreRules:
    """The `.gitignore` rules of a workspace outside git, each file read once, when first needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, Any] = {}  # folder (relative to root, "" for it) -> its spec

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """Whether `rel` (relative to the root, "/"-separated) is ignored. As git does not look
        inside an ignored folder, a walk must not descend into one: nothing in it comes back."""
        parts = rel.split("/")
        decision = None
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            spec = self._spec(folder)
            if spec is None:
                continue
            below = "/".join(parts[depth:]) + ("/" if is_dir else "")
            include = spec.check_file(below).include
            if include is not None:
                decision = include
        return bool(decision)

    def _spec(self, folder: str) -> Any:
        if folder not in self._specs:
            path = self.root / folder / ".gitignore" if folder else self.root / ".gitignore"
            self._specs[folder] = _parse(path)
        return self._specs[folder]


def _parse(path: Path) -> Any:
    text = text_of(path)
    return None if text is None else _compile(text)  # none there (the common case): no rules


@cache
def _compile(text: str) -> Any:
    import pathspec  # only walks outside git need it

    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())
