"""Signing in to a server at a URL with OAuth (`heph mcp login`), against the mcp package's own
server and authorization server (tests/oauth_server.py): the person opens the address heph
prints (here: a "browser" that follows the redirects), heph keeps the tokens in the user's
state folder, runs send them and renew them, and a workspace's server never gets them."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_mcp import observation, user_config

from conftest import environment
from hephaistus.testing import act, final, heph_command

SERVER = Path(__file__).with_name("oauth_server.py")


@pytest.fixture
def signed_in_server(tmp_path):
    """The server's URL, factory-made so a test can set its environment first."""
    started: list[subprocess.Popen] = []

    def start(**env: str) -> str:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = subprocess.Popen(
            [sys.executable, str(SERVER), str(port)],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                return f"http://127.0.0.1:{port}/mcp"
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the OAuth test server did not start")

    yield start
    for process in started:
        process.kill()
        process.wait()


def login(
    home: Path, url: str, name: str = "docs", before=None, browse=True, env=None
) -> subprocess.CompletedProcess:
    """`heph mcp login NAME` as a person runs it: the address it prints is opened in a browser
    (which follows every redirect, the last one back to heph); `before(address)` runs first;
    without `browse`, the person presses Ctrl-C instead."""
    process = subprocess.Popen(
        [*heph_command(), "mcp", "login", name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(home, url, env),
        cwd=home.parent / "ws",
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip().startswith("http"):
            if before is not None:
                before(line.strip())
            if not browse:
                process.send_signal(signal.SIGINT)
                break
            with urllib.request.urlopen(line.strip(), timeout=10) as page:
                assert b"signed in" in page.read()
            break
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def kept(home: Path) -> dict:
    path = Path(os.environ["XDG_STATE_HOME"]) / "hephaistus" / "mcp-oauth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the person's alone
    return json.loads(path.read_text())


def test_a_run_is_refused_until_the_person_signs_in_then_it_sends_the_token(
    heph, chat_server, home, workspace, signed_in_server
):
    url = signed_in_server()
    user_config(home, f'[mcp_servers.docs]\nurl = "{url}"\n')
    listed = heph("mcp", "list")
    assert "refused heph (HTTP 401)" in listed.stdout
    assert "`heph mcp login docs` does" in listed.stdout

    signed = login(home, url)
    assert signed.returncode == 0, signed.stderr
    assert "signed in to docs" in signed.stdout
    assert kept(home)[url]["tokens"]["access_token"] == "access-1"
    assert not list(workspace.rglob("*oauth*"))  # never in the workspace

    chat_server.reply(act("mcp__docs__whoami"))
    chat_server.reply(final("done"))
    result = heph("--yes", "who am i")
    assert result.code == 0, result.stderr
    assert "access-1 of 1" in observation(chat_server, 1)


def test_an_expired_token_is_renewed_without_signing_in_again(
    heph, chat_server, home, workspace, signed_in_server
):
    url = signed_in_server()
    user_config(home, f'[mcp_servers.docs]\nurl = "{url}"\n')
    assert login(home, url).returncode == 0
    records = Path(os.environ["XDG_STATE_HOME"]) / "hephaistus" / "mcp-oauth.json"
    data = json.loads(records.read_text())
    data[url]["expires_at"] = time.time() - 1  # as a token an hour old is
    records.write_text(json.dumps(data))

    chat_server.reply(act("mcp__docs__whoami"))
    chat_server.reply(final("done"))
    assert heph("--yes", "who am i").code == 0
    assert "access-2 of 2" in observation(chat_server, 1)  # renewed with the refresh token
    assert kept(home)[url]["tokens"]["access_token"] == "access-2"


def test_a_refused_sign_in_says_so_and_keeps_nothing(home, workspace, signed_in_server):
    url = signed_in_server(OAUTH_TEST_DENY="1")
    user_config(home, f'[mcp_servers.docs]\nurl = "{url}"\n')
    signed = login(home, url)
    assert signed.returncode != 0
    assert "signing in failed: the authorization server said no: access_denied" in signed.stderr
    records = Path(os.environ["XDG_STATE_HOME"]) / "hephaistus" / "mcp-oauth.json"
    assert not records.exists() or "tokens" not in records.read_text()


def test_logout_forgets_and_a_workspace_server_is_never_signed_in_to(
    heph, home, workspace, signed_in_server
):
    from hephaistus.mcp.oauth import kept_sign_in
    from hephaistus.settings.mcp_config import McpServerConfig

    url = signed_in_server()
    user_config(home, f'[mcp_servers.docs]\nurl = "{url}"\n')
    assert login(home, url).returncode == 0
    theirs = McpServerConfig("docs", url=url, from_workspace=True)
    assert kept_sign_in(theirs) is None  # the same URL, named by a workspace: no token
    (workspace / ".heph.toml").write_text(f'[mcp_servers.w]\nurl = "{url}"\n')
    assert heph("trust", "--yes").code == 0
    refused = heph("mcp", "login", "w")
    assert refused.code != 0 and "is a workspace's server" in refused.stderr

    out = heph("mcp", "logout", "docs")
    assert out.code == 0 and "signed out of docs" in out.stdout
    assert url not in kept(home)


def test_a_stray_callback_ends_nothing_and_a_stopped_login_keeps_the_last_sign_in(
    heph, home, workspace, signed_in_server
):
    from urllib.error import HTTPError
    from urllib.parse import parse_qs, urlparse

    url = signed_in_server()
    user_config(home, f'[mcp_servers.docs]\nurl = "{url}"\n')

    def another_program(address: str) -> None:
        back = parse_qs(urlparse(address).query)["redirect_uri"][0]
        for query in ("code=x&state=guess", "error=access_denied&error_description=curl%20evil"):
            with pytest.raises(HTTPError):  # 404: not the redirect heph waits for
                urllib.request.urlopen(f"{back}?{query}", timeout=5)

    signed = login(home, url, before=another_program)
    assert signed.returncode == 0, signed.stderr  # the person's own browser still signs in
    first = kept(home)[url]
    assert first["metadata"]["token_endpoint"].endswith("/token")  # renewed there, not a guess

    stopped = login(home, url, browse=False)
    assert stopped.returncode != 0
    assert kept(home)[url] == first  # the stopped sign-in wrote nothing


def test_a_renewal_that_is_refused_says_to_sign_in_again(heph, home, workspace, signed_in_server):
    url = signed_in_server()
    user_config(home, f'[mcp_servers.docs]\nurl = "{url}"\n')
    assert login(home, url).returncode == 0
    records = Path(os.environ["XDG_STATE_HOME"]) / "hephaistus" / "mcp-oauth.json"
    data = json.loads(records.read_text())
    data[url]["expires_at"] = time.time() - 1
    data[url]["tokens"]["refresh_token"] = "revoked"
    records.write_text(json.dumps(data))
    listed = heph("mcp", "list")
    assert "`heph mcp login docs` signs in again" in listed.stdout, listed.stdout
    assert kept(home)[url]["client"] == data[url]["client"]  # no new registration kept


def test_a_client_the_person_registered_signs_in_without_registering(
    heph, chat_server, home, workspace, signed_in_server
):
    from hephaistus.errors import ConfigError
    from hephaistus.settings.mcp_config import mcp_servers

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    back = f"http://127.0.0.1:{port}/callback"  # the redirect URI the person registered
    url = signed_in_server(OAUTH_TEST_CLIENT="mine:s3cret", OAUTH_TEST_REDIRECT=back)
    user_config(
        home,
        f'[mcp_servers.docs]\nurl = "{url}"\noauth_client_id = "mine"\n'
        f'oauth_client_secret_env_var = "MINE_SECRET"\noauth_callback_port = {port}\n',
    )
    process_env = {"MINE_SECRET": "s3cret"}
    signed = login(home, url, env=process_env)
    assert signed.returncode == 0, signed.stderr
    assert "client" not in kept(home)[url]  # the person's own, from their config
    chat_server.reply(act("mcp__docs__whoami"))
    chat_server.reply(final("done"))
    assert heph("--yes", "who", env=process_env).code == 0
    assert "access-1 of 1 (0 registered)" in observation(chat_server, 1)
    theirs = {"w": {"url": url, "oauth_client_id": "mine"}}
    with pytest.raises(ConfigError, match="oauth_client_id is for your user config only"):
        mcp_servers(theirs, ".heph.toml", in_workspace=True)
