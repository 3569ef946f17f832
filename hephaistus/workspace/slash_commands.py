"""Custom slash commands, as Claude Code keeps them: Markdown files in the workspace's
`.heph/commands/` and `.claude/commands/`, and in `commands/` of the person's config folder.
`/NAME ARGS` sends the file's body as the task, with `$ARGUMENTS` (all of ARGS) and `$1`…`$9`
(its words) put in; without a placeholder, ARGS follow the body. Front matter `description` and
`argument-hint` show in `/help` and completion. A file in a folder is `folder:name`.

A skill (workspace.skills) is a command too, where no command file has its name. A
`` !`cmd` `` in a body is no command heph runs on its own: the task asks the model to run it,
so it goes through the shell's sandbox and the mode's approval like any other command.

A workspace's commands count only in a trusted workspace (else they are held back, and named
as such); its files pass the containment and secret checks every path passes, so a link
cannot bring in a file from outside. The person's win over the workspace's on a clash. The
task says which file it came from: the text is that file's, not the person's typing.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from hephaistus.workspace import Workspace
from hephaistus.workspace.markdown_files import read_markdown

FOLDERS = (".heph/commands", ".claude/commands")
BODY_BYTES = 32_000  # of one command file
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)*")
POSITIONAL = re.compile(r"\$([1-9])")
INLINE_COMMAND = re.compile(r"!`([^`\n]+)`")


@dataclass(frozen=True)
class SlashCommand:
    """One command: its name, what it says of itself, its body and the file it came from."""

    name: str
    description: str
    hint: str  # argument-hint
    body: str
    source: str  # the file, as the person knows it

    def task(self, arguments: str) -> str:
        """The task `/name arguments` sends, marked with the file it came from."""
        try:
            words = shlex.split(arguments)
        except ValueError:
            words = arguments.split()
        placed = "$ARGUMENTS" in self.body or POSITIONAL.search(self.body)
        body = self.body.replace("$ARGUMENTS", arguments)
        body = POSITIONAL.sub(lambda m: _word(words, int(m[1])), body).strip()
        if arguments and not placed:
            body += f"\n\nARGUMENTS: {arguments}"
        if asked := INLINE_COMMAND.findall(body):
            body = INLINE_COMMAND.sub(lambda m: f"`{m[1]}`", body)
            body += "\n\nFirst run, with the shell tool, and use what they print: " + ", ".join(
                f"`{command}`" for command in asked
            )
        body = body.replace("</command", "<\\/command")  # it never ends the block itself
        return f'<command name="{self.name}" file="{self.source}">\n{body}\n</command>'


def _word(words: list[str], n: int) -> str:
    return words[n - 1] if n <= len(words) else ""


def found(
    workspace: Workspace, trusted: bool, persons: Path | None = None
) -> tuple[dict[str, SlashCommand], list[str]]:
    """(the commands by name, the workspace's held back because it is not trusted); the
    person's are in `persons` (default: `commands/` of their config folder)."""
    if persons is None:
        from hephaistus.settings.userdirs import config_dir

        persons = config_dir() / "commands"
    commands: dict[str, SlashCommand] = {}
    held: list[str] = []
    for folder in FOLDERS:
        for rel in _markdown(workspace.root / folder, workspace.root):
            if not trusted:
                held.append(rel)
                continue
            if workspace.is_secret(rel):
                continue  # a link out of the workspace, or a credential: never read
            made = _command(workspace.root / folder, workspace.root / rel, rel)
            if made is not None:
                commands.setdefault(made.name, made)
    for path in _markdown(persons, persons):
        made = _command(persons, persons / path, str(persons / path))
        if made is not None:
            commands[made.name] = made  # the person's win
    from hephaistus.workspace import skills

    found_skills, _ = skills.found(workspace, trusted)  # held ones: the agent says so
    for skill in found_skills.values():
        if NAME.fullmatch(skill.name):
            made = SlashCommand(skill.name, skill.description, "", skill.as_command(), skill.source)
            commands.setdefault(skill.name, made)
    return commands, held


def _markdown(folder: Path, base: Path) -> list[str]:
    """The `.md` files under `folder`, relative to `base`, sorted (none when it is no folder)."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    return sorted(str(p.relative_to(base)) for p in folder.rglob("*.md") if p.is_file())


def _command(folder: Path, path: Path, shown: str) -> SlashCommand | None:
    name = ":".join(path.relative_to(folder).with_suffix("").parts)
    read = read_markdown(path, shown, BODY_BYTES) if NAME.fullmatch(name) else None
    if read is None:
        return None
    keys, body, _ = read
    description = " ".join(keys.get("description", "").split())[:200]
    hint = " ".join(keys.get("argument-hint", "").split())[:100]
    return SlashCommand(name, description, hint, body, shown)
