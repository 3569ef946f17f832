"""heph's modes and slash commands in an editor: the modes a session offers (`session/new`'s
`modes`, `session/set_mode`), and the commands a prompt may start with (`/go`, `/mode`,
`/undo`, `/help`), listed to the editor with `available_commands_update`. `auto` is offered
only where the person's own settings chose it: no editor, and no workspace, turns it on."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hephaistus.settings.permissions import MEANING, MODES

if TYPE_CHECKING:
    from hephaistus.acp.updates import AcpSink
    from hephaistus.engine.agent import Agent
    from hephaistus.mcp.prompts import Prompt
    from hephaistus.workspace.slash_commands import SlashCommand

NAMES = {"ask": "Ask", "edits": "Edits", "plan": "Plan", "auto": "Auto"}
COMMANDS = {
    "go": ("carry out the last plan (from plan mode, in edits mode)", "[ask|edits|auto] [again]"),
    "mode": ("show the mode, or switch to ask, edits, plan or auto", "[ask|edits|plan|auto]"),
    "undo": ("take back the last turn of this conversation that changed files", "[--force]"),
    "help": ("list heph's commands", ""),
}


def offered_modes(allow_auto: bool) -> list[str]:
    """The modes a session may switch to."""
    return [mode for mode in MODES if mode != "auto" or allow_auto]


def mode_state(current: str, allow_auto: bool) -> dict[str, Any]:
    """ACP's SessionModeState: the modes offered, the current one marked."""
    offered = offered_modes(allow_auto or current == "auto")
    return {
        "currentModeId": current,
        "availableModes": [
            {"id": mode, "name": NAMES[mode], "description": MEANING[mode]} for mode in offered
        ],
    }


def available(
    prompts: Iterable[Prompt] = (), files: Iterable[SlashCommand] = ()
) -> list[dict[str, Any]]:
    """ACP's AvailableCommand list of heph's slash commands, the person's command files
    (workspace.slash_commands) and the prompts of the MCP servers running (mcp.prompts)."""
    listed = []
    for name, (description, hint) in COMMANDS.items():
        command: dict[str, Any] = {"name": name, "description": description}
        if hint:
            command["input"] = {"hint": hint}
        listed.append(command)
    for file in files:
        command = {"name": file.name, "description": file.description or f"from {file.source}"}
        if file.hint:
            command["input"] = {"hint": file.hint}
        listed.append(command)
    for prompt in prompts:
        said = " ".join(prompt.description.split())[:200] or f"a prompt of {prompt.server}"
        command = {"name": prompt.command, "description": f"{said} (MCP server {prompt.server})"}
        hint = prompt.usage().partition(" ")[2]
        if hint:
            command["input"] = {"hint": hint}
        listed.append(command)
    return listed


@dataclass(frozen=True)
class Slash:
    """A prompt that is one of heph's commands: its name and what follows it."""

    name: str
    argument: str


def slash_of(text: str) -> Slash | None:
    """The command `text` gives, or None when it is a task (a path like `/usr/lib/...`, or a
    word heph has no command for, goes to the model as written)."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    word, _, rest = stripped[1:].partition(" ")
    return Slash(word, rest.strip()) if word in COMMANDS else None


def help_text() -> str:
    """What /help answers."""
    lines = [f"/{name} {hint}".rstrip() + f": {text}" for name, (text, hint) in COMMANDS.items()]
    return "heph's commands:\n" + "\n".join(lines)


def go_mode(current: str, argument: str, allow_auto: bool) -> tuple[str, bool] | str:
    """(the mode a `/go ARGUMENT` carries the plan out in, whether `again`), or why it cannot:
    from plan mode, edits unless named; from another mode, the mode named or the current."""
    words = argument.split()
    again = "again" in words
    named = [word for word in words if word != "again"]
    mode = named[0] if named else ("edits" if current == "plan" else current)
    if len(named) > 1 or words.count("again") > 1 or mode not in offered_modes(allow_auto):
        return "/go takes ask, edits" + (", auto" if allow_auto else "") + " and again"
    if mode == "plan":
        return "/go carries a plan out, which plan mode never does: /go edits"
    return mode, again


def undo_last(agent: Agent, sink: AcpSink, argument: str) -> str:
    """/undo [--force]: take back the last turn of this conversation that changed files (as
    the chat's /undo does); what to say. An editor that takes writes is given each file put
    back, so its buffer holds it."""
    from hephaistus.records.checkpoints import (
        CheckpointStore,
        Damaged,
        Interleaved,
        NotInside,
        UndoConflict,
    )
    from hephaistus.records.undo import undo
    from hephaistus.records.undo_words import refusal, undo_report

    store = CheckpointStore(agent.workspace.root, agent.workspace.heph_dir)
    changed = set(store.sessions_with_changes())
    pending = [t for t in agent.session_ids if t in changed and not store.is_undone(t)]
    if not pending:
        return "nothing to undo: no turn of this conversation changed files it has not undone"
    try:
        result = undo(store, pending[-1], force=argument == "--force")
    except (Damaged, NotInside, LookupError, UndoConflict, Interleaved) as refused:
        return refusal(refused, "/undo --force")
    if sink.writes_through:
        for path in result.restored:
            sink.write_through(agent.workspace.root / path)
    return "\n".join(["took back the last turn that changed files:", *undo_report(result)])


def foreign_commands(agent: Agent) -> tuple[list[Prompt], list[SlashCommand]]:
    """The running MCP servers' prompts, and the person's command files."""
    prompts: list[Prompt] = []
    if agent.mcp is not None:
        from hephaistus.mcp.prompts import running_prompts

        prompts = running_prompts(agent.mcp)
    return prompts, list(command_files(agent).values())


def command_files(agent: Agent) -> dict[str, SlashCommand]:
    """The person's command files (a trusted workspace's too) that heph's own commands leave
    free, by name."""
    from hephaistus.workspace.slash_commands import found

    files, _ = found(agent.workspace, agent.config.workspace_trusted)
    return {name: f for name, f in files.items() if name not in COMMANDS}


def is_foreign(agent: Agent, text: str) -> bool:
    """Whether `text` starts with a server's prompt or one of the person's command files."""
    word = text.strip()[1:].partition(" ")[0] if text.strip().startswith("/") else ""
    if not word:
        return False
    return word.startswith("mcp__") or word in command_files(agent)


def foreign_task(agent: Agent, typed: str, say: Any) -> str | None:
    """The task of `/mcp__server__prompt ARGS` (the server's prompt) or `/NAME ARGS` (the
    person's command file), said first; None when there is none to run (why said)."""
    from hephaistus.mcp.client import McpError
    from hephaistus.mcp.prompts import prompt_task

    command, _, argument = typed.strip()[1:].partition(" ")
    if not command.startswith("mcp__"):
        file = command_files(agent)[command]
        say("agent_thought_chunk", f"(heph: /{command} is {file.source})")
        return file.task(argument.strip())
    try:
        prompt, task = prompt_task(agent.mcp, command, argument.strip())
    except (LookupError, McpError, ValueError) as error:
        return say("agent_message_chunk", str(error))
    say("agent_thought_chunk", f"(heph: /{command} is this prompt of {prompt.server}:)\n{task}")
    return task or None


def plan_entries(plan: str) -> list[dict[str, Any]]:
    """A plan-mode answer as ACP plan entries: its numbered or bulleted lines, else the whole."""
    steps = [
        re.sub(r"^\s*(?:\d+[.)]|[-*])\s+", "", line).strip()
        for line in plan.splitlines()
        if re.match(r"^\s*(?:\d+[.)]|[-*])\s+\S", line)
    ]
    return [
        {"content": step, "priority": "medium", "status": "pending"}
        for step in (steps or [plan.strip()])
        if step
    ]
