"""Wall time of `heph --version`, `--help` and a one-step task against the loopback server.

    python benchmarks/oneshot.py [--runs 5]

Each command runs --runs times; the median (and min/max) of the elapsed time is printed. With
/usr/bin/time present, the elapsed time and peak memory come from it; else from perf_counter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import heph_command, report

from hephaistus.testing import ChatServer

FINAL = json.dumps({"thought": "nothing to do", "final": {"message": "done"}})


def timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, int | None]:
    """Elapsed seconds and peak resident KB of one run."""
    gnu_time = shutil.which("time") if Path("/usr/bin/time").exists() else None
    if gnu_time:
        fd, report = tempfile.mkstemp()
        os.close(fd)
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", report, *argv],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
        )
        elapsed, peak = Path(report).read_text().split()[-2:]
        os.unlink(report)
        check(done)
        return float(elapsed), int(peak)
    started = time.perf_counter()
    check(subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True))
    return time.perf_counter() - started, None


def check(done: subprocess.CompletedProcess[str]) -> None:
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {done.stderr}")


def report_runs(name: str, samples: list[tuple[float, int | None]]) -> None:
    peaks = [p for _, p in samples if p]
    memory = f"  peak {statistics.median(peaks) / 1024:.0f} MB" if peaks else ""
    report(name, [seconds for seconds, _ in samples], memory)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder, ChatServer() as server:
        (Path(folder) / "app.py").write_text("print('hello')\n")
        env = {"PATH": os.environ["PATH"], "HOME": folder, "OPENAI_BASE_URL": server.url}
        for flag in ("--version", "--help"):
            report_runs(
                f"heph {flag}", [timed([*heph_command(), flag], env, folder) for _ in range(runs)]
            )
        samples = []
        for _ in range(runs):
            server.reply(FINAL)
            samples.append(timed([*heph_command(), "say done"], env, folder))
        report_runs("heph TASK (one step)", samples)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
