"""A copy of the running interpreter's standard library (.py files, site-packages left out),
made into a folder of the benchmark's own so heph's caches land there."""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path


def stdlib_copy(into: Path) -> Path:
    source = Path(sysconfig.get_paths()["stdlib"])
    target = into / "stdlib"
    for path in source.rglob("*.py"):
        rel = path.relative_to(source)
        if "site-packages" in rel.parts:
            continue
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / rel)
    return target
