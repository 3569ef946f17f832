"""What heph does itself, on the host, outside the sandbox: the programs it runs, the files it
writes, the git it runs on its own records, and the person's own servers and hooks. Each test is
an attack a cloned repository or a sandboxed command can make, run against the real sandbox and
real git: it must change nothing outside the workspace and run nothing of theirs on the host."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_hostile_repo import clone, person
from unprivileged import NOBODY, python_for_nobody, run_as_nobody

from conftest import has_git
from hephaistus.runtime.sandbox import unavailable
from hephaistus.testing import act, final

WHY_NOT = unavailable()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")


def planted(folder: Path, marker: Path, *names: str) -> str:
    """A shell line (for a sandboxed command) that writes programs named `names` into `folder`:
    each, run, appends its name and the API key it sees to `marker`, then runs the real one."""
    lines = [f"mkdir -p {folder}"]
    for name in names:
        real = shutil.which(name) or f"/usr/bin/{name}"
        script = f'#!/bin/sh\necho "{name} $OPENAI_API_KEY" >> {marker}\nexec {real} "$@"\n'
        lines.append(f"printf '%s' '{script}' > {folder}/{name} && chmod +x {folder}/{name}")
    return " && ".join(lines)


def plant_now(folder: Path, marker: Path, *names: str) -> None:
    """The programs of `planted`, written by the test (as a clone brings them)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        real = shutil.which(name) or f"/usr/bin/{name}"
        path = folder / name
        path.write_text(f'#!/bin/sh\necho "{name} $OPENAI_API_KEY" >> {marker}\nexec {real} "$@"\n')
        path.chmod(0o755)


# -- 2. heph's own programs come from no folder the workspace holds -------------------------


@needs_sandbox
def test_programs_a_command_plants_on_an_activated_venvs_path_never_run_on_the_host(
    heph_process, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app.py": "x = 1\n", ".gitignore": ".venv/\n"})
    marker = tmp_path / "ran"
    venv_bin = root / ".venv" / "bin"
    env = {**person(home, chat_server), "PATH": f"{venv_bin}{os.pathsep}{os.environ['PATH']}"}
    chat_server.reply(act("shell", command=planted(venv_bin, marker, "git", "uname", "bwrap")))
    chat_server.reply(act("shell", command="echo second"))  # bwrap is looked for again
    chat_server.reply(final("done"))
    first = heph_process("--yes", "set up", cwd=root, env=env)
    assert first.code == 0, first.stderr
    assert (venv_bin / "git").exists()  # the command ran, in the sandbox
    chat_server.reply(act("list_files"))  # a new run: openai asks `platform`, git lists files
    chat_server.reply(act("shell", command="echo third"))
    chat_server.reply(final("done"))
    second = heph_process("--yes", "again", cwd=root, env=env)
    assert second.code == 0, second.stderr
    assert not marker.exists(), marker.read_text()


@needs_sandbox
def test_commands_in_the_sandbox_still_find_the_activated_venvs_programs(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app.py": "x = 1\n", ".gitignore": ".venv/\n"})
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "projtool").write_text("#!/bin/sh\necho projtool-ran\n")
    (venv_bin / "projtool").chmod(0o755)
    env = {**person(home, chat_server), "PATH": f"{venv_bin}{os.pathsep}{os.environ['PATH']}"}
    chat_server.reply(act("shell", command="projtool"))
    chat_server.reply(final("done"))
    assert heph("--yes", "run it", cwd=root, env=env).code == 0
    said = chat_server.requests[1]["messages"][-1]["content"]
    assert "projtool-ran" in said and "exit code 0" in said
    assert str(venv_bin) not in os.environ["PATH"].split(os.pathsep)  # not heph's own


def test_a_relative_path_entry_of_a_clones_runs_nothing_at_start_or_in_plan_mode(
    heph_process, chat_server, home, tmp_path
):
    marker = tmp_path / "ran"
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    plant_now(root / "bin", marker, "git", "uname", "bwrap")
    env = {
        **person(home, chat_server),
        "PATH": f"./bin{os.pathsep}{os.pathsep}{os.environ['PATH']}",
    }
    chat_server.reply(act("list_files"))
    chat_server.reply(act("shell", command="true"))
    chat_server.reply(final("the plan"))
    result = heph_process("--mode", "plan", "look around", cwd=root, env=env)
    assert result.code == 0, result.stderr
    assert not marker.exists(), marker.read_text()


def test_git_only_in_the_workspace_is_not_run_and_heph_says_why(tmp_path, monkeypatch):
    from hephaistus.runtime import programs
    from hephaistus.runtime.gitrun import GitError, run

    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    marker = tmp_path / "ran"
    plant_now(root / "tools", marker, "git")
    monkeypatch.setenv("PATH", str(root / "tools"))
    programs.settle(root)
    with pytest.raises(GitError, match="found only at .*tools/git.*runs no program from there"):
        run(root, "status")
    assert not marker.exists()
    assert programs.command_path() == str(root / "tools")  # the sandbox's commands still see it


def test_the_persons_configured_bwrap_is_not_taken_from_the_workspace(tmp_path, monkeypatch):
    from hephaistus.runtime import programs

    root = tmp_path / "ws"
    plant_now(root / "bin", tmp_path / "ran", "bwrap")
    monkeypatch.setenv("PATH", os.environ["PATH"])
    programs.settle(root)
    assert programs.find(str(root / "bin" / "bwrap")) is None
    found = programs.find("bwrap")
    assert found is None or not found.startswith(str(root))


def test_finding_the_projects_test_command_runs_no_program_of_the_workspace(tmp_path, monkeypatch):
    from hephaistus.workspace import project_commands

    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    marker = tmp_path / "ran"
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    python.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    project_commands.detect(root)
    assert not marker.exists()


# -- 1, 4, 8. heph's own records live where no clone or command can plant or read them ---------


def planted_store(marker: Path) -> dict[str, str]:
    """A clone's `.heph/snapshots/`: a git directory whose config runs a filter on every .py."""
    script = f"sh -c 'echo filter $OPENAI_API_KEY >> {marker}; cat'"
    return {
        ".heph/snapshots/HEAD": "ref: refs/heads/main\n",
        ".heph/snapshots/config": (
            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
            f'[filter "fmt"]\n\tclean = "{script}"\n\tsmudge = "{script}"\n'
        ),
        ".heph/snapshots/info/attributes": "*.py filter=fmt\n",
        ".gitattributes": "*.py filter=fmt\n",
        "app.py": "x = 1\n",
    }


@needs_sandbox
def test_a_snapshot_store_a_clone_commits_is_never_used(heph, chat_server, home, tmp_path):
    marker = tmp_path / "ran"
    root = clone(tmp_path, planted_store(marker))
    (root / ".heph" / "snapshots" / "objects").mkdir()
    (root / ".heph" / "snapshots" / "refs").mkdir()
    chat_server.reply(act("shell", command="echo 'x = 2' > app.py"))
    chat_server.reply(final("done"))
    result = heph("--yes", "change it", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert not marker.exists(), marker.read_text()
    assert "app.py" in chat_server.requests[1]["messages"][-1]["content"]  # the change was seen
    assert heph("undo", cwd=root, env=person(home, chat_server)).code == 0
    assert (root / "app.py").read_text() == "x = 1\n"
    assert not marker.exists()


@needs_sandbox
@pytest.mark.parametrize(
    "attributes",
    ["* text eol=lf\n", "* text=auto eol=crlf\n", "*.txt working-tree-encoding=UTF-16\n"],
)
def test_undo_of_a_command_restores_the_bytes_whatever_the_attributes_say(
    heph, chat_server, workspace, attributes
):
    original = "caf\u00e9\r\nline two\r\n".encode("utf-16") if "16" in attributes else None
    original = original or b"first\r\nsecond\r\nno newline at the end"
    root = workspace
    (root / ".gitattributes").write_text(attributes)
    (root / "notes.txt").write_bytes(original)
    chat_server.reply(act("shell", command="rm notes.txt"))
    chat_server.reply(final("done"))
    assert heph("--yes", "remove it", cwd=root).code == 0
    assert not (root / "notes.txt").exists()
    assert heph("undo", cwd=root).code == 0
    assert (root / "notes.txt").read_bytes() == original


def victim_file(tmp_path: Path) -> Path:
    victim = tmp_path / "victim-bashrc"
    victim.write_text("the person's shell settings\n")
    return victim


@needs_sandbox
def test_a_started_marker_a_clone_links_elsewhere_is_never_written_through(
    heph, chat_server, home, tmp_path
):
    victim = victim_file(tmp_path)
    root = clone(tmp_path, {"app.py": "x = 1\n", ".gitignore": "build/\n"})
    (root / ".heph" / "snapshots").mkdir(parents=True)
    (root / ".heph" / "snapshots" / "started").symlink_to(victim)
    chat_server.reply(act("shell", command="mkdir -p build && touch build/x"))
    chat_server.reply(final("done"))
    assert heph("--yes", "build", cwd=root, env=person(home, chat_server)).code == 0
    assert victim.read_text() == "the person's shell settings\n"


def test_an_mcp_servers_log_a_clone_links_elsewhere_is_never_appended_to(
    heph, chat_server, home, tmp_path
):
    pytest.importorskip("mcp")
    import json
    import sys

    from test_mcp import SERVER, user_config

    victim = victim_file(tmp_path)
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    (root / ".heph" / "logs").mkdir(parents=True)
    (root / ".heph" / "logs" / "mcp-t.log").symlink_to(victim)
    line = f"echo server-said-this >&2; exec {sys.executable} {SERVER}"
    env = person(home, chat_server)
    config = (home / ".config" / "hephaistus" / "config.toml").read_text()
    user_config(
        home,
        config + f'[mcp_servers.t]\ncommand = "/bin/sh"\nargs = ["-c", {json.dumps(line)}]\n',
    )
    heph("trust", "--yes", cwd=root, env=env)  # the person's server runs on the host here
    chat_server.reply(act("mcp__t__add", a=2, b=40))
    chat_server.reply(final("42"))
    result = heph("--yes", "add", cwd=root, env=env)
    assert result.code == 0, result.stderr
    assert "42" in chat_server.requests[1]["messages"][-1]["content"]
    assert victim.read_text() == "the person's shell settings\n"


@needs_sandbox
def test_a_secret_the_sandbox_hides_is_not_readable_from_the_snapshots(
    heph, chat_server, workspace, monkeypatch
):
    import tempfile

    # The state folder where a person's is (under home, seen read-only inside), not in /tmp,
    # which the sandbox replaces with its own.
    state = Path(tempfile.mkdtemp(prefix="heph-state-", dir="/var/tmp"))
    try:
        (workspace / ".env").write_text("API_TOKEN=hidden-value-0123456789\n")
        (workspace / "app.py").write_text("x = 1\n")
        stores = f".heph/snapshots {state}/hephaistus/workspaces/*/snapshots"
        dump = "GIT_DIR=$d git cat-file --batch-all-objects --batch 2>/dev/null"
        look = f"for d in {stores}; do {dump}; done | grep -a hidden-value; echo searched"
        chat_server.reply(act("shell", command="touch made.txt"))  # a snapshot pair is taken
        chat_server.reply(act("shell", command=look))
        chat_server.reply(final("done"))
        assert heph("--yes", "look", env={"XDG_STATE_HOME": str(state)}).code == 0
        assert any(state.glob("hephaistus/workspaces/*/snapshots/HEAD"))  # the store is there
        seen = chat_server.requests[2]["messages"][-1]["content"]
        assert "searched" in seen and "hidden-value-0123456789" not in seen
    finally:
        shutil.rmtree(state, ignore_errors=True)


# -- 3. heph writes nothing into a folder the sandbox can write ------------------------------


@needs_sandbox
@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_what_a_command_leaves_in_the_sandboxs_cache_heph_never_writes_through(
    heph, chat_server, workspace, home, tmp_path, planted
):
    victim = victim_file(tmp_path)
    (workspace / ".env").write_text("TOKEN=x\n")  # a secret: hidden with an empty file
    cache = "${XDG_CACHE_HOME%/xdg}"  # the sandbox's cache folder, as a command sees it
    plant = (
        f"ln -sf {victim} {cache}/.empty"
        if planted == "link"
        else f"rm -f {cache}/.empty; mkfifo {cache}/.empty"
    )
    chat_server.reply(act("shell", command=f"{plant}; ls -la {cache}"))
    chat_server.reply(act("shell", command="cat .env; echo second"))
    chat_server.reply(final("done"))
    result = heph("--yes", "clean up", timeout=30)
    assert result.code == 0, result.stderr
    assert victim.read_text() == "the person's shell settings\n"
    second = chat_server.requests[2]["messages"][-1]["content"]
    assert "second" in second and "TOKEN" not in second


# -- 8, 11. The sandbox hides heph's records, the remote's credentials and the stores ------


@pytest.fixture
def visible_home(tmp_path):
    """A home folder the sandbox shows (read-only), as a person's is: not under /tmp, which
    the sandbox replaces with its own."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="heph-home-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def seen_inside(
    heph,
    chat_server,
    paths: list[str],
    cwd: Path,
    home: Path | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """What a sandboxed command can read of `paths` (written into the workspace, so the
    scrubbing of its output does not hide what the sandbox shows), heph run with `env`."""
    reads = "; ".join(f"cat {path} 2>/dev/null" for path in paths)
    chat_server.reply(act("shell", command=f"({reads}) > seen.txt; echo read"))
    chat_server.reply(final("done"))
    env = {**({"HOME": str(home)} if home else {}), **(env or {})}
    result = heph("--yes", "look", cwd=cwd, env=env)
    assert result.code == 0, result.stderr
    assert "read" in chat_server.requests[-1]["messages"][-1]["content"]
    return (cwd / "seen.txt").read_text(errors="replace")


@needs_sandbox
def test_heph_records_are_not_readable_inside(heph, chat_server, workspace):
    (workspace / "app.py").write_text("x = 1\n")
    chat_server.reply(final("the last answer: canary-4711"))
    assert heph("--yes", "first task, canary-4711").code == 0
    seen = seen_inside(
        heph, chat_server, [".heph/state.json", ".heph/sessions/*", ".heph/*/*"], workspace
    )
    assert "canary-4711" not in seen


TOKEN_HEX = "0123456789abcdef0123456789abcdef01234567"


@needs_sandbox
def test_the_remotes_credentials_in_git_config_are_not_readable_inside(
    heph, chat_server, visible_home, tmp_path
):
    home = visible_home
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    config = root / ".git" / "config"
    with config.open("a") as handle:
        handle.write(
            f'[remote "mirror"]\n\turl = https://x-access-token:{TOKEN_HEX}@example.com/r.git\n'
            '[http "https://example.com/"]\n\textraheader = AUTHORIZATION: basic '
            "c2VjcmV0LWJhc2ljLWF1dGgtdmFsdWU=\n"
        )
    (home / ".gitconfig").write_text(
        f'[url "https://{TOKEN_HEX[::-1]}@example.com/"]\n\tinsteadOf = https://example.com/\n'
        "[user]\n\tname = Person\n"
    )
    seen = seen_inside(
        heph,
        chat_server,
        [".git/config", str(home / ".gitconfig")],
        root,
        home,
    )
    assert TOKEN_HEX not in seen and TOKEN_HEX[::-1] not in seen
    assert "c2VjcmV0LWJhc2ljLWF1dGgtdmFsdWU=" not in seen
    assert "example.com/r.git" in seen and "name = Person" in seen  # the rest is there
    assert TOKEN_HEX in config.read_text()  # the person's file is as it was


@needs_sandbox
def test_credential_stores_linked_secrets_and_deep_secrets_are_empty_inside(
    heph, chat_server, visible_home, workspace
):
    home = visible_home
    stores = [
        ".pgpass",
        ".vault-token",
        ".my.cnf",
        ".config/containers/auth.json",
        ".codex/auth.json",
        ".claude/.credentials.json",
        ".config/github-copilot/apps.json",
        ".cache/huggingface/token",
        ".gem/credentials",
        ".config/pip/pip.conf",
        ".local/share/fish/fish_history",
        ".local/share/keyrings/login.keyring",
        ".s3cfg",
        ".config/rclone/rclone.conf",
        ".kaggle/kaggle.json",
        ".terraformrc",
        # the third round's
        ".cache/huggingface/stored_tokens",
        ".boto",
        ".sentryclirc",
        ".circleci/cli.yml",
        ".config/helm/repositories.yaml",
        ".wgetrc",
        ".cloudflared/cert.pem",
        # the fourth's
        ".authinfo",
        ".msmtprc",
        ".mc/config.json",
        ".doppler/.doppler.yaml",
        ".config/heroku/credentials",
        ".config/Code/User/globalStorage/state.vscdb",
        ".local/share/containers/auth.json",
        # the fifth's
        ".continue/config.json",
        ".wakatime.cfg",
        ".passwd-s3fs",
        ".config/aichat/config.yaml",
    ]
    for number, name in enumerate(stores):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"secret-of-store-{number}\n")
    elsewhere = home / "kept-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "token").write_text("secret-behind-a-link\n")
    (home / ".netrc").symlink_to(elsewhere / "token")  # a store that is a link
    (workspace / ".env").symlink_to(elsewhere / "token")  # a workspace secret that is a link
    deep = workspace.joinpath(*"abcdefghijk")
    deep.mkdir(parents=True)
    (deep / ".env").write_text("secret-eleven-folders-down\n")
    paths = [str(home / name) for name in [*stores, ".netrc"]]
    seen = seen_inside(heph, chat_server, [*paths, ".env", str(deep / ".env")], workspace, home)
    assert "secret-" not in seen, seen


HIDDEN_BY_HEPH = "hidden by heph"


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (
            "\turl = https://x-access-token:SECRET@h.example/r.git\n",
            "\turl = https://x-access-token@h.example/r.git\n",
        ),
        (
            "\turl = https://ghp_0123456789abcdefghij0123@h.example/r\n",
            "\turl = https://h.example/r\n",
        ),
        ("\turl = ssh://git@h.example/r.git\n", None),
        ("\turl = git@h.example:o/r.git\n", None),
        ("\textraHeader = AUTHORIZATION: basic SECRET\n", f"\t# extraheader: {HIDDEN_BY_HEPH}\n"),
        ("\thelper = !f() { echo password=SECRET; }; f\n", f"\t# helper: {HIDDEN_BY_HEPH}\n"),
        ("\thelper = store\n", None),
        ("\tname = Person\n", None),
        ("\tsmtpPass = SECRET\n", f"\t# smtppass: {HIDDEN_BY_HEPH}\n"),
        ("\toauthtoken = SECRET\n", f"\t# oauthtoken: {HIDDEN_BY_HEPH}\n"),
        ("\tapi-key = SECRET\n", f"\t# api-key: {HIDDEN_BY_HEPH}\n"),
        ("\ttoken = \\\n  SECRET\n", f"\t# token: {HIDDEN_BY_HEPH}\n"),  # continued
        ("\tpushurl = x ; https://h.example/?ghp_0123456789abcdefghij0123\n", None),  # a comment
        ("\tmirror = sk-proj-0123456789abcdefghij\n", f"\t# mirror: {HIDDEN_BY_HEPH}\n"),
    ],
)
def test_git_configuration_shown_inside_keeps_all_but_credentials(tmp_path, line, shown):
    from hephaistus.runtime.gitconfigs import read_settings, rendered, without_credentials

    config = tmp_path / "config"
    config.write_text(f"[remote]\n{line}")
    cleaned = without_credentials(read_settings(config))
    assert (rendered(cleaned) if cleaned else None) == (f"[remote]\n{shown}" if shown else None)


def test_git_configuration_shown_inside_is_what_git_reads_of_one_line_sections(tmp_path):
    from hephaistus.runtime.gitconfigs import read_settings, rendered, without_credentials

    config = tmp_path / "config"
    config.write_text(
        '[http "https://h/"] extraheader = AUTHORIZATION: basic SECRET\n'
        '[url "https://u:SECRET@h/"] insteadOf = https://h/\n'
        "[include] path = ~/other.gitconfig\n"
    )
    cleaned = without_credentials(read_settings(config))
    assert cleaned is not None
    assert rendered(cleaned) == (
        f'[http "https://h/"]\n\t# extraheader: {HIDDEN_BY_HEPH}\n'
        '[url "https://u@h/"]\n\tinsteadof = https://h/\n'
        "[include]\n\tpath = ~/other.gitconfig\n"
    )


# -- 10. Every host Unix socket is out of reach ----------------------------------------------


@needs_sandbox
def test_a_host_unix_socket_anywhere_cannot_be_reached_inside(visible_home, workspace):
    import socket
    import sys

    from hephaistus.runtime.sandbox import Contained
    from hephaistus.settings.config_sections import SandboxConfig

    places = [
        visible_home / ".1password" / "agent.sock",
        visible_home / ".colima" / "default" / "docker.sock",
        visible_home / "beside-the-workspace" / "dev.sock",
        workspace / "run" / "server.sock",
    ]
    listeners = []
    try:
        for path in places:
            path.parent.mkdir(parents=True, exist_ok=True)
            listener = socket.socket(socket.AF_UNIX)
            listener.bind(str(path))
            listener.listen()
            listeners.append(listener)
        probe = "import socket, sys\nfor p in sys.argv[1:]:\n"
        probe += "    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(p)\n"
        probe += "        print('reached', p)\n    except OSError as e:\n        print('no', e)\n"
        box = Contained(workspace, SandboxConfig())
        env = {"PATH": os.environ["PATH"], "HOME": str(visible_home)}
        argv = [sys.executable, "-c", probe, *map(str, places)]
        done = box.run(argv, cwd=workspace, env=env, timeout=20)
        assert done.exit_code == 0, done.output
        said = done.output.splitlines()
        assert len(said) == len(places) and all(line.startswith("no ") for line in said), said
    finally:
        for listener in listeners:
            listener.close()


@needs_sandbox
@pytest.mark.parametrize("network", [False, True])
def test_a_host_abstract_socket_cannot_be_reached_inside_network_or_not(workspace, network):
    import socket
    import sys

    from hephaistus.runtime.landlock import scoping
    from hephaistus.runtime.sandbox import Contained
    from hephaistus.settings.config_sections import SandboxConfig

    if network and not callable(scoping(shutil.which("bwrap") or "bwrap")):
        pytest.skip(f"the host's abstract sockets stay reachable here: {scoping('bwrap')}")
    name = f"heph-test-{os.getpid()}-{network}"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("\0" + name)
        listener.listen()
        probe = "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n"
        probe += "    s.connect('\\0' + sys.argv[1]); print('reached')\nexcept OSError as e:\n    print('no', e)"
        box = Contained(workspace, SandboxConfig(network=network))
        argv = [sys.executable, "-c", probe, name]
        done = box.run(argv, cwd=workspace, env={"PATH": os.environ["PATH"]}, timeout=20)
    assert done.exit_code == 0 and done.output.startswith("no "), done.output


# -- 12, 13. As root or not: the host's devices and root's files stay out of reach, and a
# command's processes are limited ---------------------------------------------------------

ATTACK = (
    "chmod 600 /dev/null /dev/zero 2>&1; chown 1:1 /dev/null 2>&1; echo x > /dev/null; "
    "head -c 200 /etc/shadow 2>&1; echo; echo uid=$(id -u); "
    "/usr/bin/python3 -c 'bytearray(300 << 20); print(7 * 6)' 2>&1 | tail -1; "
    "i=0; while [ $i -lt 200 ]; do sleep 5 & i=$((i+1)); done"
)
ATTACKER = """
import json, os, sys
from pathlib import Path
from hephaistus.settings.config_sections import SandboxConfig
from hephaistus.runtime import limits
from hephaistus.runtime.sandbox import Contained
limits.PROCESSES = 64
limits.memory_limit = lambda: 64 << 20
root = Path(sys.argv[1])
done = Contained(root, SandboxConfig()).run(
    ["/bin/sh", "-c", sys.argv[2]], cwd=root, env={"PATH": "/usr/bin:/bin"}, timeout=30
)
print(json.dumps([done.exit_code, done.output]))
"""


@needs_sandbox
@pytest.mark.parametrize("user", ["this user", "nobody"])
def test_a_command_cannot_change_the_hosts_devices_read_roots_files_or_fork_without_end(
    user,
):
    import json
    import stat
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="heph-user-", dir="/var/tmp"))
    devices = {name: os.stat(f"/dev/{name}") for name in ("null", "zero")}
    shadow = Path("/etc/shadow").read_text()[:20] if os.access("/etc/shadow", os.R_OK) else None
    try:
        (folder / "ws").mkdir()
        if user == "nobody":
            os.chown(folder, NOBODY, NOBODY)
            os.chown(folder / "ws", NOBODY, NOBODY)
            python = python_for_nobody()
            try:
                argv = [str(python), "-c", ATTACKER, str(folder / "ws"), ATTACK]
                done = run_as_nobody(argv, folder)
            finally:
                shutil.rmtree(python.parent.parent, ignore_errors=True)
            assert done.returncode == 0, done.stderr
            code, output = json.loads(done.stdout)
        else:  # a process of its own: heph joins its cgroup once a process, as root
            import subprocess
            import sys

            argv = [sys.executable, "-c", ATTACKER, str(folder / "ws"), ATTACK]
            env = {"HOME": str(folder), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
            done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
            assert done.returncode == 0, done.stderr
            code, output = json.loads(done.stdout)
    finally:
        changed = []
        for name, before in devices.items():
            after = os.stat(f"/dev/{name}")
            if (after.st_mode, after.st_uid) != (before.st_mode, before.st_uid):
                changed.append(name)
                os.chmod(f"/dev/{name}", stat.S_IMODE(before.st_mode))  # put the host's back
                os.chown(f"/dev/{name}", before.st_uid, before.st_gid)
        shutil.rmtree(folder, ignore_errors=True)
    assert changed == [], output
    assert code is not None and "uid=" in output, output  # ended, not timed out
    if shadow:
        assert shadow not in output
    assert "uid=0\n" not in output  # root outside is nobody inside
    assert "\n42\n" not in output  # 300 MB over a 64 MB limit
    assert "Cannot fork" in output or "Resource temporarily unavailable" in output, output


SHARED = {  # memory no data limit counts, nor the OOM killer's count of the process
    "a shared mapping": "import mmap; m = mmap.mmap(-1, 300 << 20)\n"
    "for i in range(0, len(m), 4096): m[i] = 1",
    "a memfd": "import os; fd = os.memfd_create('x')\n"
    "for i in range(300): os.write(fd, bytes(1 << 20))",
}


@needs_sandbox
@pytest.mark.skipif(os.getuid() != 0, reason="a memory cgroup of heph's own is made as root")
@pytest.mark.parametrize("kind", list(SHARED))
def test_shared_memory_no_data_limit_counts_stops_at_the_memory_limit_as_root(kind):
    import json
    import subprocess
    import sys
    import tempfile

    attacker = ATTACKER.replace("limits.PROCESSES = 64", "limits.OWN_MEMORY = 64 << 20")
    attacker += (
        "print('no cgroup' if limits._joined.get('memory') is None else '', file=sys.stderr)\n"
    )
    folder = Path(tempfile.mkdtemp(prefix="heph-user-", dir="/var/tmp"))
    try:
        (folder / "ws").mkdir()
        line = f'/usr/bin/python3 -c "{SHARED[kind]}\nprint(6 * 7 + 1)" 2>&1 | tail -1; echo ended'
        argv = [sys.executable, "-c", attacker, str(folder / "ws"), line]
        env = {"HOME": str(folder), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stderr  # heph lives: the command was the one killed
    if "no cgroup" in done.stderr:
        pytest.skip("the memory cgroup file system is not writable here")
    output = json.loads(done.stdout)[1]
    assert "ended" in output and "43" not in output, output  # 300 MB shared over 64 MB


# -- The second round: what a command could still read or change outside the workspace ------


@needs_sandbox
def test_other_projects_shell_startup_files_and_included_git_configs_are_hidden_inside(
    heph, chat_server, visible_home
):
    home = visible_home
    (home / ".bashrc").write_text("export OPENAI_API_KEY=sk-proj-BASHRC-KEY-9999\n")
    (home / ".ollama").mkdir()
    (home / ".ollama" / "id_ed25519").write_text("secret-ollama-key\n")
    (home / ".anthropic").mkdir()
    (home / ".anthropic" / "api_key").write_text("secret-anthropic-key\n")
    (home / ".gitconfig").write_text("[include]\n\tpath = ~/.gitconfig-work\n")
    (home / ".gitconfig-work").write_text(
        f'[url "https://{TOKEN_HEX}@example.com/"]\n\tinsteadOf = https://example.com/\n'
    )
    for sibling in (home / "src" / "other", home / "notes-repo"):
        (sibling / ".git").mkdir(parents=True)
        (sibling / ".git" / "config").write_text("secret-remote-token-of-another-project\n")
        (sibling / ".env").write_text("secret-dotenv-of-another-project\n")
        (sibling / ".heph" / "sessions").mkdir(parents=True)
        (sibling / ".heph" / "sessions" / "s.jsonl").write_text("secret-session-of-another\n")
    root = home / "src" / "ws"
    root.mkdir(parents=True)
    deep = root.joinpath(*"abcdefghij", "repo")  # a repository deeper than any walk
    deep.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(deep)], check=True)
    try:
        paths = [
            str(home / name)
            for name in (".bashrc", ".ollama/id_ed25519", ".anthropic/api_key", ".gitconfig-work")
        ]
        for sibling in ("src/other", "notes-repo"):
            paths += [f"{home}/{sibling}/{name}" for name in (".git/config", ".env", ".heph/*/*")]
        plant = f"echo '\tfsmonitor = touch {home}/FSMON' >> {deep}/.git/config"
        seen = seen_inside(heph, chat_server, [*paths, f"&& {plant}"], root, home)
        assert "secret" not in seen and TOKEN_HEX not in seen, seen
        assert "fsmonitor" not in (deep / ".git" / "config").read_text()  # read-only inside
    finally:
        shutil.rmtree(root, ignore_errors=True)


@needs_sandbox
def test_a_server_started_in_the_sandbox_with_the_network_reaches_no_host_abstract_socket(
    workspace,
):
    import socket
    import subprocess
    import sys

    from hephaistus.runtime.landlock import scoping
    from hephaistus.runtime.sandbox import Contained
    from hephaistus.settings.config_sections import SandboxConfig

    if not callable(scoping(shutil.which("bwrap") or "bwrap")):
        pytest.skip(f"the host's abstract sockets stay reachable here: {scoping('bwrap')}")
    name = f"heph-test-server-{os.getpid()}"
    probe = (
        "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n"
        "    s.connect('\\0' + sys.argv[1]); print('reached')\nexcept OSError as e:\n"
        "    print('no', e)"
    )
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("\0" + name)
        listener.listen()
        box = Contained(workspace, SandboxConfig())
        line = box.command_line([sys.executable, "-c", probe, name], network=True)
        done = subprocess.run(line, capture_output=True, text=True, timeout=20, cwd=workspace)
    assert done.stdout.startswith("no "), done.stdout + done.stderr


# -- The third round: what the sandbox still showed (moved XDG folders, projects farther away
# or in dot-folders, git's configuration as git reads it, a linked home, /tmp's size) --------


@needs_sandbox
def test_credential_stores_in_moved_xdg_folders_are_empty_inside(
    heph, chat_server, visible_home, workspace
):
    home = visible_home
    moved = {"XDG_CONFIG_HOME": "conf", "XDG_DATA_HOME": "data", "XDG_CACHE_HOME": "cache"}
    stores = [
        home / "conf/gh/hosts.yml",
        home / "data/keyrings/x.keyring",
        home / "cache/huggingface/token",
    ]
    for number, path in enumerate(stores):
        path.parent.mkdir(parents=True)
        path.write_text(f"secret-of-store-{number}\n")
    env = {name: str(home / folder) for name, folder in moved.items()}
    seen = seen_inside(heph, chat_server, list(map(str, stores)), workspace, home, env)
    assert "secret-" not in seen, seen


@needs_sandbox
def test_projects_beside_every_folder_between_the_workspace_and_home_are_hidden(
    heph, chat_server, visible_home
):
    home = visible_home
    root = home / "code" / "orgA" / "ws"
    root.mkdir(parents=True)
    projects = ["code/orgB/other", "code/orgA/beside", "code/lone", "notes/repo", ".dotfiles"]
    for number, name in enumerate(projects):
        (home / name / (".git" if number % 2 else "src")).mkdir(parents=True)
        (home / name / ("secrets.env" if number % 2 else ".env")).write_text(f"secret-{number}\n")
    (home / "code" / "orgB" / "README").write_text("not-a-project\n")
    (home / ".config" / ".git").mkdir(parents=True)  # a person's settings, kept in git
    (home / ".config" / "tool.toml").write_text("a-setting\n")
    (home / "scratch").mkdir()  # no project: a folder holding a secret file, and one in home
    (home / "scratch" / "api.env").write_text("secret-in-a-folder\n")
    (home / "top.env").write_text("secret-in-home\n")
    paths = [f"{home}/{name}/{secret}" for name in projects for secret in (".env", "secrets.env")]
    paths += [f"{home}/scratch/api.env", f"{home}/top.env"]
    paths += [f"{home}/code/orgB/README", f"{home}/.config/tool.toml"]
    seen = seen_inside(heph, chat_server, paths, root, home)
    assert "secret-" not in seen, seen
    assert "not-a-project" in seen and "a-setting" in seen  # only projects are hidden


@needs_sandbox
@pytest.mark.parametrize(
    ("entry", "data"),
    [
        (".pyenv/shims", ".pyenv/versions"),
        (".nvm/versions/node/v20/bin", ".nvm/alias"),
        (".cargo/bin", ".cargo/registry"),
        (".cargo/bin", ".rustup/toolchains"),  # rustup's proxies run what ~/.rustup holds
        ("bin", ".pyenv/versions"),  # a virtual environment's Python is pyenv's
    ],
)
def test_a_toolchain_in_a_dot_folder_of_home_still_runs_inside(
    heph, chat_server, visible_home, workspace, entry, data
):
    home = visible_home
    for folder in {entry.split("/")[0], data.split("/")[0]}:
        (home / folder / ".git").mkdir(parents=True, exist_ok=True)  # installed by git clone
    (home / data).mkdir(parents=True, exist_ok=True)
    (home / data / "version").write_text("toolchain-data\n")
    tool = home / entry / "tool"
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text(f"#!/bin/sh\ncat {home / data / 'version'}\n")
    tool.chmod(0o755)
    chat_server.reply(act("shell", command="tool"))
    chat_server.reply(final("done"))
    env = {"HOME": str(home), "PATH": f"{home / entry}{os.pathsep}{os.environ['PATH']}"}
    assert heph("--yes", "run it", env=env).code == 0
    said = chat_server.requests[1]["messages"][-1]["content"]
    assert "toolchain-data" in said, said


@needs_sandbox
def test_a_project_that_holds_a_path_entry_shows_its_tools_but_not_its_secrets(
    heph, chat_server, visible_home, workspace
):
    home = visible_home
    tools = home / "tools"
    subprocess.run(["git", "init", "-q", str(tools)], check=True)
    with (tools / ".git" / "config").open("a") as config:
        config.write(f'[remote "origin"]\n\turl = https://x:{TOKEN_HEX}@example.com/t.git\n')
    (tools / ".env").write_text("secret-of-the-tools\n")
    (tools / "conf").mkdir()
    (tools / "conf" / "credentials.json").write_text("secret-one-folder-down\n")
    (tools / "conf" / "prod").mkdir()
    (tools / "conf" / "prod" / ".env").write_text("secret-two-folders-down\n")
    (tools / "deploy" / "keys").mkdir(parents=True)
    (tools / "deploy" / "keys" / "id_ed25519").write_text("secret-key-two-folders-down\n")
    # Deeper, such names are a library's (Python's own `secrets` module): the toolchain needs them.
    (tools / "lib" / "python3").mkdir(parents=True)
    (tools / "lib" / "python3" / "secrets.py").write_text("library-code\n")
    (tools / ".heph" / "sessions").mkdir(parents=True)
    (tools / ".heph" / "sessions" / "s.jsonl").write_text("secret-session-of-the-tools\n")
    (tools / "bin").mkdir()
    (tools / "bin" / "tool").write_text("#!/bin/sh\necho tool-ran\n")
    (tools / "bin" / "tool").chmod(0o755)
    names = [
        ".env",
        "conf/credentials.json",
        "conf/prod/.env",
        ".heph/sessions/s.jsonl",
        ".git/config",
        "lib/python3/secrets.py",
        "deploy/keys/id_ed25519",
    ]
    reads = "; ".join(f"cat {tools / name} 2>/dev/null" for name in names)
    chat_server.reply(act("shell", command=f"(tool; {reads}) > seen.txt; echo read"))
    chat_server.reply(final("done"))
    env = {"HOME": str(home), "PATH": f"{tools / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    assert heph("--yes", "look", env=env).code == 0
    seen = (workspace / "seen.txt").read_text()
    assert "tool-ran" in seen and "example.com/t.git" in seen and "library-code" in seen, seen
    assert "secret" not in seen and TOKEN_HEX not in seen, seen


GLOBAL_GIT_CONFIG = """[user]
\tname = me
[include] path = ~/.gitconfig-oneline
[http "https://github.com/"] extraheader = AUTHORIZATION: basic ONELINE-HEADER-SECRET
[sendemail]
\tsmtppass = SMTPPASS-SECRET
[hub]
\toauthtoken = HUB-OAUTH-SECRET
[github]
\ttoken = \\
  CONTINUED-TOKEN-SECRET
[includeIf "gitdir:~/code/"]
\tpath = .gitconfig-orgs
[include]
\tpath = .gitconfig-loop1
"""
INCLUDED_GIT_CONFIGS = {
    ".gitconfig-oneline": "[github]\n\ttoken = ONELINE-INCLUDED-SECRET\n",
    ".gitconfig-orgs": "[github]\n\ttoken = INCLUDEIF-SECRET\n",
    ".gitconfig-loop1": "[include]\n\tpath = .gitconfig-loop2\n",
    ".gitconfig-loop2": "[include]\n\tpath = .gitconfig-loop1\n[github]\n\ttoken = LOOP-SECRET\n",
    "dotgit/config": "[github]\n\ttoken = GIT-CONFIG-GLOBAL-SECRET\n",
}


@needs_sandbox
def test_git_configuration_as_git_reads_it_is_shown_without_credentials(
    heph, chat_server, visible_home
):
    home = visible_home
    (home / ".gitconfig").write_text(GLOBAL_GIT_CONFIG)
    for name, text in INCLUDED_GIT_CONFIGS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    (home / "code").mkdir()
    main = clone(home / "code", {"app.py": "x = 1\n"})
    token = f"https://x-access-token:WORKTREE-{TOKEN_HEX}-SECRET@example.com/wt.git"
    with (main / ".git" / "config").open("a") as config:
        config.write('[remote "mirror"]\n\turl = https://t:MAIN-SECRET@example.com/m.git\n')
    root = home / "code" / "wt"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(root)], check=True)
    subprocess.run(
        ["git", "-C", str(main), "config", "extensions.worktreeConfig", "true"], check=True
    )
    subprocess.run(
        ["git", "-C", str(root), "config", "--worktree", "remote.wt.url", token], check=True
    )
    (main / ".env").write_text("MAIN-ENV-SECRET\n")  # the main repository's, shown for its .git
    worktree_config = main / ".git" / "worktrees" / "wt" / "config.worktree"
    paths = [str(home / name) for name in [".gitconfig", *INCLUDED_GIT_CONFIGS]]
    paths += [str(main / name) for name in (".git/config", ".env")]
    paths += [str(worktree_config), "&& git remote -v"]
    env = {"GIT_CONFIG_GLOBAL": str(home / "dotgit" / "config")}
    seen = seen_inside(heph, chat_server, paths, root, home, env)
    assert "SECRET" not in seen, seen
    assert "name = me" in seen and "example.com/wt.git" in seen and "example.com/m.git" in seen
    assert "WORKTREE" in worktree_config.read_text()  # the person's files are as they were


@needs_sandbox
def test_a_home_folder_reached_through_a_link_runs_commands_and_hides_its_secrets(
    heph, chat_server, visible_home, workspace
):
    real = visible_home / "real-home"
    (real / "other" / ".git").mkdir(parents=True)
    (real / "other" / ".env").write_text("secret-of-another-project\n")
    (real / ".ssh").mkdir()
    (real / ".ssh" / "id_ed25519").write_text("secret-key\n")
    linked = visible_home / "home"
    linked.symlink_to(real)
    paths = [
        f"{home}/{name}" for home in (linked, real) for name in ("other/.env", ".ssh/id_ed25519")
    ]
    seen = seen_inside(heph, chat_server, paths, workspace, linked)
    assert "secret-" not in seen, seen


@needs_sandbox
def test_the_sandboxs_tmpfs_folders_hold_no_more_than_the_memory_limit(
    visible_home, workspace, monkeypatch
):
    from hephaistus.runtime import limits
    from hephaistus.runtime.sandbox import Contained
    from hephaistus.settings.config_sections import SandboxConfig

    monkeypatch.setattr(limits, "memory_limit", lambda: 16 << 20)
    monkeypatch.setenv("HOME", str(visible_home))
    (visible_home / ".ssh").mkdir()
    folders = ["/tmp", "/run", "/dev/shm", "/dev", f"{visible_home}/.ssh"]
    fill = "dd if=/dev/zero of=$d/fill bs=1M count=40 2>/dev/null"
    size = "$(stat -c %s $d/fill 2>/dev/null || echo 0)"
    line = f"for d in {' '.join(folders)}; do {fill}; echo $d {size}; done"
    box = Contained(workspace, SandboxConfig())
    env = {"PATH": os.environ["PATH"]}
    done = box.run(["/bin/sh", "-c", line], cwd=workspace, env=env, timeout=30)
    written = {folder: int(size) for folder, size in map(str.split, done.output.splitlines())}
    assert set(written) == set(folders), done.output
    assert written["/tmp"] >= 4 << 20 and written["/dev/shm"] >= 4 << 20  # there to be used
    assert all(size <= 16 << 20 for size in written.values()), written
    # Together no more than the limit: heph's memory cgroup has room for them and heph itself
    # (tmpfs pages belong to no process: where they fill it, the biggest process is killed).
    assert written["/tmp"] + written["/dev/shm"] <= 16 << 20, written
    assert written["/dev"] == 0  # read-only but for its own mounts
