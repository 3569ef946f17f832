"""`heph docs --check` on the interpreter's standard library, median of 3.

    python benchmarks/docs_check.py [--runs 3]

Runs the real command (a subprocess, as pre-commit would) over a copy of the standard library's
.py files (site-packages left out, about 1,800 files) and prints the wall time and the number of
problems reported.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import heph_command, stdlib_copy


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    command = heph_command()
    with tempfile.TemporaryDirectory() as folder:
        root = stdlib_copy(Path(folder))
        count = sum(1 for _ in root.rglob("*.py"))
        env = {**os.environ, "HOME": folder}
        times, lines = [], 0
        for _ in range(runs):
            started = time.perf_counter()
            done = subprocess.run(
                [*command, "-w", str(root), "docs", "--check"],
                env=env,
                capture_output=True,
                text=True,
            )
            times.append(time.perf_counter() - started)
            lines = len(done.stdout.splitlines())
        print(
            f"heph docs --check on the standard library ({count} files): median "
            f"{statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f}, "
            f"n={runs}); {lines} problems reported"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
