"""Sub-agents (the `task` tool): a side question handed to a child agent on a fresh
conversation, whose reading never enters the parent's. The child has the parent's model,
mode, sandbox, approvals and hooks (never more: an agent file's `tools` only narrows), no
`task` tool of its own, and a step limit after which it is asked for what it found. Its steps
are spans of the parent's session (marked with its name), so its tokens count in the totals
and replay shows them; its writes are checkpointed with the parent's turn, so undo takes them
back with it. Only its final answer (clipped) goes back to the parent."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from hephaistus.engine.base import Run
from hephaistus.engine.runner import Runtime
from hephaistus.model.compaction import Compactor
from hephaistus.model.prompting import system_prompt
from hephaistus.model.protocol import FormatError, parse_reply
from hephaistus.model.steps import StepSchema
from hephaistus.records.state import AgentState
from hephaistus.tools import Registry, ToolContext
from hephaistus.values import Final, ToolResult, clip
from hephaistus.workspace.agents import SubAgent, found

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from hephaistus.eventsink import EventSink
    from hephaistus.records.session import SessionRecorder, Span

CHILD_STEPS = 15  # a child's step limit, unless its file says
ANSWER_CHARS = 8_000  # of a child's answer, given to the parent
SUMMARY_ASKED = (
    "You have reached your step limit. Reply now with your final answer: what you found, "
    "and what is left undone."
)


class Nested:
    """The parent's session, as a child records into it: each span marked with the child."""

    def __init__(self, parent: SessionRecorder, agent: str) -> None:
        self.parent, self.agent = parent, agent
        self.id = parent.id

    def message(self, message: Any) -> None:
        """The child's conversation is its own: its spans say what it did."""

    def span(
        self, kind: str, name: str, args: dict[str, Any] | None = None
    ) -> AbstractContextManager[Span]:
        """A span of the parent's session, marked with the child."""
        return self.parent.span(kind, name, {**(args or {}), "agent": self.agent})

    def record(self, kind: str, name: str, output: Any, **args: Any) -> None:
        """A record of the parent's session, marked with the child."""
        if kind == "ANSWER":  # the child's answer is no answer of the session
            kind, name = "MEMO", f"answer of {self.agent}"
        self.parent.record(kind, name, output, **args, agent=self.agent)


class ChildSink:
    """The parent's sink, as a child reports into it: its steps shown as the parent's are,
    its answer not (it is the task's result, never the run's answer on stdout)."""

    def __init__(self, parent: EventSink, agent: str) -> None:
        self.parent, self.agent = parent, agent

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parent, name)

    def final(self, message: str) -> None:
        """The child's answer goes back to the parent as the task's result."""

    def failure(self, message: str) -> None:
        """Said as a notice: the parent's run goes on."""
        self.parent.notice(f"{self.agent}: {message}")


def delegate(
    parent: Any, ctx: ToolContext, description: str, prompt: str, agent: str
) -> ToolResult:
    """Run the sub-agent `agent` (default `explore`) on `prompt`; its answer as the result."""
    from hephaistus.engine.react import ReactEngine

    agents = found(parent.workspace, parent.config.workspace_trusted)
    chosen = agents.get(agent or "explore")
    if chosen is None:
        return ToolResult(False, f"no agent is called {agent!r} (agents: {', '.join(agents)})")
    registry = _tools_of(parent.registry, chosen)
    session = Nested(parent.session, chosen.name)
    parent.sink.notice(f"task for {chosen.name}: {description}")
    sink = cast("EventSink", ChildSink(parent.sink, chosen.name))
    run = Run(
        parent.model,
        Runtime(registry, replace(ctx, delegate=None), parent.policy, sink, parent.hooks),
        session,
        AgentState(),
        sink,
        [{"role": "system", "content": _prompt_of(parent, registry, chosen)}],
        chosen.max_steps or min(CHILD_STEPS, parent.config.max_steps),
        lambda: None,
        Compactor(parent.compactor.window, reply_limit=parent.config.max_reply_tokens),
        schema=StepSchema(list(registry), parent.workspace.files),
    )
    outcome = ReactEngine().run(f"{description}\n\n{prompt}", run)
    answer = outcome.message if outcome.status == "answered" else _summary(run)
    parent.sink.notice(f"{chosen.name} answered ({len(answer):,} characters)")
    text = f'<task agent="{chosen.name}">\n{answer.strip()}\n</task>'
    return ToolResult(True, clip(text, min(ctx.observation_limit, ANSWER_CHARS)))


def _tools_of(registry: Registry, agent: SubAgent) -> Registry:
    """The parent's tools the child may use: never `task`; an agent's list narrows them."""
    return Registry(
        tool
        for tool in registry
        if tool.name != "task"
        and (agent.tools is None or tool.name in agent.tools)
        and (not agent.reads_only or tool.effect == "read")
    )


def _prompt_of(parent: Any, registry: Registry, agent: SubAgent) -> str:
    from hephaistus.engine.briefing import tools_left_out

    root = parent.workspace.root if parent.config.workspace_trusted else None
    leave_out = tools_left_out(parent) | {"skill"}
    told = f"You are the sub-agent {agent.name}, working for another agent.\n{agent.body}"
    return system_prompt(registry, root, "", leave_out=leave_out, instructions=told.strip())


def _summary(run: Run) -> str:
    """The child's answer at its step limit: asked once more for what it found."""
    run.messages.append({"role": "user", "content": SUMMARY_ASKED})
    with run.session.span("LLM", run.model.name, {"summary": True}) as span:
        reply = run.model.complete(run.messages, max_tokens=run.compactor.reply_tokens)
        span.output, span.usage = reply.text, reply.usage.to_dict()
    run.sink.model_replied(reply.usage)
    try:
        parsed = parse_reply(reply.text, run.registry)
    except FormatError:
        return reply.text
    return parsed.message if isinstance(parsed, Final) else reply.text
