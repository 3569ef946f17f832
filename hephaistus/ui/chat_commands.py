"""The chat's slash commands: each `cmd_<name>` method is `/<name>`, its docstring the /help
line. The Repl has them (see ui.repl); they reach the agent, the console and the chat's turns.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.text import Text

from hephaistus.escape import outside_text
from hephaistus.records.checkpoints import (
    CheckpointStore,
    Damaged,
    Interleaved,
    NotInside,
    UndoConflict,
)
from hephaistus.records.undo import redo as redo_session
from hephaistus.records.undo import undo as undo_session
from hephaistus.records.undo_words import refusal
from hephaistus.ui.foreign_commands import ForeignCommands

if TYPE_CHECKING:
    from hephaistus.engine.agent import Agent
    from hephaistus.ui.render import ConsoleSink

TASK_SHOWN = 60  # characters of a turn's task /undo shows


class ChatCommands(ForeignCommands):
    """The slash commands of the chat."""

    agent: Agent
    sink: ConsoleSink
    console: Any
    turns: list[str]  # session ids of this chat, oldest first
    tasks: dict[str, str]  # the task of each turn, by session id
    undone: list[str]  # session ids undone with /undo, newest last

    def run_turn(self, task: str) -> None:
        """Run `task` as a turn of the chat (the Repl's)."""
        raise NotImplementedError

    def commands(self) -> list[str]:
        """The slash commands' names: the `cmd_` methods, sorted."""
        return sorted(name[4:] for name in dir(self) if name.startswith("cmd_"))

    def cmd_help(self, argument: str) -> None:
        """Show the commands."""
        for name in self.commands():
            doc = (getattr(self, f"cmd_{name}").__doc__ or "").strip()
            line = " ".join(doc.split("\n\n")[0].split())  # the first paragraph, whole
            self.console.print(Text(f"/{name:<10}", style="bold") + Text(line))
        for command in self._custom_commands().values():
            said = outside_text(command.description or f"(from {command.source})")
            usage = f"/{command.name} {command.hint}".rstrip()
            self.console.print(Text(usage, style="bold") + Text("  ") + said)
        for prompt in self._prompts():
            said = outside_text(" ".join(prompt.description.split())[:160])
            self.console.print(Text(prompt.usage(), style="bold") + Text("  ") + said)
        self.console.print(
            Text(
                "Anything else is a task (a line starting with // or a space too, so "
                "'//etc/hosts is wrong' is one). @path completes file names; "
                "@server:uri reads an MCP server's resource into the task.",
                style="dim",
            )
        )

    def cmd_exit(self, argument: str) -> bool:
        """Leave the chat (Ctrl-D does too)."""
        return False

    def cmd_undo(self, argument: str) -> None:
        """Undo the last turn that changed files, and say which (--force: even if edited
        since)."""
        store = self._checkpoints()
        changed = set(store.sessions_with_changes())
        pending = [t for t in self.turns if t in changed and not store.is_undone(t)]
        if not pending:
            self.console.print(
                Text("nothing to undo: no turn of this chat changed files it has not undone")
            )
            return
        turn = pending[-1]
        try:
            result = undo_session(store, turn, force=argument == "--force")
        except (Damaged, NotInside, LookupError, UndoConflict, Interleaved) as refused:
            return self._warn(refusal(refused, "/undo --force"))
        self.undone.append(turn)
        self.console.print(outside_text(self._turn_taken_back(turn, changed)))
        self._report("undone", result.restored, result.deleted)
        for rel in result.own_lines_only:
            self.console.print(outside_text(f"  in {rel} only heph's lines: another run's stay"))
        for rel, lines in result.taken.items():
            self.console.print(
                outside_text(f"  in {rel}, {lines} lines another run wrote meanwhile are gone")
            )

    def cmd_redo(self, argument: str) -> None:
        """Redo what the last /undo undid."""
        if not self.undone:
            self.console.print(Text("nothing to redo"))
            return
        store = self._checkpoints()
        try:
            result = redo_session(store, self.undone[-1], force=argument == "--force")
        except (Damaged, NotInside, LookupError, UndoConflict) as refused:
            return self._warn(refusal(refused, "/redo --force", verb="redo"))
        self.undone.pop()
        self._report("redone", result.restored, result.deleted)

    def cmd_diff(self, argument: str) -> None:
        """Show every change heph made in this chat, as one diff."""
        from hephaistus.workspace.diffs import unified_diff

        states = self._checkpoints().before_states(self.turns)
        if not states:
            self.console.print(Text("no changes in this chat yet"))
            return
        for rel, before in states.items():
            path = self.agent.workspace.root / rel
            now = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
            old = before.decode("utf-8", "replace") if before is not None else ""
            diff = unified_diff(rel, old, now, created=before is None)
            if diff:
                self.sink.show_diff(diff)

    def cmd_commit(self, argument: str) -> None:
        """Commit the files heph changed in this chat: /commit [message]."""
        from hephaistus.engine.runner import Runtime
        from hephaistus.runtime.policy import Policy
        from hephaistus.tools import ToolContext

        changed = self.agent.journal.changed_paths()
        if not changed:
            self.console.print(Text("heph changed no files in this chat"))
            return
        message = argument or _commit_message(sorted(changed))
        context = ToolContext(
            self.agent.workspace,
            journal=self.agent.journal,
            sessions=tuple(self.agent.session_ids),
        )
        # The person typed /commit: that is the approval (a dry run still only shows it).
        policy = Policy("auto", dry_run=self.agent.policy.dry_run)
        result = Runtime(self.agent.registry, context, policy).call(
            "git_commit", {"message": message}
        )
        self.console.print(outside_text(result.output, "" if result.ok else "red"))

    def cmd_init(self, argument: str) -> None:
        """Draft an AGENTS.md for this workspace (a diff to approve; /undo takes it back)."""
        from hephaistus.docs.agents_md import create
        from hephaistus.errors import HephError

        try:
            result, session_id = create(
                self.agent.workspace, self.agent.config, self.agent.policy, self.sink
            )
        except HephError as error:
            self._warn(error.message)
            return
        self.turns.append(session_id)
        self.tasks[session_id] = "/init"
        if result.ok and not self.agent.policy.dry_run:
            self.console.print(
                Text("wrote AGENTS.md: add what only you know; it is read with every task")
            )
        elif not result.ok:
            self._warn(result.output)

    def cmd_clear(self, argument: str) -> None:
        """Start a new conversation (the agent state is kept)."""
        self.agent.messages = []
        self.console.print(Text("new conversation; the agent state is kept (/state shows it)"))

    def cmd_state(self, argument: str) -> None:
        """Show the agent state (sent with each task, then whenever it changes) and the
        project instructions the last task read."""
        self.console.print(outside_text(self.agent.state.render()))
        described = self.agent.instructions.describe()
        self.console.print(outside_text(f"instructions: {described}"))

    def cmd_mcp(self, argument: str) -> None:
        """Show the MCP servers, whether each runs, and their tools as the model sees them;
        `/mcp approve NAME`: approve a server's new and changed tools as it lists them now."""
        mcp = self.agent.mcp
        if mcp is None:
            self.console.print(
                Text("no MCP server is configured ([mcp_servers.NAME] in your config)")
            )
            return
        if argument.startswith("approve"):
            return self._approve_tools(argument.removeprefix("approve").strip())
        running = set(mcp.running())
        for name in mcp.servers:
            tools = [t for t in self.agent.registry if t.name.startswith(f"mcp__{name}__")]
            state = "running" if name in running else "not started (it starts on first use)"
            self.console.print(outside_text(f"{name}: {state}; {len(tools)} tools"))
            for tool in tools:
                self.console.print(outside_text(f"  {tool.describe()}"))

    def _approve_tools(self, name: str) -> None:
        """What changed in the running server's tools, pinned once the person says yes; the
        next task offers them."""
        from hephaistus.mcp.client import McpError

        mcp = self.agent.mcp
        if mcp is None or name not in mcp.servers:
            return self._warn(f"/mcp approve NAME: no MCP server {name!r}")
        try:
            pending = mcp.pending(name)
        except McpError as error:
            return self._warn(str(error))
        if not pending.changes:
            return self.console.print(outside_text(f"nothing to approve for {name}"))
        for label, diff in pending.changes:
            self.console.print(outside_text(f"{name}: {label}\n{diff}".rstrip()))
        ask = getattr(self, "ask_key", None)
        if ask is None or ask(f"Approve these tools of {name}? [y/N] ").lower() != "y":
            return self.console.print(outside_text(f"not approved: {name}'s stay withheld"))
        mcp.approve(pending)
        self.console.print(outside_text(f"approved {name}: offered from the next task on"))

    def cmd_tokens(self, argument: str) -> None:
        """Show the tokens used and how full the context window is."""
        compactor = self.agent.compactor
        used = compactor.size(self.agent.messages) if self.agent.messages else 0
        share = 100 * used / compactor.window if compactor.window else 0
        self.console.print(
            outside_text(
                f"this chat: {self.sink.tokens:,} tokens used; context: about "
                f"{used:,} of {compactor.window:,} tokens ({share:.0f}%)\n{compactor.describe()}"
            )
        )

    def cmd_model(self, argument: str) -> None:
        """Show the model, or switch to another: /model [name]."""
        if not argument:
            self.console.print(outside_text(f"model: {self.agent.model.name}"))
            return
        from hephaistus.model.llm import ChatModel

        self.agent.config = replace(self.agent.config, model=argument)
        self.agent.use_model(ChatModel(self.agent.config))  # its window, asked afresh
        self.console.print(outside_text(f"model: {argument}"))

    def cmd_sessions(self, argument: str) -> None:
        """List the recorded sessions of this workspace."""
        from hephaistus.records.analytics import session_rows
        from hephaistus.ui.tables import sessions_table

        rows = session_rows(self.agent.sessions, 20)
        self.console.print(sessions_table(rows) if rows else Text("no sessions yet"))

    def cmd_replay(self, argument: str) -> None:
        """Replay a recorded session: /replay [id] (default: the last)."""
        from hephaistus.records.session import load_session
        from hephaistus.ui.render import ConsoleSink
        from hephaistus.ui.replay import replay

        try:
            path = self.agent.sessions.path_of(argument or "last")
        except LookupError as error:
            self.console.print(outside_text(str(error)))
            return
        replay(load_session(path), ConsoleSink(console=self.console))

    def cmd_approvals(self, argument: str) -> None:
        """Show what is approved in this chat and for this workspace; /approvals clear forgets
        it all."""
        policy = self.agent.policy
        if argument == "clear":
            policy.forget()
            self.console.print(Text(f"approvals cleared: {policy.mode} mode asks again"))
            return
        from hephaistus.settings.permissions import describe_approval

        saved = sorted(policy.saved.allowed) if policy.saved else []
        if saved and policy.saved:
            listed = ", ".join(map(describe_approval, saved))
            self.console.print(
                outside_text(f"approved for this workspace: {listed} (in {policy.saved.path})")
            )
        else:
            self.console.print(
                Text(f"nothing approved for this workspace: {policy.mode} mode decides")
            )
        for_chat = sorted(policy.approved - set(saved))
        if for_chat:
            listed = ", ".join(map(describe_approval, for_chat))
            self.console.print(outside_text(f"approved for this chat: {listed}"))

    def cmd_mode(self, argument: str) -> None:
        """Show the mode, or switch: /mode ask|edits|plan|auto (Shift+Tab steps through
        ask, edits and plan)."""
        from hephaistus.settings.permissions import MEANING, MODES

        if argument and argument not in MODES:
            self.console.print(
                outside_text(f"no mode {argument}: the modes are {', '.join(MODES)}", "yellow")
            )
            return
        if argument:
            self.agent.set_mode(argument)
        mode = self.agent.policy.mode
        self.console.print(Text(f"mode: {mode} ({MEANING[mode]})"))
        if not argument:
            for name in MODES:
                self.console.print(Text(f"  {name:<6} {MEANING[name]}", style="dim"))

    def cmd_go(self, argument: str) -> None:
        """Carry out the last plan: /go [ask|edits|auto] [again] (from plan mode, edits by
        default; `again` for a plan carried out already)."""
        from hephaistus.records import plans
        from hephaistus.settings.permissions import MODES

        state = self.agent.state
        words = argument.split()
        again = "again" in words
        named = [word for word in words if word != "again"]
        mode = named[0] if named else ("edits" if self.agent.policy.mode == "plan" else "")
        wrong_mode = bool(mode) and (mode not in MODES or mode == "plan")
        if len(named) > 1 or words.count("again") > 1 or wrong_mode:
            return self._warn("/go takes ask, edits or auto, and again")
        if not state.plan_session:
            return self._warn("no plan yet: /mode plan, then ask for one")
        where = plans.path_of(self.agent.workspace.heph_dir, state.plan_session)
        if state.plan_done == state.plan_session and not again:
            return self._warn(plans.done_already(where, again="/go again"))
        if plans.load(self.agent.workspace.heph_dir, state.plan_session) is None:
            return self._warn(plans.gone(where))
        if mode:
            self.agent.set_mode(mode)  # and it stays so: the prompt shows it
        self.console.print(
            outside_text(f"carrying out {where.name} in {self.agent.policy.mode} mode")
        )
        self.run_turn("go again" if again else "go")

    # -- helpers -------------------------------------------------------------------------
    def _turn_taken_back(self, turn: str, changed: set[str]) -> str:
        """Which turn /undo takes back, by its number and task; and, when it is not the last,
        the later turns that changed no files (a commit stays: /undo never rewrites git)."""
        number = self.turns.index(turn) + 1
        task = " ".join(self.tasks.get(turn, "").split())
        task = task if len(task) <= TASK_SHOWN else task[: TASK_SHOWN - 1] + "…"
        said = f'undoing turn {number} of {len(self.turns)} ("{task}")'
        idle = [str(n) for n, t in enumerate(self.turns, 1) if n > number and t not in changed]
        if idle:
            which = f"turn {idle[0]}" if len(idle) == 1 else f"turns {', '.join(idle)}"
            said += f": {which} changed no files (/undo never takes back a commit: git revert does)"
        return said

    def _checkpoints(self) -> CheckpointStore:
        return CheckpointStore(self.agent.workspace.root, self.agent.workspace.heph_dir)

    def _warn(self, text: str) -> None:
        """Say in yellow why something was not done."""
        self.console.print(outside_text(text, "yellow"))

    def _report(self, verb: str, restored: list[str], deleted: list[str]) -> None:
        for rel in restored:
            self.console.print(outside_text(f"{verb}: {rel}"))
        for rel in deleted:
            self.console.print(outside_text(f"{verb}: {rel} (removed)"))


def _commit_message(paths: list[str]) -> str:
    """A message from what changed: `heph: update a.py, b.py` (or how many files)."""
    named = ", ".join(paths[:3])
    more = f" and {len(paths) - 3} more files" if len(paths) > 3 else ""
    return f"heph: update {named}{more}"
