"""What containing a command costs: a sandboxed command beside an unsandboxed one, the snapshot
pair (and the look at ignored files) around each command, and a 50-step task with a shell call
each step beside a 50-step task that only reads.

    python benchmarks/sandbox.py [--runs 30]

1. `true` run --runs times by the executor heph uses without a sandbox and by the sandbox
   (bubblewrap), interleaved: the median of each and of the difference (goal: <= 20 ms).
2. The snapshots around one command (take, take, diff; and the ignored files listed before and
   after) on a copy of this checkout and on a 1,500-file checkout, median (goal: <= 150 ms).
3. heph running a 50-step task whose every step is a `shell` call (`echo N >> log.txt`, in the
   sandbox, between snapshots), beside the same task whose steps read a file, against the
   loopback server: per step, from the session's spans, the server's time left out. The shell
   step's cost beyond the sandboxed process and the snapshots is heph's own overhead
   (goal: <= 5 ms).
4. One command's 5,000 new empty files on the 1,500-file checkout: recording them (the picture
   after, the diffs, the checkpoints and the look at ignored files; goal: <= 5 s), and undoing
   them (goal: a few seconds). Making the files is the command's cost, left out.
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

from hephaistus.records.checkpoints import Checkpoints, CheckpointStore
from hephaistus.records.snapshots import Snapshots, command_effects
from hephaistus.records.undo import undo as undo_session
from hephaistus.runtime.executor import LocalExecutor
from hephaistus.runtime.sandbox import Contained
from hephaistus.settings.config_sections import SandboxConfig
from hephaistus.testing import ChatServer

STEPS = 50
MANY = 5_000  # files one command makes
CHECKOUT = Path(__file__).resolve().parent.parent
FINAL = json.dumps({"thought": "nothing to do", "final": {"message": "done"}})


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def a_checkout(root: Path, files: int) -> Path:
    """A git repository of `files` small Python files in nested folders, with a .venv."""
    for number in range(files):
        path = root / f"pkg{number % 15}" / f"mod{number % 7}" / f"file{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {number}\n" * 20)
    (root / ".venv" / "lib").mkdir(parents=True)
    for number in range(300):
        (root / ".venv" / "lib" / f"dep{number}.py").write_text("x = 1\n")
    (root / ".gitignore").write_text(".venv/\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start")
    return root


def this_checkout(into: Path) -> Path:
    """A copy of this checkout's tracked files, as its own repository."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=CHECKOUT, capture_output=True, check=True
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = CHECKOUT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    git(into, "init", "-q")
    git(into, "add", ".")
    return into


def command_cost(root: Path, runs: int) -> float:
    plain, boxed = LocalExecutor(), Contained(root, SandboxConfig())
    why = boxed.why_not()
    if why:
        print(f"no sandbox here: {why}")
        return 0.0
    env = {"PATH": os.environ["PATH"]}
    boxed.run(["true"], cwd=root, env=env, timeout=10)  # the probe and the bind list, once
    local, sandboxed = [], []
    for _ in range(runs):
        for executor, into in ((plain, local), (boxed, sandboxed)):
            started = time.perf_counter()
            executor.run(["true"], cwd=root, env=env, timeout=10)
            into.append(time.perf_counter() - started)
    report("`true`, unsandboxed", local)
    report("`true`, in the sandbox", sandboxed)
    extra = [b - a for a, b in zip(local, sandboxed, strict=True)]
    report("the sandbox's extra cost", extra, "  (goal: <= 20 ms)")
    return statistics.median(sandboxed)


def snapshot_cost(root: Path, name: str, runs: int) -> float:
    heph_dir = root / ".heph"
    snapshots = Snapshots(root, heph_dir)
    snapshots.take()  # the first picture writes every object once; later ones reuse them
    pairs = []
    for number in range(runs):
        started = time.perf_counter()
        before = snapshots.take()
        watch = snapshots.watch_ignored()
        (root / "log.txt").write_text(f"{number}\n")
        command_effects(snapshots, before, None)
        snapshots.ignored_changes(watch)
        pairs.append(time.perf_counter() - started)
    files = len(subprocess.run(["git", "ls-files"], cwd=root, capture_output=True).stdout.split())
    report(f"snapshots, {name} ({files} files)", pairs, "  (goal: <= 150 ms)")
    return statistics.median(pairs)


def many_files_cost(root: Path, runs: int) -> None:
    snapshots = Snapshots(root, root / ".heph")
    recorded, undone = [], []
    for number in range(runs):
        before = snapshots.take()
        watch = snapshots.watch_ignored()
        made = root / f"made{number}"
        made.mkdir()
        for name in range(MANY):
            (made / str(name)).touch()
        session = f"many-{number}"
        started = time.perf_counter()
        command_effects(snapshots, before, Checkpoints(root, root / ".heph", session))
        snapshots.ignored_changes(watch)
        recorded.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = undo_session(CheckpointStore(root, root / ".heph"), session)
        undone.append(time.perf_counter() - started)
        if len(result.deleted) != MANY:
            raise SystemExit(f"undo deleted {len(result.deleted)} files, not {MANY}")
    report(f"{MANY:,} new files, recorded", recorded, "  (goal: <= 5 s)")
    report(f"{MANY:,} new files, undone", undone, "  (goal: a few seconds)")


def step_cost(root: Path, runs: int, process: float) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(root.parent), "NO_COLOR": "1"}
    shell, read = [], []
    with ChatServer() as server:
        env["OPENAI_BASE_URL"] = server.url
        for _ in range(runs):
            for kind, into in (("shell", shell), ("read", read)):
                for number in range(STEPS - 1):
                    if kind == "shell":
                        action = {"tool": "shell", "args": {"command": f"echo {number} >> log.txt"}}
                    else:
                        path = f"pkg{number % 15}/mod{number % 7}/file{number}.py"
                        action = {"tool": "read_file", "args": {"path": path}}
                    server.reply(json.dumps({"thought": f"step {number}", "action": action}))
                server.reply(FINAL)
                busy = server.busy_seconds
                argv = [*heph_command(), "--yes", "--max-steps", "60", f"{kind} steps"]
                done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)
                if done.returncode != 0:
                    raise SystemExit(f"heph failed: {done.stderr}")
                into.append(per_step(root, server.busy_seconds - busy))
    report("a step that reads", read)
    report("a step that runs the shell", shell)
    extra = [s - r for s, r in zip(shell, read, strict=True)]
    report("the shell step's extra", extra, "  (the sandboxed process and the snapshots)")
    own = statistics.median(shell) - process
    print(f"{'beyond process + snapshots':<28} median {own * 1000:7.1f} ms  (goal: <= 5 ms)")


def per_step(root: Path, server_seconds: float) -> float:
    """Seconds per step of the newest run, from the end of its first model request to the end
    of its last, less the server's time."""
    newest = sorted((root / ".heph" / "sessions").glob("*.jsonl"))[-1]
    records = [json.loads(line) for line in newest.read_text().splitlines()]
    calls = [r for r in records if r.get("type") == "span" and r["kind"] == "LLM"]
    steps = len(calls) - 1
    return (calls[-1]["end"] - calls[0]["end"] - server_seconds * steps / len(calls)) / steps


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--task-runs", type=int, default=3)
    parser.add_argument("--many-runs", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        big = a_checkout(Path(folder) / "big", 1500)
        sandboxed = command_cost(big, options.runs)
        own = this_checkout(Path(folder) / "own")
        snapshot_cost(own, "this repository", options.runs)
        snapshots = snapshot_cost(big, "a checkout", options.runs)
        step_cost(big, options.task_runs, sandboxed + snapshots)
        many_files_cost(big, options.many_runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
