"""The tool runtime: the one call the loop makes per action.

It finds the tool, refuses it when the mode denies its effect (before it runs at all), checks
the arguments, runs it, and when the tool prepared an effect (a Proposal) has the policy allow,
ask about or refuse it and only then carries it out. The output is clipped to the observation
limit, made printable, and the call's effects go into the journal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hephaistus import wording
from hephaistus.eventsink import EventSink, NullSink
from hephaistus.hooks.calls import response_fields, tool_fields, updated_args
from hephaistus.runtime.journal import Journal
from hephaistus.runtime.policy import Decision, Policy
from hephaistus.settings.permissions import decide
from hephaistus.textfile import encodable
from hephaistus.tools import Registry, Tool, ToolContext
from hephaistus.values import (
    CommandRequest,
    CommitRequest,
    FileChange,
    Proposal,
    Request,
    ToolResult,
    clip,
)

if TYPE_CHECKING:
    from hephaistus.hooks.fired import Hooks

NOUN = {"write": "write", "command": "command", "git": "commit", "external": "tool call"}
WHAT_ASKS = {
    "write": "writing files",
    "command": "running commands",
    "git": "committing",
    "external": "calling outside tools",
}


class Runtime:
    """Runs the tools of one run or chat under one policy, into one journal."""

    def __init__(
        self,
        registry: Registry,
        context: ToolContext,
        policy: Policy | None = None,
        sink: EventSink | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        self.registry = registry
        self.context = context
        self.policy = policy or Policy()  # asks no one: what would be asked is refused
        self.sink = sink or NullSink()
        self.hooks = hooks  # the person's checks around each call (PreToolUse, PostToolUse)
        self.stopped: str | None = None  # a hook's `continue: false`: the run ends, this said

    @property
    def journal(self) -> Journal:
        return self.context.journal

    def denied(self) -> list[str]:
        """The tools the mode refuses whatever is approved: not offered to the model."""
        return denied_tools(self.registry, self.policy.mode)

    def call(self, name: str, args: dict[str, Any], limit: int | None = None) -> ToolResult:
        """Run tool `name` with `args` under the policy; its output at most `limit` bytes."""
        tool = self.registry.get(name)
        if tool is None:
            known = ", ".join(self.registry.names)
            result = ToolResult(False, f"unknown tool '{name}' (the tools are: {known})")
        elif self.policy.verdict(tool.effect, tool.name) == "deny":  # whatever was approved
            result = ToolResult(False, self._denial(tool), decision="deny")
        elif self.hooks is not None:
            result = self._hooked(tool, args)
        else:
            result = self.run_tool(tool, args)
        limit = self.context.observation_limit if limit is None else limit
        # An undecodable file name must not break the observation, the session or the screen.
        result = replace(result, output=clip(encodable(result.output), limit))
        self.journal.note(result)
        return result

    def run_tool(self, tool: Tool, args: dict[str, Any], hooked: str | None = None) -> ToolResult:
        """Run `tool`; what it prepared decided by the policy (and a hook's `hooked` word)."""
        self.context.read_only = self.policy.mode == "plan"  # plan mode's shell only looks
        prepared = tool(args, self.context)
        if isinstance(prepared, Proposal):
            return self._decide(tool, prepared, hooked)
        return prepared

    def _hooked(self, tool: Tool, args: dict[str, Any]) -> ToolResult:
        """The call between its hooks: PreToolUse first (it may block the call, decide its
        approval, rewrite its arguments or add a word for the model), then PostToolUse."""
        hooks, ctx = self.hooks, self.context
        assert hooks is not None
        root = ctx.workspace.root
        fields = tool_fields(tool.name, args, root, ctx.commands)
        before = hooks.fire("PreToolUse", fields, tool.name)
        self.stopped = before.stop
        why = before.blocked
        if why is None and before.permission == "deny":
            why = before.reason or "a hook denied it"
        if why is None and before.stop:
            why = f"a hook stopped the run: {before.stop}"
        if why is not None:
            return ToolResult(False, f"blocked by a hook: {why}; nothing was done", decision="deny")
        if before.updated_input is not None:
            changed = updated_args(args, before.updated_input, {a.name for a in tool.args}, root)
            if changed != args:
                self.sink.notice(f"a PreToolUse hook changed the {tool.name} call: {changed}")
            args, fields = changed, tool_fields(tool.name, changed, root, ctx.commands)
        if before.permission == "allow":
            self.sink.notice(f"a hook of yours approved the {tool.name} call ({before.allowed_by})")
        result = self.run_tool(tool, args, before.permission)
        if said := before.added_context():
            result = replace(result, output=f"{result.output}\n{said}")
        if hooks.any_for("PostToolUse", tool.name) and result.decision != "skip":
            result = self._after(tool, fields, result)
        return result

    def _after(self, tool: Tool, fields: dict[str, Any], result: ToolResult) -> ToolResult:
        """PostToolUse, inside a snapshot of the workspace: what its hooks change (a
        formatter) joins the call's changes, recorded with them and undone with them."""
        from hephaistus.records.snapshots import command_effects

        hooks, ctx = self.hooks, self.context
        assert hooks is not None
        snapshots = ctx.snapshots if not ctx.read_only else None
        taken = snapshots.take() if snapshots is not None else None
        answer = response_fields(result.ok, result.output)
        after = hooks.fire("PostToolUse", {**fields, **answer}, tool.name)
        made = command_effects(snapshots, taken, ctx.checkpoints) if snapshots and taken else ()
        output = result.output
        if made:
            output += _command_changes(made).replace("The command", "A PostToolUse hook")
        if after.blocked:
            output += f"\nA PostToolUse hook says: {after.blocked}"
        if said := after.added_context():
            output += f"\n{said}"
        self.stopped = self.stopped or after.stop
        diff = (result.diff or "") + "".join(c.diff for c in made) if made else result.diff
        return replace(result, output=output, changed=result.changed + made, diff=diff)

    def _decide(self, tool: Tool, proposal: Proposal, hooked: str | None = None) -> ToolResult:
        if self.hooks is not None and hooked != "allow":
            self._notify_if_asking(proposal)
        decision = self.policy.decide(proposal, hooked)
        if decision == "allow":
            try:
                result = self._carry_out(proposal)
            except Exception as exc:  # a tool never raises to the loop
                noun = NOUN.get(proposal.effect, proposal.effect)
                result = ToolResult(False, f"the {noun} failed: {type(exc).__name__}: {exc}")
            return replace(result, decision="allow")
        if decision == "skip" and proposal.diff:
            self.sink.show_diff(proposal.diff)
        return ToolResult(
            decision == "skip",
            self._not_done(decision, tool, proposal),
            proposal.diff,
            decision=decision,
            target=proposal.target,
        )

    def _carry_out(self, proposal: Proposal) -> ToolResult:
        """Do what was allowed. A command runs between two snapshots of the workspace: the
        files it created, changed or deleted become its effects (shown, journaled, undone)."""
        snapshots = self.context.snapshots
        # An MCP server may write the workspace too: its calls are snapshotted like commands.
        contained = proposal.effect in ("command", "external")
        if not contained or snapshots is None or self.context.read_only:
            return proposal.carry_out()  # a read-only command (plan mode's shell) changes nothing
        from hephaistus.records.snapshots import command_effects

        before = snapshots.take()
        watch = snapshots.watch_ignored()
        try:
            result = proposal.carry_out()
        except BaseException:  # Ctrl-C mid-command: what it changed so far is undoable
            command_effects(snapshots, before, self.context.checkpoints)
            raise
        made = command_effects(snapshots, before, self.context.checkpoints)
        ignored = snapshots.ignored_changes(watch)
        told = result.output + _command_changes(made)
        for remark in snapshots.remarks:  # a repository, setuid files, files too large to keep
            told += f"\n{remark}"
            self.sink.notice(remark)
        worth_telling = [name for name in ignored if not _regenerated(name)]
        if worth_telling:  # the model: not about the caches every test run remakes
            told += (
                "\nIt also changed what git ignores or nested repositories hold, which undo "
                f"does not take back: {wording.listed(worth_telling, IGNORED_NAMED)}"
            )
        if ignored:  # the person: all of it
            named = wording.listed(ignored, IGNORED_NAMED)
            self.sink.notice(
                f"the command changed ignored files or nested repositories (not undoable): {named}"
            )
        if not made:
            return replace(result, output=told)
        diff = "".join(c.diff for c in made)
        return replace(result, output=told, diff=diff, changed=result.changed + made)

    def _notify_if_asking(self, proposal: Proposal) -> None:
        """The Notification hooks hear that heph is about to ask the person."""
        asks = self.policy.verdict(proposal.effect, proposal.name) == "ask"
        if self.hooks is not None and asks and self.policy.asker and not self.policy.dry_run:
            message = f"heph needs your permission to {describe(proposal.request)}"
            self.hooks.fire(
                "Notification", {"message": message, "notification_type": "permission_prompt"}
            )

    def _not_done(self, decision: Decision, tool: Tool, proposal: Proposal) -> str:
        what = describe(proposal.request)
        noun = NOUN.get(proposal.effect, proposal.effect)
        mode = self.policy.mode
        if decision == "skip":
            return f"dry run: heph would {what}; {proposal.untouched}"
        if decision == "decline":
            return f"the user declined to {what}; {proposal.untouched}"
        if decision == "refuse":
            return (
                f"{noun} not approved: {proposal.untouched} ({tool.name}: {mode} mode asks "
                f"before {WHAT_ASKS.get(proposal.effect, noun)}, and there is no terminal to "
                "ask in)"
            )
        return f"{noun} denied: {proposal.untouched} ({mode} mode does not allow it)"

    def _denial(self, tool: Tool) -> str:
        mode = self.policy.mode
        said = f"{tool.name} is not available in {mode} mode; nothing was done."
        if mode == "plan":
            return (
                f"{said} Plan mode only reads: find out what is needed, then give the plan as "
                "your final answer (the user carries it out with /go)."
            )
        return said


IGNORED_NAMED = 5  # ignored paths a command changed, named in its observation


def _command_changes(made: tuple[FileChange, ...]) -> str:
    """The files a command created, changed or deleted, as its observation ends."""
    if not made:
        return ""
    named = ", ".join(
        f"{c.path}{' (new)' if c.created else ' (deleted)' if c.deleted else ''}" for c in made
    )
    return f"\nThe command changed these files: {named}"


def denied_tools(registry: Registry, mode: str) -> list[str]:
    """The tools of `registry` that `mode` refuses whatever is approved."""
    return [tool.name for tool in registry if decide(mode, tool.effect, tool.name) == "deny"]


def describe(request: Request) -> str:
    """What a prepared effect does, as a verb phrase: "change app.py", "run `test` (pytest)"."""
    if isinstance(request, FileChange):
        return request.describe()
    if isinstance(request, CommandRequest):
        return f"run `{request.name}` ({request.command_line})"
    if isinstance(request, CommitRequest):
        return f"commit {', '.join(request.paths)} with message {request.message!r}"
    return request.describe()


# Caches a tool remakes on its own: a change there is worth no one's attention.
REGENERATED = (".pytest_cache", "__pycache__", ".mypy_cache", ".ruff_cache", ".hypothesis")


def _regenerated(name: str) -> bool:
    """Whether `name` (as git names an ignored file or folder) is in a cache a tool remakes."""
    return any(part in REGENERATED for part in name.rstrip("/").split("/"))
