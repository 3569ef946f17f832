"""How soon `heph acp` answers `initialize`: from the process's start to the answer's line on its
stdout, median of --runs (goal: <= 300 ms).

    python benchmarks/acp_start.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time

from common import heph_command, report

INITIALIZE = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
)


def answered_after() -> float:
    started = time.perf_counter()
    process = subprocess.Popen(
        [*heph_command(), "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(INITIALIZE.encode() + b"\n")
    process.stdin.flush()
    line = process.stdout.readline()
    seconds = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=10)
    if b'"protocolVersion"' not in line:
        raise SystemExit(f"no answer to initialize: {line!r}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    report(
        "heph acp: initialize answered",
        [answered_after() for _ in range(runs)],
        "  (goal: <= 300 ms)",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
