"""Trust that covers what it trusts: a trusted command is trusted together with the workspace
files it runs, and a workspace's own `mode` may only ask more than the person's. Each test is an
attack a cloned repository can make, run for real (real clones and pulls, the real sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_hostile_repo import clone, person

from conftest import has_git
from hephaistus.testing import act, final

pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")


# -- 16. a workspace's mode may only ask more than the person's own --------------------------


def user_mode(home: Path, line: str) -> None:
    """Adds `line` (a mode, or nothing) to the person's user config that `person` wrote."""
    config = home / ".config" / "hephaistus" / "config.toml"
    config.write_text(config.read_text() + line)


@pytest.mark.parametrize("where", [".heph.toml", "pyproject.toml"])
@pytest.mark.parametrize("own", ['mode = "ask"\n', ""])  # said, or the default
@pytest.mark.parametrize("trust", [(), ("--trust",)])
def test_a_clones_edits_mode_never_lifts_the_persons_ask(
    heph, chat_server, home, tmp_path, where, own, trust
):
    text = 'mode = "edits"\n' if where == ".heph.toml" else '[tool.hephaistus]\nmode = "edits"\n'
    root = clone(tmp_path, {where: text, "app.py": "x = 1\n"})
    env = person(home, chat_server)
    user_mode(home, own)
    chat_server.reply(act("write_file", path="evil.py", content="import os\n"))
    chat_server.reply(final("wrote it"))
    result = heph(*trust, "--json", "tidy up", cwd=root, env=env)
    assert result.code == 3 and result.json["mode"] == "ask"
    assert not (root / "evil.py").exists()
    assert f"{where}" in result.stderr and 'mode = "edits" is ignored' in result.stderr
    assert "edits mode, set by" not in result.stderr


def test_a_clone_may_ask_more_than_the_person_and_flags_still_win(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {".heph.toml": 'mode = "plan"\n', "app.py": "x = 1\n"})
    env = person(home, chat_server)
    user_mode(home, 'mode = "edits"\n')
    chat_server.reply(act("write_file", path="a.py", content="1\n"))
    chat_server.reply(final("the plan"))
    planned = heph("--json", "write a", cwd=root, env=env)
    assert planned.code == 0 and planned.json["mode"] == "plan"
    assert "plan mode, set by .heph.toml" in planned.stderr
    assert not (root / "a.py").exists()
    chat_server.reply(act("write_file", path="a.py", content="1\n"))
    chat_server.reply(final("wrote it"))
    chosen = heph("--mode", "edits", "--json", "write a", cwd=root, env=env)
    assert chosen.code == 0 and chosen.json["mode"] == "edits"
    assert (root / "a.py").read_text() == "1\n" and "is ignored" not in chosen.stderr
