"""Setting a workspace up: `heph models` (which model), `heph init` (an AGENTS.md) and
`heph trust` (whether its own settings apply)."""

from __future__ import annotations

import argparse
import sys

from hephaistus.cli.common import (
    describe_endpoint,
    opened,
    print_table,
    read_only,
    say,
    workspace_of,
)
from hephaistus.errors import ConfigError, HephError


def models(args: argparse.Namespace) -> int:
    """The endpoint's models (a local server found when none is set), the configured one
    marked, with the context window where the server tells it, and whether it enforced the
    step's schema for each (enforced, not enforced, or unknown until a task tried)."""
    from dataclasses import replace

    from hephaistus.model.discovery import ListingError, list_models
    from hephaistus.model.endpoint import check_base_url

    done = opened(args)
    workspace, config = done.workspace, done.config
    check_base_url(config)
    if not config.resolved_api_key():
        from hephaistus.model.endpoint import local_server

        found = local_server()
        say(f"heph: {found.name} at {found.base_url} (found on this machine)", sys.stderr)
        config = replace(config, base_url=found.base_url)
    if args.verbose:
        say(f"heph: {describe_endpoint(config)}", sys.stderr)
    url = config.endpoint_url
    try:
        models = list_models(url, config.resolved_api_key())
    except ListingError as error:
        raise HephError(str(error)) from None
    from hephaistus.model.endpoint import model_used, served_window

    if config.is_local:
        models = [
            m if m.window else replace(m, window=served_window(url, m.id, config)) for m in models
        ]
    from hephaistus.model.serverinfo import remembered_window, schema_verdicts

    windows = workspace.heph_dir / "cache" / "windows.json"  # what a task learned: an overflow
    models = [
        m if m.window else replace(m, window=remembered_window(windows, url, m.id)) for m in models
    ]

    verdicts = schema_verdicts(workspace.heph_dir / "cache" / "schema.json", url)
    models = [replace(m, schema=verdicts.get(m.id, "unknown")) for m in models]
    configured = model_used(config, [m.id for m in models])
    if args.json:
        from hephaistus.ui.render import print_json

        listed = [{**m.__dict__, "configured": m.id == configured} for m in models]
        print_json({"base_url": url, "models": listed})
        return 0
    from hephaistus.ui.tables import models_table

    print_table(models_table(models, configured))
    if configured and configured not in {m.id for m in models}:
        say(f"heph: the configured model {configured} is not among them", sys.stderr)
    return 0


def init(args: argparse.Namespace) -> int:
    """Draft an AGENTS.md from what heph can see; written as any write is: shown, approved."""
    from hephaistus.docs.agents_md import create
    from hephaistus.errors import Refused
    from hephaistus.ui.approval import TerminalAsker
    from hephaistus.ui.render import ConsoleSink

    done = opened(args)
    workspace, config = done.workspace, done.config
    if read_only(workspace) and not args.dry_run:
        raise ConfigError(
            f"{workspace.root} is read-only for you: heph init cannot write AGENTS.md there "
            "(--dry-run shows it)"
        )
    if config.mode == "plan" and not args.dry_run:
        raise ConfigError(
            "heph init writes AGENTS.md, and plan mode never writes: --dry-run shows it"
        )
    sink = ConsoleSink(verbose=args.verbose, quiet=args.quiet)
    asker = TerminalAsker(sink) if sys.stdin.isatty() else None
    result, _ = create(workspace, config, done.policy(asker, dry_run=args.dry_run), sink)
    if args.dry_run:
        say("dry run: AGENTS.md was not written", sys.stderr)
    elif result.refused:
        from hephaistus.cli.task import unblocking

        raise Refused(f"{result.output}. {unblocking(result.output)}")
    elif not result.ok:
        raise HephError(result.output)
    else:
        say("wrote AGENTS.md: add what only you know (what not to touch, how to release)")
    return 0


def trust(args: argparse.Namespace) -> int:
    """Show the settings of the workspace's files that need trust, and record the person's
    answer (asked in a terminal; `--yes` without one). Never contacts the model."""
    from hephaistus.errors import Refused
    from hephaistus.workspace import trust, trust_report

    workspace = workspace_of(args)
    root = workspace.root
    store = trust.TrustStore()
    if args.forget:
        had = store.forget(root)
        say(f"{'forgot' if had else 'there was no'} trust answer for {root}", sys.stderr)
        return 0
    settings = trust.settings_needing_trust(root)
    state = store.state(root, settings)
    if args.show or state == "trusted" or (not settings and not args.yes):
        say(trust_report.report(root, settings, state, store))
        return 0
    if args.yes:  # what is trusted is said, even when nobody is asked
        if settings:  # (with none, the line below says what the yes changes)
            say(trust_report.report(root, settings, state, store))
        answer: bool | None = True
    elif sys.stdin.isatty():
        from hephaistus.ui.approval import ask_on_stderr

        before = store.answered(root) if state == "changed" else None
        answer = trust.ask_to_trust(settings, ask_on_stderr, before=before)
    else:
        say(trust_report.report(root, settings, state, store))
        raise Refused("no terminal to ask in: pass --yes to trust this workspace")
    if answer is None:
        raise Refused("no answer: the workspace stays untrusted")
    store.record(root, settings, answer)
    if answer and not settings:  # nothing to apply: the person's own programs run as them
        say(f"trusted {root}: {trust_report.MCP_AS_YOU}; {trust.NO_HOOKS}")
    elif answer:
        say(f"trusted {root}: these settings apply from now on, until they change")
    else:
        say(f"not trusted: heph ignores these settings in {root}")
    return 0
