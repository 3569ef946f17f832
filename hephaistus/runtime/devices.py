"""heph's own /dev nodes for a sandbox run as root: its commands run as nobody and see these
(nobody's, in heph's state folder) instead of the host's, which a process of root's could change."""

from __future__ import annotations

import os
import stat
from pathlib import Path

NOBODY = 65534
DEVICES = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8), "urandom": (1, 9)}
DEVICES_FOLDER = "devices"


def private_devices() -> list[tuple[Path, str]]:
    """As root: heph's own copies of /dev's null, zero, full, random and urandom (made in its
    state folder, owned by nobody), shown in the sandbox instead of the host's. A process of
    root's changes the mode or owner of a node root owns (`cp -p x /dev/null` left the host's
    644); of these it is not the owner. None where they cannot be made or used (a file system
    mounted nodev): then the host's are shown."""
    from hephaistus.settings.userdirs import state_dir

    folder = state_dir() / DEVICES_FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        made = [(_device(folder / name, *numbers), name) for name, numbers in DEVICES.items()]
        os.close(os.open(folder / "null", os.O_WRONLY | os.O_NOFOLLOW))  # refused if nodev
    except OSError:
        return []
    return made


def _device(node: Path, major: int, minor: int) -> Path:
    """The character device `node` (major, minor), nobody's, that everyone may read and
    write: made anew when it is anything else."""
    try:
        info = os.lstat(node)
        wanted = (stat.S_IFCHR | 0o666, os.makedev(major, minor), NOBODY)
        if (info.st_mode, info.st_rdev, info.st_uid) == wanted:
            return node
        os.unlink(node)
    except FileNotFoundError:
        pass
    os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(major, minor))
    os.chown(node, NOBODY, NOBODY, follow_symlinks=False)
    os.chmod(node, 0o666, follow_symlinks=False)  # not the umask's
    return node
