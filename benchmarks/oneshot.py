"""Wall time of `heph --version`, `--help`, a one-step and a 50-step task against the loopback
server, and the cost of a step beyond the model's own time.

    python benchmarks/oneshot.py [--runs 5]

Each command runs --runs times; the median (and min/max) of the elapsed time is printed. The CPU
time of each run comes from wait4, its peak memory from /usr/bin/time when there is one.
The 50-step task reads a 300-line file 49 times in parts and answers. The per-step overhead,
what heph itself spends on a step beyond the model's time (the time the loopback server spends
answering, which it counts), is the median over interleaved pairs of runs of
(T50 - T1) / 49. As the start of a run (the model client's import above all) varies by more
than a step costs, it is also measured inside the 50-step runs, from their session files: the
time from the end of the first model request to the end of the last, less the server's, per
step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common import heph_command, report

from hephaistus.testing import ChatServer

FINAL = json.dumps({"thought": "nothing to do", "final": {"message": "done"}})
STEPS = 50


def read_step(number: int) -> str:
    first = 1 + (number * 37) % 280
    args = {"path": "big.py", "start_line": first, "end_line": first + 20}
    return json.dumps({"thought": f"part {number}", "action": {"tool": "read_file", "args": args}})


@dataclass
class Sample:
    wall: float  # seconds
    cpu: float  # seconds, user + system, of heph and what it ran
    peak_kb: int  # peak resident memory
    model: float = 0.0  # seconds the loopback server spent answering


def timed(argv: list[str], env: dict[str, str], cwd: str) -> Sample:
    """Wall time, CPU time and peak memory of one run. The CPU time comes from wait4; the peak
    from /usr/bin/time when there is one (wait4's counts this script's own memory, which a
    forked child shares until it runs heph)."""
    fd, report = tempfile.mkstemp()
    os.close(fd)
    gnu_time = ["/usr/bin/time", "-f", "%M", "-o", report] if Path("/usr/bin/time").exists() else []
    started = time.perf_counter()
    process = subprocess.Popen(
        [*gnu_time, *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    measured = Path(report).read_text().split()
    os.unlink(report)
    if process.returncode != 0:
        raise SystemExit(f"command failed ({process.returncode}): {stderr}")
    peak = int(measured[-1]) if gnu_time and measured else usage.ru_maxrss
    return Sample(wall, usage.ru_utime + usage.ru_stime, peak)


def steady_step(workspace: Path, server_seconds: float) -> float:
    """Seconds heph spent per step of its last run, from the end of its first model request
    (which also waits for the model client's import) to the end of its last, beyond the
    server's time (of those requests: all but the first): no start-up, no shutdown."""
    newest = sorted((workspace / ".heph" / "sessions").glob("*.jsonl"))[-1]
    records = [json.loads(line) for line in newest.read_text().splitlines()]
    calls = [r for r in records if r.get("type") == "span" and r["kind"] == "LLM"]
    steps = len(calls) - 1
    server = server_seconds * steps / len(calls)
    return (calls[-1]["end"] - calls[0]["end"] - server) / steps


def report_runs(name: str, samples: list[Sample]) -> None:
    peak = statistics.median(s.peak_kb for s in samples) / 1024
    cpu = statistics.median(s.cpu for s in samples) * 1000
    report(name, [s.wall for s in samples], f"  cpu {cpu:.0f} ms  peak {peak:.0f} MB")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as home, ChatServer() as server:
        # A project in a home of its own: heph keeps a home folder's records out of it.
        folder = str(Path(home) / "project")
        Path(folder).mkdir()
        (Path(folder) / "app.py").write_text("print('hello')\n")
        (Path(folder) / "big.py").write_text(
            "".join(f"def function_{n}(value):\n    return value * {n}\n" for n in range(150))
        )
        env = {"PATH": os.environ["PATH"], "HOME": home, "OPENAI_BASE_URL": server.url}
        if "PYTHONPATH" in os.environ:  # to measure another checkout with the same script
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        for flag in ("--version", "--help"):
            report_runs(
                f"heph {flag}", [timed([*heph_command(), flag], env, folder) for _ in range(runs)]
            )
        # One-step and 50-step runs interleaved, so a slow spell of the machine hits both.
        samples, many, inside = [], [], []

        def task(argv: list[str]) -> Sample:
            busy = server.busy_seconds
            sample = timed([*heph_command(), *argv], env, folder)
            sample.model = server.busy_seconds - busy
            return sample

        for _ in range(runs):
            server.reply(FINAL)
            samples.append(task(["say done"]))
            for number in range(STEPS - 1):
                server.reply(read_step(number))
            server.reply(FINAL)
            many.append(task(["--max-steps", "60", "read big.py"]))
            inside.append(steady_step(Path(folder), many[-1].model))
        report_runs("heph TASK (one step)", samples)
        report_runs(f"heph TASK ({STEPS} steps)", many)

        def per_step(measure: Callable[[Sample], float]) -> float:
            """The median over the pairs of (T50 - T1) / 49, in seconds."""
            pairs = zip(many, samples, strict=True)
            return statistics.median((measure(m) - measure(s)) / (STEPS - 1) for m, s in pairs)

        wall = per_step(lambda s: s.wall - s.model) * 1000
        cpu, model = per_step(lambda s: s.cpu) * 1000, per_step(lambda s: s.model) * 1000
        print(
            f"{'per-step overhead':<28} median {wall:5.1f} ms wall, {cpu:.1f} ms cpu "
            f"(beyond the server's {model:.1f} ms a request)"
        )
        print(
            f"{'per-step, inside the run':<28} median {statistics.median(inside) * 1000:5.1f} ms "
            f"wall (min {min(inside) * 1000:.1f}, max {max(inside) * 1000:.1f}; from the "
            "session's spans, the server's time left out)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
