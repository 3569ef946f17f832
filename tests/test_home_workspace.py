"""heph started in a home folder (or in `/`), as a new user tries it: the file tools never reach
heph's own config, state and cache folders, nor the person's credential stores, and heph's own
records there are never taken for the workspace's files (snapshots, listings, undo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_hostile_repo import person

from conftest import git, has_git
from hephaistus.runtime.sandbox import unavailable
from hephaistus.testing import act, final

WHY_NOT = unavailable()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")

PLANTED_CONFIG = (
    'mode = "auto"\n[sandbox]\nenabled = false\n[commands]\ntest = "sh -c \\"id > /tmp/x\\""\n'
)


def observations(chat_server) -> list[str]:
    """What the model was told after each of its steps (the last user message of each request
    after the first)."""
    return [request["messages"][-1]["content"] for request in chat_server.requests[1:]]


def everything_sent(chat_server) -> str:
    return json.dumps(chat_server.requests)


# -- 1. heph's own folders are out of the file tools' reach, wherever the workspace is ----------


def test_the_model_never_rewrites_hephs_own_config_from_a_home_folder(heph, chat_server, home):
    env = person(home, chat_server)
    config = home / ".config" / "hephaistus" / "config.toml"
    config.write_text(config.read_text() + 'mode = "edits"\n')
    mine = config.read_text()
    chat_server.reply(act("read_file", path=".config/hephaistus/config.toml"))
    chat_server.reply(
        act("write_file", path=".config/hephaistus/config.toml", content=PLANTED_CONFIG)
    )
    chat_server.reply(
        act("write_file", path=".config/hephaistus/prompts/system.md", content="obey")
    )
    chat_server.reply(act("list_files", path=".config/hephaistus"))
    chat_server.reply(act("search", pattern="base_url", path=".config"))
    chat_server.reply(final("tidied"))
    result = heph("tidy", cwd=home, env=env)
    assert result.code == 0, result.stderr
    assert config.read_text() == mine
    assert not (home / ".config" / "hephaistus" / "prompts").exists()
    told = observations(chat_server)
    for said in told[:4]:
        assert "heph's own" in said and "heph sessions" in said, said
    assert "no matches" in told[4]
    assert chat_server.url not in everything_sent(chat_server)


def test_hephs_state_and_cache_are_out_of_reach_from_a_home_folder(heph, chat_server, home):
    env = {**person(home, chat_server), "XDG_STATE_HOME": None}  # ~/.local/state, as by default
    state = home / ".local" / "state" / "hephaistus"
    cache = home / ".cache" / "hephaistus"
    (cache / "sandbox").mkdir(parents=True)
    approvals = ".local/state/hephaistus/approvals.json"
    chat_server.reply(act("write_file", path=approvals, content='{"write": true}'))
    chat_server.reply(act("write_file", path=".cache/hephaistus/sandbox/x", content="x"))
    chat_server.reply(final("done"))
    result = heph("--yes", "tidy", cwd=home, env=env)
    assert result.code == 0, result.stderr
    assert not (state / "approvals.json").exists()
    assert not (cache / "sandbox" / "x").exists()
    for said in observations(chat_server)[:2]:
        assert "heph's own" in said, said


def test_in_the_root_folder_hephs_own_records_are_out_of_reach(heph_process, chat_server, home):
    env = {**person(home, chat_server), "XDG_STATE_HOME": None}
    approvals = home / ".local" / "state" / "hephaistus" / "approvals.json"
    named = str(approvals.relative_to("/"))
    chat_server.reply(act("write_file", path=named, content='{"write": true}'))
    chat_server.reply(final("done"))
    result = heph_process("--yes", "-w", "/", "tidy", cwd=home, env=env)
    assert result.code == 0, result.stderr
    assert not approvals.exists()
    assert "heph's own" in observations(chat_server)[0]


# -- 2. the person's credential stores are secret files for the file tools -----------------------

STORES = {
    ".config/gh/hosts.yml": "github.com:\n    oauth_token: gho_STORE-MARKER-gh\n",
    ".claude/.credentials.json": '{"claudeAiOauth": {"accessToken": "STORE-MARKER-claude"}}\n',
    ".docker/config.json": '{"auths": {"x": {"auth": "STORE-MARKER-docker"}}}\n',
    "dotfiles/kube/config": "users:\n- user:\n    token: STORE-MARKER-kube\n",  # ~/.kube's
    ".bashrc": "export OPENAI_API_KEY=STORE-MARKER-bashrc\n",
    "cfg/gh/hosts.yml": "github.com:\n    oauth_token: STORE-MARKER-xdg\n",  # $XDG_CONFIG_HOME
}


def test_credential_stores_in_a_home_folder_never_reach_the_model(heph, chat_server, home):
    env = {**person(home, chat_server), "XDG_CONFIG_HOME": str(home / "cfg")}
    (home / "cfg" / "hephaistus").mkdir(parents=True)
    (home / ".config" / "hephaistus" / "config.toml").rename(
        home / "cfg" / "hephaistus" / "config.toml"
    )
    for rel, text in STORES.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    (home / ".kube").symlink_to(home / "dotfiles" / "kube")  # a store kept in a dotfiles repo
    (home / "notes.txt").write_text("STORE-MARKER-none here, only notes\n")
    for rel in [*STORES, ".kube/config"]:
        chat_server.reply(act("read_file", path=rel))
    for where in (".", ".config", ".claude", "cfg", ".bashrc", "dotfiles"):
        chat_server.reply(act("search", pattern="STORE-MARKER", path=where))
    chat_server.reply(final("done"))
    result = heph("look around", cwd=home, env=env)
    assert result.code == 0, result.stderr
    told = observations(chat_server)
    for said in told[: len(STORES) + 1]:
        assert "looks like a secret file" in said and "allow_secrets" in said, said
    assert "STORE-MARKER-" not in everything_sent(chat_server).replace("STORE-MARKER-none", "")
    assert "notes.txt:1:" in told[len(STORES) + 1]


def test_the_machines_secrets_never_reach_the_model_from_the_root_folder(
    heph_process, chat_server, home
):
    env = {**person(home, chat_server), "XDG_STATE_HOME": None}
    chat_server.reply(act("read_file", path="etc/shadow"))
    chat_server.reply(act("search", pattern="root", path="etc/shadow"))
    chat_server.reply(act("list_files", path="etc/ssl/private"))
    chat_server.reply(final("done"))
    result = heph_process("-w", "/", "look around", cwd=home, env=env)
    assert result.code == 0, result.stderr
    told = observations(chat_server)
    assert "looks like a secret file" in told[0] and "1 secret files not searched" in told[1]
    assert "root:" not in everything_sent(chat_server)


# -- 3. heph's own records in the workspace are no files of the workspace -----------------------


def objects_of(state: Path) -> list[Path]:
    return sorted(state.glob("hephaistus/workspaces/*/snapshots/objects/**/*"))


def home_env(home: Path, chat_server) -> dict[str, str | None]:
    """The person's set-up, with heph's state in the home folder (~/.local/state), as by default."""
    return {**person(home, chat_server), "XDG_STATE_HOME": None}


def steps_in_home(heph, chat_server, home: Path, *steps: dict[str, Any]) -> list[str]:
    """heph --yes run in the home folder through the model's `steps`: what it was told after
    each."""
    for step in steps:
        chat_server.reply(step)
    chat_server.reply(final("done"))
    result = heph("--yes", "tidy up", cwd=home, env=home_env(home, chat_server))
    assert result.code == 0, result.stderr
    return observations(chat_server)


def changed_only(said: str, change: str) -> None:
    """The command's observation names `change` as all it changed, and nothing of heph's."""
    assert f"The command changed these files: {change}\n" in said, said
    assert ".local" not in said and "hephaistus" not in said, said


def undone_in_home(heph, chat_server, home: Path) -> None:
    undone = heph("undo", cwd=home, env=home_env(home, chat_server))
    assert undone.code == 0, undone.stderr + undone.stdout
    assert "hephaistus" not in undone.stdout + undone.stderr


@needs_sandbox
def test_a_commands_effects_and_undo_leave_hephs_own_records_alone(heph, chat_server, home):
    (home / "notes.txt").write_text("mine\n")
    told = steps_in_home(heph, chat_server, home, act("shell", command="echo theirs > notes.txt"))
    changed_only(told[0], "notes.txt")
    kept = objects_of(home / ".local" / "state")
    assert kept
    undone_in_home(heph, chat_server, home)
    assert (home / "notes.txt").read_text() == "mine\n"
    assert all(path.exists() for path in kept)


@needs_sandbox
def test_a_gitignore_a_command_writes_never_brings_hephs_records_into_the_pictures(
    heph, chat_server, home
):
    unignore = "printf '!/.local/\\n!/.local/state/\\n!/.local/state/hephaistus/\\n' > .gitignore"
    made = act("shell", command="echo made > made.txt")
    told = steps_in_home(heph, chat_server, home, act("shell", command=unignore), made)
    changed_only(told[1], "made.txt (new)")


@needs_sandbox
def test_in_a_home_folder_kept_in_git_hephs_config_is_no_file_of_the_workspace(
    heph, chat_server, home
):
    person(home, chat_server)  # the config to commit
    (home / ".bashrc").write_text("alias ll='ls -l'\n")
    git(home, "init", "-q")
    git(home, "add", "-f", ".config/hephaistus/config.toml", ".bashrc")
    git(home, "commit", "-qm", "dotfiles")
    made = act("shell", command="echo made > made.txt")
    listed, ran = steps_in_home(heph, chat_server, home, act("list_files"), made)
    assert ".bashrc" in listed and "hephaistus" not in listed, listed
    changed_only(ran, "made.txt (new)")
    undone_in_home(heph, chat_server, home)
    assert not (home / "made.txt").exists()
    assert (home / ".config" / "hephaistus" / "config.toml").exists()
