"""Time until the chat prompt is ready, and of `heph --version` / `--help`, median of 10.

    python benchmarks/startup.py [--runs 10]

The chat runs in a pseudo-terminal (as a person would start it) in a small temporary project;
the clock stops when the `heph [ask]>` prompt has been drawn. Target on a 2-core machine: <= 300 ms.
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from common import heph_command, report

PROMPT = b"heph [ask]>"


def time_to_prompt(env: dict[str, str], cwd: str) -> float:
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: become heph
        os.chdir(cwd)
        os.execve(heph_command()[0], heph_command(), env)
    seen = b""
    try:
        while PROMPT not in seen:
            ready, _, _ = select.select([fd], [], [], 10)
            if not ready:
                raise SystemExit("the prompt did not appear within 10 s")
            seen += os.read(fd, 4096)
        return time.perf_counter() - started
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)


def time_command(argv: list[str], env: dict[str, str], cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "app.py").write_text("def main():\n    pass\n")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": folder,
            "TERM": "xterm-256color",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
            "LANG": "C.UTF-8",
        }
        report("prompt ready (chat)", [time_to_prompt(env, folder) for _ in range(runs)])
        report(
            "heph --version",
            [time_command([*heph_command(), "--version"], env, folder) for _ in range(runs)],
        )
        report(
            "heph --help",
            [time_command([*heph_command(), "--help"], env, folder) for _ in range(runs)],
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
