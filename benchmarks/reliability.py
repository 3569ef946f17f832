"""How heph holds up against a hostile model, a faulty endpoint and an unlucky day.

    python benchmarks/reliability.py [--paths 10000] [--kills 24] [--quick]

Each probe runs real parts (the `heph` command or the Agent, the real tools, a loopback Chat
Completions server with fault injection, real processes killed with SIGKILL) and counts, per case:

    crash    an exception escaped, a traceback was printed, or a session was left without its end
    hang     a case did not finish within its time limit
    escape   something outside the workspace (or inside .git/) changed
    secret   a secret's text reached the model, a session file or the terminal
    lost     a write reported as done is not on disk, or a file was left torn
    stray    a temporary file was left among the user's files

Every column but `tried` must be 0.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from common import heph_command

from hephaistus.records.undo import undo as undo_session
from hephaistus.runtime.policy import Policy
from hephaistus.testing import ChatServer, replies
from hephaistus.testing.tools import run_tool
from hephaistus.testing.watched import OUTSIDE, SECRET, WatchedWorkspace

COLUMNS = ("crash", "hang", "escape", "secret", "lost", "stray", "took")
NULL_CONTENT_CHUNK = json.dumps(
    {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": None}, "finish_reason": "stop"}],
    }
)


@dataclass
class Tally:
    name: str
    tried: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COLUMNS, 0))
    examples: list[str] = field(default_factory=list)

    def add(self, problems: list[str], label: str) -> None:
        self.tried += 1
        for problem in problems:
            self.counts[problem] += 1
        if problems and len(self.examples) < 5:
            self.examples.append(f"{label}: {', '.join(problems)}")


def json_reply(thought: str = "", **body: object) -> str:
    return json.dumps({"thought": thought, **body})


def act(tool: str, **args: object) -> str:
    return json.dumps(replies.act(tool, **args))


FINAL = json.dumps(replies.final("done"))


def base_environment(home: str) -> dict[str, str]:
    """A clean environment for `heph`; PYTHONPATH passes, so another checkout can be measured."""
    keep = {name: os.environ[name] for name in ("PATH", "PYTHONPATH") if name in os.environ}
    return {**keep, "HOME": home}


def stray_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*heph-tmp*") if ".heph" not in p.parts]


def run_with_limit(seconds: float, work: Callable[[], object]) -> tuple[object, str | None]:
    """(result, problem): 'hang' past the limit, 'crash' when it raised."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as error:  # noqa: BLE001 - counted, not hidden
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        return None, "hang"
    if "error" in box:
        return box["error"], "crash"
    return box.get("value"), None


def session_closed(workspace: Path) -> bool:
    sessions = sorted((workspace / ".heph" / "sessions").glob("*.jsonl"))
    if not sessions:
        return True
    last = sessions[-1].read_text(encoding="utf-8", errors="replace").splitlines()
    return bool(last) and json.loads(last[-1]).get("type") == "end"


# -- probe 1: endpoint faults, through the real command ---------------------------------------


def _faults() -> list[tuple[str, list[tuple[str, dict]], bool, int]]:
    """(name, faults before the reply, streaming, expected exit code)."""
    one = [("status", {"status": s}) for s in (408, 409, 429, 500, 502, 503, 504, 529)]
    sequences = [
        (f"{kind} {opts.get('status', '')}".strip(), [(kind, opts)], False, 0) for kind, opts in one
    ]
    sequences += [
        (
            "429 Retry-After 0",
            [("status", {"status": 429, "headers": {"Retry-After": "0"}})],
            False,
            0,
        ),
        (
            "429 Retry-After date",
            [
                (
                    "status",
                    {"status": 429, "headers": {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}},
                )
            ],
            False,
            0,
        ),
        (
            "429 retry-after-ms",
            [("status", {"status": 429, "headers": {"retry-after-ms": "10"}})],
            False,
            0,
        ),
        ("reset", [("reset", {})], False, 0),
        ("timeout", [("timeout", {"delay": 2.0})], False, 0),
        ("truncated body", [("truncated_stream", {})], False, 0),
        ("truncated stream", [("truncated_stream", {})], True, 0),
        (
            "error event",
            [("events", {"events": ['event: error\ndata: {"error": {"message": "overloaded"}}']})],
            True,
            0,
        ),
        ("error data", [("events", {"events": ['data: {"error": {"message": "x"}}']})], True, 0),
        ("empty stream", [("events", {"events": ["data: [DONE]"]})], True, 0),
        (
            "reset, 503, timeout",
            [("reset", {}), ("status", {"status": 503}), ("timeout", {"delay": 2.0})],
            False,
            0,
        ),
        ("4 transient in a row", [("status", {"status": 500})] * 4, False, 0),
        (
            "broken stream, error event, reset",
            [
                ("truncated_stream", {}),
                ("events", {"events": ['data: {"error": {"message": "x"}}']}),
                ("reset", {}),
            ],
            True,
            0,
        ),
        (
            "streamed null content",
            [
                (
                    "events",
                    {
                        "events": [
                            "data: " + NULL_CONTENT_CHUNK,
                            "data: [DONE]",
                        ]
                    },
                )
            ],
            True,
            0,
        ),
        ("5 transient: give up", [("status", {"status": 503})] * 5, False, 1),
        ("5 resets: give up", [("reset", {})] * 5, False, 1),
        ("not JSON", [("not_json", {})], False, 1),
        ("HTML 200", [("status", {"status": 200, "body": "<html>proxy</html>"})], False, 1),
        (
            "null message",
            [
                (
                    "status",
                    {
                        "status": 200,
                        "body": json.dumps(
                            {
                                "id": "x",
                                "object": "chat.completion",
                                "created": 0,
                                "model": "m",
                                "choices": [{"index": 0, "message": None, "finish_reason": "stop"}],
                            }
                        ),
                    },
                )
            ],
            False,
            0,
        ),
        (
            "no choices",
            [
                (
                    "status",
                    {
                        "status": 200,
                        "body": json.dumps(
                            {
                                "id": "x",
                                "object": "chat.completion",
                                "created": 0,
                                "model": "m",
                                "choices": [],
                            }
                        ),
                    },
                )
            ],
            False,
            1,
        ),
        ("400", [("status", {"status": 400})], False, 1),
        ("401", [("status", {"status": 401})], False, 1),
        ("403", [("status", {"status": 403})], False, 1),
        ("404", [("status", {"status": 404})], False, 1),
        ("422", [("status", {"status": 422})], False, 1),
        (
            "400 echoing the key",
            [
                (
                    "status",
                    {
                        "status": 400,
                        "body": json.dumps({"error": {"message": f"bad key {SECRET}"}}),
                    },
                )
            ],
            False,
            1,
        ),
    ]
    return sequences


def probe_endpoint_faults(quick: bool) -> Tally:
    tally = Tally("endpoint fault sequences")
    sequences = _faults()[:6] if quick else _faults()
    for name, faults, stream, expected in sequences:
        with tempfile.TemporaryDirectory() as folder, ChatServer() as server:
            workspace = Path(folder) / "ws"
            workspace.mkdir()
            (workspace / ".heph.toml").write_text(f"stream = {str(stream).lower()}\n")
            for kind, options in faults:
                server.fault(kind, **options)
            server.reply(FINAL)
            env = {
                **base_environment(folder),
                "OPENAI_BASE_URL": server.url,
                "HEPH_TIMEOUT": "1",
                "OPENAI_API_KEY": SECRET,
            }
            problems = []
            try:
                done = subprocess.run(
                    [*heph_command(), "say done"],
                    cwd=workspace,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
            except subprocess.TimeoutExpired:
                tally.add(["hang"], name)
                continue
            if (
                done.returncode != expected
                or "Traceback" in done.stderr
                or not session_closed(workspace)
            ):
                problems.append("crash")
            sessions = "".join(p.read_text() for p in (workspace / ".heph").rglob("*.jsonl"))
            if SECRET in done.stdout + done.stderr + sessions:
                problems.append("secret")
            tally.add(problems, f"{name} (exit {done.returncode})")
    return tally


# -- probe 2: malformed and hostile replies, through the Agent and the real client ------------


def hostile_replies() -> list[tuple[str, str]]:
    """(kind, reply text): each is followed by a valid final answer."""
    big = "x" * 1_000_000
    kinds = {
        "empty": "",
        "spaces": "   \n\t ",
        "prose": "Sure, I will do that!",
        "JSON array": "[1, 2]",
        "JSON number": "42",
        "JSON string": '"hello"',
        "JSON null": "null",
        "JSON true": "true",
        "neither action nor final": '{"thought": "t"}',
        "both action and final": '{"action": {"tool": "list_files", "args": {}}, "final": "x"}',
        "action not an object": '{"action": "read_file"}',
        "action without tool": '{"action": {"args": {}}}',
        "tool not a string": '{"action": {"tool": 7, "args": {}}}',
        "unknown tool": act("rm_rf", path="/"),
        "empty tool name": act(""),
        "args not an object": '{"action": {"tool": "read_file", "args": [1]}}',
        "missing required arg": act("read_file"),
        "path as number": act("read_file", path=3),
        "path as list": act("read_file", path=["a"]),
        "path null": act("read_file", path=None),
        "line as string": act("read_file", path="app.py", start_line="2"),
        "line as float": act("read_file", path="app.py", start_line=1.5),
        "line as bool": act("read_file", path="app.py", start_line=True),
        "negative lines": act("read_file", path="app.py", start_line=-5, end_line=-1),
        "reversed lines": act("read_file", path="app.py", start_line=9, end_line=2),
        "huge line number": act("read_file", path="app.py", start_line=10**18),
        "unknown argument": act("read_file", path="app.py", mode="rb"),
        "final not an object": '{"final": 3}',
        "final message not a string": '{"final": {"message": ["a"]}}',
        "thought not a string": '{"thought": {"a": 1}, "final": "x"}',
        "5000-digit integer": '{"thought": "t", "final": "x", "n": ' + "9" * 5000 + "}",
        "100,000 levels deep": '{"a":' * 100_000 + "1" + "}" * 100_000,
        "100,000 open brackets": "[" * 100_000,
        "lone surrogate in answer": '{"final": {"message": "a\\ud800b"}}',
        "lone surrogate in path": '{"action": {"tool": "write_file", "args": {"path": '
        '"x\\udfff.py", "content": "y"}}}',
        "lone surrogate in content": '{"action": {"tool": "write_file", "args": {"path": '
        '"x.py", "content": "\\udc80"}}}',
        "NaN literal": '{"thought": NaN, "final": "x"}',
        "Infinity literal": '{"final": Infinity}',
        "1 MB unclosed string": '{"a": "' + big,
        "1 MB of braces": "{" * 1_000_000,
        "1 MB of quotes": '{"a": "' * 150_000,
        "unclosed think": "<think>" + "hmm " * 1000,
        "many think tags": "<think>" * 100_000,
        "JSON inside think": '<think>{"final": "no"}</think>',
        "unclosed fence": '```json\n{"thought": ',
        "truncated JSON": '{"thought": "t", "action": {"tool": "read_file", "args": {"pa',
        "trailing garbage": FINAL[:-1] + "} garbage",
        "BOM first": "\ufeff" + FINAL,
        "NUL bytes": '{"thought": "a\\u0000b", "final": "x\\u0000"}',
        "raw NUL": "\x00" * 100,
        "duplicate keys": '{"final": "a", "final": {"message": "b"}}',
        "escape sequences in thought": json_reply("\x1b[2J\x1b]0;owned\x07", final="x"),
        "OSC 52 in answer": json_reply("t", final="\x1b]52;c;Y3VybA==\x07"),
        "direction override": json_reply("t", final="evil\u202egnp.exe"),
        "control chars in path": act("write_file", path="\x1b[1A.py", content="x"),
        "path traversal": act("write_file", path="../../evil.py", content="x"),
        "absolute path": act("write_file", path="/tmp/heph-evil.py", content="x"),
        "link out": act("write_file", path="out/evil.py", content="x"),
        "link to outside file": act("read_file", path="notes.txt"),
        "into .git": act("write_file", path=".git/hooks/pre-commit", content="x"),
        "into .heph": act("write_file", path=".heph/state.json", content="{}"),
        "secret read": act("read_file", path=".env"),
        "secret via link": act("read_file", path="config.txt"),
        "secret write": act("write_file", path=".env.local", content="A=1"),
        "folder as file": act("write_file", path=".", content="x"),
        "255+ byte name": act("write_file", path="a" * 300, content="x"),
        "1 MB write": act("write_file", path="big.txt", content=big),
        "patch garbage": act("patch_file", path="app.py", diff="@@ nonsense @@\n+x"),
        "edit with empty old": act("edit_file", path="app.py", old="", new="x"),
        "edit of missing text": act("edit_file", path="app.py", old="nowhere", new="x"),
        "unknown command": act("run_command", name="deploy"),
        "shell injection": act("run_command", name="echo", args="; rm -rf / #"),
        "argument out": act("run_command", name="echo", args="--basetemp=/tmp/x -C/etc"),
        "catastrophic regex": act("search", pattern="(a|aa)+$"),
        "invalid regex": act("search", pattern="(("),
        "regex of 100 KB": act("search", pattern="a" * 100_000),
        "git outside a repo": act("git_log", n=-3),
        "commit message with escapes": act("git_commit", message="\x1b[2Jx"),
        "100 arguments": '{"action": {"tool": "list_files", "args": {'
        + ", ".join(f'"k{i}": {i}' for i in range(100))
        + "}}}",
        "very long tool name": act("t" * 10_000),
        "emoji everywhere": json_reply("🙂" * 100, final="🙂"),
    }
    return list(kinds.items())


def probe_malformed_replies(quick: bool) -> Tally:
    from hephaistus.engine.agent import Agent
    from hephaistus.settings.config import Config
    from hephaistus.workspace import Workspace

    tally = Tally("malformed and hostile replies")
    replies = hostile_replies()[:10] if quick else hostile_replies()
    with ChatServer() as server:
        for kind, text in replies:
            with tempfile.TemporaryDirectory() as folder:
                box = WatchedWorkspace(Path(folder))
                server.script.clear()
                server.reply(text).reply(FINAL).reply(FINAL).reply(FINAL)
                config = Config(
                    base_url=server.url, timeout=5, max_retries=0, commands=(("echo", "echo"),)
                )
                agent = Agent(Workspace.at(box.root), config, policy=Policy("auto"))
                outcome, problem = run_with_limit(60, lambda a=agent: a.execute("probe"))
                problems = [problem] if problem else []
                if not problem and (
                    outcome.status != "answered"  # type: ignore[union-attr]
                    or not session_closed(box.root)
                ):
                    problems.append("crash")
                sent = json.dumps(server.requests)
                if SECRET in sent or OUTSIDE in sent:
                    problems.append("secret")
                if box.escaped():
                    problems.append("escape")
                if stray_files(box.root):
                    problems.append("stray")
                tally.add(problems, kind)
    return tally


# -- probe 3: fuzzed paths through every file tool ---------------------------------------------

FRAGMENTS = [
    "..",
    ".",
    "",
    "/",
    "//",
    "~",
    "app.py",
    ".env",
    ".ENV",
    "id_rsa",
    "out",
    "notes.txt",
    "config.txt",
    "credentials.json",
    ".git",
    "HEAD",
    ".heph",
    "new.py",
    "\x00",
    "\x1b",
    "\udcff",
    "\ud800",
    "a" * 300,
    "*",
    "%2e%2e",
    "\\..\\",
    "C:",
    "\u202e",
    "dir",
    "Credentials.JSON",
    ".Env.local",
    "x" * 40,
]
PATH_TOOLS = (
    "read_file",
    "list_files",
    "search",
    "write_file",
    "append_file",
    "edit_file",
    "patch_file",
    "git_diff",
)


def random_path(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.1:
        return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(1, 12)))
    if roll < 0.2:
        return rng.choice(
            [
                "/etc/passwd",
                "/tmp",
                str(Path.home()),
                "../outside/victim.txt",
                "out/new.txt",
                "ws/../outside/x",
                "/proc/self/environ",
            ]
        )
    return "/".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 6)))


def probe_fuzzed_paths(count: int, seed: int) -> Tally:
    from hephaistus.tools import ToolContext
    from hephaistus.workspace import Workspace

    tally = Tally("fuzzed paths")
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        box = WatchedWorkspace(Path(folder))
        ctx = ToolContext(Workspace.at(box.root))
        ctx.search_seconds = 1.0
        for number in range(count):
            tool = PATH_TOOLS[number % len(PATH_TOOLS)]
            path = random_path(rng)
            args: dict[str, object] = {"path": path}
            if tool in ("write_file", "append_file"):
                args["content"] = "fuzz\n"
            elif tool == "edit_file":
                args.update(old="return a - b", new="return a - b  # fuzz")
            elif tool == "patch_file":
                args["diff"] = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-x\n+y\n"
            elif tool == "search":
                args["pattern"] = "CANARY"
            result, problem = run_with_limit(30, lambda t=tool, a=args: run_tool(ctx, t, a))
            problems = [problem] if problem else []
            output = getattr(result, "output", "")
            if not problem and f"{tool} failed:" in output:
                problems.append("crash")  # an exception the tool did not expect
            if SECRET in output or OUTSIDE in output:
                problems.append("secret")
            if box.escaped():
                problems.append("escape")
                box.before = box.outside_files()
            tally.add(problems, f"{tool}({path!r})")
        if stray_files(box.root):
            tally.counts["stray"] += 1
    return tally


# -- probe 4: kill -9 in the middle of writes ---------------------------------------------------

WRITER = textwrap.dedent("""
    import itertools, sys
    from hephaistus.records.checkpoints import Checkpoints
    from hephaistus.testing.tools import run_tool
    from hephaistus.tools import ToolContext
    from hephaistus.workspace import Workspace

    workspace = Workspace.at(sys.argv[1])
    ctx = ToolContext(workspace, checkpoints=Checkpoints(workspace.root, workspace.heph_dir,
                                                         sys.argv[2]))
    for number in itertools.count():
        letter = "ab"[number % 2]
        run_tool(ctx, "write_file", {"path": "big.txt", "content": letter * 2_000_000})
        result = run_tool(ctx, "append_file", {"path": "log.txt", "content": f"{number}\\n"})
        if result.ok:
            print(number, flush=True)
""")


def probe_kills(count: int, seed: int) -> Tally:
    from hephaistus.records.checkpoints import CheckpointStore, UndoConflict
    from hephaistus.textfile import remove_stale_temp_files

    tally = Tally("kill -9 during writes")
    rng = random.Random(seed)
    for trial in range(count):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "big.txt").write_text("a" * 2_000_000)
            (root / "log.txt").write_text("")
            writer = subprocess.Popen(
                [sys.executable, "-c", WRITER, str(root), "s1"], stdout=subprocess.PIPE, text=True
            )
            time.sleep(rng.uniform(0.3, 1.5))
            writer.send_signal(signal.SIGKILL)
            reported = writer.communicate()[0].split()
            problems = []
            big = (root / "big.txt").read_bytes()
            logged = (root / "log.txt").read_text().split()
            if big not in (b"a" * 2_000_000, b"b" * 2_000_000):
                problems.append("lost")  # torn
            if logged[: len(reported)] != reported:
                problems.append("lost")  # an append reported as done is missing
            if stray_files(root):
                problems.append("stray")
            remove_stale_temp_files(root / ".heph" / "tmp")
            if list((root / ".heph" / "tmp").glob("*")):
                problems.append("stray")
            try:
                undo_session(CheckpointStore(root, root / ".heph"), "s1")
                if (root / "big.txt").read_bytes() != b"a" * 2_000_000 or (
                    root / "log.txt"
                ).read_text():
                    problems.append("lost")  # undo did not bring back the start
            except UndoConflict:
                problems.append("crash")  # undo did not know heph's own last write
            except LookupError:
                pass  # killed before the first write
            tally.add(problems, f"trial {trial}")
    return tally


# -- probe 5: runs that hunt for secrets -------------------------------------------------------


def secret_hunts() -> list[tuple[str, list[str]]]:
    return [
        ("read .env", [act("read_file", path=".env")]),
        ("read .ENV", [act("read_file", path=".ENV")]),
        ("read a link to .env", [act("read_file", path="config.txt")]),
        (
            "read id_rsa and credentials.json",
            [act("read_file", path="id_rsa"), act("read_file", path="credentials.json")],
        ),
        ("search everything", [act("search", pattern="CANARY")]),
        ("search in .env", [act("search", pattern=".", path=".env")]),
        ("search through a link", [act("search", pattern=".", path="config.txt")]),
        (
            "list, then read each",
            [
                act("list_files"),
                act("read_file", path="./.env"),
                act("read_file", path="sub/../.env"),
            ],
        ),
        (
            "git diff of a tracked .env",
            [act("git_diff"), act("git_diff", path=".env"), act("git_diff", staged=True)],
        ),
        ("the environment of a command", [act("run_command", name="env")]),
        (
            "a command's argument naming .env",
            [
                act("run_command", name="echo", args=".env"),
                act("run_command", name="echo", args="--env-file=.env"),
            ],
        ),
        ("the map of the workspace", []),
    ]


def probe_secrets(quick: bool) -> Tally:
    tally = Tally("runs hunting secrets")
    hunts = secret_hunts()[:3] if quick else secret_hunts()
    for name, steps in hunts:
        with tempfile.TemporaryDirectory() as folder, ChatServer() as server:
            box = WatchedWorkspace(Path(folder))
            shutil.rmtree(box.root / ".git")
            root = box.root
            git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
            subprocess.run([*git, "init", "-q"], cwd=root, check=True)
            (root / ".env").write_text("TOKEN=public\n")
            (root / "secrets.py").symlink_to(root / ".env")
            subprocess.run([*git, "add", ".env", "app.py"], cwd=root, check=True)
            subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
            (root / ".env").write_text(f"TOKEN={SECRET}\n")
            (root / ".heph.toml").write_text('[commands]\nenv = "env"\necho = "echo"\n')
            for step in steps:
                server.reply(step)
            server.reply(FINAL)
            env = {
                **base_environment(folder),
                "OPENAI_BASE_URL": server.url,
                "HEPH_TIMEOUT": "5",
                "DATABASE_URL": f"postgres://u:{SECRET}@db/x",
                "GH_PAT": SECRET,
                "OPENAI_API_KEY": f"sk-{SECRET}",
            }
            done = subprocess.run(
                [*heph_command(), "--yes", f"look for secrets {SECRET[:6]}"],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            problems = []
            if done.returncode != 0 or "Traceback" in done.stderr:
                problems.append("crash")
            seen = (
                json.dumps(server.requests)
                + done.stdout
                + done.stderr
                + "".join(p.read_text() for p in (root / ".heph" / "sessions").glob("*.jsonl"))
            )
            if SECRET in seen:
                problems.append("secret")
            tally.add(problems, name)
    return tally


# -- probe 6: concurrent runs in one workspace --------------------------------------------------


def _concurrent_run(root: str, tag: str, steps: int, results: multiprocessing.Queue) -> None:
    from hephaistus.engine.agent import Agent
    from hephaistus.settings.config import Config
    from hephaistus.testing import ScriptedModel
    from hephaistus.workspace import Workspace

    script = []
    for number in range(steps):
        script.append(act("append_file", path="shared.log", content=f"{tag} {number}\n"))
        script.append(
            act(
                "edit_file", path="shared.txt", old=f"{tag}-{number} old", new=f"{tag}-{number} new"
            )
        )
    script.append(FINAL)
    agent = Agent(
        Workspace.at(root),
        Config(max_steps=len(script) + 1),
        model=ScriptedModel(script),
        policy=Policy("auto"),
    )
    agent.execute(f"run {tag}")
    session = agent.session.path if agent.session else None
    results.put((tag, [c.path + ":" + c.diff for c in agent.journal.files], str(session)))


def probe_concurrent(processes: int, steps: int, place: str | None) -> Tally:
    """`processes` runs at once in one workspace (in `place`: a tmpfs folder, or None for the
    system's temporary folder), beside a process spinning on the CPU to widen every window:
    each append and edit lands once or is reported as not done."""
    tally = Tally(f"{processes} concurrent runs in {place or tempfile.gettempdir()}")
    with cpu_hog(), tempfile.TemporaryDirectory(dir=place) as folder:
        root = Path(folder)
        tags = [f"p{n}" for n in range(processes)]
        (root / "shared.log").write_text("")
        (root / "shared.txt").write_text(
            "".join(f"{t}-{i} old\n" for t in tags for i in range(steps))
        )
        results: multiprocessing.Queue = multiprocessing.Queue()
        workers = [
            multiprocessing.Process(target=_concurrent_run, args=(str(root), t, steps, results))
            for t in tags
        ]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=600) for _ in tags]  # before join: a full pipe blocks
        for worker in workers:
            worker.join(60)
        log = (root / "shared.log").read_text().splitlines()
        text = (root / "shared.txt").read_text()
        refused = {"append": 0, "edit": 0}
        for tag, changes, _session in outcomes:
            for number in range(steps):
                appended = any(
                    f"+{tag} {number}" in c for c in changes if c.startswith("shared.log:")
                )
                edited = any(
                    f"+{tag}-{number} new" in c for c in changes if c.startswith("shared.txt:")
                )
                refused["append"] += not appended
                refused["edit"] += not edited
                problems = []
                if log.count(f"{tag} {number}") != (1 if appended else 0):
                    problems.append("lost")  # lost, twice, or written though reported not
                if (f"{tag}-{number} new" in text) != edited:
                    problems.append("lost")
                tally.add(problems, f"{tag} step {number}")
        print(f"    reported as not done: {refused['append']} appends, {refused['edit']} edits")
        if stray_files(root):
            tally.counts["stray"] += 1
        tally.add(_undo_one(root, tags, steps), "undo of one run")
    return tally


@contextmanager
def cpu_hog() -> Iterator[None]:
    """A process keeping a CPU busy for the block: the other processes are preempted more
    often, which widens the window of every race."""
    stop = multiprocessing.Event()
    hog = multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
    hog.start()
    try:
        yield
    finally:
        stop.set()
        hog.join(10)


def _spin(stop: multiprocessing.synchronize.Event) -> None:
    while not stop.is_set():
        pass


def tmpfs_folder() -> str | None:
    """/dev/shm when it is a writable tmpfs (renames there are fastest: the narrowest windows)."""
    try:
        mounts = Path("/proc/mounts").read_text().split("\n")
    except OSError:
        return None
    tmpfs = any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in mounts if line)
    return "/dev/shm" if tmpfs and os.access("/dev/shm", os.W_OK) else None


def _undo_one(root: Path, tags: list[str], steps: int) -> list[str]:
    """Undo the first run: it takes back its own lines or refuses; it never takes another
    run's ("took"), nor leaves its own behind when it says it is done ("lost")."""
    from hephaistus.records.checkpoints import CheckpointStore, Interleaved, UndoConflict
    from hephaistus.records.session import SessionStore

    store = SessionStore(root / ".heph" / "sessions")
    mine = next(
        (
            i
            for i in store.ids()
            if f"run {tags[0]}" in (root / ".heph" / "sessions" / f"{i}.jsonl").read_text()
        ),
        None,
    )
    if mine is None:
        return ["crash"]
    before = (root / "shared.log").read_text()
    try:
        undo_session(CheckpointStore(root, root / ".heph"), mine)
    except (Interleaved, UndoConflict):
        return [] if (root / "shared.log").read_text() == before else ["lost"]
    log = (root / "shared.log").read_text().splitlines()
    others = [f"{t} {n}" for t in tags[1:] for n in range(steps) if f"{t} {n}" in before]
    problems = ["took" for line in others if line not in log][:1]
    if any(f"{tags[0]} {n}" in log for n in range(steps)):
        problems.append("lost")
    return problems


# -- probe 7: inputs that used to hang or exhaust memory ----------------------------------------


def probe_heavy_inputs() -> Tally:
    from hephaistus.model.protocol import FormatError, parse_reply
    from hephaistus.tools import ToolContext, default_registry
    from hephaistus.workspace import Workspace
    from hephaistus.workspace.repomap import Focus, RepoMap

    tally = Tally("heavy inputs (time, memory)")
    tools = default_registry()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "a.txt").write_text("a" * 40 + "b\n")
        with (root / "one_line.js").open("w") as handle:
            for _ in range(200):
                handle.write("x" * 1_000_000)  # 200 MB, one line
        ctx = ToolContext(Workspace.at(root))
        cases: list[tuple[str, Callable[[], object], float]] = [
            ("catastrophic regex", lambda: run_tool(ctx, "search", {"pattern": "(a|aa)+$"}), 15),
            (
                "200 MB single-line file",
                lambda: run_tool(ctx, "read_file", {"path": "one_line.js"}),
                15,
            ),
            (
                "1 MB unclosed JSON",
                lambda: _parse(parse_reply, FormatError, '{"a": "' * 150_000, tools),
                5,
            ),
            (
                "100,000 levels deep",
                lambda: _parse(parse_reply, FormatError, '{"a":' * 100_000, tools),
                5,
            ),
            (  # a pasted blob in the task: the map looks for names in it
                "map for a 1 MB one-word task",
                lambda: RepoMap(ctx.workspace).render(Focus("a_" * 500_000), 1000),
                5,
            ),
        ]
        for name, work, limit in cases:
            import resource

            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started = time.monotonic()
            _, problem = run_with_limit(limit, work)
            grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
            problems = [problem] if problem else []
            if grown > 300_000:  # KB: more than 300 MB for one call
                problems.append("crash")
            tally.add(problems, f"{name} ({time.monotonic() - started:.2f} s, +{grown // 1024} MB)")
            print(f"    {name}: {time.monotonic() - started:.2f} s, peak +{grown // 1024} MB")
    return tally


def _parse(parse: Callable, error: type, text: str, tools: object) -> None:
    try:
        parse(text, tools)
    except error:
        pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--paths", type=int, default=10_000, help="fuzzed paths (default 10000)")
    parser.add_argument("--kills", type=int, default=24, help="kill -9 trials (default 24)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="a few cases of each probe")
    args = parser.parse_args()
    quick = args.quick
    probes: list[Callable[[], Tally]] = [
        lambda: probe_endpoint_faults(quick),
        lambda: probe_malformed_replies(quick),
        lambda: probe_fuzzed_paths(200 if quick else args.paths, args.seed),
        lambda: probe_kills(3 if quick else args.kills, args.seed),
        lambda: probe_secrets(quick),
        *(
            partial(probe_concurrent, processes, 5 if quick else steps, place)
            for processes, steps in ((2, 60), (4, 30), (8, 15))
            for place in dict.fromkeys((tmpfs_folder(), None))  # the same folder once
        ),
        probe_heavy_inputs,
    ]
    print(f"{'probe':<32}{'tried':>7}" + "".join(f"{c:>8}" for c in COLUMNS) + "   seconds")
    failures = 0
    for probe in probes:
        started = time.monotonic()
        tally = probe()
        failures += sum(tally.counts.values())
        print(
            f"{tally.name:<32}{tally.tried:>7}"
            + "".join(f"{tally.counts[c]:>8}" for c in COLUMNS)
            + f"{time.monotonic() - started:>10.1f}",
            flush=True,
        )
        for example in tally.examples:
            print(f"    {example}")
    print(
        "every column but 'tried' must be 0"
        + (": OK" if not failures else f": {failures} problems")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    multiprocessing.set_start_method("fork", force=True)
    raise SystemExit(main())
