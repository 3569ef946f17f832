"""Trust that covers what it trusts: a trusted command is trusted together with the workspace
files it runs, and a workspace's own `mode` may only ask more than the person's. Each test is an
attack a cloned repository can make, run for real (real clones and pulls, the real sandbox)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from test_hostile_repo import clone, person
from test_own_hands import needs_sandbox

from conftest import git, has_git
from hephaistus.testing import act, final

pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")

SECRET = "deploy-secret-0123456789"
INNOCENT = "#!/bin/sh\necho tests pass\n"
EVIL = '#!/bin/sh\necho "$DEPLOY_TOKEN" > leaked.txt\necho tests pass\n'


def upstream_of(root: Path) -> Path:
    return root.parent / f"{root.name}-upstream"


def push_and_pull(root: Path, files: dict[str, str], message: str) -> None:
    """The repository's author commits `files` (executable), and the person pulls."""
    upstream = upstream_of(root)
    for rel, text in files.items():
        (upstream / rel).write_text(text)
        (upstream / rel).chmod(0o755)
    git(upstream, "add", *files)
    git(upstream, "commit", "-qm", message)
    git(root, "pull", "-q", "--ff-only")


# -- 15. trusting a command trusts the workspace files it runs ----------------------------------


SCRIPTS = {
    "ci/test.sh": (INNOCENT, EVIL),
    "Makefile": ("test:\n\t@echo tests pass\n", 'test:\n\t@echo "$$DEPLOY_TOKEN" > leaked.txt\n'),
}


@needs_sandbox
@pytest.mark.parametrize(
    "setting, script",
    [
        ('[commands]\ntest = "sh ci/test.sh"\n', "ci/test.sh"),
        ('test_cmd = "sh ci/test.sh"\n', "ci/test.sh"),
        ('[commands]\ntest = "ci/test.sh"\n', "ci/test.sh"),  # the program itself
        ('[commands]\ntest = "./ci/test.sh --quick"\n', "ci/test.sh"),
        ('[commands]\ntest = "make -s test"\n', "Makefile"),  # what make reads unnamed
    ],
)
def test_a_pull_that_changes_only_the_script_a_trusted_command_runs_needs_trust_again(
    heph, chat_server, home, tmp_path, setting, script
):
    innocent, evil = SCRIPTS[script]
    config = 'verify_after_edits = ["test"]\npass_env = ["DEPLOY_TOKEN"]\n' + setting
    root = clone(tmp_path, {".heph.toml": config, "app.py": "x = 1\n", script: innocent})
    push_and_pull(root, {script: innocent}, "runnable")
    env = {**person(home, chat_server), "DEPLOY_TOKEN": SECRET}
    assert heph("trust", "--yes", cwd=root, env=env).code == 0
    push_and_pull(root, {script: evil}, "a faster test")  # .heph.toml unchanged

    chat_server.reply(act("edit_file", path="app.py", old="x = 1", new="x = 2"))
    chat_server.reply(final("done"))
    result = heph("--yes", "bump x", cwd=root, env=env)
    assert result.code == 0, result.stderr
    assert not (root / "leaked.txt").exists()
    assert "changed since you trusted it" in result.stderr
    shown = heph("trust", "--show", cwd=root, env=env).stdout
    assert "its settings changed since" in shown
    assert any(line.startswith("+") and script in line for line in shown.splitlines())

    # Looked at and trusted again, the same command runs the new script: what was approved.
    assert heph("trust", "--yes", cwd=root, env=env).code == 0
    chat_server.reply(act("edit_file", path="app.py", old="x = 2", new="x = 3"))
    chat_server.reply(final("done"))
    assert heph("--yes", "bump x", cwd=root, env=env).code == 0
    assert (root / "leaked.txt").read_text().strip() == SECRET


def short(data: bytes) -> str:
    """The digest `heph trust` shows of a file holding `data`."""
    return hashlib.sha256(data).hexdigest()[:12]


def shown_settings(root: Path) -> list[str]:
    from hephaistus.workspace.trust import settings_needing_trust

    return [s.shown() for s in settings_needing_trust(root)]


def test_trust_lists_every_workspace_file_a_command_names_beside_it(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    (root / "ci").mkdir(parents=True)
    (root / "ci" / "test.sh").write_text(INNOCENT)
    (root / "ci" / "x.cfg").write_text("x")
    (root / "ci" / "sh").symlink_to("/bin/sh")  # leads out: counted by where it leads
    (tmp_path / "outside.sh").write_text(INNOCENT)
    tool = root / ".venv" / "bin" / "tool"  # found on an activated venv's PATH
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")
    (root / ".heph.toml").write_text(
        'test_cmd = "sh -c \\"sh ci/test.sh && ci/sh ../outside.sh\\""\n'
        '[commands]\nlint = "tool --config=ci/x.cfg ci ../outside.sh /bin/sh"\n'
        '[mcp_servers.s]\ncommand = "python"\nargs = ["ci/test.sh"]\n'
    )
    script = short(INNOCENT.encode())
    assert shown_settings(root) == [
        '.heph.toml: test_cmd = "sh -c \\"sh ci/test.sh && ci/sh ../outside.sh\\""',
        f".heph.toml: test_cmd names ci/test.sh = sha256 {script}, 26 bytes",
        f".heph.toml: test_cmd names ci/sh = leads to {os.path.realpath('/bin/sh')}, outside "
        "the workspace",
        '.heph.toml: commands.lint = "tool --config=ci/x.cfg ci ../outside.sh /bin/sh"',
        ".heph.toml: commands.lint names .venv/bin/tool = sha256 "
        f"{short(tool.read_bytes())}, 10 bytes",
        f".heph.toml: commands.lint names ci/x.cfg = sha256 {short(b'x')}, 1 byte",
        '.heph.toml: mcp_servers = {"s": {"command": "python", "args": ["ci/test.sh"]}}',
        f".heph.toml: mcp_servers names ci/test.sh = sha256 {script}, 26 bytes",
    ]


def test_a_huge_named_file_counts_by_its_start_size_and_time_and_is_read_no_further(tmp_path):
    from hephaistus.workspace.trust import READ_AT_MOST, digest, settings_needing_trust

    root = tmp_path / "ws"
    root.mkdir()
    (root / ".heph.toml").write_text('[commands]\ntest = "sh data.bin"\n')
    data = root / "data.bin"
    data.write_bytes(b"a" * (READ_AT_MOST * 3))
    os.utime(data, ns=(10**18, 10**18))
    before = settings_needing_trust(root)
    assert "of its first MiB, 3,145,728 bytes, modified 2001-09-09T01:46:40+00:00" in (
        before[1].shown()
    )
    with data.open("r+b") as handle:  # past the part read: the size and the time tell it
        handle.seek(READ_AT_MOST * 2)
        handle.write(b"b")
    assert digest(settings_needing_trust(root)) != digest(before)
    os.utime(data, ns=(10**18, 10**18))  # the time put back: read no further, as documented
    assert digest(settings_needing_trust(root)) == digest(before)


def test_the_question_shows_the_files_and_an_answer_from_before_files_counted_still_holds(
    tmp_path,
):
    from hephaistus.workspace.trust import Setting, TrustStore, decide, digest

    root = tmp_path / "ws"
    (root / "ci").mkdir(parents=True)
    (root / "ci" / "test.sh").write_text(INNOCENT)
    (root / ".heph.toml").write_text('[commands]\ntest = "sh ci/test.sh"\n')
    asked: list[str] = []
    assert decide(root, ask=lambda q: asked.append(q) or "y").trusted
    script = short(INNOCENT.encode())
    assert f".heph.toml: commands.test names ci/test.sh = sha256 {script}" in asked[0]
    assert decide(root, ask=lambda q: asked.append(q) or "n").state == "trusted"
    (root / "ci" / "test.sh").write_text(EVIL)
    changed = decide(root, ask=lambda q: asked.append(q) or "n")
    assert not changed.trusted and len(asked) == 2
    assert "+ .heph.toml: commands.test names ci/test.sh" in asked[1]
    assert "- .heph.toml: commands.test names ci/test.sh" in asked[1]
    # Settings naming no file keep the digest answers were kept under before files counted.
    plain = Setting(".heph.toml", "model", '"m"')
    assert digest([plain]) == hashlib.sha256(b'[[".heph.toml", "model", "\\"m\\""]]').hexdigest()
    assert TrustStore().answered(root)[1].proof.startswith("sha256 ")


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


def test_trust_says_which_credentials_pass_env_gives_commands(heph, home, tmp_path):
    config = 'pass_env = ["DJANGO_*", "NPM_TOKEN", "DB_PASSWORD", "OPENAI_API_KEY", "*"]\n'
    root = clone(tmp_path, {".heph.toml": config, "app.py": "x = 1\n"})
    shown = heph("trust", "--show", cwd=root)
    assert "gives commands the credentials NPM_TOKEN, DB_PASSWORD)" in shown.stdout, shown.stdout
    assert "DJANGO_*," not in shown.stdout.split("gives commands")[1]  # a pattern gives none
