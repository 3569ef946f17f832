"""What of the host's /tmp a sandbox shows (its own /tmp is new and empty): read-only, the
folders a command's toolchain comes from, and what a person's own MCP entry names there."""

from __future__ import annotations

import os
from pathlib import Path


def toolchains_in_tmp(argv: list[str], env: dict[str, str], workspace: Path) -> list[Path]:
    """The folders under /tmp a command's program comes from (its own path, a PATH entry, a
    virtual environment): the sandbox's /tmp is its own, so these are shown in it, read-only.
    A virtual environment is shown whole (its `bin` alone would not run)."""
    named = [argv[0]] if argv and "/" in argv[0] else []
    named += [entry for entry in env.get("PATH", "").split(os.pathsep) if entry]
    named += [env["VIRTUAL_ENV"]] if env.get("VIRTUAL_ENV") else []
    found: list[Path] = []
    for name in named:
        path = Path(name)
        if not path.is_absolute() or path.parts[:2] != ("/", "tmp") or not path.exists():
            continue
        folder = path if path.is_dir() else path.parent
        if folder.name == "bin" and (folder.parent / "pyvenv.cfg").exists():
            folder = folder.parent
        inside = folder == workspace or workspace in folder.parents
        if not inside and folder not in found and folder != Path("/tmp"):
            found.append(folder)
    return found


def named_in_tmp(words: list[str], workspace: Path) -> list[Path]:
    """What of /tmp the person's own command line (an MCP server entry) names, to be shown
    read-only in the sandbox's /tmp: a file right in /tmp, else the folder of /tmp holding
    it (a script beside its modules). Never a command the model wrote: it could name anything."""
    found: list[Path] = []
    for part in [part for word in words for part in (word, word.partition("=")[2])]:
        if not os.path.isabs(part):
            continue
        path = Path(os.path.realpath(part))  # `/tmp/..` is no folder of /tmp
        if path.parts[:2] != ("/", "tmp") or len(path.parts) < 3:
            continue
        shown = Path(*path.parts[:3])
        inside = shown == workspace or workspace in shown.parents or shown in workspace.parents
        if shown.exists() and not shown.is_symlink() and not inside and shown not in found:
            found.append(shown)
    return found
