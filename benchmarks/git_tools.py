"""What GitPython costs a run: its import, and a task whose one step runs `git_status` or
`git_log` beside a task whose one step runs `read_file`, in a real git repository; with
`heph --version` and `--help`, which never import it.

    python benchmarks/git_tools.py [--runs 5]

The repository is a temporary one with a few hundred files and 20 commits. Runs are interleaved,
so a slow spell of the machine hits every kind alike.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from common import heph_command, import_seconds, report, timed

from hephaistus.testing import ChatServer, act, final


def make_repository(root: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "bench@example.invalid")
    git("config", "user.name", "Bench")
    for commit in range(20):
        for number in range(15):
            path = root / f"pkg{number % 5}" / f"mod{number}_{commit}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"VALUE = {commit * number}\n")
        git("add", ".")
        git("commit", "-qm", f"change {commit}")
    (root / "pkg0" / "mod0_0.py").write_text("VALUE = -1\n")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    report("importing GitPython", import_seconds("import hephaistus.workspace.gitlibrary", runs))
    with tempfile.TemporaryDirectory() as folder, ChatServer() as chat:
        root = Path(folder) / "repo"
        root.mkdir()
        make_repository(root)
        env = {"PATH": os.environ["PATH"], "HOME": folder, "OPENAI_BASE_URL": chat.url}
        for flag in ("--version", "--help"):
            report(f"heph {flag}", [timed([*heph_command(), flag], env, root) for _ in range(runs)])
        steps = {
            "a task with one read_file": act("read_file", path="pkg0/mod0_0.py"),
            "a task with one git_status": act("git_status"),
            "a task with one git_log": act("git_log", n=20),
        }
        seconds: dict[str, list[float]] = {name: [] for name in steps}
        for _ in range(runs):
            for name, step in steps.items():
                chat.reply(step)
                chat.reply(final("done"))
                seconds[name].append(timed([*heph_command(), "--yes", "look"], env, root))
        for name, measured in seconds.items():
            report(name, measured)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
