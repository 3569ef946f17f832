"""What hooks cost a step: a `read_file` call through the runtime with no hooks, with hooks
configured that match nothing, and with one PreToolUse hook (`sh -c true`-like, a Python
script reading its stdin), beside that hook's own run started the same way on its own. With
one hook a step should cost at most the hook's run plus 5 ms.

    python benchmarks/hook_overhead.py [--runs 50]

Runs are interleaved, so a slow spell of the machine hits every kind alike.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import report

from hephaistus.engine.runner import Runtime
from hephaistus.hooks.definitions import Hook
from hephaistus.hooks.fired import Hooks
from hephaistus.hooks.running import run_hook
from hephaistus.runtime.policy import Policy
from hephaistus.runtime.sandbox import Contained
from hephaistus.settings.config import SandboxConfig
from hephaistus.tools import ToolContext, default_registry
from hephaistus.tools.run_command import child_environment
from hephaistus.workspace import Workspace

HOOK = "import json, sys; json.load(sys.stdin)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "a.py").write_text("A = 1\n" * 200)
        (root / "hook.py").write_text(HOOK)
        hook = Hook(
            "PreToolUse", "Read", f"{sys.executable} {root / 'hook.py'}", 10, "bench", False
        )
        other = Hook("PreToolUse", "Bash", "false", 10, "bench", False)
        box = Contained(root, SandboxConfig())

        def runtime(hooks: list[Hook] | None) -> Runtime:
            made = Hooks(hooks, root, box, child_environment, print) if hooks else None
            return Runtime(
                default_registry(), ToolContext(Workspace.at(root)), Policy("ask"), hooks=made
            )

        kinds = {
            "no hooks": runtime(None),
            "hooks matching nothing": runtime([other]),
            "one PreToolUse hook": runtime([hook]),
        }
        seconds: dict[str, list[float]] = {name: [] for name in [*kinds, "the hook alone"]}
        for _ in range(runs):
            for name, made in kinds.items():
                started = time.perf_counter()
                result = made.call("read_file", {"path": "a.py"})
                seconds[name].append(time.perf_counter() - started)
                assert result.ok, result.output
            started = time.perf_counter()
            run_hook(
                hook, {"hook_event_name": "PreToolUse"}, root=root, box=box, env=child_environment()
            )
            seconds["the hook alone"].append(time.perf_counter() - started)
    for name, taken in seconds.items():
        report(name, taken)
    median = {name: statistics.median(taken) for name, taken in seconds.items()}
    added = median["one PreToolUse hook"] - median["no hooks"] - median["the hook alone"]
    print(f"a step with one hook costs its run plus {added * 1000:.1f} ms (target: at most 5 ms)")
    matching_nothing = median["hooks matching nothing"] - median["no hooks"]
    print(f"hooks that match nothing add {matching_nothing * 1000:.2f} ms a step")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
