"""The sandbox around every process heph starts: the real bubblewrap, real namespaces, real
sockets. Skipped, saying why, where bubblewrap cannot make a sandbox; the fail-closed tests run
everywhere."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from test_run_command import processes_running

from hephaistus.runtime.hidden import hidden_paths, secret_files
from hephaistus.runtime.sandbox import Contained, Sandbox, unavailable
from hephaistus.settings.config_sections import SandboxConfig
from hephaistus.testing import act, final

WHY_NOT = unavailable()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
SECRET = "AKIAIOSFODNN7EXAMPLE-not-for-your-eyes"


@pytest.fixture
def box(tmp_path, monkeypatch):
    """A workspace with a git folder, heph's folder and a .env; a home with credential stores;
    and the sandbox around the workspace."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(SECRET)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    (home / ".netrc").write_text(SECRET)
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "credentials").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "ws"
    for folder in (".git", ".heph", "config"):
        (root / folder).mkdir(parents=True)
    (root / ".env").write_text(f"KEY={SECRET}\n")
    (root / "config" / "prod.pem").write_text(SECRET)
    deep = root / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / ".env").write_text(SECRET)
    (root / "app.py").write_text("x = 1\n")
    hidden = hidden_paths(root, secret_files(root))
    return Sandbox(root, tmp_path / "cache", hidden=hidden)


def user_config(home: Path, text: str) -> None:
    folder = home / ".config" / "hephaistus"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def sh(box: Sandbox, line: str, timeout: float = 20):
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "LANG": "C.UTF-8"}
    return box.run(["/bin/sh", "-c", line], cwd=box.workspace, env=env, timeout=timeout)


def test_the_workspaces_secret_files_are_found_ignored_or_not(box):
    assert sorted(secret_files(box.workspace)) == [".env", "a/b/c/d/e/.env", "config/prod.pem"]


@needs_sandbox
def test_the_workspace_is_writable_and_nothing_else_is(box, tmp_path):
    done = sh(box, "echo 2 > app.py && mkdir -p new && echo y > new/b.txt && cat app.py")
    assert done.exit_code == 0 and done.output == "2\n"
    assert (box.workspace / "new" / "b.txt").read_text() == "y\n"
    beside = tmp_path / "beside.txt"
    beside.write_text("mine\n")
    outside = sh(box, f"echo theirs > {beside}; touch /var/tmp/heph-{os.getpid()}; touch ~/x")
    assert beside.read_text() == "mine\n"  # the sandbox's /tmp is its own
    assert "Read-only file system" in outside.output
    assert not Path(f"/var/tmp/heph-{os.getpid()}").exists()
    for own in (".git/config", ".heph/state.json"):
        refused = sh(box, f"echo x > {own}")
        assert refused.exit_code != 0 and not (box.workspace / own).exists()


@needs_sandbox
def test_credential_stores_and_secret_files_look_empty(box):
    done = sh(
        box,
        "cat ~/.aws/credentials ~/.ssh/id_ed25519 ~/.netrc ~/.config/git/credentials .env "
        "config/prod.pem a/b/c/d/e/.env 2>&1; "
        "ls -A ~/.aws ~/.ssh; wc -c < .env",
    )
    assert SECRET not in done.output
    assert done.output.rstrip().endswith("0")  # .env is there, and empty
    assert (box.workspace / ".env").read_text() == f"KEY={SECRET}\n"  # outside, untouched


@needs_sandbox
def test_no_network_and_no_host_socket(box, tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.settimeout(0.5)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.5)
    run_dir = Path(os.environ.get("XDG_RUNTIME_DIR") or "/run")
    unix_path = run_dir / f"heph-test-{os.getpid()}.sock"
    try:
        unix = socket.socket(socket.AF_UNIX)
        unix.bind(str(unix_path))
        unix.listen()
    except OSError:
        unix = None  # this user may not make a socket there: the other checks stand
    try:
        python = (
            "import socket, sys\n"
            "for make in ("
            f"lambda: socket.create_connection(('127.0.0.1', {port}), timeout=2),"
            f"lambda: socket.socket(socket.AF_UNIX).connect({str(unix_path)!r})):\n"
            "    try:\n"
            "        make(); print('REACHED')\n"
            "    except OSError as error:\n"
            "        print('refused', error)\n"
            "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"u.sendto(b'hello', ('127.0.0.1', {udp.getsockname()[1]}))\n"
        )
        done = sh(box, f'python3 -c "{python}" 2>&1 || true')
        said = done.output.splitlines()
        assert "REACHED" not in said and [line.split()[0] for line in said] == ["refused"] * 2
        with pytest.raises(TimeoutError):
            listener.accept()
        with pytest.raises(TimeoutError):
            udp.recvfrom(100)
    finally:
        listener.close()
        udp.close()
        if unix is not None:
            unix.close()
            unix_path.unlink()


@needs_sandbox
def test_no_process_outlives_its_call_and_none_sees_the_hosts(box):
    marker = f"{61 + os.getpid() % 1000 / 1000:.3f}"
    started = time.monotonic()
    done = sh(box, f"(sleep {marker} &) ; sleep {marker} & wait", timeout=0.5)
    assert done.exit_code is None and time.monotonic() - started < 5
    assert processes_running(f"sleep\0{marker}", wait=2.0) == []
    alone = sh(box, f"kill -0 {os.getpid()} 2>&1 || echo cannot-see; ls /proc | grep -c '^[0-9]'")
    assert "cannot-see" in alone.output
    assert int(alone.output.split()[-1]) < 10  # its own few processes only


@needs_sandbox
def test_caches_go_to_the_sandboxs_own_folder(box):
    done = sh(
        box, 'mkdir -p "$PIP_CACHE_DIR" && touch "$PIP_CACHE_DIR/wheel" && echo $PIP_CACHE_DIR'
    )
    assert done.exit_code == 0 and (box.cache / "pip" / "wheel").exists()
    assert not str(box.cache).startswith(str(box.workspace))


@needs_sandbox
def test_a_project_command_the_model_runs_is_sandboxed(heph, chat_server, workspace, home):
    (home / ".aws").mkdir(parents=True, exist_ok=True)
    (home / ".aws" / "credentials").write_text(SECRET)
    user_config(
        home, "[commands]\npeek = \"sh -c 'cat ~/.aws/credentials; echo done > made.txt'\"\n"
    )
    chat_server.reply(act("run_command", name="peek"))
    chat_server.reply(final("peeked"))
    result = heph("--yes", "peek")
    assert result.code == 0, result.stderr
    observation = chat_server.requests[1]["messages"][-1]["content"]
    assert SECRET not in observation and "No such file" in observation
    assert (workspace / "made.txt").read_text() == "done\n"


@needs_sandbox
def test_without_prlimit_commands_run_and_heph_says_they_have_no_memory_limit(
    heph, chat_server, workspace, home, tmp_path
):
    tools = tmp_path / "bin"  # the machine's programs, but prlimit
    tools.mkdir()
    for folder in ("/usr/bin", "/bin"):
        for program in Path(folder).iterdir():
            if program.name != "prlimit" and not (tools / program.name).exists():
                (tools / program.name).symlink_to(program)
    user_config(home, '[commands]\nmark = "touch marked"\n')
    chat_server.reply(act("run_command", name="mark"))
    chat_server.reply(final("marked"))
    result = heph("--yes", "mark it", env={"PATH": str(tools)})
    assert result.code == 0, result.stderr
    assert "without a memory" in result.stderr and "prlimit" in result.stderr
    assert (workspace / "marked").exists()


def test_where_no_sandbox_works_every_command_is_asked_about(heph, chat_server, workspace, home):
    user_config(
        home, '[sandbox]\nbwrap = "/nonexistent/bwrap"\n[commands]\nmark = "touch marked"\n'
    )
    chat_server.reply(act("run_command", name="mark"))
    result = heph("--yes", "mark it")  # auto mode, and no terminal to ask in
    assert result.code == 3 and "no sandbox for commands" in result.stderr
    assert not (workspace / "marked").exists()


def test_a_sandbox_turned_off_by_the_person_runs_commands_and_says_so(
    heph, chat_server, workspace, home
):
    user_config(home, '[sandbox]\nenabled = false\n[commands]\nmark = "touch marked"\n')
    chat_server.reply(act("run_command", name="mark"))
    chat_server.reply(final("marked"))
    result = heph("--yes", "mark it")
    assert result.code == 0 and "the sandbox is turned off" in result.stderr
    assert (workspace / "marked").exists()


def test_a_workspace_may_allow_the_network_but_never_turn_the_sandbox_off(tmp_path):
    from hephaistus.settings.config import load_config

    (tmp_path / ".heph.toml").write_text("[sandbox]\nnetwork = true\nenabled = false\n")
    trusted = load_config(tmp_path, trusted=True)
    assert trusted.sandbox == SandboxConfig(enabled=True, network=True)
    assert any("[sandbox] enabled is ignored" in why for why in trusted.ignored)
    assert load_config(tmp_path).sandbox == SandboxConfig()  # untrusted: none of it


def test_the_executor_knows_why_commands_run_unsandboxed(tmp_path):
    missing = Contained(tmp_path, SandboxConfig(bwrap="/nonexistent/bwrap"))
    assert not missing.contained() and "not installed" in (missing.why_not() or "")
    off = Contained(tmp_path, SandboxConfig(enabled=False))
    assert off.contained() and "turned off" in (off.why_not() or "")


@needs_sandbox
def test_a_toolchain_under_tmp_is_there_inside_and_read_only(box, tmp_path):
    tools = tmp_path / "tools" / "bin"
    tools.mkdir(parents=True)
    (tools / "hello").write_text("#!/bin/sh\necho hello from the toolchain\n")
    (tools / "hello").chmod(0o755)
    env = {"PATH": f"{tools}:{os.environ['PATH']}", "HOME": os.environ["HOME"]}
    done = box.run(
        ["/bin/sh", "-c", f"hello; touch {tools}/x"], cwd=box.workspace, env=env, timeout=20
    )
    assert "hello from the toolchain" in done.output and "Read-only file system" in done.output
    assert not (tools / "x").exists()


@needs_sandbox
def test_nested_repositories_git_folders_are_read_only_inside(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "ws"
    hooks = root / "vendor" / "lib" / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (root / "vendor" / "lib" / "lib.py").write_text("x = 1\n")
    (root / "sub" / ".heph").mkdir(parents=True)
    (root / "worktree").mkdir()
    (root / "worktree" / ".git").write_text("gitdir: /elsewhere\n")
    # pip install -e git+...: the checkout in the virtual environment, which the walks pass by
    (root / ".venv" / "src" / "dep" / ".git" / "hooks").mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    box = Contained(root, SandboxConfig())
    env = {"PATH": os.environ["PATH"]}
    for line in (
        "echo evil > vendor/lib/.git/hooks/pre-commit",
        "echo evil > .venv/src/dep/.git/hooks/pre-commit",
        "echo x > sub/.heph/state.json",
        "echo 'gitdir: /tmp/x' > worktree/.git",
    ):
        done = box.run(["/bin/sh", "-c", line], cwd=root, env=env, timeout=20)
        assert done.exit_code != 0 and "Read-only file system" in done.output, line
    assert not (hooks / "pre-commit").exists()
    assert (root / "worktree" / ".git").read_text() == "gitdir: /elsewhere\n"
    done = box.run(["/bin/sh", "-c", "echo 2 > vendor/lib/lib.py"], cwd=root, env=env, timeout=20)
    assert done.exit_code == 0 and (root / "vendor" / "lib" / "lib.py").read_text() == "2\n"


@needs_sandbox
def test_a_submodule_the_walk_passes_by_is_read_only_inside_too(tmp_path, monkeypatch):
    # A submodule in node_modules/ or deeper than the walk for secrets goes: its hooks are the
    # person's git's to run, never a command's to write.
    import subprocess

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for where in ("node_modules/pkg", "a/b/c/d/e/f/g/h/i/sub"):
        link = f"160000,{'1' * 40},{where}"
        subprocess.run(["git", "update-index", "--add", "--cacheinfo", link], cwd=root, check=True)
        (root / where / ".git" / "hooks").mkdir(parents=True)
    box = Contained(root, SandboxConfig())
    for where in ("node_modules/pkg", "a/b/c/d/e/f/g/h/i/sub"):
        line = f"echo evil > {where}/.git/hooks/pre-commit"
        done = box.run(["/bin/sh", "-c", line], cwd=root, env={"PATH": "/usr/bin:/bin"}, timeout=20)
        assert done.exit_code != 0 and "Read-only file system" in done.output, line


@needs_sandbox
def test_git_works_inside_when_the_workspace_is_a_folder_of_a_repository(tmp_path, monkeypatch):
    import shutil
    import tempfile

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # Not under /tmp, which is the sandbox's own: the repository's top must be seen inside.
    top = Path(tempfile.mkdtemp(dir="/var/tmp")) / "repo"
    request_cleanup = shutil.rmtree
    (top / "sub").mkdir(parents=True)
    (top / "sub" / "a.py").write_text("A = 1\n")
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    box = Contained(top / "sub", SandboxConfig())
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    try:
        done = box.run(["git", "status", "--short", "."], cwd=top / "sub", env=env, timeout=20)
    finally:
        request_cleanup(top.parent)
    assert done.exit_code == 0 and "?? ./" in done.output, done.output  # it found the repository


def test_in_a_repository_secrets_at_any_depth_are_found_ignored_or_not(tmp_path):
    from conftest import git

    root = tmp_path / "repo"
    deep = root.joinpath(*"abcdefghijkl")  # deeper than the walk goes
    deep.mkdir(parents=True)
    git(root, "init", "-q")
    (root / ".gitignore").write_text(".env\nsecrets/\n")
    (deep / ".env").write_text("KEY=1\n")  # ignored
    (deep / "prod.pem").write_text("key\n")  # untracked
    (deep / "secrets").mkdir()
    (deep / "secrets" / "token.txt").write_text("t\n")  # in an ignored folder
    (deep / ".ssh").mkdir()
    (deep / ".ssh" / "id_ed25519").write_text("k\n")
    (deep / "app.py").write_text("x = 1\n")
    found = set(secret_files(root))
    where = "/".join("abcdefghijkl")
    assert {f"{where}/.env", f"{where}/prod.pem"} <= found
    assert f"{where}/.ssh" in found or f"{where}/.ssh/id_ed25519" in found
    assert f"{where}/app.py" not in found


@needs_sandbox
def test_a_deep_secret_of_a_repository_is_hidden_from_commands(tmp_path, monkeypatch):
    from conftest import git

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    deep = root.joinpath(*"abcdefghijkl")
    deep.mkdir(parents=True)
    git(root, "init", "-q")
    (root / ".gitignore").write_text(".env\n")
    (deep / ".env").write_text(f"KEY={SECRET}\n")
    box = Contained(root, SandboxConfig())
    line = f"cat {'/'.join('abcdefghijkl')}/.env; grep -r KEY . || true"
    done = box.run(["/bin/sh", "-c", line], cwd=root, env={"PATH": os.environ["PATH"]}, timeout=20)
    assert SECRET not in done.output


@needs_sandbox
def test_a_bubblewrap_that_bounds_no_tmpfs_still_makes_the_sandbox(tmp_path):
    import shutil

    real = shutil.which("bwrap")
    older = tmp_path / "bin" / "bwrap"  # as bubblewrap before 0.7, or one installed setuid
    older.parent.mkdir()
    refuse = 'echo "bwrap: Unknown option --size" >&2; exit 1'
    older.write_text(
        f'#!/bin/sh\nfor a in "$@"; do [ "$a" = --size ] && {{ {refuse}; }}; done\n'
        f'exec {real} "$@"\n'
    )
    older.chmod(0o755)
    root = tmp_path / "ws"
    root.mkdir()
    contained = Contained(root, SandboxConfig(bwrap=str(older)))
    assert contained.why_not() is None
    env = {"PATH": os.environ["PATH"]}
    done = contained.run(["/bin/sh", "-c", "echo inside"], cwd=root, env=env, timeout=20)
    assert (done.exit_code, done.output) == (0, "inside\n")


def test_what_a_persons_entry_names_under_tmp_is_of_tmp_alone(tmp_path):
    import tempfile

    from hephaistus.runtime.tmp_shown import named_in_tmp

    kept = Path(tempfile.mkdtemp(prefix="heph-named-", dir="/tmp"))
    try:
        (kept / "server.py").write_text("")
        words = [f"{kept}/server.py", "/tmp/..", "/tmp/../etc", f"{kept}/../..", "--x=/tmp/.."]
        assert named_in_tmp(words, tmp_path / "ws") == [kept]
    finally:
        import shutil

        shutil.rmtree(kept)


@needs_sandbox
def test_the_environment_heph_runs_from_is_read_only_inside_when_it_lies_in_the_workspace(
    workspace, monkeypatch
):
    import sys

    venv = workspace / ".venv"  # heph installed in the project's own virtual environment
    (venv / "lib" / "site-packages").mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(venv))
    plant = "echo 'import os' > .venv/lib/site-packages/zz.pth; echo made > made.txt"
    done = Contained(workspace, SandboxConfig()).run(
        ["/bin/sh", "-c", plant], cwd=workspace, env={"PATH": os.environ["PATH"]}, timeout=20
    )
    assert "Read-only file system" in done.output
    assert not (venv / "lib" / "site-packages" / "zz.pth").exists()
    assert (workspace / "made.txt").read_text() == "made\n"  # the rest of the workspace is its
