"""Project instructions (AGENTS.md and friends) in the system prompt, on real files, through
the loopback server."""

import os

from hephaistus.testing import final


def system_of(chat_server, request=-1):
    return chat_server.requests[request]["messages"][0]["content"]


def write(workspace, rel, text):
    path = workspace / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_root_agents_md_and_the_nested_ones_on_the_way(heph, chat_server, workspace):
    write(workspace, "AGENTS.md", "Use tabs in this project.\n")
    write(workspace, "src/pkg/AGENTS.md", "pkg: never import requests.\n")
    write(workspace, "src/pkg/core.py", "x = 1\n")
    write(workspace, "other/AGENTS.md", "other: not in play.\n")
    chat_server.reply(final("ok")).reply(final("ok"))
    assert heph("fix src/pkg/core.py").code == 0
    prompt = system_of(chat_server)
    assert prompt.index("## src/pkg/AGENTS.md\npkg: never import requests.") < prompt.index(
        "## AGENTS.md\nUse tabs in this project."
    )  # nearest first
    assert "not in play" not in prompt
    assert heph("say hello").code == 0
    prompt = system_of(chat_server)
    assert "Use tabs" in prompt and "never import requests" not in prompt


def test_claude_md_then_conventions_md_when_there_is_no_agents_md(heph, chat_server, workspace):
    write(workspace, "CONVENTIONS.md", "Conventions: snake_case.\n")
    chat_server.reply(final("ok")).reply(final("ok")).reply(final("ok"))
    heph("task")
    assert "## CONVENTIONS.md\nConventions: snake_case." in system_of(chat_server)
    write(workspace, "CLAUDE.md", "Claude: run make test.\n")
    heph("task")
    assert "Claude: run make test." in system_of(chat_server)
    assert "snake_case" not in system_of(chat_server)  # one file per folder
    write(workspace, "AGENTS.md", "Agents first.\n")
    heph("task")
    assert "Agents first." in system_of(chat_server) and "Claude" not in system_of(chat_server)


def test_files_named_in_the_config_and_what_cannot_be_read(heph, chat_server, workspace, tmp_path):
    write(workspace, "AGENTS.md", "not this one\n")
    write(workspace, "docs/STYLE.md", "Style: short functions.\n")
    write(workspace, ".env.md", "TOKEN=abc\n")
    (tmp_path / "outside.md").write_text("from outside the workspace\n")
    (workspace / "linked.md").symlink_to(tmp_path / "outside.md")
    write(
        workspace,
        ".heph.toml",
        'instructions = ["docs/STYLE.md", "missing.md", ".env.md", "linked.md", "pipe.md"]\n',
    )
    os.mkfifo(workspace / "pipe.md")  # reading it would wait for a writer for ever
    chat_server.reply(final("ok"))
    result = heph("--trust", "task")
    prompt = system_of(chat_server)
    assert "Style: short functions." in prompt
    assert "not this one" not in prompt and "TOKEN" not in prompt and "outside" not in prompt
    notice = next(line for line in result.stderr.splitlines() if "instructions:" in line)
    assert "docs/STYLE.md (23 characters)" in notice
    assert "missing.md (not read: no such file)" in notice
    assert ".env.md (not read: .env.md looks like a secret file" in notice
    assert "linked.md (not read: 'linked.md' is outside the workspace" in notice
    assert "pipe.md (not read: not a regular file; heph reads only files)" in notice


def test_a_long_file_is_cut_and_says_so(heph, chat_server, workspace):
    write(workspace, "AGENTS.md", "rule\n" * 5_000)  # 25,000 characters
    chat_server.reply(final("ok"))
    result = heph("-v", "task")
    prompt = system_of(chat_server)
    assert "[... 12,999 more characters of AGENTS.md cut]" in prompt
    assert len(prompt) < 16_000
    assert "instructions: AGENTS.md (12,999 of 24,999 characters cut)" in result.stderr


def test_read_afresh_for_each_task(heph, chat_server, workspace):
    write(workspace, "AGENTS.md", "Version one.\n")
    chat_server.reply(final("first")).reply(final("second"))
    heph("first task")
    write(workspace, "AGENTS.md", "Version two.\n")
    assert heph("-c", "second task").code == 0
    second = chat_server.requests[1]["messages"]
    assert "Version two." in second[0]["content"] and "Version one." not in second[0]["content"]
    assert second[1]["content"].startswith("first task")  # the conversation is kept


def test_init_drafts_an_agents_md_from_the_project(heph, workspace):
    write(
        workspace,
        "pyproject.toml",
        '[project]\nname = "x"\nrequires-python = ">=3.11"\n\n[tool.ruff]\nline-length = 88\n',
    )
    write(workspace, "pkg/__init__.py", "")
    write(workspace, "pkg/core.py", 'def f(a):\n    """F.\n\n    Args:\n        a: it\n    """\n')
    write(workspace, "tests/test_core.py", "def test_f():\n    pass\n")
    refused = heph("init")
    assert refused.code == 3 and "pass --mode edits" in refused.stderr
    assert not (workspace / "AGENTS.md").exists()
    assert heph("init", "--dry-run").code == 0 and not (workspace / "AGENTS.md").exists()
    assert heph("init", "--yes").code == 0
    text = (workspace / "AGENTS.md").read_text()
    assert "- `pkg/`: 2 files (.py); a Python package" in text
    assert "- `tests/`: 1 file (.py); the tests" in text
    assert "- lint: `ruff check . && ruff format --check .`" in text
    assert "- Python >=3.11." in text and "at most 88 characters" in text
    assert "- Docstrings in the google style" in text and "Indentation: 4 spaces" in text
    again = heph("init", "--yes")
    assert again.code == 2 and "AGENTS.md exists already" in again.stderr
    assert heph("undo").code == 0 and not (workspace / "AGENTS.md").exists()


def test_init_does_not_wait_on_a_named_pipe(heph, workspace):
    os.mkfifo(workspace / "pyproject.toml")
    os.mkfifo(workspace / "setup.cfg")
    write(workspace, "pkg/core.py", "def f():\n    pass\n")
    result = heph("init", "--dry-run")
    assert result.code == 0 and "pkg/" in result.stderr + result.stdout


def test_a_huge_file_is_not_read_whole(heph, chat_server, workspace):
    with (workspace / "AGENTS.md").open("w") as handle:
        handle.write("é rule\n" * 3_000_000)  # 24 MB of two-byte characters
    chat_server.reply(final("ok"))
    result = heph("-v", "task")
    assert result.code == 0
    prompt = system_of(chat_server)
    assert "é rule" in prompt and len(prompt) < 16_000
    assert "AGENTS.md (24,000,000 characters" not in result.stderr
    assert "of 24,000,000 characters cut" in result.stderr  # its size in bytes, here
