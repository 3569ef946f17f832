"""The person's own slash commands (Markdown files, as Claude Code keeps them): found in the
workspace's `.heph/commands/` and `.claude/commands/` (trusted only) and the person's
`commands/`, run in the chat and over ACP with their arguments put in, and never a way to
bring in a file from outside the workspace."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from test_repl import _type_when_ready

from hephaistus.engine.agent import Agent
from hephaistus.runtime.policy import Policy
from hephaistus.settings.config import Config
from hephaistus.testing import ScriptedModel, final
from hephaistus.ui.approval import TerminalAsker
from hephaistus.ui.render import ConsoleSink
from hephaistus.ui.repl import Repl
from hephaistus.workspace import Workspace
from hephaistus.workspace.slash_commands import found

ENTER = "\r"
REVIEW = (
    "---\ndescription: Review a file for one concern\nargument-hint: FILE CONCERN\n---\n"
    "Review $1 for $2.\nAll of it: $ARGUMENTS\n"
)


def persons_commands() -> Path:
    """The person's `commands/` folder (in the test's own config folder)."""
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "hephaistus" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def chat(root: Path, keys: str, *replies, trusted=True):
    """The chat on typed `keys`; (what it printed, the model)."""
    model = ScriptedModel(list(replies))
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    sink = ConsoleSink(console=console)
    asker = TerminalAsker(sink)
    config = Config(workspace_trusted=trusted)
    agent = Agent(
        Workspace.at(root), config, model=model, sink=sink, policy=Policy("ask", asker=asker)
    )
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        repl = Repl(agent, sink, asker, input=pipe, output=DummyOutput())
        holder = {"repl": repl}
        threading.Thread(target=_type_when_ready, args=(pipe, [], holder), daemon=True).start()
        assert repl.run() == 0
    return console.file.getvalue(), model


def test_a_workspace_command_runs_with_its_arguments_put_in(workspace):
    (workspace / ".heph" / "commands").mkdir(parents=True)
    (workspace / ".heph" / "commands" / "review.md").write_text(REVIEW)
    keys = "/help" + ENTER + '/review "src/app.py" bugs' + ENTER + "/exit" + ENTER
    shown, model = chat(workspace, keys, final("reviewed"))
    assert "/review FILE CONCERN  Review a file for one concern" in shown
    task = model.calls[0][-1]["content"]
    assert '<command name="review" file=".heph/commands/review.md">' in task
    assert 'Review src/app.py for bugs.\nAll of it: "src/app.py" bugs' in task
    assert "/review: from .heph/commands/review.md" in shown


def test_an_untrusted_workspace_s_commands_are_held_back_and_said(workspace):
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / ".claude" / "commands" / "review.md").write_text(REVIEW)
    shown, model = chat(workspace, "/review a b" + ENTER + "/exit" + ENTER, trusted=False)
    assert "not used until you trust this workspace" in shown
    assert ".claude/commands/review.md" in shown
    assert "unknown command /review" in shown and not model.calls


def test_the_person_s_win_heph_s_own_stay_and_no_link_leads_out(workspace, tmp_path):
    folder = workspace / ".heph" / "commands"
    (folder / "git").mkdir(parents=True)
    (folder / "review.md").write_text("the workspace's review")
    (folder / "undo.md").write_text("not heph's undo")
    (folder / "git" / "commit.md").write_text("Commit what changed.")
    outside = tmp_path / "outside.md"
    outside.write_text("a secret from outside")
    (folder / "leak.md").symlink_to(outside)
    (persons_commands() / "review.md").write_text("the person's review")
    commands, held = found(Workspace.at(workspace), True, persons_commands())
    assert commands["review"].body == "the person's review" and not held
    assert "git:commit" in commands and "leak" not in commands
    assert commands["git:commit"].task("now") == (
        '<command name="git:commit" file=".heph/commands/git/commit.md">\n'
        "Commit what changed.\n\nARGUMENTS: now\n</command>"
    )
    shown, model = chat(workspace, "/undo" + ENTER + "/exit" + ENTER)
    assert not model.calls  # /undo is heph's own, whatever a file says


def test_an_editor_is_offered_the_commands_and_runs_one(chat_server, home, workspace, heph):
    import asyncio

    from test_acp import Editor
    from test_acp_editor import connected, last_turn

    (persons_commands() / "review.md").write_text(REVIEW)
    chat_server.reply(final("reviewed"))

    async def scenario():
        editor = Editor([])
        process, connection, _ = await connected(editor, home, chat_server.url, workspace)
        started = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await last_turn(connection, process, started.session_id, "/review app.py style")
        return editor

    editor = asyncio.run(scenario())
    offered = [
        c
        for u in editor.updates
        if u.session_update == "available_commands_update"
        for c in u.available_commands
    ]
    review = next(c for c in offered if c.name == "review")
    assert review.description == "Review a file for one concern"
    assert "Review app.py for style." in chat_server.requests[0]["messages"][-1]["content"]
