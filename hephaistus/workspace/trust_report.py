"""What `heph trust` and a run in an untrusted workspace say: the workspace's trust state, the
settings that need trust, and what trusting changes (and what it never does)."""

from __future__ import annotations

from pathlib import Path

from hephaistus.workspace.trust import (
    NAMED_AT_MOST,
    NO_HOOKS,
    Decision,
    Setting,
    TrustStore,
    is_hook,
    listing,
)

EXTENSIONS = ("hooks", "command", "skill")


def notice(decision: Decision) -> str:
    """The one line said when an untrusted workspace's settings were left out (the first few
    named; `heph trust --show` lists them all)."""
    by_source: dict[str, list[str]] = {}
    # The files commands name are for --show; hooks, command files and skills are settings.
    settings = [s for s in decision.settings if not s.proof or s.key in EXTENSIONS]
    for setting in settings[:NAMED_AT_MOST]:
        by_source.setdefault(setting.source, []).append(setting.key)
    listed = "; ".join(f"{', '.join(keys)} ({source})" for source, keys in by_source.items())
    if len(settings) > NAMED_AT_MOST:
        listed += f"; and {len(settings) - NAMED_AT_MOST:,} more"
    why = {
        "changed": "its settings changed since you trusted it",
        "declined": "you chose not to trust it",
    }.get(decision.state, "it is not trusted")
    return (
        f"heph: ignoring settings of this workspace's files because {why}: {listed}. "
        "`heph trust` shows them and trusts it"
    )


# What trusting a workspace with nothing to trust changes, and what it never does.
MCP_AS_YOU = (
    "your MCP servers whose entry says on_host = true run as you here (in the sandbox still "
    "where their command would run this workspace's code)"
)


def report(root: Path, settings: list[Setting], state: str, store: TrustStore) -> str:
    """The workspace's trust state and every setting that needs trust, for `heph trust`."""
    if not settings:
        yours = (
            f"trusted since {store.when(root)}: {MCP_AS_YOU}"
            if state == "trusted"
            else "not trusted by you: your MCP servers run in the sandbox here (`heph trust "
            "--yes` lets those whose entry says on_host = true run as you)"
        )
        return (
            f"{root}: its files hold no settings that need trust; all of them apply "
            "(a .heph.toml or [tool.hephaistus] that sets base_url, model, commands, "
            f"pass_env, allow_secrets, instructions, ... would)\n{yours}; {NO_HOOKS}"
        )
    described = {
        "trusted": f"trusted since {store.when(root)}: these settings apply",
        "changed": "not trusted: you trusted it once, but its settings changed since (+ new "
        "or changed, - gone); they apply once you trust it again",
        "declined": f"not trusted (you said no on {store.when(root)}): these settings are ignored",
        "unknown": "not trusted: these settings are ignored until you trust it",
    }[state]
    before = store.answered(root) if state == "changed" else None
    lines = [f"{root}: {described}", *listing(settings, before)]
    if any(is_hook(setting) for setting in settings):
        lines.append(NO_HOOKS)  # the hooks listed are git's to run for you, never heph's
    if state != "trusted":
        lines.append("`heph trust` trusts it; `heph --trust ...` for one run")
    return "\n".join(lines)
