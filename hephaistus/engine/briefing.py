"""What a task's system prompt tells the model, decided afresh at each task: the tools the
mode, the sandbox and the repository leave on offer, the project commands, the skills' lines
and the project's instructions (read for the files in play)."""

from __future__ import annotations

from typing import Any

from hephaistus.engine.runner import denied_tools
from hephaistus.model.prompting import system_prompt
from hephaistus.tools import git as git_tools
from hephaistus.workspace import instructions, project_commands, skills
from hephaistus.workspace.repomap import code_words

Agent = Any  # engine.agent's, which imports this module (so it is not named here)


def system_prompt_for(agent: Agent, task: str) -> str:
    """The system prompt for `task`; the agent keeps what it decided on the way (the tools
    left out, for the step's schema; the instructions; the skills the `skill` tool loads)."""
    state = agent.state
    in_play = [*code_words(task)[0], state.last_modified_file or "", *state.active_files]
    agent.instructions = instructions.load(
        agent.workspace, agent.config.instructions, [p for p in in_play if p]
    )
    missing = [s for s in agent.instructions.sources if s.problem]
    if agent.announce or missing:
        agent.sink.notice(f"instructions: {agent.instructions.describe()}")
    leave_out = tools_left_out(agent)
    commands = "" if "run_command" in leave_out else project_commands.describe(agent.commands)
    agent.skills, listed, said = skills.offered(
        agent.workspace, agent.config.workspace_trusted, agent.compactor.window
    )
    for line in sorted(set(said) - agent.said):
        agent.said.add(line)
        agent.sink.notice(line)
    if not agent.skills:
        leave_out.add("skill")  # nothing to load: the tool would cost every request
    if not agent.config.todo:
        leave_out.add("todo_write")  # `todo = false`: its description costs every request
    if "task" not in leave_out:  # the sub-agents beside the built-in explore, by name
        from hephaistus.workspace.agents import found as sub_agents

        more = list(sub_agents(agent.workspace, agent.config.workspace_trusted).values())[1:]
        lines = [f"- {sub.name}: {sub.description or sub.source}" for sub in more]
        listed += "\n\nSub-agents for the task tool:\n" + "\n".join(lines) if lines else ""
    agent.left_out = leave_out  # the step schema offers the same tools
    return system_prompt(
        agent.registry,
        agent.workspace.root if agent.config.workspace_trusted else None,
        commands,
        leave_out=leave_out,
        instructions=agent.instructions.text,
        planning=agent.policy.mode == "plan",
        skills=listed,
    )


def tools_left_out(agent: Agent) -> set[str]:
    """The tools not offered: those the mode denies (and refuses if named anyway), the shell
    without a sandbox, the git tools outside a repository or where heph runs no git."""
    from hephaistus.runtime.gitlocation import is_disabled

    leave_out = {*denied_tools(agent.registry, agent.policy.mode)}
    if not agent.executor.sandboxed():
        leave_out.add("shell")
    if agent.workspace.git_dir() is None or is_disabled(agent.workspace.root):
        leave_out |= git_tools.NAMES
    return leave_out
