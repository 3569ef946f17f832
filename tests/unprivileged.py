"""Running heph's code as the unprivileged user nobody, from a suite run as root: the attacks on
heph's own hands must fail for a person who is not root too (another sandbox path: no cgroup,
no device nodes of heph's own, the per-user process limit).

nobody cannot enter the home folder the test's Python may live in (pyenv's, under /root), so it
gets a virtual environment of the system's Python of the same version, made in /var/tmp, whose
`.pth` file points at this checkout and at the site-packages heph's dependencies are in. Where
either lies under /tmp, which the sandbox replaces, the tests skip: heph's servers started in the
sandbox could not import it there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

NOBODY = 65534
CHECKOUT = Path(__file__).resolve().parent.parent


def python_for_nobody() -> Path:
    """A Python nobody can run, with heph and its dependencies importable; skips the test where
    that cannot be arranged (not root, no setpriv, no system Python of this version)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    system = Path(f"/usr/bin/python{version}")
    if os.getuid() != 0 or shutil.which("setpriv") is None or not system.exists():
        pytest.skip(f"needs root, setpriv and /usr/bin/python{version} to run as nobody")
    sites = [path for path in sys.path if path.endswith("site-packages")]
    hidden = [path for path in (str(CHECKOUT), *sites) if _under_tmp(path)]
    if hidden:  # a server heph starts in the sandbox as nobody could not import heph
        pytest.skip(
            f"{', '.join(hidden)} lies under /tmp, which the sandbox replaces with its own: "
            "run the suite from a checkout and a virtual environment elsewhere"
        )
    folder = Path(tempfile.mkdtemp(prefix="heph-nobody-venv-", dir="/var/tmp"))
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(folder)], check=True)
    (folder / "lib" / f"python{version}" / "site-packages" / "heph.pth").write_text(
        "\n".join([str(CHECKOUT), *sites]) + "\n"
    )
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))
    return folder / "bin" / "python"


def _under_tmp(path: str) -> bool:
    return Path(os.path.realpath(path)).is_relative_to("/tmp")


def nobodys_folder() -> Path:
    """A folder nobody owns, outside /tmp (the sandbox's /tmp is its own)."""
    folder = Path(tempfile.mkdtemp(prefix="heph-nobody-", dir="/var/tmp"))
    os.chown(folder, NOBODY, NOBODY)
    return folder


def run_as_nobody(
    argv: list[str], home: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`argv` run as nobody, with `home` as its home and temporary folder and no other
    environment than a plain PATH; skips where nobody cannot import heph."""
    env = {"HOME": str(home), "TMPDIR": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    setpriv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    done = subprocess.run(
        [*setpriv, *argv], capture_output=True, text=True, env=env, timeout=timeout, cwd=home
    )
    if "No module named" in done.stderr or "Permission denied: '" in done.stderr:
        pytest.skip(f"nobody cannot import heph here: {done.stderr.strip().splitlines()[-1]}")
    return done
