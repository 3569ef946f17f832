"""What reaches the terminal and the model from text heph did not write: the model's answer
rendered as Markdown (a link never hides where it goes), and what a command prints (scrubbed of
credentials before the model or a session file sees it, and left alone when it only looks like
one). Each attack runs for real: the real rich console, the real sandbox, real git."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from test_hostile_repo import clone, person

from conftest import git, has_git
from hephaistus.redact import scrub
from hephaistus.runtime.sandbox import unavailable
from hephaistus.testing import act, final
from hephaistus.ui.render import ConsoleSink

WHY_NOT = unavailable()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
needs_git = pytest.mark.skipif(not has_git(), reason="needs git")

PHISH = "https://evil.example/phish"
# An OSC 8 hyperlink: ESC ] 8 ; params ; target, then the text shown for it.
HYPERLINK = re.compile(r"\x1b]8;[^;]*;([^\x1b\x07]+)(?:\x1b\\|\x07)((?:(?!\x1b]8;).)*)", re.S)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def hidden_targets(output: str) -> list[str]:
    """The targets of the hyperlinks in `output` whose shown text is not the target itself."""
    return [
        target
        for target, shown in HYPERLINK.findall(output)
        if SGR.sub("", shown).strip() != target
    ]


LINKS = (
    f"See [docs]({PHISH}), [![logo](https://evil.example/i.png)]({PHISH}) "
    f"and [https://good.example]({PHISH})."
)


# -- 17a. A link in text from the model shows where it goes -------------------------------


def test_a_link_in_the_answer_shows_its_target_and_hides_none():
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    sink = ConsoleSink(console=console)
    sink.thought(f"I will cite [docs]({PHISH})")
    sink.final(LINKS)
    output = console.file.getvalue()
    assert hidden_targets(output) == [] and "\x1b]8;" not in output
    assert f"docs ({PHISH})" in SGR.sub("", output)
    assert "https://good.example (" + PHISH in SGR.sub("", output)


def answered_with_links(heph_process, chat_server, home, tmp_path, *args: str):
    """heph run as a process whose stdout rich takes for a terminal, answering with links."""
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    terminal = {**person(home, chat_server), "NO_COLOR": None, "TTY_COMPATIBLE": "1"}
    terminal["TERM"] = "xterm-256color"
    chat_server.reply(final(LINKS, thought=f"see [docs]({PHISH})"))
    return root, terminal, heph_process(*args, "look", cwd=root, env=terminal)


@needs_git
@pytest.mark.parametrize("mode", ["ask", "plan"])
def test_an_answer_or_a_plan_on_a_terminal_makes_no_hyperlink_with_a_hidden_target(
    heph_process, chat_server, home, tmp_path, mode
):
    _, _, result = answered_with_links(heph_process, chat_server, home, tmp_path, "--mode", mode)
    assert result.code == 0, result.stderr
    assert "\x1b[" in result.stdout  # rich rendered it for a terminal
    assert hidden_targets(result.stdout + result.stderr) == []
    assert f"docs ({PHISH})" in SGR.sub("", result.stdout)


@needs_git
def test_a_replayed_answer_makes_no_hyperlink_with_a_hidden_target(
    heph_process, chat_server, home, tmp_path
):
    root, terminal, first = answered_with_links(heph_process, chat_server, home, tmp_path)
    assert first.code == 0, first.stderr
    replayed = heph_process("replay", "last", cwd=root, env=terminal)
    assert replayed.code == 0, replayed.stderr
    assert "\x1b[" in replayed.stdout
    assert hidden_targets(replayed.stdout + replayed.stderr) == []
    assert f"docs ({PHISH})" in SGR.sub("", replayed.stdout)


# -- 17b and 11. Credentials in what a command prints, in common formats --------------------

HEX_TOKEN = "4f9c2e71b0a85d36e1c7f02a9b8d4e6c3a5f1b07"  # a GitHub-style 40-hex token
# A line as a tool prints it, and the credential in it (realistic shapes, fake values).
CREDENTIAL_LINES = {
    "stripe secret key": (
        "charging with sk_live_4eC39HqLyjWDarjtT1zdp7dc9fQ2xZ",
        "4eC39HqLyjWDarjtT1zdp7dc9fQ2xZ",
    ),
    "stripe restricted key": (
        "restricted: rk_live_51HxAbCdEfGhIjKlMnOpQrSt",
        "51HxAbCdEfGhIjKlMnOpQrSt",
    ),
    "gitlab": ("cloning with glpat-x8Yz12AbCdEfGhIjKlMn", "x8Yz12AbCdEfGhIjKlMn"),
    "npm": ("npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789  read-only", "AbCdEfGhIjKlMnOpQrStUvWxYz"),
    "pypi": (
        "uploading with pypi-AgEIcHlwaS5vcmcCJGE4ZjY5ZDU2LTk3OTEtNGE1ZS05YjM2LWQzYzU1ZjU0",
        "AgEIcHlwaS5vcmcCJGE4ZjY5ZDU2LTk3OTEtNGE1ZS05YjM2LWQzYzU1ZjU0",
    ),
    "sendgrid": (
        "mail via 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",
        "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc",
    ),
    "docker config": (
        '{"auths": {"ghcr.io": {"auth": "cGVyc29uOmdocF9mYWtlZmFrZWZha2U="}}}',
        "cGVyc29uOmdocF9",
    ),
    "azure connection string": (
        "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey="
        "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy==;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4Zm9v",
    ),
    "kubeconfig": (
        "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=",
        "LS0tLS1CRUdJTiBSU0EgUF",
    ),
    "netrc line": ("machine api.example.com login alice password Tr0ub4dor-3xyz", "Tr0ub4dor-3xyz"),
    "netrc lines": (
        "machine api.example.com\n  login alice\n  password Tr0ub4dor-3xyz",
        "Tr0ub4dor-3xyz",
    ),
    "pgpass": ("db.internal:5432:app:app_user:Tr0ub4dor&3-horse", "Tr0ub4dor&3-horse"),
    "pgpass wildcards": ("*:*:*:postgres:correct horse battery", "correct horse battery"),
    "DB_PASS": ("DB_PASS=Tr0ub4dor-3xyz", "Tr0ub4dor-3xyz"),
    "PASSWORD": ("MYSQL_ROOT_PASSWORD=Tr0ub4dor-3xyz", "Tr0ub4dor-3xyz"),
    "SECRET": ("JWT_SECRET=Tr0ub4dor-3xyz", "Tr0ub4dor-3xyz"),
    "pgp key block": (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQVYBGZfakefakefakefakefakefakefakefake\n"
        "=Xq9z\n-----END PGP PRIVATE KEY BLOCK-----",
        "lQVYBGZfakefake",
    ),
    "key cut after its start": (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
        "AAAAMwAAAAtzc2gtZWQyNTUxOQAAACDfakefakefakefake",
        "tzc2gtZWQyNTUxOQAAACDfake",
    ),
    "telegram bot": ("bot 5432109876:AAF3xq8-FakeFakeFakeFakeFakeFakeFake", "AAF3xq8-FakeFakeFake"),
    "x-access-token URL": (
        f"origin\thttps://x-access-token:{HEX_TOKEN}@github.com/o/r.git (fetch)",
        HEX_TOKEN,
    ),
    "oauth2 URL": (
        f"remote.origin.url=https://oauth2:{HEX_TOKEN}@gitlab.example.com/g/r.git",
        HEX_TOKEN,
    ),
    "hex token as URL user": (
        f"fatal: unable to access 'https://{HEX_TOKEN}@github.com/o/r.git/'",
        HEX_TOKEN,
    ),
    "URL without user": ("redis://:Tr0ub4dor-3xyz@cache:6379/0", "Tr0ub4dor-3xyz"),
    "password with @": ("https://deploy:p@ss-w0rd@git.example.com/r.git", "ss-w0rd"),
    "authorization token header": (f"> Authorization: token {HEX_TOKEN}", HEX_TOKEN),
}


@pytest.mark.parametrize("line, secret", CREDENTIAL_LINES.values(), ids=CREDENTIAL_LINES)
def test_common_credential_formats_in_command_output_are_scrubbed(line, secret):
    shown = scrub(f"some output\n{line}\nmore output\n", environ={})
    assert secret not in shown and "[redacted]" in shown
    assert shown.startswith("some output\n") and shown.endswith("\nmore output\n")


ORDINARY_LINES = [
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "9fceb02 (HEAD -> main, origin/main) the project",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  app.py",
    "request 123e4567-e89b-12d3-a456-426614174000 done",
    'ICON = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAA"',
    "    password = input('Password: ')",
    "password = getpass.getpass()",
    'token = os.environ["GITHUB_TOKEN"]',
    "ratio a:b:c",
    "see notes: a:b:c:d",
    "root:x:0:0:root:/root:/bin/bash",
    "src/app.py:12:5: E501 line too long",
    "10:30:00 build started",
    "Please login first and then enter your password below",
    "the default password policy is strict",
    "ssh://git@github.com:22/o/r.git",
    "git@github.com:o/r.git",
    "https://example.com:8443/path?q=1",
    "pass_filenames: false",
    "npm_config_cache=/home/u/.npm",
    "Basic usage: heph docs",
    "-----BEGIN PUBLIC KEY-----",
    "task-runner disk-usage-report",
    "tests/test_auth.py::test_token_refresh PASSED",
]


@pytest.mark.parametrize("line", ORDINARY_LINES)
def test_ordinary_output_that_looks_a_little_like_a_credential_is_kept(line):
    assert scrub(f"{line}\n", environ={}) == f"{line}\n"


def test_a_secret_set_while_heph_runs_is_hidden_from_then_on_and_a_changed_one_too(monkeypatch):
    # What the process's environment holds is remembered by its bytes: a change is seen.
    text = "token one: sk-first-0123456789abcdef, token two: zz-second-9876543210"
    monkeypatch.setenv("SERVICE_TOKEN", "sk-first-0123456789abcdef")
    assert "sk-first" not in scrub(text) and "zz-second" in scrub(text)
    monkeypatch.setenv("SERVICE_TOKEN", "zz-second-9876543210")
    assert "zz-second" not in scrub(text)
    monkeypatch.delenv("SERVICE_TOKEN")
    assert "zz-second" in scrub(text)


def fake_key(lines: int) -> str:
    """An armored private key of `lines` lines of key material (fake)."""
    body = "".join(
        f"{n:04d}QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlq\n" for n in range(lines)
    )
    armor = "-----{} PGP PRIVATE KEY BLOCK-----"
    return f"{armor.format('BEGIN')}\n\n{body}=Xq9z\n{armor.format('END')}\n"


@needs_sandbox
@needs_git
def test_what_a_command_prints_reaches_neither_the_model_nor_the_session_with_credentials(
    heph, chat_server, home, tmp_path
):
    leaky = "\n".join(line for line, _ in CREDENTIAL_LINES.values()) + "\n"
    root = clone(tmp_path, {"app.py": "x = 1\n", "logs/deploy.log": leaky})
    git(root, "remote", "set-url", "origin", f"https://x-access-token:{HEX_TOKEN}@github.com/o/r")
    chat_server.reply(act("shell", command="cat logs/deploy.log"))
    chat_server.reply(act("shell", command="git remote -v; git rev-parse HEAD; sha256sum app.py"))
    chat_server.reply(final("done"))
    result = heph("--yes", "look at the deploy", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    seen = chat_server.requests[1]["messages"][-1]["content"]
    recorded = "".join(p.read_text() for p in (root / ".heph" / "sessions").glob("*.jsonl"))
    for _, secret in CREDENTIAL_LINES.values():
        assert secret not in seen and secret not in recorded and secret not in result.stdout
    assert "machine api.example.com" in seen and "[redacted]" in seen
    hashes = chat_server.requests[2]["messages"][-1]["content"]
    assert "origin" in hashes and HEX_TOKEN not in hashes
    assert git(root, "rev-parse", "HEAD").strip() in hashes  # a commit id and a sha256 stay
    assert re.search(r"\b[0-9a-f]{64}  app\.py", hashes)


@needs_sandbox
def test_a_key_whose_first_line_the_output_limit_cut_off_is_still_hidden(
    heph, chat_server, workspace
):
    (workspace / "backup.txt").write_text(fake_key(400))  # about 24 KB: the start is cut
    chat_server.reply(act("shell", command="cat backup.txt; echo listed"))
    chat_server.reply(final("done"))
    assert heph("--yes", "show the backup").code == 0
    seen = chat_server.requests[1]["messages"][-1]["content"]
    assert "bytes cut from the start" in seen and "BEGIN PGP" not in seen
    assert "QUJDREVGR0hJSktMTU5P" not in seen and "listed" in seen
