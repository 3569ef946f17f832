"""`heph docs` at scale: the check beside ruff's D1 rules, and `--fix` sequential vs concurrent.

    python benchmarks/docs_check.py [--runs 3] [--fix-files 50] [--latency 1.0]

1. `heph docs --check` on a copy of the standard library's .py files (site-packages left out,
   about 1,800 files), run as pre-commit would (a subprocess), median of --runs; beside it
   `ruff check --select D1` on the same tree when ruff is on PATH: time, findings, and the
   ratio. The two count differently (heph skips tests, dunders, `__init__` when its class has a
   docstring, and trivial properties, and reports stale parameters), so ruff is also run with
   the rules and files that match heph's defaults, for scale.
2. `heph docs --fix` on --fix-files of those files that need docstrings, against the loopback
   model server answering every request after --latency seconds: with `--jobs 1` (one request
   after another, as before) and with the default `--jobs 4`. Prints both times and the
   speed-up.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import heph_command, stdlib_copy

from hephaistus.testing import ChatServer
from hephaistus.testing.docstring_writer import write_docstrings


def timed(command: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout


def check_beside_ruff(root: Path, env: dict[str, str], runs: int) -> list[str]:
    """Prints the check's line (and ruff's); returns the files with problems."""
    count = sum(1 for _ in root.rglob("*.py"))
    heph = [timed([*heph_command(), "-w", str(root), "docs", "--check"], env) for _ in range(runs)]
    lines = heph[-1][1].splitlines()
    median = statistics.median(t for t, _ in heph)
    print(
        f"heph docs --check, standard library ({count} files): median {median:.2f} s "
        f"(min {min(t for t, _ in heph):.2f}, max {max(t for t, _ in heph):.2f}, n={runs}); "
        f"{len(lines)} findings"
    )
    ruff = shutil.which("ruff")
    if ruff is None:
        print("ruff check --select D1: ruff is not on PATH, left out")
    else:
        command = [ruff, "check", "--select", "D1", "--isolated", "--no-cache", "-q"]
        command += ["--output-format", "concise", "--exit-zero", "."]
        found = [timed(command, env, cwd=root) for _ in range(runs)]
        ruff_median = statistics.median(t for t, _ in found)
        findings = len(found[-1][1].splitlines())
        print(
            f"ruff check --select D1, same tree: median {ruff_median:.2f} s; {findings} findings"
            f"; heph takes {median / ruff_median:.1f}x ruff's time"
        )
        # What heph checks by default: no test files, no D105 (dunders) or D107 (__init__).
        command[3] = "D100,D101,D102,D103,D104,D106"
        command[4:4] = ["--extend-exclude", "test,tests,test_*.py,*_test.py,conftest.py"]
        alike = len(timed(command, env, cwd=root)[1].splitlines())
        print(f"ruff, the rules and files heph checks by default: {alike} findings")
    return list(dict.fromkeys(line.split(":")[0] for line in lines))


def fix_times(root: Path, files: list[str], env: dict[str, str], latency: float) -> None:
    results = {}
    for jobs in (1, 4):
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder) / "tree"
            for rel in files:
                (work / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / rel, work / rel)
            with ChatServer() as server:
                server.responder = write_docstrings
                server.latency = latency
                command = [*heph_command(), "-w", str(work), "docs", "--fix", "--jobs", str(jobs)]
                seconds, out = timed(command, {**env, "OPENAI_BASE_URL": server.url})
                written = sum(1 for line in out.splitlines() if ": wrote " in line)
                results[jobs] = seconds
                print(
                    f"heph docs --fix, {len(files)} files, model answers after {latency:g} s, "
                    f"--jobs {jobs}: {seconds:.1f} s ({written} files written, "
                    f"{len(server.requests)} requests, at most {server.most_in_flight} at once)"
                )
    print(f"concurrent (--jobs 4) is {results[1] / results[4]:.1f}x faster than one at a time")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fix-files", type=int, default=50)
    parser.add_argument("--latency", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = stdlib_copy(Path(folder))
        env = {**os.environ, "HOME": folder, "OPENAI_API_KEY": "none"}
        env.pop("OPENAI_BASE_URL", None)
        with_problems = check_beside_ruff(root, env, args.runs)
        if args.fix_files:
            fix_times(root, with_problems[: args.fix_files], env, args.latency)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
