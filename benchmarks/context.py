"""Time to build the workspace map, cold (no cache) and warm (cache present), median of 5.

    python benchmarks/context.py [--runs 5] [--budget 1000] [--sympy-dir DIR]

Measures two code bases: the running interpreter's standard library (site-packages left out,
about 1,800 .py files) and sympy's source distribution, fetched with
`pip download --no-deps --no-binary :all: sympy` into a temporary folder unless --sympy-dir
points at an unpacked copy. Prints the median, min and max of each, and the token count of the
map. Targets on a 2-core machine: sympy cold <= 1.5 s, warm <= 0.15 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from common import stdlib_copy

from hephaistus import tokens
from hephaistus.workspace import Workspace
from hephaistus.workspace.repomap import Focus, RepoMap


def sympy_copy(into: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "sympy",
            "-d",
            str(into),
        ],
        check=True,
    )
    archive = next(into.glob("sympy-*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data") if sys.version_info >= (3, 12) else tar.extractall(into)
    return next(p for p in into.iterdir() if p.is_dir() and p.name.startswith("sympy-"))


def measure(root: Path, runs: int, budget: int) -> None:
    workspace = Workspace.at(root)
    focus = Focus("fix the bug in solvers.py where solve returns duplicates")
    files = sum(1 for _ in root.rglob("*.py"))
    size = sum(p.stat().st_size for p in root.rglob("*.py")) / 2**20
    cold, warm = [], []
    text = ""
    for _ in range(runs):
        shutil.rmtree(workspace.heph_dir, ignore_errors=True)
        started = time.perf_counter()
        text = RepoMap(workspace).render(focus, budget)
        cold.append(time.perf_counter() - started)
        started = time.perf_counter()
        RepoMap(workspace).render(focus, budget)
        warm.append(time.perf_counter() - started)
    print(f"{root.name}: {files} .py files, {size:.1f} MiB")
    for name, samples in (("cold", cold), ("warm", warm)):
        print(
            f"  {name}  median {statistics.median(samples):6.3f} s  "
            f"(min {min(samples):.3f}, max {max(samples):.3f}, n={runs})"
        )
    print(
        f"  map: {tokens.estimate(text)} tokens (budget {budget}), "
        f"{len(text.splitlines())} lines; last line: {text.splitlines()[-1]}"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--sympy-dir", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        measure(stdlib_copy(tmp), args.runs, args.budget)
        sympy = args.sympy_dir or sympy_copy(tmp)
        measure(sympy, args.runs, args.budget)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
