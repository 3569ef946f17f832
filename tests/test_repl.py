"""The REPL driven through prompt_toolkit's pipe input, with output captured from rich."""

import io
import json
import threading
import time

import pytest
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from hephaistus.engine.agent import Agent
from hephaistus.runtime.policy import Policy
from hephaistus.settings.approvals import SavedApprovals
from hephaistus.settings.config import Config
from hephaistus.testing import ScriptedModel, act, final
from hephaistus.ui.approval import TerminalAsker
from hephaistus.ui.render import ConsoleSink
from hephaistus.ui.repl import Repl, ReplCompleter
from hephaistus.workspace import Workspace

ENTER = "\r"
CTRL_C, CTRL_D, ESC_ENTER = "\x03", "\x04", "\x1b\r"


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    return Workspace.at(root)


def chat(ws, keys, *replies, yes=False, history=None, mode="ask"):
    """Run the REPL on typed `keys`: a string, or a list of chunks where a chunk may be
    (text, condition): the text is typed once condition(repl) holds (the prompt has caught up),
    never after a fixed wait. Returns (exit code, what it printed, model, repl)."""
    model = ScriptedModel(list(replies))
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    sink = ConsoleSink(console=console)
    saved = SavedApprovals(ws.root)
    asker = TerminalAsker(sink, saved=saved)
    policy = Policy("auto" if yes else mode, asker=asker, saved=saved)
    agent = Agent(ws, Config(), model=model, sink=sink, policy=policy)
    with create_pipe_input() as pipe:
        chunks = [keys] if isinstance(keys, str) else list(keys)
        pipe.send_text(chunks[0])
        holder = {}
        typist = threading.Thread(
            target=_type_when_ready, args=(pipe, chunks[1:], holder), daemon=True
        )
        repl = Repl(agent, sink, asker, input=pipe, output=DummyOutput(), history=history)
        holder["repl"] = repl
        typist.start()
        code = repl.run()
    return code, console.file.getvalue(), model, repl


def buffer_is(text):
    """A condition: the prompt's input line reads `text`."""
    return lambda repl: repl.prompt.default_buffer.text == text


def asked(repl):
    """A condition: a question waits for its key (keys sent earlier are no answer)."""
    return repl.asking is not None


def asked_about(text):
    """A condition: the question waiting for its key holds `text`."""
    return lambda repl: text in (repl.asking or "")


def prompted(repl):
    """A condition: the chat's prompt waits for a line."""
    return repl.asking is None and repl.prompt.app.is_running


def _type_when_ready(pipe, chunks, holder, limit=10.0):
    for chunk in chunks:
        text, ready = chunk if isinstance(chunk, tuple) else (chunk, None)
        deadline = time.monotonic() + limit
        while ready is not None and not ready(holder["repl"]) and time.monotonic() < deadline:
            time.sleep(0.01)  # polling the prompt's state, not waiting for it to be likely
        pipe.send_text(text)


def test_help_lists_every_command_with_its_docstring(ws):
    code, out, _, repl = chat(ws, "/help" + ENTER + "/exit" + ENTER)
    assert code == 0
    expected = {
        "help",
        "undo",
        "redo",
        "diff",
        "commit",
        "clear",
        "state",
        "tokens",
        "model",
        "sessions",
        "replay",
        "approvals",
        "init",
        "mode",
        "go",
        "mcp",
        "exit",
    }
    assert set(repl.commands()) == expected
    for name in expected:
        doc = getattr(repl, f"cmd_{name}").__doc__.strip().splitlines()[0]
        assert f"/{name}" in out and doc in out


def test_init_drafts_agents_md_for_approval_and_undo_takes_it_back(ws):
    keys = [
        "/init" + ENTER,
        ("y", asked),
        ("/state" + ENTER + "/undo" + ENTER + "/init" + ENTER, prompted),
        ("n", asked),
        (CTRL_D, prompted),
    ]
    code, out, _, _ = chat(ws, keys)
    assert "+++ b/AGENTS.md" in out and "+- `src/`: 1 file (.py)" in out
    assert "wrote AGENTS.md" in out
    assert "undone: AGENTS.md (removed)" in out
    assert "the user declined to create AGENTS.md; AGENTS.md was not changed" in out
    assert not (ws.root / "AGENTS.md").exists()


def test_unknown_command_suggests_the_closest(ws):
    _, out, _, _ = chat(ws, "/hepl" + ENTER + "/undoo" + ENTER + CTRL_D)
    assert "unknown command /hepl; did you mean /help?" in out
    assert "did you mean /undo?" in out


def test_a_task_with_approval_then_a_follow_up(ws):
    keys = [
        "write fizzbuzz.py" + ENTER,
        ("y", asked),
        ("it is incorrect" + ENTER, prompted),
        ("y", asked),
        (CTRL_D, prompted),
    ]
    code, out, model, _ = chat(
        ws,
        keys,
        act("write_file", path="fizzbuzz.py", content="print(1)\n"),
        final("wrote it"),
        act("write_file", path="fizzbuzz.py", content="print('fizz')\n"),
        final("fixed it"),
    )
    assert code == 0
    assert (ws.root / "fizzbuzz.py").read_text() == "print('fizz')\n"
    assert "wrote it" in out and "fixed it" in out and "+print(1)" in out
    second_task = model.calls[2]
    assert any(m["content"].startswith("write fizzbuzz.py") for m in second_task)  # same chat
    assert "last modified file: fizzbuzz.py" in second_task[-1]["content"]


def test_declining_a_write_lets_the_model_go_on(ws):
    keys = ["make a.py" + ENTER, ("n", asked), (CTRL_D, prompted)]
    _, out, model, _ = chat(
        ws, keys, act("write_file", path="a.py", content="1\n"), final("ok, not written")
    )
    assert not (ws.root / "a.py").exists()
    assert "the user declined to create a.py" in model.calls[1][-1]["content"]
    assert "ok, not written" in out


def test_a_line_typed_before_a_question_waits_unsent_at_the_next_prompt(ws):
    keys = [
        "make a.py" + ENTER + "and b.py" + ENTER,  # the second line: typed while it works
        ("y", asked),
        (ENTER, buffer_is("and b.py")),  # only the person's Enter sends it
        (CTRL_D, prompted),
    ]
    replies = act("write_file", path="a.py", content="1\n"), final("made"), final("b.py noted")
    _, out, model, _ = chat(ws, keys, *replies)
    assert (ws.root / "a.py").exists() and "b.py noted" in out
    assert model.calls[2][-1]["content"].startswith("and b.py")


def test_all_can_be_saved_for_the_workspace_and_cleared(ws):
    keys = [
        "make files" + ENTER,
        ("a", asked),
        ("y", asked_about("from now on too")),
        ("/approvals" + ENTER + "/approvals clear" + ENTER + CTRL_D, prompted),
    ]
    _, out, _, _ = chat(
        ws,
        keys,
        act("write_file", path="a.py", content="1\n"),
        act("write_file", path="b.py", content="2\n"),
        final("both"),
    )
    assert (ws.root / "a.py").exists() and (ws.root / "b.py").exists()  # b needed no question
    assert "approved for this workspace: writes" in out
    assert "approvals cleared" in out
    assert not (ws.heph_dir / "approvals.json").exists()


def test_saved_approval_is_used_by_the_next_chat(ws):
    SavedApprovals(ws.root).allow_writes()  # as the person's [a] and y saved it
    chat(
        ws,
        "make a.py" + ENTER + CTRL_D,
        act("write_file", path="a.py", content="1\n"),
        final("done"),
    )
    assert (ws.root / "a.py").exists()


def test_approvals_in_the_workspace_approve_nothing(ws):
    ws.heph_dir.mkdir()
    (ws.heph_dir / "approvals.json").write_text(json.dumps({"writes": True}))
    _, out, _, _ = chat(
        ws,
        ["make a.py" + ENTER, ("n", asked), (CTRL_D, prompted)],
        act("write_file", path="a.py", content="1\n"),
        final("not made"),
    )
    assert not (ws.root / "a.py").exists() and "the user declined to create a.py" in out


def test_ctrl_c_during_a_turn_returns_to_the_prompt(ws):
    keys = "slow task" + ENTER + "next task" + ENTER + CTRL_D
    code, out, model, repl = chat(ws, keys, act("list_files"), KeyboardInterrupt(), final("fine"))
    assert code == 0 and "cancelled; the session was saved" in out and "fine" in out
    assert len(repl.turns) == 2


def test_ctrl_c_twice_at_an_empty_prompt_leaves(ws):
    code, out, _, _ = chat(ws, CTRL_C + CTRL_C)
    assert code == 0 and "Ctrl-C again" in out


def test_ctrl_c_on_a_typed_line_only_clears_it(ws):
    keys = "half a thought" + CTRL_C + "/state" + ENTER + CTRL_C + CTRL_C
    code, out, model, _ = chat(ws, keys)
    assert code == 0 and "<agent_state>" in out
    assert model.calls == []  # the cleared line was never sent


def test_multi_line_input_is_one_task(ws):
    keys = "first line" + ESC_ENTER + "second line" + ENTER + CTRL_D
    _, _, model, _ = chat(ws, keys, final("read both"))
    assert model.calls[0][1]["content"].startswith("first line\nsecond line")


def test_a_paste_with_newlines_is_one_task(ws):
    keys = "\x1b[200~pasted one\npasted two\x1b[201~" + ENTER + CTRL_D
    _, _, model, _ = chat(ws, keys, final("ok"))
    assert model.calls[0][1]["content"].startswith("pasted one\npasted two")


def test_undo_redo_and_diff(ws):
    keys = (
        "change app"
        + ENTER
        + "/diff"
        + ENTER
        + "/undo"
        + ENTER
        + "/undo"
        + ENTER
        + "/redo"
        + ENTER
        + CTRL_D
    )
    _, out, _, _ = chat(
        ws,
        keys,
        act("edit_file", path="src/app.py", old="x = 1", new="x = 2"),
        final("changed"),
        yes=True,
    )
    assert "-x = 1\n+x = 2" in out
    assert "undone: src/app.py" in out and "nothing to undo" in out and "redone: src/app.py" in out
    assert (ws.root / "src" / "app.py").read_text() == "x = 2\n"


def test_clear_starts_a_new_conversation_and_keeps_the_state(ws):
    keys = "first" + ENTER + "/clear" + ENTER + "second" + ENTER + CTRL_D
    _, _, model, _ = chat(ws, keys, final("one"), final("two"))
    assert len(model.calls[1]) == 2  # system prompt and the new task only
    assert "last task: first" in model.calls[1][-1]["content"]


def test_tokens_model_and_sessions(ws):
    keys = (
        "hello"
        + ENTER
        + "/tokens"
        + ENTER
        + "/model"
        + ENTER
        + "/model other-model"
        + ENTER
        + "/sessions"
        + ENTER
        + "/replay"
        + ENTER
        + CTRL_D
    )
    _, out, _, repl = chat(ws, keys, final("hi there"))
    assert "tokens used; context: about" in out
    assert "model: scripted" in out and "model: other-model" in out
    assert repl.agent.model.name == "other-model"
    assert "OUTCOME" in out and "answered" in out and "hello" in out


def test_history_is_kept_in_a_file(ws, tmp_path):
    history = tmp_path / "state" / "history"
    chat(ws, "/state" + ENTER + CTRL_D, history=history)
    assert "/state" in history.read_text()


def test_completion_of_commands_and_paths(ws):
    completer = ReplCompleter(["help", "history", "undo"], lambda: ["src/app.py", "README.md"])

    def complete(text):
        return [c.text for c in completer.get_completions(Document(text), None)]

    assert complete("/h") == ["/help", "/history"]
    assert complete("/u") == ["/undo"]
    assert complete("look at @sr") == ["@src/app.py"]
    assert complete("look at @app") == ["@src/app.py"]
    assert complete("no at sign") == []


def test_tab_completes_in_the_prompt(ws):
    _, out, _, _ = chat(ws, ["/sta\t", (ENTER + CTRL_D, buffer_is("/state"))])
    assert "<agent_state>" in out


def test_ctrl_r_searches_the_history(ws, tmp_path):
    history = tmp_path / "history"
    history.write_text(
        "\n# 2026-01-01 00:00:00.000000\n+/state\n\n# 2026-01-01 00:00:01.000000\n+/tokens\n"
    )
    searched = lambda repl: repl.prompt.search_buffer.text == "sta"  # noqa: E731
    _, out, _, _ = chat(
        ws, ["\x12sta", (ENTER, searched), (ENTER + CTRL_D, buffer_is("/state"))], history=history
    )
    assert "<agent_state>" in out and "tokens used" not in out


def test_a_hostile_model_cannot_write_escape_sequences_to_the_chat(ws):
    hostile = "\x1b[1A\x1b[2K\x1b]52;c;Y3VybA==\x07"
    code, out, _, repl = chat(
        ws,
        "set it up" + ENTER + "/state" + ENTER + "/exit" + ENTER,
        act("write_file", f"plan{hostile}", path="setup.py", content=f"import os{hostile}\n"),
        final(f"done{hostile}"),
        yes=True,
    )
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "import os\\x1b[1A\\x1b[2K" in out and "done\\x1b[1A" in out


def test_a_task_that_starts_with_a_path_or_an_escape_is_a_task(ws):
    keys = "/src/app.py raises KeyError" + ENTER + "//etc is odd" + ENTER + " /help me" + ENTER
    code, out, model, _ = chat(
        ws, keys + "/nope" + ENTER + CTRL_D, final("one"), final("two"), final("three")
    )
    assert code == 0
    tasks = [call[-1]["content"].split("\n")[0] for call in model.calls]
    assert tasks == ["/src/app.py raises KeyError", "/etc is odd", "/help me"]
    assert "unknown command /nope" in out and "start the line with // or a space" in out


def test_help_lines_are_whole_and_commit_writes_its_own_message(ws):
    from conftest import git

    git(ws.root, "init", "-q")
    git(ws.root, "config", "user.email", "p@example.invalid")
    git(ws.root, "config", "user.name", "P")
    git(ws.root, "add", ".")
    git(ws.root, "commit", "-qm", "base")
    keys = "/help" + ENTER + "make it" + ENTER + "/commit" + ENTER + CTRL_D
    write = act("write_file", path="src/app.py", content="x = 2\n")
    _, out, _, _ = chat(
        ws, keys, act("read_file", path="src/app.py"), write, final("done"), yes=True
    )
    help_line = next(line for line in out.splitlines() if line.startswith("/state"))
    assert help_line.rstrip().endswith("the project instructions the last task read.")
    assert git(ws.root, "log", "-1", "--format=%s").strip() == "heph: update src/app.py"


def test_ctrl_c_in_a_request_leaves_no_spinner_running(ws):
    model = ScriptedModel([KeyboardInterrupt(), final("fine")])
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    sink = ConsoleSink(console=console)
    asker = TerminalAsker(sink, saved=SavedApprovals(ws.root))
    agent = Agent(ws, Config(), model=model, sink=sink, policy=Policy(asker=asker))
    with create_pipe_input() as pipe:
        repl = Repl(agent, sink, asker, input=pipe, output=DummyOutput())
        sink.err = console  # the spinner draws on this terminal
        repl.handle("slow task")
        assert not sink.spinning  # stopped with the turn, not left over the prompt
        repl.handle("next task")
        assert not sink.spinning


def test_mode_go_and_a_thrown_away_plan_in_the_chat(ws):
    keys = (
        "/go\r"  # no plan yet
        "/mode plan\r"
        "plan the change\r"
        "/go nonsense\r"
        "/mode\r" + CTRL_D
    )
    code, shown, model, repl = chat(ws, keys, final("1. Set x to 2."))
    assert code == 0
    assert "no plan yet" in shown and "mode: plan (only reads" in shown
    assert "/go takes ask, edits or auto" in shown
    plans = list((ws.heph_dir / "plans").iterdir())
    assert [p.read_text() for p in plans] == ["1. Set x to 2.\n"]
    plans[0].unlink()  # the person threw the plan away
    code, shown, model, repl = chat(ws, "/go\r" + CTRL_D)
    shown = " ".join(shown.split())  # as one line, however the console wrapped it
    assert "is gone" in shown and "nothing was carried out" in shown
    assert model.calls == []  # nothing went to the model


def test_a_second_go_in_the_chat_says_the_plan_was_carried_out(ws):
    keys = "/mode plan\rplan the change\r/go\r/go\r/go again again\r/go again\r" + CTRL_D
    code, shown, model, repl = chat(
        ws, keys, final("1. Set x to 2."), final("Done."), final("Done again.")
    )
    shown = " ".join(shown.split())
    assert code == 0 and "was carried out already; /go again carries it out" in shown
    assert "/go takes ask, edits or auto, and again" in shown
    assert "Done." in shown and "Done again." in shown
    assert len(model.calls) == 3  # the plan, the first /go and /go again: the second asked nothing
