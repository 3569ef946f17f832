"""Settings, merged from flags > environment > workspace config > user config > defaults.

The workspace config is `.heph.toml` or `[tool.hephaistus]` in the workspace's `pyproject.toml`;
the user config is `config.toml` in the platform's config folder (`~/.config/hephaistus` on
Linux, honouring XDG_CONFIG_HOME; see userdirs). An unknown key or a value of the wrong type
(see config_values) is an error that names the file and the key.

A workspace's files are someone else's text until the person trusts the workspace (see trust):
until then only their harmless keys apply (a field marked `harmless`), and every other one is
left out. Where each value came from is kept for `-v`.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from hephaistus.errors import ConfigError
from hephaistus.settings.config_sections import (
    DocsConfig,
    SandboxConfig,
    check_docs_table,
    check_sandbox_table,
    mode_asking_more,
    sandbox_keys,
    without_hooks,
)
from hephaistus.settings.config_values import check_known, check_type, coerce, documented
from hephaistus.settings.permissions import DEFAULT_MODE, MODES

if TYPE_CHECKING:
    from hephaistus.settings.mcp_config import McpServerConfig

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

LOCAL_PLACEHOLDER_KEY = "heph-local"


DEFAULT_MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class Config:
    """Everything a run needs to know that is not the task itself."""

    model: str = field(
        default=DEFAULT_MODEL, metadata=documented("model name sent to the endpoint")
    )
    base_url: str | None = field(
        default=None, metadata=documented("OpenAI-compatible endpoint; unset means api.openai.com")
    )
    mode: str = field(
        default="ask",
        metadata=documented(
            "what runs unasked: ask, edits, plan or auto (a workspace's files: only a mode "
            "that asks more than yours)",
            harmless=True,
        ),
    )
    max_steps: int = field(
        default=20, metadata=documented("model requests allowed for one task", harmless=True)
    )
    timeout: float = field(
        default=120.0, metadata=documented("seconds to wait for a model reply", harmless=True)
    )
    connect_timeout: float = field(
        default=10.0, metadata=documented("seconds to wait to connect", harmless=True)
    )
    max_retries: int = field(
        default=4,
        metadata=documented("retries of a model call after a transient fault", harmless=True),
    )
    stream: bool = field(
        default=False, metadata=documented("stream model replies as they are made", harmless=True)
    )
    json_mode: bool = field(
        default=True,
        metadata=documented("ask the endpoint for JSON mode (response_format)", harmless=True),
    )
    structured: str = field(
        default="auto",
        metadata=documented(
            "send the step's JSON schema for the server to enforce: auto (to servers known to "
            "enforce it), schema, json (JSON mode only) or off",
            harmless=True,
        ),
    )
    observation_limit: int = field(
        default=16_000,
        metadata=documented("bytes of a tool's output the model sees", harmless=True),
    )
    context_window: int | None = field(
        default=None,
        metadata=documented(
            "the model's context window in tokens (default: known or 32k)", harmless=True
        ),
    )
    map_tokens: int = field(
        default=1000, metadata=documented("tokens for the workspace map", harmless=True)
    )
    max_reply_tokens: int | None = field(
        default=None,
        metadata=documented(
            "the reply limit sent with every request (default: a quarter of the "
            "window, at most 4096)"
        ),
    )
    allow_secrets: bool = field(
        default=False, metadata=documented("let tools read .env*, *.pem, *.key and id_* files")
    )
    docs: DocsConfig = field(
        default_factory=DocsConfig, metadata=documented("heph docs settings", harmless=True)
    )
    mcp_servers: tuple[McpServerConfig, ...] = field(
        default=(), metadata=documented("MCP tool servers: [mcp_servers.NAME] tables")
    )
    sandbox: SandboxConfig = field(
        default_factory=SandboxConfig, metadata=documented("how commands are contained")
    )
    commands: tuple[tuple[str, str], ...] = field(
        default=(),
        metadata=documented("[commands]: project commands by name, e.g. test = 'pytest -q'"),
    )
    command_timeout: float = field(default=300.0, metadata=documented("seconds a command may run"))
    test_cmd: str | None = field(default=None, metadata=documented("the test command (--test-cmd)"))
    verify_after_edits: tuple[str, ...] = field(
        default=(),
        metadata=documented("commands to run after a turn that wrote files, e.g. ['test']"),
    )
    verify_retries: int = field(
        default=2, metadata=documented("times the model may fix what those commands report")
    )
    pass_env: tuple[str, ...] = field(
        default=(),
        metadata=documented(
            "environment variables (glob patterns) commands may see, "
            "beyond the usual ones, e.g. ['DJANGO_*']; a credential only when named "
            "exactly (no glob), the model's key never"
        ),
    )
    instructions: tuple[str, ...] = field(
        default=(),
        metadata=documented(
            "files of project instructions for the model, instead of AGENTS.md "
            "(else CLAUDE.md, CONVENTIONS.md) at the root and on the way to the files in play"
        ),
    )
    todo: bool = field(
        default=True, metadata=documented("offer the todo_write tool to the model", harmless=True)
    )
    # Not settable from files: from the environment only, never in a file that may be committed.
    api_key: str | None = field(default=None, repr=False, metadata=documented(""))
    # Not settable either: where each value came from ("base_url" → "environment variable
    # OPENAI_BASE_URL"), whether the workspace's files counted whole (trusted, or no need).
    sources: tuple[tuple[str, str], ...] = field(default=(), metadata=documented(""))
    workspace_trusted: bool = field(default=False, metadata=documented(""))
    ignored: tuple[str, ...] = field(default=(), metadata=documented(""))  # settings left out, why

    is_local = property(lambda self: is_loopback_url(self.base_url))

    @property
    def chosen_model(self) -> str | None:
        """The model the user set (flag, environment or file, even the default's); or None."""
        if self.source_of("model") != "default":
            return self.model
        return self.model if self.model != DEFAULT_MODEL else None

    def source_of(self, key: str) -> str:
        """Where the value of `key` came from ("default" when nothing set it)."""
        return dict(self.sources).get(key, "default")

    @property
    def endpoint_url(self) -> str:
        """Where the requests go: the configured endpoint, else OpenAI's."""
        return (self.base_url or OPENAI_URL).rstrip("/")

    def resolved_api_key(self) -> str | None:
        """The key to send: the configured one, or a placeholder for a loopback server."""
        if self.api_key:
            return self.api_key
        return LOCAL_PLACEHOLDER_KEY if self.is_local else None


OPENAI_URL = "https://api.openai.com/v1"
STRUCTURED = ("auto", "schema", "json", "off")
NOT_IN_FILES = {"api_key", "sources", "workspace_trusted", "ignored"}
FILE_KEYS = {f.name for f in fields(Config)} - NOT_IN_FILES | {"hooks"}  # hooks.definitions
HARMLESS_KEYS = {f.name for f in fields(Config) if f.metadata.get("harmless")}
LIST_KEYS = {"verify_after_edits", "pass_env", "instructions"}  # lists of strings in a file
WORKSPACE_FILES = (("pyproject.toml", ("tool", "hephaistus")), (".heph.toml", None))

ENV_KEYS = {
    "HEPH_MODEL": "model",
    "OPENAI_BASE_URL": "base_url",
    "HEPH_MAX_STEPS": "max_steps",
    "HEPH_TIMEOUT": "timeout",
    "OPENAI_API_KEY": "api_key",
}


def is_loopback_url(url: str | None) -> bool:
    """Whether `url` names this machine (localhost, 127.0.0.0/8, ::1); False for a bad one."""
    if not url:
        return False
    try:
        host = urlparse(url).hostname or ""
    except ValueError:  # "http://[::1:bad": not a URL at all
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def user_config_path() -> Path:
    """The user's own config.toml, in the platform's config folder."""
    from hephaistus.settings.userdirs import config_dir

    return config_dir() / "config.toml"


def find_workspace(start: Path) -> Path:
    """The git top-level containing `start`, else `start` itself. A `.git` of another user's
    is no repository of the person's (an attacker's `/tmp/.git` on a shared machine): as git's
    own `safe.directory` check, heph does not take its folder for the workspace."""
    start = start.resolve()
    for folder in (start, *start.parents):
        marker = folder / ".git"
        if marker.exists():
            return folder if owned_by_me(marker) else start
    return start


def owned_by_me(path: Path) -> bool:
    """Whether this user owns `path` (always, where the system has no owners)."""
    if not hasattr(os, "geteuid"):
        return True
    try:
        return os.lstat(path).st_uid == os.geteuid()
    except OSError:
        return False


def workspace_tables(workspace: Path) -> list[tuple[str, dict[str, Any]]]:
    """The workspace's config tables, checked, lowest precedence first, each with its name as
    shown to the person: `pyproject.toml [tool.hephaistus]`, then `.heph.toml`."""
    tables = []
    for name, table in WORKSPACE_FILES:
        found = _read_toml_table(workspace / name, table)
        if found:
            shown = f"{name} [{'.'.join(table)}]" if table else name
            tables.append((shown, found))
    return tables


def needs_trust(key: str) -> bool:
    """Whether a workspace file's top-level `key` applies only in a trusted workspace: every
    key not marked harmless, so a key added later needs trust until someone decides otherwise."""
    return key not in HARMLESS_KEYS


def load_config(
    workspace: Path,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    trusted: bool = False,
) -> Config:
    """Merge every source, lowest precedence first. The workspace's files count whole only
    when `trusted`; otherwise their keys that need trust are left out."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    docs: dict[str, Any] = {}
    sandbox: dict[str, Any] = {}
    servers: dict[str, McpServerConfig] = {}
    sources: dict[str, str] = {}
    ignored: list[str] = []
    user_path = user_config_path()
    layers = [(f"the user config {user_path}", _read_toml_table(user_path, None), True)]
    in_workspace = workspace_tables(workspace)
    layers += [(source, table, trusted) for source, table in in_workspace]
    own_mode = layers[0][1].get("mode", DEFAULT_MODE)  # the person's: their file's, or the default
    chosen = bool((flags or {}).get("mode"))  # --mode or --yes: what a file says is moot
    for source, found, whole in layers:
        if source in dict(in_workspace) and "mode" in found:
            found = mode_asking_more(found, source, own_mode, ignored, quiet=chosen)
        if not whole:
            found = {key: value for key, value in found.items() if not needs_trust(key)}
        found = without_hooks(found, source, in_workspace, ignored)  # hooks: hooks.definitions
        docs.update(found.pop("docs", {}))
        if "mcp_servers" in found:  # a later file's entry of a name replaces the earlier's
            from hephaistus.settings.mcp_config import mcp_servers

            servers.update(
                mcp_servers(found.pop("mcp_servers"), source, in_workspace=source != layers[0][0])
            )
        sandbox.update(sandbox_keys(found.pop("sandbox", {}), source, in_workspace, ignored))
        if "commands" in found:
            merged = dict(values.get("commands", ()))
            merged.update(found["commands"])
            values["commands"] = tuple(merged.items())
            sources.update({f"commands.{name}": source for name in found.pop("commands")})
        for key in LIST_KEYS & found.keys():
            values[key] = tuple(found.pop(key))
            sources[key] = source
        values.update(found)
        sources.update(dict.fromkeys(found, source))
    for var, key in ENV_KEYS.items():
        raw = environ.get(var)
        if raw:
            values[key] = coerce(key, raw, f"environment variable {var}", Config)
            sources[key] = f"environment variable {var}"
    for key, value in (flags or {}).items():
        if value is not None:
            values[key] = value
            sources[key] = FLAG_NAMES.get(key, f"--{key.replace('_', '-')}")
    if "ignore" in docs:
        docs["ignore"] = tuple(docs["ignore"])
    return replace(
        Config(),
        **values,
        docs=replace(DocsConfig(), **docs),
        sandbox=replace(SandboxConfig(), **sandbox),
        mcp_servers=tuple(servers.values()),
        sources=tuple(sources.items()),
        workspace_trusted=trusted,
        ignored=tuple(ignored),
    )


FLAG_NAMES = {"verify_after_edits": "--check-after-edits"}


def trust_requiring(table: dict[str, Any]) -> list[tuple[str, Any]]:
    """(key, value) of each setting of a workspace table that needs trust, a command each."""
    found: list[tuple[str, Any]] = []
    for key, value in table.items():
        if key == "commands":
            found += [(f"commands.{name}", command) for name, command in value.items()]
        elif needs_trust(key):
            found.append((key, value))
    return found


def _read_toml_table(path: Path, table: tuple[str, ...] | None) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None
    where = str(path)
    for part in table or ():
        data = data.get(part, {}) if isinstance(data, dict) else None
        where = f"{path} [{'.'.join(table or ())}]"
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table")
    for key, value in data.items():
        check_known(key, FILE_KEYS, where)
        if key == "docs":
            check_docs_table(value, f"{where} [docs]")
        elif key == "sandbox":
            check_sandbox_table(value, f"{where} [sandbox]")
        elif key == "mcp_servers":
            from hephaistus.settings.mcp_config import mcp_servers

            mcp_servers(value, where, in_workspace=False)  # its own checks; load adds the rest
        elif key == "commands":
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items()
            ):
                raise ConfigError(f'{where} [commands]: each entry must be name = "command"')
        elif key in LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: '{key}' must be a list of strings")
        elif key == "structured":
            if value not in STRUCTURED:
                raise ConfigError(f"{where}: 'structured' must be one of {', '.join(STRUCTURED)}")
        elif key == "mode":
            if value not in MODES:
                raise ConfigError(
                    f"{where}: 'mode' must be one of {', '.join(MODES)} (auto only in your "
                    "user config or a flag)"
                )
        elif key != "hooks":  # hooks.definitions reads and checks the person's
            check_type(key, value, where, Config)
    return dict(data)
