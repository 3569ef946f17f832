"""Signing in to the person's MCP servers at a URL with OAuth (`heph mcp login NAME`), through
the `mcp` package's own OAuth client: it discovers the protected resource's and the
authorization server's metadata, registers heph as a client, and runs the authorization code
flow with PKCE. heph's part is the person's side of it: the URL to open is printed (heph opens
no browser), the browser comes back to a listener on 127.0.0.1 that takes only the redirect
it waits for, and the tokens are kept in the user's state folder (`mcp-oauth.json`, readable by
the person alone), under the server's URL: never in a workspace, and never for a server a
workspace names (a repository does not decide where the person's tokens go).

A run never signs in: it sends the token it has, and the package refreshes it when it expires;
where none is kept, or it is refused, the call says to run `heph mcp login NAME`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlparse

from hephaistus.settings.mcp_config import McpServerConfig

LOGIN_SECONDS = 300.0  # how long `heph mcp login` waits for the browser to come back
RECORDS = "mcp-oauth.json"
CALLBACK = "/callback"


class SignInFailed(Exception):
    """The person's sign-in did not come back: the authorization server said no, or the
    browser never returned."""


class TokenFile:
    """The package's TokenStorage for one server: its tokens (and when they expire), heph's
    registration with its authorization server and that server's metadata (where tokens are
    renewed), kept under the server's URL as one record.

    A sign-in (`signing_in`) keeps what it gathers to itself and writes the whole record only
    once its tokens come: one that fails, or is stopped, leaves the last sign-in as it was. A
    run only renews the tokens; it never registers heph anew (that is signing in again)."""

    def __init__(self, url: str, *, signing_in: bool = False, name: str = "") -> None:
        from hephaistus.settings.userstate import WorkspaceRecords

        self.url = url
        self.name = name
        self.records = WorkspaceRecords(RECORDS)
        self.signing_in = signing_in
        self.gathered: dict[str, Any] = {}  # a sign-in's, until its tokens come
        self.context: Any = None  # the OAuth client's state: the metadata it found

    def kept(self) -> dict[str, Any]:
        """What is kept for the server ({} when it was never signed in to)."""
        return self.gathered if self.signing_in else self.records.get(self.url)

    def expires_at(self) -> float | None:
        """When the kept access token expires (seconds since the epoch), if it said."""
        at = self.kept().get("expires_at")
        return float(at) if isinstance(at, (int, float)) else None

    def forget(self) -> None:
        """Sign out: nothing is kept for the server."""
        self.records.put(self.url, None)

    async def get_tokens(self) -> Any:
        """The kept tokens (the package's OAuthToken), or None."""
        from mcp.shared.auth import OAuthToken

        tokens = self.kept().get("tokens")
        return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None

    async def set_tokens(self, tokens: Any) -> None:
        """Keep `tokens`, when the access token expires, and where they are renewed."""
        record = dict(self.kept())
        record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        record["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        found = getattr(self.context, "oauth_metadata", None)
        if found is not None:
            record["metadata"] = found.model_dump(mode="json", exclude_none=True)
            record["auth_server"] = getattr(self.context, "auth_server_url", None)
        self.signing_in, self.gathered = False, {}
        self.records.put(self.url, record)

    async def get_client_info(self) -> Any:
        """heph's kept registration with the authorization server, or None."""
        from mcp.shared.auth import OAuthClientInformationFull

        client = self.kept().get("client")
        return (
            OAuthClientInformationFull.model_validate(client) if isinstance(client, dict) else None
        )

    async def set_client_info(self, client_info: Any) -> None:
        """Keep heph's registration (a sign-in's); a run never registers heph anew."""
        if not self.signing_in:
            raise SignInFailed(sign_in_again(self.name))
        self.gathered["client"] = client_info.model_dump(mode="json", exclude_none=True)

    def metadata(self) -> Any:
        """The kept authorization server metadata (the package's OAuthMetadata), or None."""
        from mcp.shared.auth import OAuthMetadata

        found = self.kept().get("metadata")
        return OAuthMetadata.model_validate(found) if isinstance(found, dict) else None


def registered(server: McpServerConfig, redirect_uri: str) -> Any:
    """The client the person registered with the server's authorization server (their
    config's `oauth_client_id`, its secret from `oauth_client_secret_env_var`)."""
    import os

    from mcp.shared.auth import OAuthClientInformationFull

    variable = server.oauth_client_secret_env_var
    secret = os.environ.get(variable) if variable else None
    return OAuthClientInformationFull(
        client_id=server.oauth_client_id,
        client_secret=secret or None,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
    )


def sign_in_again(name: str) -> str:
    """What a run says when the kept sign-in no longer works."""
    return (
        "the token heph keeps was refused and could not be renewed: "
        f"`heph mcp login {name or 'NAME'}` signs in again"
    )


def signed_in(server: McpServerConfig) -> bool:
    """Whether the person signed in to `server` (theirs, at a URL) with `heph mcp login`."""
    if not server.url or server.from_workspace:
        return False
    return bool(TokenFile(server.url).kept().get("tokens"))


def kept_sign_in(server: McpServerConfig) -> Any:
    """The OAuth client a run uses for `server`: its kept tokens, renewed at the kept token
    endpoint when they expire, never a new sign-in (None: the person never signed in)."""
    if not signed_in(server):
        return None

    async def refused(url: str) -> None:
        raise SignInFailed(sign_in_again(server.name))

    return provider(server, refused)


def provider(
    server: McpServerConfig,
    redirect: Callable[[str], Awaitable[None]] | None = None,
    callback: Callable[[], Awaitable[Any]] | None = None,
    redirect_uri: str = "http://127.0.0.1/callback",
    signing_in: bool = False,
) -> Any:
    """The package's OAuth client (an httpx Auth) for `server`, keeping its tokens in the
    state folder; `redirect` is handed the address the person is to open."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    from hephaistus import __version__

    if server.from_workspace:
        raise ValueError("a workspace's MCP server never gets the person's tokens")
    storage = TokenFile(server.url, signing_in=signing_in, name=server.name)
    metadata = OAuthClientMetadata(
        client_name="heph",
        software_id="hephaistus",
        software_version=__version__,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )

    class Kept(OAuthClientProvider):  # type: ignore[misc]
        async def _initialize(self) -> None:
            await super()._initialize()
            if server.oauth_client_id:  # registered by the person: never a registration of ours
                self.context.client_info = registered(server, redirect_uri)
            self.context.token_expiry_time = storage.expires_at()  # renewed once it passes
            # Renewed where the sign-in found the authorization server, never at a guess.
            self.context.oauth_metadata = self.context.oauth_metadata or storage.metadata()
            kept = storage.kept().get("auth_server")
            self.context.auth_server_url = self.context.auth_server_url or kept

    made = Kept(server.url, metadata, storage, redirect, callback or _no_callback)
    storage.context = made.context
    return made


async def _no_callback() -> Any:
    raise SignInFailed("a run never signs in: `heph mcp login NAME` does")


class SignIn:
    """One `heph mcp login`: the listener the browser comes back to, and `show`, which is
    handed the address the person opens (it must not wait for the browser: the listener
    answers on the same loop)."""

    def __init__(self, show: Callable[[str], None], port: int = 0) -> None:
        self.callback = Callback(port)
        self.show = show

    def auth(self, server: McpServerConfig) -> Any:
        """The OAuth client for this sign-in (the hub's `auth`)."""

        async def redirect(url: str) -> None:
            self.callback.state = parse_qs(urlparse(url).query).get("state", [""])[0]
            self.show(url)

        uri = self.callback.redirect_uri
        return provider(server, redirect, self.callback.result, uri, signing_in=True)


class Callback:
    """The listener on 127.0.0.1 the browser is sent back to (bound at once, so the redirect
    URI is known before the flow starts): it takes the one redirect to CALLBACK that carries
    a code or an error and the state of the address shown, and answers every other request
    with 404 (another program's guess ends nothing)."""

    def __init__(self, port: int = 0) -> None:
        import socket

        self.socket = socket.create_server(("127.0.0.1", port))  # OSError: the port is taken
        self.redirect_uri = f"http://127.0.0.1:{self.socket.getsockname()[1]}{CALLBACK}"
        self.came: asyncio.Future[dict[str, str]] | None = None
        self.state = ""  # that of the address the person opens

    async def result(self) -> Any:
        """The code and state the browser brought back (the package's AuthorizationCodeResult);
        SignInFailed when the authorization server said no or nothing came."""
        from mcp.shared.auth import AuthorizationCodeResult

        self.came = asyncio.get_running_loop().create_future()
        server = await asyncio.start_server(self._request, sock=self.socket)
        try:
            query = await asyncio.wait_for(self.came, LOGIN_SECONDS)
        except asyncio.TimeoutError:
            raise SignInFailed(
                f"the browser did not come back within {LOGIN_SECONDS:g} s"
            ) from None
        finally:
            server.close()
        if "error" in query:
            said = query.get("error_description") or query["error"]
            raise SignInFailed(f"the authorization server said no: {said[:200]}")
        return AuthorizationCodeResult(
            code=query.get("code", ""), state=query.get("state"), iss=query.get("iss")
        )

    async def _request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            target = line.split(" ")[1] if line.count(" ") >= 2 else ""
            parsed = urlparse(target)
            query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
            said = query.get("state", "")
            ours = bool(self.state) and secrets.compare_digest(said.encode(), self.state.encode())
            wanted = parsed.path == CALLBACK and ("code" in query or "error" in query) and ours
            if wanted and self.came is not None and not self.came.done():
                self.came.set_result(query)
                page = b"heph: signed in; you can close this tab and go back to the terminal.\n"
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
            else:
                page = b"not found\n"
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n")
            writer.write(b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(page) + page)
            await writer.drain()
        except Exception:  # noqa: BLE001 - a request that is none (too long, cut off) is dropped
            pass
        finally:
            writer.close()
