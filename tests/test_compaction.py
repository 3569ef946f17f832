"""Compaction: long sessions stay inside the context window and keep the state."""

import pytest

from hephaistus.engine.agent import Agent
from hephaistus.model.compaction import Compactor, context_window, count
from hephaistus.records.session import load_session
from hephaistus.runtime.policy import Policy
from hephaistus.settings.config import Config
from hephaistus.testing import ScriptedModel, act, final
from hephaistus.workspace import Workspace


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    for index in range(10):
        (root / f"module_{index}.py").write_text(
            "".join(f"def function_{n}(value):\n    return value * {n}\n" for n in range(40))
        )
    return Workspace.at(root)


def test_a_60_step_session_stays_under_a_small_window_and_keeps_the_state(ws):
    steps = [
        act(
            "read_file",
            f"step {i}: " + "thinking " * 20,
            path=f"module_{i % 10}.py",
            start_line=1 + i // 10,
        )
        for i in range(59)
    ]
    steps.insert(30, act("write_file", "write a big file", path="big.py", content="x = 1\n" * 800))
    model = ScriptedModel([*steps, final("read everything")])
    agent = Agent(
        ws,
        Config(context_window=12_000, max_steps=70, map_tokens=300),
        model=model,
        policy=Policy("auto"),
    )
    outcome = agent.execute("read every module")
    assert outcome.status == "answered", outcome.message
    assert len(model.calls) == 61
    budget = agent.compactor.budget
    for number, request in enumerate(model.calls):
        assert count(request) <= budget
        assert request[0]["role"] == "system"
        assert request[1]["content"].startswith("read every module")  # the task is kept
        if number > 30:  # once big.py is written, no compaction loses it: the call that
            # wrote it is there, or the state that names it (sent again after a compaction)
            assert any(
                "last modified file: big.py" in m["content"] or '"path": "big.py"' in m["content"]
                for m in request[2:]
            )
    last = model.calls[-1]
    # After a compaction the whole current state is sent again, so it is never lost.
    assert any("last modified file: big.py" in m["content"] for m in last[2:])
    assert any(
        m["content"].startswith("Observation (compacted): read_file(path=module_")
        for request in model.calls
        for m in request
    )
    assert "earlier steps were dropped to fit the context window]" in last[1]["content"]
    assert not any("x = 1\\nx = 1" in m["content"] for m in last[:-6])  # big write elided
    memos = [s for s in load_session(agent.session.path).spans if s.name == "compaction"]
    assert 1 <= len(memos) < 20  # compacting rarely, to a low-water mark


def test_the_newest_steps_stay_whole(ws):
    steps = [act("read_file", path=f"module_{i % 10}.py", start_line=1 + i) for i in range(30)]
    model = ScriptedModel([*steps, final("done")])
    agent = Agent(
        ws,
        Config(context_window=5000, max_steps=40, map_tokens=200),
        model=model,
        policy=Policy("auto"),
    )
    agent.execute("read")
    last = model.calls[-1]
    assert last[-1]["content"].startswith("Observation: ")
    assert last[-3]["content"].startswith("Observation: ")


def test_the_server_count_corrects_the_estimate():
    compactor = Compactor(10_000)
    assert compactor.observe_usage(sent=1000, prompt_tokens=1500) is None
    assert compactor.ratio == 1.5
    messages = [{"role": "user", "content": "x" * 4000}]
    assert compactor.size(messages) == int(count(messages) * 1.5)


def test_a_server_that_truncates_is_named_once():
    compactor = Compactor(32_000)
    warning = compactor.observe_usage(sent=8000, prompt_tokens=2048)
    assert warning and "num_ctx" in warning and "context_window" in warning
    assert compactor.observe_usage(sent=8000, prompt_tokens=2048) is None


@pytest.mark.parametrize(
    "model, configured, served, window, source",
    [
        ("gpt-4o-mini", None, None, 128_000, "the table of known models"),
        ("qwen2.5-coder:14b", None, None, 32_768, "the table of known models"),
        ("ollama/llama3.1:8b", None, None, 131_072, "the table of known models"),
        ("my-own-model", None, None, 8192, "the default for unknown models"),
        ("gpt-4o", 8000, (2048, "the server"), 8000, "context_window in the configuration"),
        ("gpt-4o", None, (2048, "the server"), 2048, "the server"),
    ],
)
def test_the_window_comes_from_config_server_table_or_default(
    model, configured, served, window, source
):
    found, said = context_window(model, configured, served)
    assert found == window and said.startswith(source)


def test_truncation_warning_reaches_the_user(heph, chat_server, workspace):
    (workspace / "big.txt").write_text("word " * 4000)
    chat_server.reply(
        {"thought": "t", "action": {"tool": "read_file", "args": {"path": "big.txt"}}},
        usage={"prompt_tokens": 2048, "completion_tokens": 5},
    )
    chat_server.reply(
        {"thought": "t", "final": {"message": "ok"}},
        usage={"prompt_tokens": 2048, "completion_tokens": 5},
    )
    result = heph("-m", "gpt-4o-mini", "summarise big.txt")  # a model with a large window
    assert result.code == 0
    assert result.stderr.count("cutting the conversation short") == 1


def test_open_problems_are_kept_until_the_file_is_fixed(ws):
    model = ScriptedModel(
        [
            act("edit_file", path="module_0.py", old="no such text", new="x"),
            act("list_files"),
            act("edit_file", path="module_0.py", old="return value * 0", new="return 0"),
            final("fixed"),
        ]
    )
    agent = Agent(ws, Config(), model=model, policy=Policy("auto"))
    agent.execute("edit")
    after_failure, unchanged, fixed = (model.calls[i][-1]["content"] for i in (1, 2, 3))
    assert "open problems: module_0.py: edit_file failed" in after_failure
    assert "<agent_state>" not in unchanged  # nothing changed: nothing repeated
    assert "open problems: (none now)" in fixed


@pytest.mark.parametrize(
    "reply",
    [
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        '{"n": ' + "9" * 5000 + "}",
        "[" + "1," * 5000 + "1]",
    ],
)
def test_compaction_survives_hostile_old_replies(reply):
    from hephaistus.model.compaction import _elide_reply

    elided = _elide_reply(reply)
    assert len(elided) < 1000 and elided.endswith("[...]")


@pytest.mark.parametrize(
    "text, at_least",
    [
        ("def add(a, b):\n    return a + b\n" * 40, 0.29),  # tokens per character
        ("2026-11-30 12:00:01,123 took 4711.5 ms bytes=99213\n" * 40, 0.6),
        ("日本語のテキスト" * 50, 1.0),
    ],
)
def test_the_estimate_leans_high_on_dense_text(text, at_least):
    from hephaistus import tokens

    assert tokens.estimate(text) >= at_least * len(text)
    assert tokens.estimate(text) > len(text) / 4  # never below the old characters / 4
