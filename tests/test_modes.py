"""Permission modes: the table, plan mode enforced in code, "go", and where a mode may come from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import git
from hephaistus.settings.permissions import EFFECTS, MODES, TABLE, decide, next_mode
from hephaistus.testing import act, final

# DESIGN's table, written out by hand: the code's table must say the same.
DESIGNED = {
    "ask": ("allow", "ask", "ask", "ask", "ask"),
    "edits": ("allow", "allow", "ask", "ask", "ask"),
    "plan": ("allow", "deny", "deny", "deny", "deny"),
    "auto": ("allow", "allow", "allow", "allow", "allow"),
}
EFFECT_ORDER = ("read", "write", "command", "external", "git")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("effect", EFFECTS)
def test_every_mode_and_effect_is_decided_as_designed(mode, effect):
    designed = DESIGNED[mode][EFFECT_ORDER.index(effect)]
    assert decide(mode, effect) == designed
    # Whatever was approved, a deny stays a deny and an allow an allow; an ask becomes allow.
    everything = {"write", "git", "command:*", "external:*", f"{effect}:x"}
    assert decide(mode, effect, "x", everything) == ("allow" if designed == "ask" else designed)


def test_the_table_has_every_mode_and_effect_and_nothing_else():
    assert set(TABLE) == set(DESIGNED) and set(EFFECTS) == set(EFFECT_ORDER)
    assert all(set(row) == set(EFFECTS) for row in TABLE.values())


def test_an_approval_holds_for_one_effect_and_one_name():
    assert decide("ask", "command", "test", {"write"}) == "ask"  # writes approve no command
    assert decide("ask", "command", "lint", {"command:test"}) == "ask"
    assert decide("ask", "command", "test", {"command:test"}) == "allow"
    assert decide("ask", "command", "lint", {"command:*"}) == "allow"
    assert decide("ask", "command", "shell", {"command:*"}) == "ask"  # never the shell
    assert decide("ask", "external", "mcp__a__b", {"command:*"}) == "ask"
    assert decide("ask", "git", "", {"write", "command:*"}) == "ask"


def test_shift_tab_cycles_ask_edits_plan_and_never_reaches_auto():
    seen = ["ask"]
    for _ in range(6):
        seen.append(next_mode(seen[-1]))
    assert seen == ["ask", "edits", "plan", "ask", "edits", "plan", "ask"]
    assert next_mode("auto") == "ask"


# -- plan mode, enforced in code -----------------------------------------------------------

WRITERS = [
    act("write_file", path="new.py", content="x = 1\n"),
    act("edit_file", path="app.py", old="x = 1", new="x = 2"),
    act("patch_file", path="app.py", diff="@@ -1 +1 @@\n-x = 1\n+x = 3\n"),
    act("append_file", path="app.py", content="y = 2\n"),
    act("run_command", name="mark"),
    act("git_commit", message="sneaky"),
]


def files_of(root: Path) -> dict[str, bytes]:
    """Every byte of the workspace heph could change, .git included (not heph's own folder)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".heph" not in p.relative_to(root).parts
    }


@pytest.fixture
def planned(heph, chat_server, workspace, home):
    """A git workspace, a command of the person's that leaves a mark, and a plan-mode run in
    which the model names every tool that changes something, then answers with a plan."""
    config = home / ".config" / "hephaistus"
    config.mkdir(parents=True)
    marker = workspace.parent / "ran"
    (config / "config.toml").write_text(f'[commands]\nmark = "touch {marker}"\n')
    (workspace / "app.py").write_text("x = 1\n")
    git(workspace, "init", "-q", "-b", "main")
    (workspace / ".git" / "info" / "exclude").write_text(".heph/\n")  # what heph would add
    git(workspace, "add", "app.py")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    before = files_of(workspace)
    for reply in WRITERS:
        chat_server.reply(reply)
    chat_server.reply(final("1. In app.py set x to 2.\n2. Run the tests."))
    result = heph("--mode", "plan", "--json", "plan the change")
    return result, before, marker


def test_in_plan_mode_nothing_that_changes_anything_is_offered_or_done(
    planned, chat_server, workspace
):
    result, before, marker = planned
    assert result.code == 0, result.stderr
    assert result.json["mode"] == "plan" and result.json["changed_files"] == []
    assert files_of(workspace) == before  # no byte, .git included
    assert not marker.exists()  # nothing ran
    system = chat_server.requests[0]["messages"][0]["content"]
    assert "- read_file(" in system  # how the prompt lists a tool
    for reply in WRITERS:
        assert f"- {reply['action']['tool']}(" not in system
    observations = [r["messages"][-1]["content"] for r in chat_server.requests[1:]]
    for reply, seen in zip(WRITERS, observations, strict=True):
        assert f"{reply['action']['tool']} is not available in plan mode" in seen


def test_the_plan_is_saved_and_go_carries_it_out(planned, heph, chat_server, workspace):
    result, _, _ = planned
    plan = workspace / ".heph" / "plans" / f"{result.json['session']}.md"
    assert plan.read_text() == "1. In app.py set x to 2.\n2. Run the tests.\n"
    chat_server.reply(act("edit_file", path="app.py", old="x = 1", new="x = 2"))
    chat_server.reply(final("Set x to 2; the tests were not run."))
    went = heph("-c", "--mode", "edits", "--json", "go")
    assert went.code == 0, went.stderr
    assert (workspace / "app.py").read_text() == "x = 2\n"
    assert went.json["mode"] == "edits" and went.json["changed_files"] == ["app.py"]
    asked = chat_server.requests[-2]["messages"][-1]["content"]
    assert "Carry out the plan" in asked and "In app.py set x to 2." in asked


def test_go_that_cannot_carry_out_the_plan_sends_nothing(heph, chat_server, workspace):
    chat_server.reply(final("Go where?"))
    assert heph("--json", "go").json["message"] == "Go where?"  # no plan ever: just a task
    assert "Carry out the plan" not in chat_server.requests[0]["messages"][-1]["content"]
    chat_server.reply(final("1. Do it."))
    assert heph("--mode", "plan", "plan it").code == 0
    in_plan_mode = heph("-c", "--mode", "plan", "go")
    assert in_plan_mode.code == 2 and "plan mode never does" in in_plan_mode.stderr
    for plan in (workspace / ".heph" / "plans").iterdir():
        plan.unlink()  # the person threw the plan away
    gone = heph("-c", "--mode", "edits", "go")
    assert gone.code == 2 and "nothing was carried out" in gone.stderr
    assert len(chat_server.requests) == 2  # the first "go", and the plan's own request


def test_a_plans_folder_that_is_a_link_stops_heph_before_it_writes(
    heph, chat_server, workspace, tmp_path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".heph").mkdir()
    (workspace / ".heph" / "plans").symlink_to(outside)  # as a repository can commit it
    chat_server.reply(final("1. Do it."))
    result = heph("--mode", "plan", "plan it")
    assert result.code != 0 and "is a link" in result.stderr
    assert list(outside.iterdir()) == []


def test_a_plan_longer_than_go_reads_is_cut_where_it_says_so(tmp_path):
    from hephaistus.records import plans

    path = plans.save(tmp_path, "s1", "step\n" * 100_000)
    assert path.stat().st_size <= plans.MAX_PLAN_BYTES
    kept = plans.load(tmp_path, "s1")
    assert kept is not None and kept.endswith(plans.CUT_NOTE.strip())


def test_plan_mode_offers_the_model_only_what_it_may_use(heph, chat_server, workspace):
    chat_server.reply(act("delete_everything", path="a.py"))
    chat_server.reply(act("patch_file", path="a.py", patch="wrong argument name"))
    chat_server.reply(final("the plan"))
    assert heph("--mode", "plan", "plan it").code == 0
    unknown = chat_server.requests[1]["messages"][-1]["content"]
    assert "unknown tool 'delete_everything'" in unknown and "read_file" in unknown
    assert "write_file" not in unknown and "git_commit" not in unknown
    denied = chat_server.requests[2]["messages"][-1]["content"]
    assert "patch_file is not available in plan mode" in denied  # not "bad arguments"


def test_what_writes_without_the_model_honours_plan_mode(heph, chat_server, workspace):
    (workspace / "m.py").write_text("def add(a, b):\n    return a + b\n")
    init = heph("init", "--mode", "plan")
    assert init.code == 2 and "plan mode never writes" in init.stderr
    assert not (workspace / "AGENTS.md").exists()
    chat_server.responder = lambda body: '"""Add two numbers."""'
    docs = heph("docs", "--fix", "--mode", "plan", "m.py")
    assert "plan mode writes nothing" in docs.stderr
    assert (workspace / "m.py").read_text() == "def add(a, b):\n    return a + b\n"


# -- where a mode comes from -----------------------------------------------------------------


def test_a_workspace_file_may_not_choose_auto(heph, chat_server, workspace):
    (workspace / ".heph.toml").write_text('mode = "auto"\n')
    chat_server.reply(act("write_file", path="a.py", content="1\n"))
    chat_server.reply(final("never"))
    result = heph("--json", "write a")
    assert 'mode = "auto" is ignored' in result.stderr
    assert result.code == 3 and result.json["mode"] == "ask"
    assert not (workspace / "a.py").exists()
    for flags in (["--yes"], ["--mode", "edits"]):  # the person chose: nothing to warn of
        chat_server.reply(final("chosen"))
        chosen = heph(*flags, "--json", "say hi")
        assert chosen.code == 0 and "is ignored" not in chosen.stderr


def test_a_workspace_file_may_ask_more_with_plan_or_edits_and_heph_says_so(
    heph, chat_server, workspace, home
):
    (workspace / ".heph.toml").write_text('mode = "plan"\n')
    chat_server.reply(act("write_file", path="a.py", content="1\n"))
    chat_server.reply(final("the plan"))
    result = heph("--json", "write a")
    assert result.code == 0 and result.json["mode"] == "plan"
    assert result.json["plan"].endswith(f"{result.json['session']}.md")
    assert not (workspace / "a.py").exists()
    (workspace / ".heph.toml").write_text('mode = "edits"\n')  # more than the person's auto
    (home / ".config" / "hephaistus").mkdir(parents=True)
    (home / ".config" / "hephaistus" / "config.toml").write_text(
        'mode = "auto"\n[commands]\nhello = "true"\n'
    )
    chat_server.reply(act("write_file", path="a.py", content="1\n"))
    chat_server.reply(act("run_command", name="hello"))
    chat_server.reply(final("wrote it"))
    asked_more = heph("write a")
    assert "edits mode, set by .heph.toml: writes files unasked" in asked_more.stderr
    assert asked_more.code == 3 and (workspace / "a.py").read_text() == "1\n"  # the command asks


def test_yes_is_auto_and_contradicting_it_is_a_usage_error(heph, chat_server, workspace):
    chat_server.reply(act("write_file", path="a.py", content="1\n"))
    chat_server.reply(final("wrote it"))
    assert heph("--yes", "--json", "write a").json["mode"] == "auto"
    assert (workspace / "a.py").read_text() == "1\n"
    clash = heph("--yes", "--mode", "plan", "write a")
    assert clash.code == 2 and "--yes" in clash.stderr and "--mode" in clash.stderr
    wrong = heph("--mode", "yolo", "x")
    assert wrong.code == 2 and "yolo" in wrong.stderr


def test_without_a_terminal_what_would_ask_names_the_mode_the_tool_and_the_way_out(
    heph, chat_server, home
):
    chat_server.reply(act("write_file", path="a.py", content="1\n"))
    result = heph("--mode", "ask", "write a")
    assert result.code == 3
    assert "write_file: ask mode asks before writing files" in result.stderr
    assert "pass --mode edits" in result.stderr and "--dry-run" in result.stderr
    config = home / ".config" / "hephaistus"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[commands]\nhello = "echo hi"\n')
    chat_server.reply(act("run_command", name="hello"))
    command = heph("--mode", "edits", "say hello")
    assert command.code == 3 and "run_command: edits mode asks before running" in command.stderr
    assert "pass --yes" in command.stderr and "pass --mode edits" not in command.stderr


def test_the_session_and_replay_show_the_mode(heph, chat_server):
    chat_server.reply(final("the plan"))
    assert heph("--mode", "plan", "plan it").code == 0
    replayed = heph("replay", "last")
    assert replayed.code == 0 and "plan mode" in replayed.stdout + replayed.stderr


# -- the house rule: policy in one place -------------------------------------------------------


def test_no_tool_asks_for_approval_or_starts_a_process_itself():
    tools = Path(__file__).parent.parent / "hephaistus" / "tools"
    offenders = []
    for module in tools.rglob("*.py"):
        text = module.read_text()
        for pattern in (
            r"\bsubprocess\b",
            r"\bPopen\b",
            r"\bos\.system\b",
            r"\.approve\b",
            r"\basker\b",
            r"\bPolicy\b",
            r"\bos\.exec",
            r"\bos\.spawn",
        ):
            if re.search(pattern, text):
                offenders.append(f"{module.name}: {pattern}")
    assert offenders == []


def test_a_second_go_does_not_carry_out_the_plan_again_unless_asked(
    planned, heph, chat_server, workspace
):
    chat_server.reply(act("append_file", path="log.txt", content="step done\n"))
    chat_server.reply(final("Done."))
    assert heph("-c", "--mode", "edits", "go").code == 0
    requests = len(chat_server.requests)
    again = heph("-c", "--mode", "edits", "go.")
    assert again.code == 2 and "was carried out already" in again.stderr
    assert "`go again`" in again.stderr and len(chat_server.requests) == requests
    assert (workspace / "log.txt").read_text() == "step done\n"
    chat_server.reply(act("append_file", path="log.txt", content="step done\n"))
    chat_server.reply(final("Done again."))
    once_more = heph("-c", "--mode", "edits", "--json", "Go again!")
    assert once_more.code == 0 and once_more.json["message"] == "Done again."
    assert "Carry out the plan" in chat_server.requests[-2]["messages"][-1]["content"]
    chat_server.reply(final("1. Another plan."))
    assert heph("-c", "--mode", "plan", "plan more").code == 0
    chat_server.reply(final("Carried out."))
    assert heph("-c", "--mode", "edits", "go").code == 0  # a new plan: go carries it out


def test_a_dry_run_go_leaves_the_plan_to_carry_out(planned, heph, chat_server, workspace):
    chat_server.reply(act("write_file", path="b.py", content="b = 1\n"))
    chat_server.reply(final("Would create b.py."))
    assert heph("-c", "--mode", "edits", "--dry-run", "go").code == 0
    assert not (workspace / "b.py").exists()
    chat_server.reply(act("write_file", path="b.py", content="b = 1\n"))
    chat_server.reply(final("Created b.py."))
    went = heph("-c", "--mode", "edits", "go")
    assert went.code == 0, went.stderr
    assert (workspace / "b.py").read_text() == "b = 1\n"
