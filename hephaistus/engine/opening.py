"""Opening a workspace, in one step for every door (a task, the chat, `heph acp`, the
subcommands): from a folder and the person's options to the workspace settled (its root checked,
heph's own programs and its repository found once, before anything else looks), the trust
decision (asked where someone can answer), the settings that decision allows (with the endpoint
and model when a model will be asked), and what to tell the person about them. From the opened
workspace come the run's policy and its Agent, with the sink and asker of the door.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hephaistus.errors import ConfigError

if TYPE_CHECKING:
    from hephaistus.engine.agent import Agent
    from hephaistus.eventsink import EventSink
    from hephaistus.hooks.definitions import Hook
    from hephaistus.runtime.policy import Asker, Policy
    from hephaistus.settings.approvals import SavedApprovals
    from hephaistus.settings.config import Config
    from hephaistus.workspace import Workspace
    from hephaistus.workspace.trust import Decision


def settle(root: Path) -> Workspace:
    """The workspace at `root`, refused inside a folder whose files heph never touches; heph's
    own programs and the repository are settled before the trust decision reads either."""
    from hephaistus.runtime.gitlocation import settle as locate_repository
    from hephaistus.runtime.programs import settle as settle_programs
    from hephaistus.workspace import Workspace, protected_part

    workspace = Workspace.at(root)
    inside = protected_part(workspace.root.parts)
    if inside:
        raise ConfigError(
            f"{workspace.root} is inside a {inside}/ folder, whose files heph never reads or "
            "writes; run heph in the project folder around it"
        )
    settle_programs(workspace.root)  # from no folder the workspace holds
    locate_repository(workspace.root)  # once: see gitlocation.settle
    return workspace


@dataclass
class Opened:
    """A workspace opened: settled, decided on, configured; `said` is what to tell the person
    before the first answer (what trust left out, settings ignored, a mode a file chose)."""

    workspace: Workspace
    decision: Decision
    config: Config
    said: list[str] = field(default_factory=list)
    hooks: list[Hook] = field(default_factory=list)  # those that run here (hooks.in_force)

    def policy(
        self,
        asker: Asker | None = None,
        *,
        dry_run: bool = False,
        saved: SavedApprovals | None = None,
    ) -> Policy:
        """The run's policy: the settled mode, who is asked (None: nobody can be), what the
        person approved for good (the chat's)."""
        from hephaistus.runtime.policy import Policy

        return Policy(self.config.mode, dry_run=dry_run, asker=asker, saved=saved)

    def choose_model(self, tell: Callable[[str], None]) -> None:
        """Settle the endpoint (an http(s) URL, or a local server found when none is set) and
        the model; `tell` hears how."""
        from hephaistus.model.endpoint import check_base_url, with_endpoint

        check_base_url(self.config)
        self.config = with_endpoint(self.config, tell)

    def agent(self, sink: EventSink, policy: Policy, *, announce: bool = False) -> Agent:
        """The Agent that runs tasks here, reporting to `sink` under `policy`."""
        from hephaistus.engine.agent import Agent

        return Agent(
            self.workspace,
            self.config,
            sink=sink,
            policy=policy,
            announce=announce,
            hooks=self.hooks,
        )


def open_workspace(
    root: Path,
    flags: dict[str, Any] | None = None,
    *,
    for_this_run: bool = False,
    ask: Callable[[str], str] | None = None,
) -> Opened:
    """The workspace at `root` opened with the person's `flags` (None values left out):
    trusted for this run (`--trust`), asked through `ask` when it has settings that need
    trust, else opened without them (and `said` says so)."""
    from hephaistus.settings.config import load_config
    from hephaistus.workspace import trust, trust_report

    workspace = settle(root)
    decision = trust.decide(workspace.root, for_this_run=for_this_run, ask=ask)
    trust.enforce(workspace.root, decision)
    config = load_config(workspace.root, flags or {}, trusted=decision.trusted)
    said = [] if decision.trusted else [trust_report.notice(decision)]
    said += list(config.ignored)
    chosen_by = config.source_of("mode")
    if chosen_by.startswith(("pyproject.toml", ".heph.toml")):  # not the person's choice
        from hephaistus.settings.permissions import MEANING

        said.append(f"heph: {config.mode} mode, set by {chosen_by}: {MEANING[config.mode]}")
    from hephaistus.hooks import in_force

    # A workspace's hook is approved only by a question put to the person: never under auto.
    approver = ask if config.mode != "auto" else None
    hooks, unused = in_force(workspace.root, trusted=decision.trusted, ask=approver)
    said += unused
    return Opened(workspace, decision, config, [line for line in said if line], hooks)
