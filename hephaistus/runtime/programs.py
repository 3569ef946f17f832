"""heph's own programs (`git`, `bwrap`): found on a PATH that no workspace and no command chose.

heph runs git and bubblewrap itself, on the host, with its environment (the API key in it). A
PATH entry that is relative (`./bin`, an empty entry: the current folder), inside the workspace
(an activated `.venv/bin`) or in a folder the sandbox can write (its cache) holds whatever a
cloned repository or a sandboxed command put there: a `git` or `bwrap` there would run outside
the sandbox. So heph's own PATH leaves those entries out, once the workspace is known
(`settle`), and os.environ's PATH becomes that one for every library heph calls (`openai` asks
`platform`, which runs `uname`). The commands heph runs in the sandbox get the PATH heph was
started with (`command_path`): there a planted program reaches nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_started_with: str | None = None  # os.environ's PATH before heph cleaned it
_set_to: str | None = None  # what heph set it to (changed since: started anew, as in a test)
_unsafe: set[str] = set()  # real folders whose programs heph never runs (workspaces, caches)
_found: dict[tuple[str, str], str | None] = {}  # (name, PATH) -> the program's absolute path


def settle(workspace: Path) -> None:
    """From now on, heph's own PATH (os.environ's) leaves out the relative entries and the
    folders `workspace` holds or the sandbox can write; the PATH heph started with is kept for
    the commands it runs in the sandbox. Called when a workspace is known (again for another
    one: entries are only ever taken out)."""
    global _started_with, _set_to
    now = os.environ.get("PATH", os.defpath)
    if _started_with is None or now != _set_to:
        _started_with = now
    before = len(_unsafe)
    _unsafe.update({os.path.realpath(workspace), os.path.realpath(sandbox_caches())})
    if len(_unsafe) != before:
        _found.clear()
    _set_to = os.environ["PATH"] = safe_path(_started_with)


def command_path() -> str:
    """The PATH the commands heph runs in the sandbox get: the one heph was started with."""
    if _started_with is not None and os.environ.get("PATH") == _set_to:
        return _started_with
    return os.environ.get("PATH", os.defpath)


def safe_path(path: str) -> str:
    """`path` without relative or empty entries and without the unsafe folders' entries."""
    kept = [entry for entry in path.split(os.pathsep) if is_safe(entry)]
    return os.pathsep.join(dict.fromkeys(kept))


def is_safe(entry: str) -> bool:
    """Whether heph may run programs from the PATH entry `entry`."""
    if not entry or not os.path.isabs(entry):
        return False
    real = os.path.realpath(entry)
    return not any(
        real == unsafe or real.startswith(os.path.join(unsafe, "")) for unsafe in _unsafe
    )


def find(name: str) -> str | None:
    """The absolute path of heph's program `name` (a name looked up on the safe PATH, or the
    absolute path the person's config gives), or None when there is none to run."""
    key = (name, os.environ.get("PATH", os.defpath))
    if key not in _found:
        if os.path.isabs(name):
            runnable = os.access(name, os.X_OK) and is_safe(str(Path(name).parent))
            _found[key] = name if runnable else None
        else:
            found = shutil.which(name, path=safe_path(key[1]))
            _found[key] = os.path.abspath(found) if found else None
    return _found[key]


def missing(name: str) -> str:
    """Why heph has no `name` to run: not installed, or only where the workspace or a command
    could have put it."""
    elsewhere = shutil.which(name, path=command_path())
    if elsewhere:
        return (
            f"{name} is found only at {elsewhere}, where the workspace or a command could have "
            f"put it; heph runs no program from there"
        )
    return f"{name} is not installed (or not on PATH)"


def sandbox_caches() -> Path:
    """The folder of the sandbox's cache folders (each workspace's is writable inside)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("hephaistus", False)) / "sandbox"


def own_installation(workspace: Path) -> list[Path]:
    """The Python environment heph runs from, where it lies in `workspace` (a project's virtual
    environment heph was installed in): the sandbox shows it read-only. A command that wrote
    there (a `.pth` file, a package heph imports, the interpreter's link) would run as the person
    at heph's next start, with the key in reach."""
    import sys

    root = os.path.realpath(workspace)
    found = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    return sorted(Path(p) for p in found if p != root and Path(p).is_relative_to(root))
