"""The Agent: a model, a toolchain and the workspace's sessions, running one task at a time.

`execute(task)` records a Session, runs the engine and returns its Outcome; the conversation and
the AgentState carry over to the next `execute`, as in a chat.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from hephaistus.engine import Engine, ReactEngine, Run, briefing, delegation
from hephaistus.engine.runner import Runtime
from hephaistus.errors import HephError, KeyRejected, ModelError, Terminated
from hephaistus.eventsink import EventSink, NullSink
from hephaistus.model.base import Model
from hephaistus.model.compaction import LEARNED, Compactor, context_window
from hephaistus.model.steps import StepSchema
from hephaistus.records.checkpoints import Checkpoints
from hephaistus.records.session import TASK_SESSION, RecordedSession, Session, SessionStore
from hephaistus.records.snapshots import Snapshots
from hephaistus.records.state import AgentState
from hephaistus.runtime.journal import Journal
from hephaistus.runtime.policy import Policy
from hephaistus.runtime.sandbox import Contained
from hephaistus.settings.config import Config
from hephaistus.settings.userstate import planted_links
from hephaistus.textfile import remove_stale_temp_files
from hephaistus.tools import Registry, ToolContext, default_registry
from hephaistus.tools.context import Buffer
from hephaistus.values import Message, ModelReply, Outcome
from hephaistus.workspace import Workspace, instructions, project_commands
from hephaistus.workspace.repomap import Focus, RepoMap

if TYPE_CHECKING:
    from hephaistus.hooks.definitions import Hook
    from hephaistus.hooks.fired import Hooks
    from hephaistus.mcp.tools import McpTools
    from hephaistus.records.todos import Todo
    from hephaistus.workspace.skills import Skill


class Agent:
    """Runs tasks in one workspace with one model, keeping the conversation, the AgentState and the
    chat's changes from one task to the next."""

    def __init__(
        self,
        workspace: Workspace,
        config: Config,
        *,
        model: Model | None = None,
        engine: Engine | None = None,
        registry: Registry | None = None,
        sink: EventSink | None = None,
        policy: Policy | None = None,
        announce: bool = False,
        hooks: list[Hook] | None = None,
    ) -> None:
        if model is None:
            from hephaistus.model.llm import ChatModel

            model = ChatModel(config)
        self.workspace = workspace
        self.config = config
        self.model = model
        self.engine = engine or ReactEngine()
        self.registry = registry or default_registry()
        self.sink = sink or NullSink()
        # What runs unasked; without one given, nothing is approved (what would ask is refused).
        self.policy = policy or Policy()
        self.announce = announce  # -v: say what the run works with (window, instructions)
        self.instructions = instructions.Instructions()  # as last read
        self.sessions = SessionStore(workspace.heph_dir / "sessions")
        self.state = AgentState.load(self._state_file)
        if AgentState.foreign(self._state_file):
            self.sink.notice(
                f"ignoring {self._state_file}: heph did not make it on this machine (it came "
                "with the workspace's files, or is damaged); starting from a fresh state"
            )
        if planted := planted_links(workspace.root, workspace.heph_dir):
            self.sink.notice(planted)
        self._saved_state: bytes | None = None  # what the last save wrote
        self._saved_fields: dict[str, object] | None = None  # and the state it wrote
        commands, source = dict(config.commands), config.source_of
        self.commands = project_commands.resolve(workspace.root, commands, config.test_cmd, source)
        self.messages: list[Message] = []
        self.window_asked = False  # whether the server was asked its window (use_model says)
        self.use_model(model)
        self.announced = False  # -v has said what the run works with
        self.announced_folder = False  # said once that the workspace is no project folder
        self.session: Session | None = None
        self.journal = Journal()  # what this chat's (or run's) tool calls did, oldest first
        self.plan_path: Path | None = None  # where the last plan-mode answer was saved
        self.session_ids: list[str] = []  # the sessions of this chat, oldest first
        self.thread: str | None = None  # the conversation's id an editor keeps (ACP)
        self.buffer: Buffer | None = None  # an editor's text of a file, unsaved changes and all
        # Every process a tool starts runs in the sandbox; where none works, the policy asks
        # about each command (fail closed).
        self.executor = Contained(workspace.root, config.sandbox)
        self.policy.contained = self.executor.contained
        self.said_uncontained = False
        self.said: set[str] = set()  # what the person was told once (skills held back)
        self.skills: dict[str, Skill] = {}  # what the `skill` tool loads (read at each task)
        self.left_out: set[str] = set()  # the tools the prompt leaves out (engine.briefing)
        self.mcp: McpTools | None = None  # the MCP servers' tools, offered at the first task
        if config.mcp_servers:
            from hephaistus.mcp.tools import McpTools

            self.mcp = McpTools(
                config.mcp_servers,
                workspace.root,
                workspace.heph_dir,
                command_line=self.executor.command_line,
                policy=self.policy,  # whom a server's question is put to (its asker)
                sink=self.sink,  # where a call's progress is shown
                lend=self._lend_model,  # to a server the person's entry lends it to
            )
        self.mcp_offered = False
        self.hooks: Hooks | None = None  # the person's checks around each step, when any
        if hooks:
            from hephaistus.hooks.fired import for_run, hook_fields

            self.hooks = for_run(hooks, workspace.root, self.executor, self.sink.notice)
            self.hooks.common = partial(hook_fields, self)

    @property
    def _state_file(self) -> Path:
        return self.workspace.heph_dir / "state.json"

    def set_mode(self, mode: str) -> None:
        """What runs unasked from the next tool call on (the system prompt follows at the
        next task: denied tools are not offered)."""
        self.policy.mode = mode

    def continue_conversation(self, recorded: RecordedSession) -> None:
        """Pick up a recorded conversation (`--continue`, an editor's session/load) instead of
        starting a new one: its messages, and its sessions, whose changes are heph's to commit
        or to show as heph's."""
        self.messages = list(recorded.messages)
        earlier = recorded.header.get("conversation")
        chain = [*(earlier if isinstance(earlier, list) else []), recorded.header.get("id")]
        self.session_ids = [i for i in chain if isinstance(i, str) and self.sessions.is_ours(i)]

    def execute(self, task: str) -> Outcome:
        """Run `task` to its end as one recorded session and say how it ended. Ctrl-C ends it as
        interrupted, with the session saved; a model error ends it as failed."""
        try:
            self.workspace.ensure_heph_dir()
            remove_stale_temp_files(self.workspace.temp_dir)  # of runs killed mid-write
        except OSError as error:
            raise HephError(
                f"cannot create {self.workspace.heph_dir} (where sessions are kept): "
                f"{error.strerror or error}"
            ) from None
        try:  # the servers asked before the model: the slow part, where a cancel lands
            if not self.window_asked:
                self._ask_server_for_the_window()
            if self.mcp is not None and (not self.mcp_offered or self.mcp.tools_changed()):
                from hephaistus.mcp.offer import offer_to  # again when a server's tools changed

                self.mcp_offered = True
                offer_to(self.mcp, self.registry, self.sink.notice)
        except KeyboardInterrupt:
            # Stopped before the model heard of it: a follow-up ("it is incorrect") still
            # knows the task it follows.
            self.state.task_started(task)
            self.window_asked = False  # asked again (from the cache, if it got an answer)
            raise
        if self.announce and not self.announced:
            self._announce()
        if not self.announced_folder and not self.workspace.is_project_folder():
            self.announced_folder = True
            self.sink.notice(
                f"{self.workspace.root} is your home folder (or holds it), not a project: heph "
                "lists and maps only part of it. Run heph in a project folder, or pass -w DIR"
            )
        from hephaistus.workspace.trust import recheck

        changed = recheck(self.workspace.root)  # a trusted repository's git setup, kept so
        if changed:
            self.sink.notice(changed)
        self._say_if_uncontained()
        from hephaistus.records import plans

        # "go" after a plan: the task is that plan
        asked = plans.task_for(task, self.state, self.policy.mode, self.workspace.heph_dir)
        if self.mcp is not None:  # `@server:uri`: that resource read, below the task
            asked = self.mcp.with_mentioned(asked, self.sink.notice)
        summary = self._workspace_summary(task)  # before the session, so it never dangles
        prompt = briefing.system_prompt_for(self, task)
        if not self.messages:
            self.messages = [{"role": "system", "content": prompt}]
        elif self.messages[0]["role"] == "system" and self.messages[0]["content"] != prompt:
            # The instructions changed since the last task: the new ones hold from now on.
            self.messages[0] = {"role": "system", "content": prompt}
        session = self.sessions.create(
            kind=TASK_SESSION,
            task=task,
            model=self.model.name,
            base_url=self.config.base_url,
            workspace=str(self.workspace.root),
            mode=self.policy.mode,
            conversation=list(self.session_ids),  # the earlier sessions of this conversation
            **({"thread": self.thread} if self.thread else {}),
            **({"dry_run": True} if self.policy.dry_run else {}),
        )
        self.session = session
        self.session_ids.append(session.id)
        for message in self.messages:  # the conversation so far, so the file stands alone
            session.message(message)
        session.record("INPUT", "task", task)
        checkpoints = Checkpoints(self.workspace.root, self.workspace.heph_dir, session.id)
        tools = ToolContext(
            self.workspace,
            observation_limit=self.config.observation_limit,
            allow_secrets=self.config.allow_secrets,
            checkpoints=checkpoints,
            commands={name: c.command for name, c in self.commands.items()},
            command_sources={name: c.source for name, c in self.commands.items()},
            command_timeout=self.config.command_timeout,
            pass_env=self.config.pass_env,
            executor=self.executor,
            snapshots=Snapshots(self.workspace.root),
            journal=self.journal,  # git_commit commits what heph changed in the chat
            sessions=tuple(self.session_ids),
            buffer=self.buffer,
            skills=self.skills,
            todos=self._todos_changed,
            delegate=partial(delegation.delegate, self),
        )
        run = Run(
            self.model,
            Runtime(self.registry, tools, self.policy, self.sink, self.hooks),
            session,
            self.state,
            self.sink,
            self.messages,
            self.config.max_steps,
            self._save_state,
            self.compactor,
            summary,
            verify=[n for n in self.config.verify_after_edits if n in self.commands],
            verify_retries=self.config.verify_retries,
            schema=StepSchema(
                [t for t in self.registry if t.name not in self.left_out], self.workspace.files
            ),
        )
        outcome = Outcome("failed", "the run did not finish")
        try:
            blocked = None
            if self.hooks is not None:
                self.hooks.span = session.span
                resumed = len(self.session_ids) > 1
                asked, blocked = self.hooks.before_task(asked, task, resumed=resumed)
            outcome = Outcome("failed", blocked) if blocked else self.engine.run(asked, run)
            if outcome.status == "answered" and self.policy.mode == "plan":
                self._keep_plan(session.id, outcome.message)
        except ModelError as error:
            outcome = Outcome("failed", error.message)
        except KeyRejected as error:  # a setting to change: the session says so, exit 2
            outcome = Outcome("failed", error.message)
            raise
        except KeyboardInterrupt as stop:
            why = str(stop) or "Ctrl-C"
            outcome = Outcome("interrupted", f"interrupted by {why}; the session was saved")
            if isinstance(stop, Terminated):
                raise  # the process ends; the session is ended first, below
        finally:
            self._remember_a_learned_window()
            self._save_state()
            session.end(outcome.status, outcome.exit_code, outcome.message)
        return outcome

    def _say_if_uncontained(self) -> None:
        """Once: commands run without a sandbox here, and what that means."""
        if self.said_uncontained or not self.commands:
            return
        self.said_uncontained = True
        from hephaistus.runtime.limits import unlimited

        why = self.executor.why_not()
        if why and self.config.sandbox.enabled:
            self.sink.notice(
                f"no sandbox for commands: {why}. heph asks before every command, whatever "
                "the mode (install bubblewrap to run them contained)"
            )
        elif why:
            self.sink.notice(f"{why}: commands run with all your access")
        elif unbound := unlimited():
            self.sink.notice(f"{unbound}; a runaway command can take the machine's memory")

    def _keep_plan(self, session_id: str, plan: str) -> None:
        """A plan-mode answer is the plan: saved for the person, and for "go"."""
        from hephaistus.records import plans

        try:
            path = plans.save(self.workspace.heph_dir, session_id, plan)
        except OSError as error:
            self.sink.notice(f"could not save the plan: {error.strerror or error}")
            return
        self.state.planned(session_id)
        self.plan_path = path
        root = self.workspace.root  # (heph's records may live in the user's state folder)
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        self.sink.notice(
            f"plan saved in {shown}: /go in the chat, or heph -c --mode edits go, carries it out"
        )

    def close(self) -> None:
        """End what the run keeps going: the MCP servers it started."""
        if self.hooks is not None:
            self.hooks.ended()
        if self.mcp is not None:
            self.mcp.close()

    def _todos_changed(self, todos: list[Todo]) -> None:
        """The model's new todo list: kept in the state (a follow-up sees it), shown."""
        self.state.todos = [todo.line() for todo in todos]
        self.sink.todos_changed(todos)

    def _lend_model(self, messages: list[Message], cap: int, server: str) -> ModelReply:
        """An MCP server's request for the model (mcp.sampling): answered in prose, as a span
        of the task's session, its tokens counted with the rest."""
        if self.session is None:
            raise HephError("no task runs")
        with self.session.span("LLM", self.model.name, {"sampled_for": server}) as span:
            reply = self.model.complete(messages, max_tokens=cap, plain=True)
            span.output, span.usage = reply.text, reply.usage.to_dict()
        self.sink.model_replied(reply.usage)
        self.sink.notice(f"the MCP server {server} asked your model ({reply.usage.total:,} tokens)")
        return reply

    def use_model(self, model: Model) -> None:
        """Talk to `model` from the next request on. Its context window is decided here, the
        one place it is: the configuration's, else (once the server is asked, before the first
        request) the server's, else the table's, else a default."""
        self.model = model
        self.compactor = Compactor(0, reply_limit=self.config.max_reply_tokens)
        self._decide_window(served=None)
        # The server is asked once: the window it runs (unless set) and what it is (for the
        # step's schema).
        structured = self.config.structured
        self.window_asked = bool(self.config.context_window) and structured in ("json", "off")

    def _ask_server_for_the_window(self) -> None:
        """A local server knows the window it runs the model with: ask it (once, cached)."""
        self.window_asked = True
        ask = getattr(self.model, "served_window", None)
        if served := ask(self.workspace.heph_dir / "cache" / "windows.json") if ask else None:
            self._decide_window(served)

    def _decide_window(self, served: tuple[int, str] | None) -> None:
        # The one place the window is decided, in the order compaction.context_window keeps.
        window, source = context_window(self.model.name, self.config.context_window, served)
        self.compactor.window, self.compactor.source = window, source

    def _announce(self) -> None:
        """-v: what the run works with, and where that came from (once)."""
        self.announced = True
        self.sink.notice(self.compactor.describe())
        for command in self.commands.values():
            self.sink.notice(f"command {command.name}: {command.command} ({command.source})")

    def _remember_a_learned_window(self) -> None:
        """A window learned from the server (its overflow error, or a reply it cut where the
        window ended) is kept for the next runs."""
        remember = getattr(self.model, "remember_window", None)
        if remember and self.compactor.source in LEARNED:
            window = self.compactor.window
            remember(
                self.workspace.heph_dir / "cache" / "windows.json", window, self.compactor.source
            )

    def _workspace_summary(self, task: str) -> str:
        focus = Focus(task, [self.state.last_modified_file or "", *self.state.active_files])
        return RepoMap(self.workspace).render(
            focus, self.compactor.map_tokens(self.config.map_tokens)
        )

    def _save_state(self) -> None:
        if (fields := self.state.fields()) == self._saved_fields:
            return  # most steps change nothing: no scrub, no signature, no comparison
        try:
            self._saved_state = self.state.save(self._state_file, unless=self._saved_state)
            self._saved_fields = fields
        except OSError as error:
            self.sink.notice(f"could not save {self._state_file}: {error}")
