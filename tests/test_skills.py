"""Skills in the Agent Skills format: found in the workspace's and the person's folders in
their order, listed to the model one line each within 2% of the window, loaded with the
`skill` tool (the body and its files), run as `/NAME`, and held back in a workspace that is
not trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_slash_commands import chat

from hephaistus.testing import act, final
from hephaistus.workspace import Workspace, skills
from hephaistus.workspace.slash_commands import found as found_commands

LINT = (
    "---\nname: lint-fix\ndescription: Fix lint errors with ruff. Use when asked to tidy "
    "code.\n---\nRun `ruff check --fix $ARGUMENTS`, then read scripts/report.py.\n"
)


def make_skill(root: Path, name: str, description: str, body: str = "Do it.\n") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n{body}"
    (folder / "SKILL.md").write_text(text)
    return folder


def home() -> Path:
    return skills.home()


def test_skill_fixtures_are_valid_agent_skills(tmp_path):
    """What these tests make is what the format's own validator accepts."""
    from skills_ref import validator

    folder = make_skill(tmp_path, "lint-fix", "Fix lint errors", LINT.split("---\n", 2)[2])
    (folder / "SKILL.md").write_text(LINT)
    assert validator.validate(folder) == []
    many = tmp_path / "many"
    for n in range(3):
        assert validator.validate(make_skill(many, f"skill-{n}", f"Skill number {n}")) == []


def test_skills_are_found_in_their_order_and_the_persons_win(tmp_path):
    ws = tmp_path / "ws"
    make_skill(ws / ".agents/skills", "deploy", "from .agents")
    make_skill(ws / ".claude/skills", "deploy", "from .claude")
    make_skill(ws / ".heph/skills", "deploy", "from .heph")
    make_skill(ws / ".heph/skills", "notes", "workspace notes")
    make_skill(ws / ".claude/skills", "review", "workspace review")
    make_skill(home() / ".claude/skills", "review", "the person's review")
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "hephaistus" / "skills"
    make_skill(config, "notes", "heph's own folder's notes")
    make_skill(home() / ".agents/skills", "notes", "the person's .agents notes")
    found, held = skills.found(Workspace.at(ws), trusted=True)
    assert held == []
    assert found["deploy"].description == "from .agents"
    assert found["review"].description == "the person's review"
    assert found["notes"].description == "the person's .agents notes"
    assert list(found)[:2] == ["notes", "review"]  # the person's first, ~/.agents first


def test_a_skill_needs_a_name_and_a_description(tmp_path):
    ws = tmp_path / "ws"
    folder = ws / ".heph/skills"
    make_skill(folder, "good", "does good")
    (folder / "nameless").mkdir()
    (folder / "nameless" / "SKILL.md").write_text("---\ndescription: no name given\n---\nx\n")
    (folder / "Bad Name").mkdir()
    (folder / "Bad Name" / "SKILL.md").write_text("---\ndescription: a bad name\n---\nx\n")
    (folder / "quiet").mkdir()
    (folder / "quiet" / "SKILL.md").write_text("---\nname: quiet\n---\nno description\n")
    (folder / "loose.md").write_text("---\nname: loose\ndescription: not in a folder\n---\n")
    found, _ = skills.found(Workspace.at(ws), trusted=True)
    assert sorted(found) == ["good", "nameless"]  # the folder's name stands for a missing one


def test_an_untrusted_workspaces_skills_are_held_back_and_said(tmp_path):
    ws = tmp_path / "ws"
    make_skill(ws / ".claude/skills", "deploy", "push to production")
    make_skill(home() / ".agents/skills", "mine", "the person's")
    found, held = skills.found(Workspace.at(ws), trusted=False)
    assert list(found) == ["mine"]
    assert held == [".claude/skills/deploy"]
    _, text, said = skills.offered(Workspace.at(ws), False, 32_000)
    assert "deploy" not in text and "mine" in text
    assert said == [
        "not used until you trust this workspace (heph trust): the skills in .claude/skills/deploy"
    ]


def test_a_link_out_of_the_workspace_is_no_skill_and_no_skill_file(tmp_path):
    outside = make_skill(tmp_path / "outside", "stolen", "reads what is not the workspace's")
    (outside / "secret.txt").write_text("the person's secret")
    ws = tmp_path / "ws"
    (ws / ".heph/skills").mkdir(parents=True)
    (ws / ".heph/skills/stolen").symlink_to(outside)
    inside = make_skill(ws / ".heph/skills", "local", "a local one")
    (inside / "notes.txt").symlink_to(outside / "secret.txt")
    (inside / ".env").write_text("API_KEY=sk-123")
    (inside / "scripts").mkdir()
    (inside / "scripts" / "run.py").write_text("print(1)\n")
    found, _ = skills.found(Workspace.at(ws), trusted=True)
    assert list(found) == ["local"]
    assert found["local"].files == ("scripts/run.py",)


def test_two_hundred_skills_take_at_most_two_percent_of_an_8k_window(tmp_path):
    from hephaistus.tokens import estimate

    ws = tmp_path / "ws"
    for n in range(200):
        make_skill(
            ws / ".heph/skills", f"skill-{n:03}", f"Does task number {n} of the project well"
        )
    found, _ = skills.found(Workspace.at(ws), trusted=True)
    text, left_out = skills.listing(found, 8192)
    listed = [line for line in text.splitlines() if line.startswith("- ")]
    assert 0 < len(listed) < 200 and len(listed) + len(left_out) == 200
    assert estimate(text) <= 8192 * 0.02 + estimate(text.splitlines()[-1]) + 1
    assert text.splitlines()[-1].startswith(f"({len(left_out)} more not listed")
    big, none_left = skills.listing(found, 1_000_000)
    assert none_left == [] and len(big.splitlines()) == 201


def test_the_model_sees_the_lines_loads_a_skill_and_reads_its_file(heph, chat_server, workspace):
    folder = make_skill(workspace / ".heph/skills", "lint-fix", "x")
    (folder / "SKILL.md").write_text(LINT)
    (folder / "scripts").mkdir()
    (folder / "scripts" / "report.py").write_text("print('report')\n")
    chat_server.reply(act("skill", name="lint-fix"))
    chat_server.reply(act("skill", name="lint-fix", file="scripts/report.py"))
    chat_server.reply(act("skill", name="nope"))
    chat_server.reply(final("done"))
    result = heph("--trust", "tidy the code")
    assert result.code == 0, result.stderr
    system = chat_server.requests[0]["messages"][0]["content"]
    assert "- lint-fix: Fix lint errors with ruff. Use when asked to tidy code." in system
    assert "- skill(name, file?)" in system
    loaded = chat_server.requests[1]["messages"][-1]["content"]
    assert '<skill name="lint-fix" file=".heph/skills/lint-fix/SKILL.md">' in loaded
    assert "Run `ruff check --fix $ARGUMENTS`" in loaded and "scripts/report.py" in loaded
    assert "print('report')" in chat_server.requests[2]["messages"][-1]["content"]
    assert "no skill is called 'nope'" in chat_server.requests[3]["messages"][-1]["content"]


def test_without_skills_the_tool_is_not_offered(heph, chat_server, workspace):
    chat_server.reply(final("done"))
    assert heph("hello").code == 0
    system = chat_server.requests[0]["messages"][0]["content"]
    assert "skill(" not in system and "Skills (" not in system


def test_an_untrusted_workspaces_skill_is_said_held_back_in_a_run(heph, chat_server, workspace):
    make_skill(workspace / ".claude/skills", "deploy", "push to production")
    chat_server.reply(final("done"))
    result = heph("hello")
    assert result.code == 0
    assert "the skills in .claude/skills/deploy" in result.stderr + result.stdout
    assert "deploy" not in chat_server.requests[0]["messages"][0]["content"]


def test_slash_name_runs_a_skill_with_its_arguments(tmp_path):
    ws = tmp_path / "ws"
    folder = make_skill(ws / ".agents/skills", "lint-fix", "x")
    (folder / "SKILL.md").write_text(LINT)
    (folder / "scripts").mkdir()
    (folder / "scripts" / "report.py").write_text("print('report')\n")
    commands, _ = found_commands(Workspace.at(ws), trusted=True)
    task = commands["lint-fix"].task("src/")
    assert task.startswith('<command name="lint-fix" file=".agents/skills/lint-fix/SKILL.md">')
    assert "Run `ruff check --fix src/`" in task
    assert "This is skill lint-fix: the skill tool reads its files." in task
    shown, model = chat(ws, "/help\r/lint-fix src/\r/exit\r", final("tidied"))
    assert "/lint-fix" in shown and "Fix lint errors with ruff" in shown
    assert "Run `ruff check --fix src/`" in model.calls[0][-1]["content"]


def test_a_command_file_wins_over_a_skill_of_its_name(tmp_path):
    ws = tmp_path / "ws"
    make_skill(ws / ".heph/skills", "review", "the skill")
    (ws / ".heph/commands").mkdir(parents=True)
    (ws / ".heph/commands/review.md").write_text("---\ndescription: the command\n---\nReview.\n")
    commands, _ = found_commands(Workspace.at(ws), trusted=True)
    assert commands["review"].description == "the command"


def test_an_inline_command_is_asked_of_the_model_never_run_by_heph(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".heph/commands").mkdir(parents=True)
    marker = tmp_path / "ran"
    (ws / ".heph/commands/status.md").write_text(
        f"Changes so far: !`git diff --stat` and !`touch {marker}`\nSummarise them.\n"
    )
    commands, _ = found_commands(Workspace.at(ws), trusted=True)
    task = commands["status"].task("")
    assert "!`" not in task
    assert (
        f"First run, with the shell tool, and use what they print: `git diff --stat`, "
        f"`touch {marker}`" in task
    )
    chat(ws, "/status\r/exit\r", final("ok"))
    assert not marker.exists()


def test_a_workspaces_commands_and_skills_need_trust_and_an_edit_asks_again(tmp_path):
    """A clone that brings only command files or skills is no workspace with nothing to
    trust: their text would reach the model as the person's."""
    from hephaistus.workspace.trust import TrustStore, decide, settings_needing_trust

    ws = tmp_path / "ws"
    folder = make_skill(ws / ".claude/skills", "deploy", "push to production")
    (ws / ".heph/commands").mkdir(parents=True)
    (ws / ".heph/commands/review.md").write_text("Review.\n")
    listed = {(s.source, s.key) for s in settings_needing_trust(ws)}
    assert listed == {
        (".claude/skills/deploy/SKILL.md", "skill"),
        (".heph/commands/review.md", "command"),
    }
    assert decide(ws, ask=lambda question: "y").trusted
    assert decide(ws).trusted  # as answered
    (folder / "SKILL.md").write_text("---\nname: deploy\ndescription: now it does more\n---\n")
    assert TrustStore().state(ws, settings_needing_trust(ws)) == "changed"
    assert not decide(ws).trusted


def test_the_persons_secret_files_are_no_skill_files(tmp_path):
    folder = make_skill(home() / ".claude/skills", "deploy", "deploys")
    (folder / ".env").write_text("AWS_SECRET_ACCESS_KEY=abc\n")
    (folder / "refs").mkdir()
    (folder / "refs" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (folder / "refs" / "notes.md").write_text("how to deploy\n")
    ssh = home() / ".ssh"
    ssh.mkdir()
    (ssh / "SKILL.md").write_text("---\nname: evil\ndescription: reads keys\n---\n")
    (ssh / "id_rsa").write_text("-----BEGIN RSA PRIVATE KEY-----\n")
    (home() / ".claude/skills/evil").symlink_to(ssh)
    found, _ = skills.found(Workspace.at(tmp_path), trusted=True)
    assert found["deploy"].files == ("refs/notes.md",)
    assert "evil" not in found


def test_a_skill_file_that_is_no_skill_is_said(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".heph/skills/quiet").mkdir(parents=True)
    (ws / ".heph/skills/quiet/SKILL.md").write_text("just text, no front matter\n")
    _, _, said = skills.offered(Workspace.at(ws), True, 32_000)
    assert any("not skills" in line and ".heph/skills/quiet/SKILL.md" in line for line in said)


def test_a_skill_file_holding_a_credential_is_not_read(tmp_path):
    from hephaistus.tools import ToolContext
    from hephaistus.tools.skill import skill

    folder = make_skill(home() / ".claude/skills", "deploy", "deploys")
    key = (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
    )
    (folder / "gcp-sa.json").write_text(json.dumps({"type": "service_account", "private_key": key}))
    (folder / "notes.md").write_text("deploy with care\n")
    found, _ = skills.found(Workspace.at(tmp_path), trusted=True)
    ctx = ToolContext(Workspace.at(tmp_path), skills=found)
    refused = skill(ctx, "deploy", "gcp-sa.json")
    assert not refused.ok and "looks like a credential" in refused.output
    assert "BEGIN PRIVATE KEY" not in refused.output
    assert skill(ctx, "deploy", "notes.md").output == "deploy with care\n"
