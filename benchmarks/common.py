"""What the benchmark scripts share: the `heph` command, the report line, timing a command and
an import, a stdlib copy."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from hephaistus.testing import heph_command

__all__ = ["heph_command", "import_seconds", "report", "stdlib_copy", "timed"]


def report(name: str, seconds: list[float], extra: str = "") -> None:
    """One line: median, min and max in milliseconds, and the number of runs."""
    print(
        f"{name:<28} median {statistics.median(seconds) * 1000:7.0f} ms  "
        f"(min {min(seconds) * 1000:.0f}, max {max(seconds) * 1000:.0f}, n={len(seconds)})"
        f"{extra}"
    )


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds `argv` took to run to its end; the script stops with its errors if it failed."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{done.stderr}")
    return time.perf_counter() - started


def import_seconds(statement: str, runs: int) -> list[float]:
    """What `statement` (an import) adds to a Python start, over `runs` pairs of starts."""
    bare = [sys.executable, "-c", "pass"]
    loaded = [sys.executable, "-c", statement]
    here = Path.cwd()
    return [
        timed(loaded, dict(os.environ), here) - timed(bare, dict(os.environ), here)
        for _ in range(runs)
    ]


def stdlib_copy(into: Path) -> Path:
    """The standard library's .py files (site-packages left out), copied into a folder of the
    benchmark's own so heph's caches land there."""
    source = Path(sysconfig.get_paths()["stdlib"])
    target = into / "stdlib"
    for path in source.rglob("*.py"):
        rel = path.relative_to(source)
        if "site-packages" in rel.parts:
            continue
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / rel)
    return target
