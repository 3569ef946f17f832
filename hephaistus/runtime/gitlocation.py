"""Where a workspace's git repository is, decided once per run, and whether heph runs git in it.

The repository is located when the workspace opens (`settle`, before the trust decision): a
`.git` a command makes later, in the workspace or a folder of it (a `gitdir:` file naming a
repository it built), leads nothing heph runs elsewhere. While the workspace is untrusted and
its `.git/` holds settings that run programs (see gitsetup), heph runs no git there (`disable`).
"""

from __future__ import annotations

import os
from pathlib import Path

Located = tuple[Path, Path]  # (work tree, git directory)
_settled: dict[Path, Located | None] = {}  # workspace root -> its repository, found at start
_disabled: set[str] = set()  # work trees where heph runs no git (an untrusted odd .git/)


def settle(root: Path) -> None:
    """Locate the repository around the workspace `root` now, as the run starts: from here on
    every git call for `root`, a folder in it or that repository's top uses this location, and
    a `.git` that appears later (a command can write one in a subfolder workspace, or where
    there was no repository) changes nothing heph runs."""
    root = Path(os.path.abspath(root))
    _settled[root] = _nearest(root)


def locate(folder: Path) -> Located | None:
    """(work tree, git directory) of the repository around `folder`: as settled when its
    workspace opened, else the `.git` nearest around it (see `_nearest`)."""
    folder = Path(os.path.abspath(folder))
    best: Path | None = None
    for root, located in _settled.items():
        within = folder == root or root in folder.parents
        if (within or (located is not None and folder == located[0])) and (
            best is None or len(root.parts) > len(best.parts)
        ):
            best = root
    return _settled[best] if best is not None else _nearest(folder)


def _nearest(folder: Path) -> Located | None:
    """(work tree, git directory) of the `.git` nearest around `folder`: a folder, or a
    `gitdir:` file's target (a worktree's, a submodule's); None when there is none. A bare
    repository is never found this way, and no `.git` farther up is looked for."""
    from hephaistus.settings.config import owned_by_me

    for top in (folder, *folder.parents):
        marker = top / ".git"
        if not os.path.lexists(marker):
            continue
        if not owned_by_me(marker):
            return None  # another user's repository: git itself would refuse it
        if marker.is_file() and not marker.is_symlink():
            try:
                text = marker.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            target = Path(text.split(":", 1)[1].strip())
            return top, target if target.is_absolute() else (top / target)
        return top, marker  # a folder (or a link to one: gitsetup says so)
    return None


def disable(folder: Path) -> None:
    """Run no git for `folder`'s repository for the rest of this process."""
    located = locate(folder)
    if located is not None:
        _disabled.add(str(located[0]))


def enable(folder: Path) -> None:
    """Run git for `folder`'s repository again, as a trusted workspace (or one with nothing to
    trust) may."""
    located = locate(folder)
    if located is not None:
        _disabled.discard(str(located[0]))


def is_disabled(folder: Path) -> bool:
    """Whether git is switched off for `folder`'s repository in this process."""
    located = locate(folder)
    return located is not None and runs_no_git(located)


def runs_no_git(located: Located) -> bool:
    """Whether git is switched off for the repository `located` in this process."""
    return str(located[0]) in _disabled
