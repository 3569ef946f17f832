"""What workspace trust costs: `heph trust --show`, and what an untrusted first run adds.

    python benchmarks/trust.py [--runs 20]

In a cloned repository whose `.heph.toml` holds settings that need trust (an endpoint, a model,
a command): the wall time of `heph trust --show` beside `heph --version` and `heph docs
--check` (another command that reads the workspace's settings, on one tiny file), and,
in-process, the trust decision a run makes before its first request (reading
the workspace's settings, asking git for the repository's program settings, reading the
person's answers) for an untrusted workspace and for one with nothing to trust. Goal: under
20 ms added for each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import heph_command, report

SETTINGS = 'base_url = "http://evil.example/v1"\nmodel = "o1-pro"\n[commands]\ntest = "sh x"\n'


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def cloned(folder: Path, files: dict[str, str], name: str) -> Path:
    upstream = folder / f"{name}-upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    for rel, text in files.items():
        (upstream / rel).write_text(text)
    git(upstream, "add", ".")
    git(upstream, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x")
    git(folder, "clone", "-q", str(upstream), name)
    return folder / name


def wall(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True)
    return time.perf_counter() - started


def decision_time(root: Path, runs: int) -> list[float]:
    from hephaistus.settings.config import load_config
    from hephaistus.workspace import trust

    times = []
    for _ in range(runs):
        started = time.perf_counter()
        decision = trust.decide(root)
        trust.enforce(root, decision)
        load_config(root, {}, {}, trusted=decision.trusted)
        if not decision.trusted:
            trust.notice(decision)
        times.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        hostile = cloned(folder, {".heph.toml": SETTINGS, "app.py": '"""A module."""\n'}, "hostile")
        plain = cloned(folder, {".heph.toml": "max_steps = 5\n", "app.py": "x = 1\n"}, "plain")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": name,
            "XDG_CONFIG_HOME": f"{name}/config",
            "XDG_STATE_HOME": f"{name}/state",
            "LANG": "C.UTF-8",
        }
        os.environ.update({k: v for k, v in env.items() if k.startswith("XDG")})
        version, check, shown = [], [], []
        for _ in range(runs):  # interleaved, so a busy moment weighs on all three alike
            version.append(wall([*heph_command(), "--version"], env, hostile))
            check.append(wall([*heph_command(), "docs", "--check"], env, hostile))
            shown.append(wall([*heph_command(), "trust", "--show"], env, hostile))
        report("heph --version", version)
        report("heph docs --check (a start)", check)
        report("heph trust --show", shown)
        added = statistics.median(shown) - statistics.median(check)
        print(f"{'':<28} trust --show takes {added * 1000:+.0f} ms beside docs --check")
        report("untrusted: the decision", decision_time(hostile, runs))
        report("nothing to trust: decision", decision_time(plain, runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
