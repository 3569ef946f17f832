"""Workspace trust: a repository someone else wrote does not get the person's key, shell or
approvals by being cloned.

A workspace's files may hold settings that change where requests and the key go, what runs,
what is exposed or what is approved (every config key not marked harmless, a system prompt
under `.heph/prompts/`, and the repository's own git settings that run programs or point git
elsewhere: filters, drivers, hooks, a worktree; heph's commits run no hook even then). They
apply only once the person trusts the workspace: `heph trust`, the question asked once in a
terminal, or `--trust` for one run. The person's answer is kept in the user's state folder
under a digest of exactly those settings, so a change to any of them (a pull, a new commit)
makes the workspace untrusted again until it is approved again. `--yes` never grants trust.

A command is trusted with the workspace files it names (project_commands.files_named), each
listed beside it with a short digest that the answer's digest covers whole. Of a file past
READ_AT_MOST bytes, that much counts with its size and modification time; an unreadable one
counts as such; one that leads out of the workspace (a link), by where it leads.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hephaistus.settings.config import trust_requiring, workspace_tables
from hephaistus.settings.userstate import WorkspaceRecords

HEPH_DIR = ".heph"  # as workspace.HEPH_DIR; not imported: `heph trust` starts without it

PROMPT_NAMES = ("system.md", "docs.md")  # the templates a workspace may replace
ASK_AT_MOST = 40  # settings shown in the question; more are for `heph trust --show` to list
NAMED_AT_MOST = 12  # settings named in the notice (trust_report)
PROMPT_LIMIT = 256 * 1024  # bytes of a prompt override read (a larger one is refused)
RECORDS = "trust.json"
READ_AT_MOST = 1024 * 1024  # bytes of a file a command names that its digest covers
NO_HOOKS = "heph's commits run no hook, here or anywhere (run them yourself)"
GIT_PREFIX = "git: "  # the sources of the repository's git setup: "git: .git/config", ...


@dataclass(frozen=True)
class Setting:
    """One setting of the workspace's files that needs trust, exactly as it is written."""

    source: str  # ".heph.toml", "pyproject.toml [tool.hephaistus]", ".heph/prompts/system.md"
    key: str  # "base_url", "commands.test", "system prompt", "commands.test names ci/test.sh"
    value: str  # as written (TOML/JSON spelling), or what the file does, or its short digest
    proof: str = ""  # a file a command names: what its content is known by (the whole digest)

    def shown(self) -> str:
        """The setting in one line, `source: key = value` (for `pass_env`, with the credentials
        it gives commands, which it names exactly: a pattern gives none)."""
        line = f"{self.source}: {self.key} = {self.value}"
        return line + _credentials_given(self.value) if self.key == "pass_env" else line


@dataclass(frozen=True)
class Decision:
    """What heph decided about a workspace's settings: whether they apply, the state in words,
    and the settings themselves."""

    trusted: bool
    state: str  # "nothing to trust", "trusted", "trusted for this run", "not trusted", ...
    settings: tuple[Setting, ...]


def settings_needing_trust(root: Path) -> list[Setting]:
    """Every setting of the workspace's files that applies only in a trusted workspace, each
    command followed by the workspace files it names."""
    found = _config_settings(root) + _git_settings(root) + _prompt_settings(root)
    return found + _extension_settings(root)


def _config_settings(root: Path) -> list[Setting]:
    from hephaistus.workspace.project_commands import command_lines, files_named

    found: list[Setting] = []
    for source, table in workspace_tables(root):
        for key, value in trust_requiring(table):
            found.append(Setting(source, key, _spelled(value)))
            named = [rel for line in command_lines(key, value) for rel in files_named(root, line)]
            found += [_named_file(root, source, key, rel) for rel in dict.fromkeys(named)]
    return found


def _named_file(root: Path, source: str, key: str, rel: str) -> Setting:
    """A file the command of `key` names, as a setting beside it: a short digest shown, the
    whole one covered by the answer's digest."""
    proof, shown = _file_proof(root, rel)
    return Setting(source, f"{key} names {rel}", shown, proof)


def _file_proof(root: Path, rel: str) -> tuple[str, str]:
    """What the file `rel` is known by, and that in short: see the module's docstring."""
    real = os.path.realpath(root / rel)
    if os.path.commonpath([real, os.path.realpath(root)]) != os.path.realpath(root):
        return f"leads to {real}", f"leads to {real}, outside the workspace"
    try:  # non-blocking: a FIFO put in its place must not hang heph's start
        handle = os.fdopen(os.open(real, os.O_RDONLY | os.O_NONBLOCK), "rb")
        with handle:
            info = os.fstat(handle.fileno())
            body = handle.read(READ_AT_MOST) if stat.S_ISREG(info.st_mode) else b""
    except OSError as error:
        return f"unreadable: {error.strerror}", f"unreadable ({error.strerror})"
    if not stat.S_ISREG(info.st_mode):
        return "not a file", "not a file"
    sha = hashlib.sha256(body).hexdigest()
    size = f"{info.st_size:,} byte{'' if info.st_size == 1 else 's'}"
    if info.st_size <= READ_AT_MOST:
        return f"sha256 {sha}", f"sha256 {sha[:12]}, {size}"
    when = datetime.fromtimestamp(info.st_mtime, timezone.utc).isoformat(timespec="seconds")
    proof = f"sha256 {sha} of the start, {info.st_size} bytes, modified {info.st_mtime_ns}"
    return proof, f"sha256 {sha[:12]} of its first MiB, {size}, modified {when}"


def _git_settings(root: Path) -> list[Setting]:
    if not any(os.path.lexists(folder / ".git") for folder in (root, *root.parents)):
        return []
    from hephaistus.workspace.gitsetup import beyond_a_clone

    return [
        Setting(GIT_PREFIX + item.source, item.key, _spelled(item.value))
        for item in beyond_a_clone(root)
    ]


def _extension_settings(root: Path) -> list[Setting]:
    """The workspace's hooks, command files and skills: what would run at each step, and
    text the model would be given as the person's, each known by its digest."""
    from hephaistus.workspace import skills, slash_commands

    named = [f"{HEPH_DIR}/hooks.json"] if os.path.lexists(root / HEPH_DIR / "hooks.json") else []
    for folders, pattern in ((slash_commands.FOLDERS, "**/*.md"), (skills.FOLDERS, "*/SKILL.md")):
        for folder in (root / name for name in folders):
            if folder.is_dir() and not folder.is_symlink():
                named += sorted(str(p.relative_to(root)) for p in folder.glob(pattern))
    kinds = {"hooks.json": "hooks", "SKILL.md": "skill"}
    return [
        Setting(rel, kinds.get(Path(rel).name, "command"), *reversed(_file_proof(root, rel)))
        for rel in named
    ]


def _prompt_settings(root: Path) -> list[Setting]:
    found: list[Setting] = []
    for name in PROMPT_NAMES:
        prompt = prompt_override(root, name)
        if prompt is not None:
            digest = hashlib.sha256(prompt).hexdigest()
            what = "the system prompt" if name == "system.md" else "the docs prompt"
            found.append(
                Setting(
                    f"{HEPH_DIR}/prompts/{name}",
                    "prompt",
                    f"replaces {what} ({len(prompt):,} bytes, sha256 {digest})",
                )
            )
    return found


def prompt_override(root: Path, name: str) -> bytes | None:
    """The bytes of `.heph/prompts/NAME` when it is a plain file of reasonable size (never a
    link: it could lead to the person's own secrets), else None."""
    path = root / HEPH_DIR / "prompts" / name
    try:
        info = os.lstat(path)
        folder = os.lstat(path.parent)
        if stat.S_ISLNK(folder.st_mode) or os.path.islink(root / HEPH_DIR):
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size > PROMPT_LIMIT:
            return None
        with path.open("rb") as handle:
            return handle.read(PROMPT_LIMIT)
    except OSError:
        return None


def _kept(setting: Setting) -> list[str]:
    """A setting as its digest and the record hold it (a proof only where there is one: the
    digests of answers given before files were covered stay the same)."""
    proof = [setting.proof] if setting.proof else []
    return [setting.source, setting.key, setting.value, *proof]


def digest(settings: list[Setting] | tuple[Setting, ...]) -> str:
    """What the person's answer is kept under: any change to any setting changes it."""
    body = json.dumps(sorted(_kept(s) for s in settings), ensure_ascii=False).encode(
        "utf-8", "surrogateescape"
    )
    return hashlib.sha256(body).hexdigest()


class TrustStore:
    """The person's answers, per workspace (its real path), in the user's state folder."""

    def __init__(self, folder: Path | None = None) -> None:
        self.records = WorkspaceRecords(RECORDS, folder)

    def state(self, root: Path, settings: list[Setting]) -> str:
        """trusted, declined, changed (trusted once, other settings now) or unknown."""
        record = self.records.get(root)
        if not record:
            return "unknown"
        if record.get("digest") != digest(settings):
            return "changed" if record.get("trusted") else "unknown"
        return "trusted" if record.get("trusted") is True else "declined"

    def when(self, root: Path) -> str:
        """When the person last answered about the workspace, as an ISO time; "?" when unknown."""
        return str(self.records.get(root).get("at", "?"))

    def answered(self, root: Path) -> list[Setting]:
        """The settings the person last answered about (to show what changed since)."""
        kept = self.records.get(root).get("settings")
        if not isinstance(kept, list):
            return []
        return [
            Setting(*item)
            for item in kept
            if isinstance(item, list)
            and len(item) in (3, 4)
            and all(isinstance(i, str) for i in item)
        ]

    def record(self, root: Path, settings: list[Setting], trusted: bool) -> None:
        """Keep the person's answer about `settings`, with their digest, so any change asks
        again."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        shown = [_kept(s) for s in settings]
        record = {"digest": digest(settings), "trusted": trusted, "at": now, "settings": shown}
        self.records.put(root, record)

    def forget(self, root: Path) -> bool:
        """Remove the workspace's record; whether there was one."""
        had = bool(self.records.get(root))
        self.records.put(root, None)
        return had


def decide(
    root: Path,
    *,
    for_this_run: bool = False,
    ask: Callable[[str], str] | None = None,
    store: TrustStore | None = None,
) -> Decision:
    """Whether the workspace's settings apply. `ask` (a terminal's question) is used only the
    first time heph meets these settings (or changed ones); its answer is recorded."""
    settings = settings_needing_trust(root)
    if for_this_run:
        return Decision(True, "trusted for this run (--trust)", tuple(settings))
    if not settings:
        return Decision(True, "nothing to trust", ())
    store = store or TrustStore()
    state = store.state(root, settings)
    if state == "trusted":
        return Decision(True, "trusted", tuple(settings))
    if state in ("unknown", "changed") and ask is not None and len(settings) <= ASK_AT_MOST:
        before = store.answered(root) if state == "changed" else None
        answer = ask_to_trust(settings, ask, before=before)
        if answer is not None:
            _record(store, root, settings, answer)
            return Decision(answer, "trusted" if answer else "declined", tuple(settings))
    return Decision(False, state, tuple(settings))


def vouched(root: Path) -> bool:
    """Whether the person trusted the workspace themselves: `--trust`, or their recorded yes to
    its settings as they are now (none included: `heph trust --yes` in a workspace with nothing
    to trust). Having nothing to trust proves nothing: a clone without settings is just what a
    hostile repository looks like. Only then do the person's own MCP servers run here as them,
    outside the sandbox (but one that would run the workspace's code: see mcp_placement).
    heph's commits run no hook anywhere (tools.git)."""
    decision = _decided.get(str(root))
    if decision is not None and decision.state != "nothing to trust":
        return decision.trusted
    settings = list(decision.settings) if decision else settings_needing_trust(root)
    return TrustStore().state(root, settings) == "trusted"


def enforce(root: Path, decision: Decision) -> None:
    """What an untrusted workspace may not do, for the rest of the process: where its `.git/`
    holds what a clone would not, heph runs no git at all (the config's keys are simply not
    applied: see config.load_config). A trusted one is kept to what was trusted: see
    `recheck`."""
    from hephaistus.runtime import gitlocation

    _decided[str(root)] = decision
    if _git_part(decision.settings) and not decision.trusted:
        gitlocation.disable(root)
    else:
        gitlocation.enable(root)


def recheck(root: Path) -> str | None:
    """In a workspace trusted with git settings, whether they are still the ones trusted: a
    file a trusted config includes, or a hook in a folder of the workspace, is text the model
    can change. When they changed, heph runs no more git here, and says so (the notice)."""
    decision = _decided.get(str(root))
    if decision is None or not decision.trusted or not _git_part(decision.settings):
        return None
    if digest(_git_settings(root)) == digest(_git_part(decision.settings)):
        return None
    from hephaistus.runtime import gitlocation

    gitlocation.disable(root)
    return (
        "the repository's git settings changed during this run (a file its config includes, "
        "or a hook); heph runs no more git here until you trust them again with heph trust"
    )


def is_hook(setting: Setting) -> bool:
    """Whether `setting` is a hook of the repository's (gitsetup lists each as a program)."""
    return setting.source.startswith(GIT_PREFIX) and setting.value.startswith('"a program')


def _git_part(settings: list[Setting] | tuple[Setting, ...]) -> list[Setting]:
    return [s for s in settings if s.source.startswith(GIT_PREFIX)]


_decided: dict[str, Decision] = {}


def _record(store: TrustStore, root: Path, settings: list[Setting], trusted: bool) -> None:
    try:
        store.record(root, settings, trusted)
    except OSError:  # a read-only home: the answer holds for this run
        pass


def ask_to_trust(
    settings: list[Setting], ask: Callable[[str], str], *, before: list[Setting] | None = None
) -> bool | None:
    """The question, with every setting shown (and, when `before` is what the person trusted
    last, what changed: `+` new or changed, `-` gone); True, False, or None when no answer
    came. Ctrl-C is raised: it stops the task, which never goes on untrusted unasked."""
    lines = [
        "The settings of this workspace's files changed since you trusted it (+ new or "
        "changed, - gone):"
        if before is not None
        else "This workspace's files hold settings that only a trusted workspace may use:",
        *listing(settings, before),
    ]
    if any(is_hook(setting) for setting in settings):
        lines.append(NO_HOOKS)  # the hooks listed are git's to run for you, never heph's
    lines.append(
        "They can choose where your API key goes, what runs and what the model may read; "
        "trust only a workspace whose files you wrote or checked."
    )
    try:
        answer = ask("\n".join(lines) + "\nTrust this workspace and use them? [y/N]: ")
    except EOFError:
        return None
    return answer.strip().lower() in ("y", "yes")


def listing(settings: list[Setting], before: list[Setting] | None = None) -> list[str]:
    """The settings, one a line, escaped for a terminal; against `before`, marked `+` when new
    or changed and `-` when gone."""
    from hephaistus.escape import visible

    if before is None:
        return [f"  {visible(s.shown())}" for s in settings]
    now, then = set(settings), set(before)
    lines = [f"{'+' if s not in then else ' '} {visible(s.shown())}" for s in settings]
    return lines + [f"- {visible(s.shown())}" for s in before if s not in now]


def _credentials_given(spelled: str) -> str:
    """What `pass_env` (as spelled) hands commands of the person's credentials, in words."""
    from hephaistus.redact import SECRET_NAME

    try:
        names = json.loads(spelled)
    except ValueError:
        return ""
    exact = [name for name in names if isinstance(name, str) and not set(name) & set("*?[")]
    given = [name for name in exact if SECRET_NAME.search(name) and name != "OPENAI_API_KEY"]
    return f" (gives commands the credentials {', '.join(given)})" if given else ""


def _spelled(value: Any) -> str:
    """A value as a config file spells it: JSON is TOML's spelling of strings, numbers,
    booleans and lists, with every character outside ASCII escaped (a zero-width space or a
    line separator must be seen, not hidden)."""
    return json.dumps(value, ensure_ascii=True)
