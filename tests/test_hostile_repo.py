"""A repository someone else wrote, cloned for real, trying every way to take heph over.

Each test builds the hostile repository, `git clone`s it into a temporary folder and runs heph in
the clone the way a person would. A second loopback server stands for the repository's own
server: it records everything that reaches it, and the key must never be among it without trust.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import act, final, git, has_git
from hephaistus.redact import scrub
from hephaistus.testing import ChatServer
from hephaistus.tools import ToolContext, default_registry
from hephaistus.workspace import Workspace

pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")

KEY = "sk-person-own-key-0123456789abcdef"
TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123"
TOKEN_URL = f"https://x-access-token:{TOKEN}@github.com/o/r.git"
TOOLS = default_registry()


def clone(tmp_path: Path, files: dict[str, str], name: str = "project") -> Path:
    """A repository holding `files`, committed, then cloned as a person clones one."""
    upstream = tmp_path / f"{name}-upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    for rel, text in files.items():
        (upstream / rel).parent.mkdir(parents=True, exist_ok=True)
        (upstream / rel).write_text(text)
    git(upstream, "add", "-f", ".")
    git(upstream, "commit", "-qm", "the project")
    git(tmp_path, "clone", "-q", str(upstream), name)
    cloned = tmp_path / name
    git(cloned, "config", "user.email", "person@example.invalid")
    git(cloned, "config", "user.name", "Person")
    return cloned


def keys_seen(server: ChatServer) -> list[str]:
    return [headers.get("authorization", "") for _, _, headers in server.seen]


@pytest.fixture
def attacker():
    """The repository's own server."""
    with ChatServer() as server:
        yield server


# -- 6. .git/ is out of the file tools' reach ----------------------------------------------


def test_git_internals_are_never_read_listed_searched_or_mapped(tmp_path):
    root = clone(tmp_path, {"app.py": "def app():\n    return 1\n"})
    git(root, "remote", "set-url", "origin", TOKEN_URL)
    git(root, "config", "http.extraheader", "AUTHORIZATION: basic ghp_extraheader0123456789abcd")
    ctx = ToolContext(Workspace.at(root))
    attempts = [
        ("read_file", {"path": ".git/config"}),
        ("read_file", {"path": "./.git/../.git/config"}),
        ("list_files", {"path": ".git"}),
        ("search", {"pattern": "ghp_", "path": ".git"}),
        ("search", {"pattern": "ghp_", "path": ".git/config"}),
    ]
    for tool, args in attempts:
        result = TOOLS.get(tool)(args, ctx)
        assert not result.ok and ".git/" in result.output, (tool, args, result.output)
        assert TOKEN not in result.output
    (root / "cfg").symlink_to(root / ".git" / "config")
    linked = TOOLS.get("read_file")({"path": "cfg"}, ctx)
    assert not linked.ok and TOKEN not in linked.output
    everywhere = TOOLS.get("search")({"pattern": "ghp_|extraheader"}, ctx)
    assert TOKEN not in everywhere.output and "extraheader0" not in everywhere.output
    from hephaistus.repomap import Focus, RepoMap

    mapped = RepoMap(Workspace.at(root)).render(Focus("look at .git/config"), 2000)
    assert ".git/" not in mapped and "app.py" in mapped


def test_a_nested_git_folder_is_out_of_reach_too(tmp_path):
    root = tmp_path / "ws"
    (root / "vendor" / "lib" / ".git").mkdir(parents=True)
    (root / "vendor" / "lib" / ".git" / "config").write_text(f"url = {TOKEN_URL}\n")
    (root / "vendor" / "lib" / "lib.py").write_text("x = 1\n")
    ws = Workspace.at(root)
    assert "vendor/lib/lib.py" in ws.files() and not any(".git/" in f for f in ws.files())
    ctx = ToolContext(ws)
    assert not TOOLS.get("read_file")({"path": "vendor/lib/.git/config"}, ctx).ok
    assert TOKEN not in TOOLS.get("search")({"pattern": "ghp_"}, ctx).output


# -- 8. credentials in what commands print --------------------------------------------------


@pytest.mark.parametrize(
    "line, kept",
    [
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key",
        ),
        ("aws_session_token=IQoJb3JpZ2luX2VjEXAMPLETOKENVALUE", "aws_session_token"),
        ("  client_secret: 8Q~abcdefghijklmnopqrstuvwxyz", "client_secret"),
        ('"password": "hunter2-but-longer"', '"password"'),
        ("export GITHUB_TOKEN=abcdef0123456789", "GITHUB_TOKEN"),
        ("DB_PASSWD = 's3cr3t-value'", "DB_PASSWD"),
        ("api_key: abcd1234efgh5678", "api_key"),
    ],
)
def test_secret_looking_settings_in_command_output_are_scrubbed(line, kept):
    value = line.split("=", 1)[-1] if "=" in line else line.split(":", 1)[-1]
    value = value.strip().strip("'\"")
    shown = scrub(f"some output\n{line}\nmore output\n", environ={})
    assert value not in shown and kept in shown and "[redacted]" in shown
    assert "some output" in shown and "more output" in shown


@pytest.mark.parametrize(
    "line",
    [
        "tests/test_auth.py::test_token_refresh PASSED",
        "    assert token == expected",
        "E       AssertionError: assert 'a' == 'b'",
        "token_count = 5",
        "password_policy_test.py:12: in test_password",
    ],
)
def test_ordinary_output_about_tokens_is_left_alone(line):
    assert scrub(line, environ={}) == line


# -- 7. git_commit commits heph's changes, nothing else -------------------------------------


def last_session(root: Path):
    from hephaistus.session import load_session

    return load_session(sorted((root / ".heph" / "sessions").glob("*.jsonl"))[-1])


def test_git_commit_takes_only_what_heph_changed(heph, chat_server, tmp_path):
    root = clone(
        tmp_path,
        {"app.py": "x = 1\n", "notes.txt": "mine\n", ".gitignore": ".env\n", "my file.py": "a\n"},
    )
    (root / ".env").write_text("API_TOKEN=hunter2hunter2\n")
    (root / "notes.txt").write_text("mine, and not committed yet\n")  # the person's work
    chat_server.reply(act("edit_file", path="app.py", old="x = 1", new="x = 2"))
    chat_server.reply(act("write_file", path="my file.py", content="b\n"))
    chat_server.reply(act("git_commit", message="secrets", paths=[".env"]))
    chat_server.reply(act("git_commit", message="theirs", paths="notes.txt"))
    chat_server.reply(act("git_commit", message="inside git", paths=[".git/config"]))
    chat_server.reply(act("git_commit", message="heph's two", paths=["app.py", "my file.py"]))
    chat_server.reply(final("committed"))
    result = heph("--yes", "change and commit", cwd=root)
    assert result.code == 0, result.stderr
    observations = [m["messages"][-1]["content"] for m in chat_server.requests[3:7]]
    assert "secret file; heph never commits it" in observations[0]
    assert "notes.txt was not changed by heph" in observations[1]
    assert ".git/" in observations[2] and "nothing was committed" in observations[2]
    assert "committed" in observations[3] and "app.py, my file.py" in observations[3]
    assert git(root, "log", "--format=%s").splitlines() == ["heph's two", "the project"]
    assert git(root, "show", "--name-only", "--format=", "HEAD").splitlines() == [
        "app.py",
        "my file.py",
    ]
    assert git(root, "status", "--porcelain") == " M notes.txt\n"  # still the person's
    commit_span = [s for s in last_session(root).spans if s.name == "git_commit"][-1]
    sha = git(root, "rev-parse", "HEAD").strip()
    assert commit_span.output["commit"] == {"sha": sha, "paths": ["app.py", "my file.py"]}


def test_git_commit_refuses_a_file_that_also_holds_the_users_uncommitted_work(
    heph, chat_server, tmp_path
):
    root = clone(tmp_path, {"app.py": "x = 1\ny = 1\n", "lib.py": "z = 1\n"})
    (root / "app.py").write_text("x = 1\ny = 'the person, not committed'\n")
    (root / "lib.py").write_text("z = 'staged by the person'\n")
    git(root, "add", "lib.py")
    (root / "lib.py").write_text("z = 1\n")
    chat_server.reply(act("edit_file", path="app.py", old="x = 1", new="x = 2"))
    chat_server.reply(act("edit_file", path="lib.py", old="z = 1", new="z = 2"))
    chat_server.reply(act("git_commit", message="app", paths="app.py"))
    chat_server.reply(act("git_commit", message="lib", paths="lib.py"))
    chat_server.reply(final("could not"))
    assert heph("--yes", "edit and commit", cwd=root).code == 0
    app_said, lib_said = (m["messages"][-1]["content"] for m in chat_server.requests[3:5])
    assert "app.py already had uncommitted changes of the user's" in app_said
    assert "lib.py also has changes the user staged" in lib_said
    assert git(root, "log", "--format=%s").splitlines() == ["the project"]
