"""What a sub-agent saves the parent: a scripted survey of 40 files (each read once, then an
answer) done directly, and through one `task` whose child does the reading. Printed: the
parent's context at its last request (estimated tokens) and the tokens of every request of
the run (parent and child), for both ways.

    python benchmarks/subagent_context.py [--files 40]

The window is set to 128k tokens, so nothing is compacted. The model is the scripted loopback
server (hephaistus.testing), so the numbers measure what
heph sends, not what a model would do.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

from common import heph_command

from hephaistus.testing import ChatServer, act, final
from hephaistus.tokens import estimate

AGENT = "---\nname: surveyor\ndescription: reads files\ntools: read_file\nmax_steps: 60\n---\n"


def make_workspace(root: Path, files: int) -> None:
    for n in range(files):
        body = "".join(f"def f{n}_{i}(x):\n    return x * {i}  # step {i}\n" for i in range(25))
        (root / f"mod{n:02}.py").write_text(body)
    # A window that holds the whole survey: what is measured is what each way sends.
    (root / ".heph.toml").write_text("context_window = 131072\n")
    (root / ".heph" / "agents").mkdir(parents=True)
    (root / ".heph" / "agents" / "surveyor.md").write_text(AGENT + "Read what you are asked.\n")


def measure(chat: ChatServer, root: Path, env: dict[str, str], replies: list[dict]) -> tuple:
    for reply in replies:
        chat.reply(reply)
    before = len(chat.requests)
    done = subprocess.run(
        [*heph_command(), "--trust", "--json", "--max-steps", "60", "survey the modules"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    sent = chat.requests[before:]
    parent_last = sent[-1]["messages"]
    context = sum(estimate(m["content"]) for m in parent_last)
    usage = json.loads(done.stdout)["usage"]
    return context, usage["prompt_tokens"] + usage["completion_tokens"], len(sent)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=40)
    files = parser.parse_args().files
    reads = [act("read_file", path=f"mod{n:02}.py") for n in range(files)]
    with tempfile.TemporaryDirectory() as folder, ChatServer() as chat:
        root = Path(folder) / "ws"
        root.mkdir()
        make_workspace(root, files)
        env = {
            "PATH": os.environ["PATH"],
            "HOME": folder,
            "OPENAI_BASE_URL": chat.url,
            "HEPH_DISCOVER": "",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # a checkout's heph, when run so
        }
        direct = measure(chat, root, env, [*reads, final("mod07 and mod21 matter")])
        delegated = measure(
            chat,
            root,
            env,
            [
                act("task", description="survey", prompt="Read every mod*.py", agent="surveyor"),
                *reads,
                final("mod07 and mod21 matter"),
                final("mod07 and mod21 matter"),
            ],
        )
    for name, (context, tokens, requests) in (("directly", direct), ("through a task", delegated)):
        print(
            f"{name:<16} parent's last context {context:7,} tokens   "
            f"all requests {tokens:9,} tokens ({requests} requests)"
        )
    print(f"the parent's context is {direct[0] / delegated[0]:.1f}x smaller through a task")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
