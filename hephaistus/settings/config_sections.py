"""The tables of a config file: `[docs]` (what `heph docs` checks and writes) and `[sandbox]`
(how the processes heph starts are contained), with their checks; and what of the person's own
choices a workspace's files may set (`[sandbox]` keys, `mode`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from hephaistus.errors import ConfigError
from hephaistus.settings.config_values import check_known, check_type, documented
from hephaistus.settings.permissions import asks_at_least


@dataclass(frozen=True)
class DocsConfig:
    """`[docs]` in .heph.toml, `[tool.hephaistus.docs]` in pyproject.toml: what `heph docs`
    checks."""

    include_private: bool = field(default=False, metadata=documented("check _private names too"))
    min_body_lines: int = field(
        default=0, metadata=documented("skip functions whose body has fewer lines than this")
    )
    ignore: tuple[str, ...] = field(
        default=(), metadata=documented("glob patterns of files not to check")
    )
    skip_tests: bool = field(default=True, metadata=documented("skip test files and folders"))
    style: str = field(
        default="auto",
        metadata=documented("docstring style to write: auto, google, numpy or sphinx"),
    )
    jobs: int = field(default=4, metadata=documented("files `--fix` asks the model about at once"))
    timeout: float = field(
        default=60.0, metadata=documented("seconds `--fix` waits for a reply about one file")
    )


DOC_STYLES = ("auto", "google", "numpy", "sphinx")


@dataclass(frozen=True)
class SandboxConfig:
    """`[sandbox]`: how every process heph starts is contained (see runtime.sandbox)."""

    enabled: bool = field(
        default=True,
        metadata=documented(
            "run commands in the sandbox (false: unsandboxed, warned at each start)"
        ),
    )
    network: bool = field(
        default=False, metadata=documented("let sandboxed commands use the network")
    )
    bwrap: str = field(default="bwrap", metadata=documented("the bubblewrap program to run"))


DOCS_KEYS = {f.name for f in fields(DocsConfig)}
SANDBOX_KEYS = {f.name for f in fields(SandboxConfig)}
USER_ONLY_SANDBOX_KEYS = {"enabled", "bwrap"}  # a workspace's files never choose these


def check_docs_table(table: Any, where: str) -> None:
    """A `[docs]` table as written, or ConfigError naming what is wrong."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table")
    for key, value in table.items():
        check_known(key, DOCS_KEYS, where)
        if key == "ignore":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: 'ignore' must be a list of glob patterns")
        elif key == "style":
            if value not in DOC_STYLES:
                raise ConfigError(f"{where}: 'style' must be one of {', '.join(DOC_STYLES)}")
        else:
            check_type(key, value, where, DocsConfig)


def check_sandbox_table(table: Any, where: str) -> None:
    """A `[sandbox]` table as written, or ConfigError naming what is wrong."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table")
    for key, value in table.items():
        check_known(key, SANDBOX_KEYS, where)
        check_type(key, value, where, SandboxConfig)


def sandbox_keys(
    table: dict[str, Any], source: str, in_workspace: list[Any], ignored: list[str]
) -> dict[str, Any]:
    """A `[sandbox]` table's keys that `source` may set: a workspace's files (trusted) may
    allow the network, never turn the sandbox off or choose the program that makes it."""
    if source not in dict(in_workspace):
        return table
    for key in USER_ONLY_SANDBOX_KEYS & table.keys():
        ignored.append(f"{source}: [sandbox] {key} is ignored: only your user config sets it")
    return {key: value for key, value in table.items() if key not in USER_ONLY_SANDBOX_KEYS}


def without_hooks(
    table: dict[str, Any], source: str, in_workspace: list[Any], ignored: list[str]
) -> dict[str, Any]:
    """A table without its `hooks` (the person's are read with the other hooks: see
    hooks.definitions); a workspace's file may not define any, and is told so."""
    if "hooks" in table and source in dict(in_workspace):
        ignored.append(
            f"{source}: hooks is ignored: a workspace keeps its hooks in .heph/hooks.json, "
            "which you approve one by one"
        )
    return {key: value for key, value in table.items() if key != "hooks"}


def mode_asking_more(
    found: dict[str, Any], source: str, own: str, ignored: list[str], *, quiet: bool
) -> dict[str, Any]:
    """A workspace table without its `mode` when that asks less than the person's own mode
    (`own`): a clone's `edits` never lifts the person's `ask`, and only the person chooses
    `auto`. Said in `ignored`, unless a flag chose the mode (`quiet`)."""
    mode = found["mode"]
    if mode != "auto" and asks_at_least(mode, own):
        return found
    if not quiet:
        ignored.append(
            f'{source}: mode = "{mode}" is ignored: a workspace\'s files may only ask more than '
            f"your own mode, {own}; only you choose {mode} (--mode {mode}"
            f"{', --yes' if mode == 'auto' else ''}, or mode in your user config)"
        )
    return {key: value for key, value in found.items() if key != "mode"}
