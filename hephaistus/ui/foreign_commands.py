"""The chat's commands that come from outside heph: an MCP server's prompts
(`/mcp__server__prompt ARGS`, mcp.prompts) and the person's command files (`/NAME ARGS`,
workspace.slash_commands). Each makes the turn's task of text heph did not write, shown first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from hephaistus.escape import outside_text

if TYPE_CHECKING:
    from hephaistus.engine.agent import Agent


class ForeignCommands:
    """The commands of the chat whose text is a server's or a file's."""

    agent: Agent
    console: Any

    def run_turn(self, task: str) -> None:
        """Run `task` as a turn of the chat (the Repl's)."""
        raise NotImplementedError

    def _warn(self, text: str) -> None:
        """Say in yellow why something was not done (ChatCommands')."""
        raise NotImplementedError

    def run_prompt(self, command: str, argument: str) -> bool:
        """`/mcp__<server>__<prompt> ARGS`: the server's prompt, shown, then run as the turn's
        task (mcp.prompts)."""
        from hephaistus.mcp.client import McpError
        from hephaistus.mcp.prompts import prompt_task

        try:
            prompt, task = prompt_task(self.agent.mcp, command, argument)
        except LookupError as error:
            self._warn(f"{error} (/help lists those of running servers)")
            return True
        except (McpError, ValueError) as error:
            self._warn(str(error))
            return True
        if not task:
            self._warn(f"/{command}: the server's prompt is empty")
            return True
        heading = f"/{command}: the prompt of the MCP server {prompt.server}, as the task:"
        self.console.print(Text(heading, style="dim"))
        self.console.print(outside_text(task if len(task) < 2000 else task[:2000] + "…"))
        self.run_turn(task)
        return True

    def run_custom(self, command: Any, argument: str) -> bool:
        """`/NAME ARGS`, one of the person's command files: its text, with ARGS put in, as
        the turn's task (workspace.slash_commands)."""
        self.console.print(outside_text(f"/{command.name}: from {command.source}", "dim"))
        self.run_turn(command.task(argument))
        return True

    def _custom_commands(self) -> dict[str, Any]:
        """The person's command files and, in a trusted workspace, its own (heph's commands
        win on a clash); read afresh, as they may change during the chat."""
        from hephaistus.workspace.slash_commands import found

        commands, held = found(self.agent.workspace, self.agent.config.workspace_trusted)
        if held and not getattr(self, "_said_held", False):
            self._said_held = True
            self._warn(
                f"not used until you trust this workspace (heph trust): the commands in "
                f"{', '.join(held[:5])}{' …' if len(held) > 5 else ''}"
            )
        return {name: c for name, c in commands.items() if not hasattr(self, f"cmd_{name}")}

    def _prompt_commands(self) -> list[str]:
        """The commands of the MCP servers' prompts (`mcp__server__prompt`)."""
        return [prompt.command for prompt in self._prompts()]

    def _prompts(self) -> list[Any]:
        """The prompts of the MCP servers running now."""
        if self.agent.mcp is None:
            return []
        from hephaistus.mcp.prompts import running_prompts

        return running_prompts(self.agent.mcp)
