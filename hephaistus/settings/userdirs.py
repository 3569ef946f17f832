"""Where heph keeps a person's own files (the user config, the chat history, its records of
each workspace): the platform's folders (platformdirs: ~/Library/Application Support on macOS,
%LOCALAPPDATA% on Windows, the XDG folders on Linux). `XDG_CONFIG_HOME` / `XDG_STATE_HOME` are
honoured wherever they are set, and a folder an earlier version made under ~/.config or
~/.local/state keeps being used.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

APP = "hephaistus"


def config_dir() -> Path:
    """Holds config.toml."""
    return _config_dir(os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))


def state_dir() -> Path:
    """Holds the chat history."""
    return _state_dir(os.environ.get("XDG_STATE_HOME"), os.environ.get("HOME"))


# Asked on every step (each read notes what the model saw): the answer is the same for the
# same variables, so it is worked out once for them.
@functools.lru_cache(maxsize=8)
def _config_dir(xdg_config_home: str | None, home: str | None) -> Path:
    from platformdirs import user_config_dir

    legacy = Path.home() / ".config" / APP
    return chosen(xdg_config_home, Path(user_config_dir(APP, False)), legacy)


@functools.lru_cache(maxsize=8)
def _state_dir(xdg_state_home: str | None, home: str | None) -> Path:
    from platformdirs import user_state_dir

    legacy = Path.home() / ".local" / "state" / APP
    return chosen(xdg_state_home, Path(user_state_dir(APP, False)), legacy)


def workspace_folder(root: Path, kind: str, *, make: bool = True) -> Path:
    """heph's own records of the workspace at `root` that no repository and no command may
    plant or replace (the snapshot store, server logs): in the user's state folder, which the
    sandbox hides, one folder per workspace (by its real path), made by heph for the person
    alone (unless `make` is false: where it is, made or not)."""
    import hashlib

    digest = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:16]
    folder = state_dir() / "workspaces" / digest / kind
    if make:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def records_folder(root: Path, name: str) -> Path:
    """Where heph keeps its records of the workspace at `root`: its folder `name` (`.heph`);
    for a folder that is no project (the home folder, one holding it, `/`) or that the person
    may not write (its mode, a read-only mount), the workspace's folder in the user's state
    folder, so that heph creates nothing there."""
    if is_project_folder(root) and os.access(root, os.W_OK):
        return root / name
    return workspace_folder(root, "records")


def is_project_folder(root: Path) -> bool:
    """Whether `root` (a real path) looks like a project: not the home folder, nor a folder
    holding it."""
    home = Path(os.path.realpath(Path.home()))
    return root != home and root not in home.parents


def chosen(xdg_home: str | None, platform: Path, legacy: Path) -> Path:
    """The XDG variable's folder when set; else the platform's, unless only the folder of an
    earlier version exists (it keeps working)."""
    if xdg_home:
        return Path(xdg_home) / APP
    if not platform.exists() and legacy.exists():
        return legacy
    return platform
