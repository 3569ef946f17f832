"""An MCP server at a URL that only answers a signed-in client, built with the mcp package's own
server and its OAuth authorization server (metadata, dynamic registration, PKCE, refresh), for
tests/test_mcp_oauth.py. It approves every authorization at once (its /authorize redirects
straight back), so a test's "browser" only follows redirects.

    python oauth_server.py PORT

OAUTH_TEST_TTL: seconds an access token lives (default 3600). OAUTH_TEST_DENY: the
authorization is refused. OAUTH_TEST_CLIENT=ID:SECRET: a client registered beforehand. The tool
`whoami` says which token called, how many were issued and how many clients registered.
"""

import os
import secrets
import sys
import time

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthToken

PORT = int(sys.argv[1])
URL = f"http://127.0.0.1:{PORT}"
TTL = int(os.environ.get("OAUTH_TEST_TTL", "3600"))


class Approving:
    """An authorization server that remembers everything in memory and approves at once."""

    def __init__(self) -> None:
        self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}
        self.issued = self.registered = 0
        if os.environ.get("OAUTH_TEST_CLIENT"):
            from mcp.shared.auth import OAuthClientInformationFull

            client_id, _, secret = os.environ["OAUTH_TEST_CLIENT"].partition(":")
            self.clients[client_id] = OAuthClientInformationFull(
                client_id=client_id,
                client_secret=secret,
                redirect_uris=[os.environ.get("OAUTH_TEST_REDIRECT", "http://127.0.0.1/callback")],
                token_endpoint_auth_method="client_secret_basic",
            )

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.registered += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params):
        if os.environ.get("OAUTH_TEST_DENY"):
            return construct_redirect_uri(
                str(params.redirect_uri), error="access_denied", state=params.state
            )
        code = secrets.token_hex(8)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        return self._tokens(client.client_id, authorization_code.scopes)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)
        return self._tokens(client.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(getattr(token, "token", ""), None)

    def _tokens(self, client_id, scopes):
        self.issued += 1
        access, refresh = f"access-{self.issued}", secrets.token_hex(8)
        expires = int(time.time()) + TTL
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access, expires_in=TTL, refresh_token=refresh, scope=" ".join(scopes)
        )


provider = Approving()
server = MCPServer(
    "signed-in",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=URL,
        resource_server_url=f"{URL}/mcp",
        client_registration_options=ClientRegistrationOptions(enabled=True),
    ),
)


@server.tool(description="Which token called, and how many tokens were issued.")
def whoami() -> str:
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    tokens = f"{token.token if token else None} of {provider.issued}"
    return f"{tokens} ({provider.registered} registered)"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=PORT)
