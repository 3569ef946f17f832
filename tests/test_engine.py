"""The ReAct loop with a scripted model: recovery, limits, state in every request, caching."""

import json
import os

import pytest

from hephaistus.engine.agent import Agent
from hephaistus.errors import ModelError
from hephaistus.records.session import load_session
from hephaistus.runtime.policy import Policy
from hephaistus.settings.config import Config
from hephaistus.testing import ScriptedModel, act, final
from hephaistus.workspace import Workspace


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a - b\n")
    return Workspace.at(root)


def agent_with(ws, *replies, **settings):
    model = ScriptedModel(list(replies))
    return Agent(ws, Config(**settings), model=model, policy=Policy("auto")), model


def test_read_write_final(ws):
    agent, model = agent_with(
        ws,
        act("read_file", path="app.py"),
        act("edit_file", path="app.py", old="a - b", new="a + b"),
        final("fixed add"),
    )
    outcome = agent.execute("fix add")
    assert (outcome.status, outcome.exit_code, outcome.message) == ("answered", 0, "fixed add")
    assert "return a + b" in (ws.root / "app.py").read_text()
    model.assert_used_up()
    observation = model.calls[1][-1]["content"]
    assert observation.startswith("Observation: 1 def add(a, b):")


def test_earlier_messages_stay_identical_and_the_files_of_the_models_own_calls_are_not_news(ws):
    agent, model = agent_with(
        ws,
        act("read_file", path="app.py"),
        act("write_file", path="new.py", content="x = 1\n"),
        act("read_file", path="app.py"),
        final("done"),
    )
    agent.execute("make new.py")
    for earlier, later in zip(model.calls, model.calls[1:], strict=False):
        assert later[: len(earlier)] == earlier  # prompt caches keep hitting
    for request in model.calls:
        assert request[-1]["role"] == "user"
    assert "<agent_state>" not in model.calls[0][-1]["content"]  # nothing known yet
    # The model's own calls are in the conversation: the files they named are not news.
    for request in model.calls[1:]:
        assert "agent_state" not in request[-1]["content"]
    assert "<workspace>\napp.py\n  def add(a, b)\n</workspace>" in model.calls[0][1]["content"]


def test_the_state_says_what_the_models_own_calls_did_not_name(ws):
    agent, model = agent_with(
        ws,
        act("read_file", path="app.py"),
        act("edit_file", path="./app.py", old="return a - b", new="return a + b"),
        act("write_file", path="made.py", content="x = 1\n"),
        act("shell", command="printf 'y = 2\\n' > other.py"),
        final("done"),
    )
    agent.execute("fix add")
    assert "agent_state" not in model.calls[2][-1]["content"]  # ./app.py is app.py
    assert "agent_state" not in model.calls[3][-1]["content"]
    after_the_command = model.calls[4][-1]["content"]
    assert "<agent_state update>" in after_the_command
    assert "last modified file: other.py" in after_the_command


def test_malformed_reply_is_fed_back_and_the_run_recovers(ws):
    agent, model = agent_with(ws, "I think I should read the file.", final("ok"))
    assert agent.execute("look").status == "answered"
    feedback = model.calls[1][-1]["content"]
    assert feedback.startswith(
        "Your last reply was not valid: the reply contained no complete JSON"
    )


def test_three_malformed_replies_in_a_row_end_the_run(ws):
    agent, _ = agent_with(ws, "nope", '{"thought": "x"}', act("rm", path="x"))
    outcome = agent.execute("look")
    assert outcome.status == "failed" and outcome.exit_code == 1
    assert (
        "3 malformed replies in a row" in outcome.message and "unknown tool 'rm'" in outcome.message
    )


def test_a_good_reply_resets_the_malformed_count(ws):
    agent, _ = agent_with(ws, "bad", "bad", act("list_files"), "bad", "bad", final("ok"))
    assert agent.execute("look").status == "answered"


def test_the_same_call_three_times_is_a_loop(ws):
    call = act("read_file", path="app.py")
    agent, model = agent_with(ws, call, call, call, final("never"))
    outcome = agent.execute("look")
    assert outcome.status == "failed" and "same read_file call 3 times" in outcome.message
    assert len(model.calls) == 3


def test_step_limit(ws):
    agent, model = agent_with(
        ws, *[act("read_file", path="app.py", start_line=i) for i in (1, 2, 1)], max_steps=3
    )
    outcome = agent.execute("look")
    assert outcome.status == "failed" and "step limit (3)" in outcome.message
    assert len(model.calls) == 3


def test_refused_write_ends_the_run_with_exit_3(ws):
    model = ScriptedModel([act("write_file", path="x.py", content="1"), final("never")])
    agent = Agent(ws, Config(), model=model, policy=Policy("ask"))  # no one to ask
    outcome = agent.execute("write x")
    assert outcome.status == "refused" and outcome.exit_code == 3
    assert not (ws.root / "x.py").exists()
    messages = load_session(agent.session.path).messages
    assert messages[-1]["role"] == "assistant"  # the run stopped before another request


def test_model_error_fails_the_run_and_closes_the_session(ws):
    agent, _ = agent_with(ws, ModelError("the model endpoint broke"))
    outcome = agent.execute("look")
    assert outcome.status == "failed" and outcome.message == "the model endpoint broke"
    recorded = load_session(agent.session.path)
    assert recorded.end["outcome"] == "failed" and recorded.spans[-1].ok is False


def test_ctrl_c_saves_the_session(ws):
    agent, _ = agent_with(ws, act("list_files"), KeyboardInterrupt())
    outcome = agent.execute("look")
    assert outcome.status == "interrupted" and outcome.exit_code == 130
    recorded = load_session(agent.session.path)
    assert recorded.end["exit_code"] == 130
    assert [s.kind for s in recorded.spans] == ["INPUT", "LLM", "TOOL", "LLM"]


def test_state_persists_and_the_next_agent_sees_it(ws):
    agent, _ = agent_with(
        ws, act("write_file", path="fizzbuzz.py", content="print(1)\n"), final("wrote fizzbuzz.py")
    )
    agent.execute("write fizzbuzz")
    saved = json.loads((ws.heph_dir / "state.json").read_text())
    assert saved["last_modified_file"] == "fizzbuzz.py"
    assert saved["recently_created_files"] == ["fizzbuzz.py"]
    assert saved["last_answer"] == "wrote fizzbuzz.py"
    second, model = agent_with(ws, final("ok"))
    second.execute("it is incorrect")
    first_request = model.calls[0][-1]["content"]
    assert "last modified file: fizzbuzz.py" in first_request
    assert "last task: write fizzbuzz" in first_request


def test_the_state_file_is_rewritten_only_when_the_state_changed(ws):
    reads = [act("read_file", path="app.py", start_line=1 + i % 2) for i in range(4)]
    agent, model = agent_with(ws, *reads, final("read it"))
    state_file, witness = ws.heph_dir / "state.json", ws.heph_dir / "witness"
    rewritten = []
    answer = model.complete

    def complete(messages, **options):  # between two steps
        if len(model.calls) == 1:  # the first read made app.py active: saved
            os.link(state_file, witness)  # a second name for the file as saved then
        elif model.calls:
            rewritten.append(not os.path.samefile(state_file, witness))
        return answer(messages, **options)

    model.complete = complete
    agent.execute("read app.py")
    assert rewritten == [False, False, False]  # reading app.py again changed nothing
    assert not os.path.samefile(state_file, witness)  # the answer did
    assert json.loads(state_file.read_text())["last_answer"] == "read it"


def test_conversation_carries_over_between_tasks(ws):
    agent, model = agent_with(ws, final("one"), final("two"))
    agent.execute("first")
    agent.execute("second")
    assert model.calls[1][1]["content"].startswith("first")
    assert model.calls[1][-1]["content"].startswith("second")


def test_observations_are_clipped(ws):
    (ws.root / "big.txt").write_text("word\n" * 1000)
    agent, model = agent_with(
        ws, act("search", pattern="word"), final("ok"), observation_limit=1000
    )
    agent.execute("search")
    observation = model.calls[1][-1]["content"]
    assert len(observation.split("<agent_state>")[0].encode()) < 1200
    assert "more bytes cut" in observation


def test_a_task_stopped_while_the_server_is_asked_is_the_last_task_of_the_follow_up(tmp_path):
    from hephaistus.engine.agent import Agent
    from hephaistus.runtime.policy import Policy
    from hephaistus.settings.config import Config
    from hephaistus.testing import ScriptedModel, final
    from hephaistus.workspace import Workspace

    class Probed(ScriptedModel):
        stops = 1

        def served_window(self, cache):
            if self.stops:
                self.stops -= 1
                raise KeyboardInterrupt  # the editor cancels while the server is asked
            return None

    model = Probed([final("Sorry: here is the summary again.")])
    agent = Agent(Workspace.at(tmp_path), Config(), model=model, policy=Policy("auto"))
    try:
        agent.execute("summarise notes.txt")
    except KeyboardInterrupt:
        pass
    assert agent.execute("it is incorrect").status == "answered"
    assert "last task: summarise notes.txt" in model.calls[0][-1]["content"]
