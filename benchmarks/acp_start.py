"""How soon `heph acp` answers `initialize`: from the process's start to the answer's line on its
stdout, median of --runs (goal: <= 300 ms); then how long a `session/new` takes after it (each
session runs in a process of its own, started there), in a folder of its own with a fresh home.

    python benchmarks/acp_start.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

from common import heph_command, report

INITIALIZE = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
)


def answered_after(folder: str) -> tuple[float, float]:
    """Seconds to the answer of `initialize`, and of a `session/new` in `folder` after it."""
    environment = {**os.environ, "HOME": os.path.join(folder, "home"), "HEPH_MODEL": "m"}
    environment.setdefault("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never asked here
    started = time.perf_counter()
    process = subprocess.Popen(
        [*heph_command(), "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(INITIALIZE.encode() + b"\n")
    process.stdin.flush()
    line = process.stdout.readline()
    initialized = time.perf_counter() - started
    if b'"protocolVersion"' not in line:
        raise SystemExit(f"no answer to initialize: {line!r}")
    asked = time.perf_counter()
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": folder}}
    process.stdin.write(json.dumps({**new, "params": {**new["params"], "mcpServers": []}}).encode())
    process.stdin.write(b"\n")
    process.stdin.flush()
    while b'"id": 2' not in (line := process.stdout.readline()) and line:
        pass
    opened = time.perf_counter() - asked
    process.stdin.close()
    process.wait(timeout=30)
    if b'"sessionId"' not in line:
        raise SystemExit(f"no session: {line!r}")
    return initialized, opened


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    samples = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            os.mkdir(os.path.join(folder, "home"))
            samples.append(answered_after(folder))
    report("heph acp: initialize answered", [s[0] for s in samples], "  (goal: <= 300 ms)")
    report("heph acp: session/new answered", [s[1] for s in samples], "  (a process per session)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
