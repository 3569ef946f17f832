"""MCP prompts as slash commands: a server's prompt `review` is `/mcp__<server>__review ARGS` in
the chat. Its arguments are given in the order the server declares them (`NAME=value` names
one; a prompt with one argument takes the whole line), and the messages the server answers
with become the turn's task, shown to the person first, as the text of a server they chose to
ask. Prompts are listed only from servers already running: nothing starts to complete a name.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from hephaistus.mcp.tools import McpTools, tool_name

PROMPT_CHARS = 20_000  # what of a prompt's messages becomes the task


@dataclass(frozen=True)
class Prompt:
    """A server's prompt: its command, and what the server says of it."""

    command: str  # mcp__<server>__<prompt>, as typed after the slash
    server: str
    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...]  # (name, required), as declared

    def usage(self) -> str:
        """`/command ARG [OPTIONAL]`, as /help shows it."""
        words = [a.upper() if needed else f"[{a.upper()}]" for a, needed in self.arguments]
        return " ".join([f"/{self.command}", *words])


def prompts(mcp: McpTools, server_name: str) -> list[Prompt]:
    """The prompts of the server `server_name` (started if it is not running); McpError when
    it cannot say."""

    async def listed(session: Any) -> list[Prompt]:
        found = await session.list_prompts()
        return [_prompt(server_name, p) for p in found.prompts]

    server = mcp.servers[server_name]
    return mcp.hub.on_session(mcp.live(server), mcp.env(server), "prompts", listed)


def running_prompts(mcp: McpTools) -> list[Prompt]:
    """The prompts of the servers running now (a server that cannot say is left out)."""
    from hephaistus.mcp.client import McpError

    found: list[Prompt] = []
    for name in mcp.running():
        try:
            found += prompts(mcp, name)
        except McpError:
            continue
    return found


def find(mcp: McpTools, command: str) -> Prompt | None:
    """The prompt `command` names (`mcp__<server>__<prompt>`), asking its server; None when
    no configured server's name starts it, or the server has no such prompt."""
    for name in mcp.servers:
        if command.startswith(tool_name(name, "")):
            return next((p for p in prompts(mcp, name) if p.command == command), None)
    return None


def prompt_task(mcp: McpTools | None, command: str, line: str) -> tuple[Prompt, str]:
    """The prompt `/command` names and the task it makes of `line`; LookupError when there
    is no such prompt, ValueError when an argument is missing (saying the usage), McpError
    when its server cannot say."""
    prompt = find(mcp, command) if mcp is not None else None
    if mcp is None or prompt is None:
        raise LookupError(f"no MCP prompt /{command}")
    return prompt, task_of(mcp, prompt, line)


def task_of(mcp: McpTools, prompt: Prompt, line: str) -> str:
    """The task `prompt` makes of the arguments typed after it; ValueError (saying the usage)
    when a required one is missing or a name is not one of its arguments."""
    arguments = _arguments(prompt, line)

    async def got(session: Any) -> str:
        answer = await session.get_prompt(prompt.name, arguments or None)
        return "\n\n".join(_message_text(m) for m in answer.messages).strip()

    server = mcp.servers[prompt.server]
    text = mcp.hub.on_session(mcp.live(server), mcp.env(server), "prompt", got)
    return text[:PROMPT_CHARS]


def _arguments(prompt: Prompt, line: str) -> dict[str, str]:
    names = [name for name, _ in prompt.arguments]
    if len(names) == 1 and not line.startswith(f"{names[0]}="):
        given = {names[0]: line} if line.strip() else {}
    else:
        try:
            words = shlex.split(line)
        except ValueError:
            raise ValueError(f"a quote is not closed: {prompt.usage()}") from None
        given, positional = {}, []
        for word in words:
            key, equals, value = word.partition("=")
            if equals and key in names:
                given[key] = value
            elif equals and key.isidentifier():
                raise ValueError(f"{key} is not one of its arguments: {prompt.usage()}")
            else:
                positional.append(word)
        free = [name for name in names if name not in given]
        if len(positional) > len(free):
            raise ValueError(f"too many arguments: {prompt.usage()}")
        given.update(zip(free, positional, strict=False))
    missing = [name for name, needed in prompt.arguments if needed and not given.get(name)]
    if missing:
        raise ValueError(f"{', '.join(missing)} missing: {prompt.usage()}")
    return given


def _prompt(server: str, found: Any) -> Prompt:
    declared = tuple((a.name, bool(a.required)) for a in (found.arguments or []))
    command = tool_name(server, found.name)
    return Prompt(command, server, found.name, found.description or "", declared)


def _message_text(message: Any) -> str:
    """A prompt message's text: its text, an embedded resource's text, anything else named."""
    from hephaistus.mcp.results import text_of_contents

    content = message.content
    kind = getattr(content, "type", "")
    if kind == "text":
        return content.text
    if kind == "resource":
        return text_of_contents([content.resource])
    return f"({kind} content left out)"
