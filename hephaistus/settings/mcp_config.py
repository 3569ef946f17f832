"""`[mcp_servers.NAME]`: the MCP tool servers a run may use, with Codex's key names so snippets
paste. A server in the user config is the person's; one in a workspace's files applies only in a
trusted workspace, runs in the sandbox, may not name read-only tools, and takes its secrets from
the environment (`${VAR}`), never written in the file: a literal secret-looking `env` value there
is a config error naming it.

`${VAR}` and `${VAR:-default}` expand in `command`, `args`, `env`, `url` and `http_headers`
(`live`): from the whole environment in the user config; in a workspace's entry only in
`command`, `args` and `env`, from the variables its `env` names. Which of the person's tokens goes
to a URL (`bearer_token_env_var`, `env_http_headers`, a variable in `url` or `http_headers`) is
for the user config to say, never a workspace.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from hephaistus.errors import ConfigError
from hephaistus.settings.config_values import check_known

NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")  # ${VAR}, ${VAR:-x}
HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
OAUTH_KEYS = ("oauth_client_id", "oauth_client_secret_env_var")  # a client registered already
STRING_KEYS = ("command", "cwd", "url", "bearer_token_env_var", *OAUTH_KEYS)
LIST_KEYS = ("args", "enabled_tools", "disabled_tools", "read_only_tools")
NUMBER_KEYS = ("startup_timeout_sec", "tool_timeout_sec")
HEADER_KEYS = ("http_headers", "env_http_headers")  # Codex's: header = value, header = VAR
MODEL_KEY = "OPENAI_API_KEY"  # the key heph sends its model: no workspace's server gets it
FLAGS = ("enabled", "on_host", "sampling")
PORT_KEY = "oauth_callback_port"  # where the browser comes back to, for a client registered so
KEYS = {*STRING_KEYS, *LIST_KEYS, *NUMBER_KEYS, *HEADER_KEYS, "env", *FLAGS, PORT_KEY}


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server: how to start it (stdio: `command`, `args`, `env`, `cwd`) or reach it
    (`url`), which of its tools to offer, and how long to wait."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # as written: a workspace's values are ${VAR}
    cwd: str = ""
    enabled: bool = True
    enabled_tools: tuple[str, ...] | None = None  # None: all of them
    disabled_tools: tuple[str, ...] = ()
    read_only_tools: tuple[str, ...] = ()  # calls that only read (the user config only)
    startup_timeout_sec: float = 10.0
    tool_timeout_sec: float = 60.0
    url: str = ""  # Streamable HTTP
    bearer_token_env_var: str = ""
    oauth_client_id: str = ""  # signing in as this client (user config), not registering one
    oauth_client_secret_env_var: str = ""  # the variable holding its secret
    oauth_callback_port: int = 0  # the port its redirect URI names (0: any free one)
    http_headers: tuple[tuple[str, str], ...] = ()  # sent with every request to `url`
    env_http_headers: tuple[tuple[str, str], ...] = ()  # header, the variable holding its value
    from_workspace: bool = False  # a trusted workspace's: runs in the sandbox
    on_host: bool = False  # the person's, run as them in a workspace they trusted (user config)
    sampling: bool = False  # it may ask heph's model during its calls (user config)

    @property
    def digest(self) -> str:
        """The entry's hash: its tool list is cached under it, so a changed entry is asked
        again."""
        import hashlib
        import json

        data = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(data).hexdigest()[:16]

    def offers(self, tool: str) -> bool:
        """Whether the entry lets the model see the server's tool `tool`."""
        allowed = self.enabled_tools is None or tool in self.enabled_tools
        return allowed and tool not in self.disabled_tools


def mcp_servers(table: Any, where: str, *, in_workspace: bool) -> dict[str, McpServerConfig]:
    """The servers of an `[mcp_servers]` table, checked; ConfigError naming what is wrong."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [mcp_servers] must be a table of servers")
    servers = {}
    for name, entry in table.items():
        at = f"{where} [mcp_servers.{name}]"
        if not NAME.match(str(name)):
            raise ConfigError(f"{at}: a server's name is letters, digits, - and _ (at most 32)")
        if not isinstance(entry, dict):
            raise ConfigError(f"{at}: expected a table")
        servers[name] = _server(name, entry, at, in_workspace)
    return servers


def _server(name: str, entry: dict[str, Any], at: str, in_workspace: bool) -> McpServerConfig:
    values: dict[str, Any] = {}
    for key, value in entry.items():
        check_known(key, KEYS, at)
        if key in STRING_KEYS and not isinstance(value, str):
            raise ConfigError(f"{at}: '{key}' must be a string")
        if key in LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{at}: '{key}' must be a list of strings")
            value = tuple(value)
        if key in NUMBER_KEYS and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ConfigError(f"{at}: '{key}' must be a number of seconds")
        if key == PORT_KEY and (type(value) is not int or not 0 < value < 65536):
            raise ConfigError(f"{at}: '{key}' must be a port number (1 to 65535)")
        if key in FLAGS and not isinstance(value, bool):
            raise ConfigError(f"{at}: '{key}' must be true or false")
        if key == "env":
            value = _env(value, at, in_workspace)
        if key in HEADER_KEYS:
            value = _headers(key, value, at)
        values[key] = value
    if bool(values.get("command")) == bool(values.get("url")):
        raise ConfigError(f"{at}: give either 'command' (a stdio server) or 'url'")
    for key in HEADER_KEYS:
        if values.get(key) and not values.get("url"):
            raise ConfigError(f"{at}: '{key}' is for a server at a 'url'")
    if in_workspace:
        _tokens_stay_the_persons(values, at)
        _named_in_env(values, at)
    if in_workspace and values.get("on_host"):
        raise ConfigError(
            f"{at}: 'on_host' is for your user config only (a workspace's servers run in the "
            "sandbox)"
        )
    if in_workspace and values.get("sampling"):
        raise ConfigError(
            f"{at}: 'sampling' is for your user config only (a workspace may not spend your "
            "model's tokens)"
        )
    if in_workspace and values.get("read_only_tools"):
        raise ConfigError(
            f"{at}: 'read_only_tools' is for your user config only (a workspace may not say "
            "which of a server's calls run unasked in every mode)"
        )
    return McpServerConfig(name, **values, from_workspace=in_workspace)


def _headers(key: str, value: Any, at: str) -> tuple[tuple[str, str], ...]:
    """`http_headers` (header = value) or `env_http_headers` (header = the variable)."""
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f"{at}: '{key}' must be a table of strings")
    for name, text in value.items():
        if not HEADER_NAME.match(name):
            raise ConfigError(f"{at}: {key}: {name!r} is not an HTTP header name")
        if "\r" in text or "\n" in text:
            raise ConfigError(f"{at}: {key}: the value of {name} holds a line break")
        if key == "env_http_headers" and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
            raise ConfigError(f"{at}: env_http_headers: {name} names no variable ({text!r})")
    return tuple(sorted(value.items()))


def _tokens_stay_the_persons(values: dict[str, Any], at: str) -> None:
    """A workspace's entry never chooses which of the person's tokens goes to its URL."""
    from hephaistus.redact import CREDENTIAL_TEXT, SECRET_NAME

    tokens = ("bearer_token_env_var", "env_http_headers", *OAUTH_KEYS)
    chosen = [key for key in tokens if values.get(key)]
    if VARIABLE.search(values.get("url", "")):
        chosen.append("a variable in 'url'")
    for name, text in values.get("http_headers", ()):
        if VARIABLE.search(text):
            chosen.append(f"a variable in http_headers {name}")
        elif (
            SECRET_NAME.search(name)
            or CREDENTIAL_TEXT.search(text)
            or name.lower() == ("authorization")
        ):
            raise ConfigError(
                f"{at}: http_headers {name} holds a literal secret; a workspace's file may not "
                "hold one, nor choose one of yours (put the server in your user config)"
            )
    if chosen:
        raise ConfigError(
            f"{at}: {chosen[0]} is for your user config only (a workspace may not choose which "
            "of your tokens goes to its URL)"
        )


def _named_in_env(values: dict[str, Any], at: str) -> None:
    """A workspace entry's `command` and `args` use only the variables its `env` names."""
    named = {key for key, _ in values.get("env", ())}
    for text in (values.get("command", ""), *values.get("args", ())):
        for match in VARIABLE.finditer(text):
            if match.group(1) not in named:
                raise ConfigError(
                    f"{at}: {match.group(0)} in command or args: a workspace's entry uses only "
                    "the variables its env names"
                )


def _env(value: Any, at: str, in_workspace: bool) -> tuple[tuple[str, str], ...]:
    from hephaistus.redact import CREDENTIAL_TEXT, SECRET_NAME

    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f"{at}: 'env' must be a table of strings")
    for key, text in value.items():
        references = [match.group(1) for match in VARIABLE.finditer(text)]
        literal = not references
        if in_workspace and literal and (SECRET_NAME.search(key) or CREDENTIAL_TEXT.search(text)):
            raise ConfigError(
                f"{at}: env {key} holds a literal secret; a workspace's file may only name one "
                f'from the environment ({key} = "${{{key}}}")'
            )
        if in_workspace and MODEL_KEY in references:
            raise ConfigError(
                f"{at}: env {key} names {MODEL_KEY}, the key heph sends its model; a workspace's "
                "server never gets it (give it a key of its own in your user config)"
            )
    return tuple(sorted(value.items()))


def expanded_env(server: McpServerConfig, environ: dict[str, str]) -> dict[str, str]:
    """The entry's `env` with each `${VAR}` (`${VAR:-default}`) taken from `environ` (a value
    that is one missing variable: left out). A workspace's server never gets the model's key,
    under whatever name it is exported."""
    env = {}
    model_key = environ.get(MODEL_KEY)
    for key, text in server.env:
        reference = REFERENCE.match(text)
        if reference is not None and reference.group(1) not in environ:
            continue
        value = expand(text, environ)
        if not (server.from_workspace and model_key and model_key in value):
            env[key] = value
    return env


def expand(text: str, environ: dict[str, str]) -> str:
    """`text` with each `${VAR}` and `${VAR:-default}` taken from `environ` (unset or empty:
    the default, else nothing)."""
    return VARIABLE.sub(lambda match: environ.get(match.group(1)) or match.group(2) or "", text)


def live(server: McpServerConfig, environ: dict[str, str]) -> McpServerConfig:
    """The entry as its server is started or reached: variables expanded (a workspace's from
    its own `env` only), and `env_http_headers` become headers with their variables' values
    (an unset one is left out)."""
    from dataclasses import replace

    variables = expanded_env(server, environ) if server.from_workspace else environ
    headers = [(name, expand(text, variables)) for name, text in server.http_headers]
    headers += [(name, environ[var]) for name, var in server.env_http_headers if environ.get(var)]
    return replace(
        server,
        command=expand(server.command, variables),
        args=tuple(expand(arg, variables) for arg in server.args),
        url=expand(server.url, variables),
        http_headers=tuple(headers),
        env_http_headers=(),
    )
