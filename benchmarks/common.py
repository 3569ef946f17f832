"""What the benchmark scripts share: the `heph` command, the report line, a stdlib copy."""

from __future__ import annotations

import shutil
import statistics
import sysconfig
from pathlib import Path

from hephaistus.testing import heph_command

__all__ = ["heph_command", "report", "stdlib_copy"]


def report(name: str, seconds: list[float], extra: str = "") -> None:
    """One line: median, min and max in milliseconds, and the number of runs."""
    print(
        f"{name:<28} median {statistics.median(seconds) * 1000:7.0f} ms  "
        f"(min {min(seconds) * 1000:.0f}, max {max(seconds) * 1000:.0f}, n={len(seconds)})"
        f"{extra}"
    )


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
