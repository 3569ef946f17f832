"""A repository someone else wrote, cloned for real, trying every way to take heph over.

Each test builds the hostile repository, `git clone`s it into a temporary folder and runs heph in
the clone the way a person would. A second loopback server stands for the repository's own
server: it records everything that reaches it, and the key must never be among it without trust.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, has_git
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
