"""The run's policy: its mode, what the person approved, and who can be asked.

It decides each prepared effect (a Proposal) with the permission table: carried out, shown only
(--dry-run), declined by the person, refused (it would ask, and no one can be asked), or denied
by the mode. The terminal prompt (ui.approval) is its Asker and only asks. A policy made with
nothing given asks no one, so it refuses what would be asked: it never approves by default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from hephaistus.settings.permissions import ANY_NAME, DEFAULT_MODE, Verdict, approval_key, decide

if TYPE_CHECKING:
    from hephaistus.settings.approvals import SavedApprovals
    from hephaistus.values import Proposal

Answer = Literal["yes", "no", "session", "all", "forever"]
# yes: this once; no: not this; session: this effect and name for the rest of the run or chat;
# all: this effect, any name, for the rest of the run or chat; forever: session, and saved for
# the workspace (in the user's state folder).

Decision = Literal["allow", "skip", "decline", "refuse", "deny"]


class Asker(Protocol):
    """Asks the person about a prepared effect; EOFError when no answer can come."""

    def __call__(self, proposal: Proposal) -> Answer: ...


@dataclass
class Policy:
    """What runs unasked, what is asked and what is refused, for one run or chat."""

    mode: str = DEFAULT_MODE
    dry_run: bool = False  # writes and commands are shown, never done
    asker: Asker | None = None  # None: no one can be asked (no terminal)
    saved: SavedApprovals | None = None  # the person's approvals for good, for this workspace
    approved: set[str] = field(default_factory=set)  # for the rest of this run or chat
    # Whether a command would run in a sandbox (or unsandboxed as the person chose); where none
    # works, every command is asked about, whatever the mode and the approvals: fail closed.
    contained: Callable[[], bool] = lambda: True

    def verdict(self, effect: str, name: str = "") -> Verdict:
        """allow, ask or deny for `effect` (and `name`) now. Approvals saved for good count only
        where someone could have been asked: a run without a terminal does what its mode says."""
        approved = set(self.approved)
        if self.asker is not None and self.saved is not None:
            approved |= self.saved.allowed
        verdict = decide(self.mode, effect, name, approved)
        if effect == "command" and verdict == "allow" and not self.contained():
            return "ask"  # no sandbox: nothing runs unasked
        return verdict

    def decide(self, proposal: Proposal, hooked: str | None = None) -> Decision:
        """What happens to `proposal`; asks the person when the table says so. A PreToolUse
        hook's `hooked` decision (allow or ask) changes what would be asked or allowed, never
        a denial, nor the question asked of every command where there is no sandbox."""
        verdict = self.verdict(proposal.effect, proposal.name)
        if verdict == "deny":
            return "deny"
        uncontained = proposal.effect == "command" and not self.contained()
        if hooked == "allow" and not uncontained:
            verdict = "allow"
        elif hooked == "ask":
            verdict = "ask"
        if self.dry_run:
            return "skip"
        if verdict == "allow":
            return "allow"
        if self.asker is None:
            return "refuse"
        try:
            answer = self.asker(proposal)
        except EOFError:
            return "refuse"
        if answer == "no":
            return "decline"
        if proposal.effect == "command" and not self.contained():
            return "allow"  # this once: without a sandbox, the next command is asked about too
        self._remember(answer, proposal)
        return "allow"

    def _remember(self, answer: Answer, proposal: Proposal) -> None:
        if answer in ("session", "forever"):
            self.approved.add(approval_key(proposal.effect, proposal.name))
        if answer == "all":
            self.approved.add(approval_key(proposal.effect, ANY_NAME))
        if answer == "forever" and self.saved is not None:
            self.saved.allow(proposal.effect, proposal.name)

    def forget(self) -> None:
        """Drop the approvals of this run or chat and those saved for the workspace."""
        self.approved.clear()
        if self.saved is not None:
            self.saved.clear()
