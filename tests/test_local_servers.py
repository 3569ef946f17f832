"""What real local servers do (llama.cpp, Ollama, vLLM, LM Studio), through the loopback server
that behaves as they do: reply limits, the true context window, overflows, usage in streams,
slow models, copied examples, and a terminal closed under a run."""

import json
import os
import signal
import subprocess
import time

import pytest

from hephaistus.records.session import load_session
from hephaistus.testing import ChatServer, act, final, heph_command
from hephaistus.workspace.provenance import unseal


def sessions(workspace):
    return [load_session(p) for p in sorted((workspace / ".heph" / "sessions").glob("*.jsonl"))]


@pytest.fixture
def server(request):
    """A loopback server with the flavour and window the test names (marker `server`)."""
    options = request.node.get_closest_marker("server")
    with ChatServer(**(options.kwargs if options else {})) as chat:
        yield chat


def run_heph(heph, server, *args, env=None):
    return heph(*args, env={"OPENAI_BASE_URL": server.url, **(env or {})})


# -- 1. a reply limit on every request; a reply cut there is not malformed -----------------------


def test_every_request_carries_a_reply_limit(heph, chat_server):
    chat_server.reply(final("done"))
    assert heph("-m", "gpt-4o-mini", "go").code == 0  # a model with a large window
    assert chat_server.requests[0]["max_tokens"] == 4096  # a quarter of a large window, capped


def test_a_reply_cut_at_the_limit_is_reported_as_cut_off(heph, chat_server, workspace):
    (workspace / ".heph.toml").write_text("max_reply_tokens = 50\n")
    chat_server.reply(
        '{"thought": "writing a lot", "action": {"tool": "write_file", "args": '
        '{"path": "big.txt", "content": "' + "x" * 400,
        run_on=True,
    )
    chat_server.reply(final("done in parts"))
    result = heph("--yes", "--trust", "write a big file")
    assert result.code == 0, result.stderr
    assert [r["max_tokens"] for r in chat_server.requests] == [50, 50]
    feedback = chat_server.requests[1]["messages"][-1]["content"]
    assert "cut off at the reply limit (50 tokens)" in feedback and "append_file" in feedback
    assert not (workspace / "big.txt").exists()


# -- 2. the context window from the server --------------------------------------------------------


@pytest.mark.parametrize(
    "flavour, source",
    [
        ("llama.cpp", "llama.cpp n_ctx"),
        ("vllm", "vLLM max_model_len"),
        ("ollama", "Ollama num_ctx"),
        ("lmstudio", "LM Studio"),
    ],
)
def test_the_window_is_read_from_the_server_and_cached(heph, workspace, flavour, source):
    with ChatServer(flavour=flavour, context_window=6000) as server:
        server.reply(final("one")).reply(final("two"))
        first = run_heph(heph, server, "-v", "go")
        assert first.code == 0, first.stderr
        assert f"context window 6,000 tokens (from the server ({source}))" in first.stderr
        assert server.requests[0]["max_tokens"] == 1500
        sealed = (workspace / ".heph" / "cache" / "windows.json").read_bytes()
        cache = json.loads(unseal(f"windows {workspace.resolve()}", sealed) or b"{}")  # sealed
        assert [entry[0] for entry in cache.values()] == [6000]
        second = run_heph(heph, server, "-v", "go")  # from the cache: same answer
        assert f"from the server ({source})" in second.stderr


def test_a_server_that_says_nothing_gets_the_conservative_default(heph, chat_server):
    chat_server.reply(final("ok"))
    result = heph("-v", "-m", "my-own-model", "go")
    assert "context window 8,192 tokens (from the default for unknown models" in result.stderr


# -- 3. and 4. overflow: fail before sending, or learn the window and retry once -----------------


@pytest.mark.server(flavour="llama.cpp", context_window=2048)
def test_a_task_that_cannot_fit_fails_before_sending(heph, server):
    result = run_heph(heph, server, "please " * 3000)
    assert result.code == 1
    assert "does not fit the model's context window 2,048 tokens" in result.stderr
    assert "--ctx-size" in result.stderr and "context_window" in result.stderr
    assert server.requests == []  # nothing was sent


# llama-cpp-python refuses only a prompt that fills its window (a reply cap past it is cut short)
@pytest.mark.parametrize(
    "flavour, stream, window", [("openai", False, 5000), ("llama-cpp-python", True, 2500)]
)
def test_an_overflow_the_server_reports_is_recovered_once(heph, workspace, flavour, stream, window):
    (workspace / "log.txt").write_text("".join(f"line {i} of a long log\n" for i in range(700)))
    (workspace / ".heph.toml").write_text(
        f"stream = {str(stream).lower()}\ncontext_window = 16000\n"
    )
    with ChatServer(flavour=flavour, context_window=window) as server:
        server.reply(act("read_file", path="log.txt")).reply(act("list_files"))
        server.reply(final("summarised"))
        result = run_heph(heph, server, "summarise log.txt")
        assert result.code == 0, result.stderr
        assert "did not fit the model's context" in result.stderr
        assert "kept failing" not in result.stderr
        # read, then the request that overflowed, made once more smaller, then the answer
        assert len(server.requests) == 4


@pytest.mark.server(flavour="llama-cpp-python", context_window=300)
def test_an_overflow_that_compaction_cannot_fix_names_the_window(heph, server, workspace):
    (workspace / ".heph.toml").write_text("stream = true\ncontext_window = 100000\n")
    result = run_heph(heph, server, "go")
    assert result.code == 1
    assert "empty reply stream" in result.stderr and "context" in result.stderr
    assert "kept failing" not in result.stderr and len(server.requests) == 2


def test_compaction_that_changes_nothing_is_not_announced(heph, chat_server, workspace):
    (workspace / ".heph.toml").write_text("context_window = 1200\nmap_tokens = 50\n")
    chat_server.reply(final("ok"))
    result = heph("go")
    assert "compacted" not in result.stderr


# -- 6. usage while streaming ---------------------------------------------------------------------


def test_a_stream_asks_for_usage_and_records_it(heph, chat_server, workspace):
    (workspace / ".heph.toml").write_text("stream = true\n")
    chat_server.reply(final("ok"), usage={"prompt_tokens": 321, "completion_tokens": 12})
    assert heph("go").code == 0
    assert chat_server.requests[0]["stream_options"] == {"include_usage": True}
    assert sessions(workspace)[-1].end["usage"] == {"prompt_tokens": 321, "completion_tokens": 12}


@pytest.mark.server(reject_stream_options=True)
def test_a_server_that_refuses_stream_options_gets_estimates_marked_as_such(
    heph, server, workspace
):
    (workspace / ".heph.toml").write_text("stream = true\n")
    server.reply(final("one")).reply(final("two"))
    assert run_heph(heph, server, "go").code == 0
    assert ["stream_options" in r for r in server.requests] == [True, False]
    usage = sessions(workspace)[-1].end["usage"]
    assert usage["estimated"] is True and usage["prompt_tokens"] > 100
    listed = run_heph(heph, server, "sessions", "--json").json["sessions"][-1]
    assert listed["tokens"] > 100


# -- 7. timeouts ---------------------------------------------------------------------------------


def test_a_timeout_is_retried_once_and_names_the_setting(heph, chat_server):
    chat_server.fault("timeout", delay=0.6).fault("timeout", delay=0.6)
    result = heph("go", env={"HEPH_TIMEOUT": "0.2"})
    assert result.code == 1 and "raise `timeout` in .heph.toml or HEPH_TIMEOUT" in result.stderr
    assert len(chat_server.requests) == 2


def test_a_stream_has_a_deadline_for_the_whole_reply(heph, chat_server, workspace):
    (workspace / ".heph.toml").write_text("stream = true\n")
    slow = '{"thought": "thinking slowly about this", "final": {"message": "late"}}'
    chat_server.reply(slow, chunk_delay=0.2)
    chat_server.reply(final("on time"))
    result = heph("go", env={"HEPH_TIMEOUT": "0.5"})
    assert result.code == 0 and result.stdout.strip() == "on time"
    assert "no complete reply within 0.5 s" in result.stderr


# -- 8. the correction shows a concrete example; copied placeholders are refused ---------------


@pytest.mark.parametrize(
    "message", ["the answer for the user", "What you did or found, for the user.", ""]
)
def test_a_copied_placeholder_is_not_an_answer(heph, chat_server, message):
    chat_server.reply({"thought": "why", "final": {"message": message}})
    chat_server.reply(final("the real answer"))
    result = heph("go")
    assert result.code == 0 and result.stdout.strip() == "the real answer"
    feedback = chat_server.requests[1]["messages"][-1]["content"]
    assert "not your answer" in feedback and '"path": "src/app.py"' in feedback


# -- 9. SIGTERM / SIGHUP end the session as Ctrl-C does ------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_closed_terminal_ends_the_session(chat_server, workspace, home, sig):
    chat_server.fault("timeout", delay=5.0)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "OPENAI_BASE_URL": chat_server.url}
    process = subprocess.Popen(
        [*heph_command(), "wait for me"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while not chat_server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(sig)
    assert process.wait(timeout=15) == 128 + sig  # as a shell reports a signal's end
    recorded = sessions(workspace)[-1]
    assert recorded.outcome == "interrupted" and sig.name in recorded.end["message"]


@pytest.mark.server(flavour="openai", context_window=2200)
def test_a_window_learned_from_an_overflow_is_kept_for_the_next_run(heph, server, workspace):
    # An unknown model gets 8,192 tokens, a quarter kept for the reply: too much for this server.
    server.reply(final("one")).reply(final("two"))
    first = run_heph(heph, server, "-m", "tiny-local", "go")
    assert first.code == 0 and "did not fit" in first.stderr
    second = run_heph(heph, server, "-v", "-m", "tiny-local", "go")
    assert second.code == 0 and "did not fit" not in second.stderr
    assert "context window 2,200 tokens (from the server's overflow error)" in second.stderr
    assert len(server.requests) == 3  # one overflow, once: the second run knew the window


@pytest.mark.parametrize("example", ["feedback", "prompt"])
def test_a_copy_of_the_example_action_is_refused(heph, chat_server, workspace, example):
    from hephaistus.model.protocol import EXAMPLE_ACTION, PROMPT_EXAMPLE

    (workspace / "app.py").write_text("print('the example names a file that is here')\n")
    copied = EXAMPLE_ACTION if example == "feedback" else PROMPT_EXAMPLE
    chat_server.reply(copied).reply(final("done"))
    result = heph("go")
    assert result.code == 0
    assert PROMPT_EXAMPLE in chat_server.requests[0]["messages"][0]["content"]  # as shown
    assert "the example, copied" in chat_server.requests[1]["messages"][-1]["content"]


@pytest.mark.server(flavour="llama.cpp", context_window=2048)
def test_after_a_task_too_large_the_next_one_still_fits(heph, server):
    huge = "please " * 3000
    first = run_heph(heph, server, huge)
    assert first.code == 1 and "the task with the workspace map and state" in first.stderr
    assert ".." not in first.stderr.replace("...", "")
    server.reply(final("small"))
    second = run_heph(heph, server, "a small task")
    assert second.code == 0, second.stderr
    sent = server.requests[-1]["messages"][-1]["content"]
    assert "last task: please please" in sent and sent.count("please") < 200


def test_one_choice_of_model_everywhere(heph, workspace):
    with ChatServer(flavour="llama.cpp", context_window=2048, models=("smol",)) as server:
        server.reply(final("done"))
        result = run_heph(heph, server, "-v", "go")
        assert result.code == 0, result.stderr
        assert server.requests[0]["model"] == "smol"
        assert "model smol (the only model that server serves)" in result.stderr
        listed = run_heph(heph, server, "models", "--json")
        assert [m["id"] for m in listed.json["models"] if m["configured"]] == ["smol"]
    with ChatServer(models=("a", "b")) as server:
        result = run_heph(heph, server, "go")
        assert result.code == 2 and "serves several models" in result.stderr
        assert "a, b" in result.stderr and server.requests == []


def test_a_busy_local_server_is_said_to_be_busy_not_missing(heph, monkeypatch):
    import socket

    from hephaistus.model import discovery

    monkeypatch.setattr(discovery, "BUSY_SECONDS", 0.3)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # takes connections, answers nothing: a server busy with a request
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    try:
        result = heph("go", env={"OPENAI_BASE_URL": None, "HEPH_DISCOVER": url})
    finally:
        listener.close()
    assert result.code == 2
    assert f"at {url} took the connection but did not answer within 0.3 s" in result.stderr
    assert "no model endpoint is configured" not in result.stderr
