"""Skills, in the Agent Skills format: a folder with a `SKILL.md` (front matter `name` and
`description`, then the instructions) and the files it uses (`scripts/`, `references/`,
`assets/`). Found in the workspace's `.agents/skills/`, `.claude/skills/` and `.heph/skills/`
and in the person's `~/.agents/skills/`, `~/.claude/skills/` and `skills/` of their config
folder; the first found of a name wins in that order, and the person's win over the
workspace's.

The model sees one line per skill (`listing`, within a share of the window) and loads one
with the `skill` tool (tools.skills); `/NAME` runs one like a command file. A workspace's
skills count only in a trusted workspace (else they are held back, and named as such); its
files pass the containment and secret checks every path passes. `allowed-tools` approves
nothing: what a skill's steps do is decided like any other step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hephaistus.runtime.secret_files import is_secret_name
from hephaistus.tokens import estimate
from hephaistus.workspace import Workspace
from hephaistus.workspace.markdown_files import read_markdown

FOLDERS = (".agents/skills", ".claude/skills", ".heph/skills")
SKILL_FILE = "SKILL.md"
BODY_BYTES = 64_000  # of one SKILL.md
MOST_FILES = 100  # listed of one skill
DESCRIPTION_CHARS = 1024  # the format's own limit
LINE_CHARS = 250  # of a skill's line in the prompt
PROMPT_SHARE = 0.02  # of the context window, for the lines
HEADER = (
    "Skills (instructions kept in files: when a task matches one, load it with the skill "
    "tool first; their text is the files', not the user's):"
)


@dataclass(frozen=True)
class Skill:
    """One skill: its name, what it is for, its instructions, where it is and its files."""

    name: str
    description: str
    body: str
    source: str  # its SKILL.md, as the person knows it
    folder: Path  # the skill's folder (its real path)
    files: tuple[str, ...]  # relative to the folder, SKILL.md left out

    def line(self) -> str:
        """The skill as the prompt lists it."""
        said = " ".join(self.description.split())
        return f"- {self.name}: {said[:LINE_CHARS]}{'…' if len(said) > LINE_CHARS else ''}"

    def loaded(self) -> str:
        """What the `skill` tool returns: the instructions, marked as the file's, and the list
        of files the skill brings."""
        body = self.body.strip().replace("</skill", "<\\/skill")  # it never ends its block
        text = f'<skill name="{self.name}" file="{self.source}">\n{body}\n</skill>'
        if self.files:
            more = " (and more, not listed)" if len(self.files) >= MOST_FILES else ""
            text += f"\nIts files (skill with name and file reads one{more}): " + ", ".join(
                self.files
            )
        return text

    def as_command(self) -> str:
        """The body `/NAME` sends (as a command file's), with where its files are."""
        if not self.files:
            return self.body
        return (
            f"{self.body.rstrip()}\n\n(This is skill {self.name}: the skill tool reads its files.)"
        )


def home() -> Path:
    """The person's home folder (the tests give each run its own)."""
    return Path(os.environ.get("HOME") or Path.home())


def persons_folders() -> list[Path]:
    """The person's skill folders, in the order they count."""
    from hephaistus.settings.userdirs import config_dir

    return [home() / ".agents" / "skills", home() / ".claude" / "skills", config_dir() / "skills"]


def found(
    workspace: Workspace,
    trusted: bool,
    persons: list[Path] | None = None,
    unusable: list[str] | None = None,
) -> tuple[dict[str, Skill], list[str]]:
    """(the skills by name, the workspace's skill folders held back because it is not
    trusted); `unusable` gets the SKILL.md files that are no skill (no description, say)."""
    skills: dict[str, Skill] = {}
    held: list[str] = []
    for name in FOLDERS:
        for skill_file in _skill_files(workspace.root / name):
            rel = str(skill_file.relative_to(workspace.root))
            if not trusted:
                held.append(str(Path(rel).parent))
            elif not workspace.is_secret(rel):  # a link out, or a credential: never read
                made = _skill(skill_file, rel, workspace)
                if made is not None:
                    skills.setdefault(made.name, made)
                elif unusable is not None:
                    unusable.append(rel)
    theirs: dict[str, Skill] = {}
    for folder in persons if persons is not None else persons_folders():
        for skill_file in _skill_files(folder, links=True):
            made = _skill(skill_file, str(skill_file), None)
            if made is not None:
                theirs.setdefault(made.name, made)
            elif unusable is not None:
                unusable.append(str(skill_file))
    theirs.update((name, s) for name, s in skills.items() if name not in theirs)
    return theirs, held  # the person's first, and theirs win


def listing(skills: dict[str, Skill], window: int) -> tuple[str, list[str]]:
    """(the prompt's lines of the skills, within PROMPT_SHARE of the window; the names left
    out for want of room)."""
    if not skills:
        return "", []
    budget = int(window * PROMPT_SHARE) - estimate(HEADER)
    lines: list[str] = []
    left_out: list[str] = []
    for skill in skills.values():
        line = skill.line()
        cost = estimate(line) + 1
        if cost <= budget and not left_out:
            lines.append(line)
            budget -= cost
        else:
            left_out.append(skill.name)
    if left_out:
        lines.append(f"({len(left_out)} more not listed for want of room; none is needed to work)")
    return "\n".join([HEADER, *lines]), left_out


def _skill_files(folder: Path, links: bool = False) -> list[Path]:
    """The SKILL.md of each skill folder in `folder`, by name (none when it is no folder, or
    a link and not `links`: the person's may be one, into their dotfiles)."""
    if not folder.is_dir() or (folder.is_symlink() and not links):
        return []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [e / SKILL_FILE for e in entries if e.is_dir() and (e / SKILL_FILE).is_file()]


def valid_name(name: str) -> bool:
    """A name the Agent Skills format allows: lowercase letters, digits and single hyphens,
    at most 64 characters, no hyphen first or last."""
    return (
        0 < len(name) <= 64
        and name == name.lower()
        and all(c.isalnum() or c == "-" for c in name)
        and not name.startswith("-")
        and not name.endswith("-")
        and "--" not in name
    )


def _skill(skill_file: Path, shown: str, workspace: Workspace | None) -> Skill | None:
    """The skill of `skill_file`; None when it has no usable name or description."""
    read = read_markdown(skill_file, shown, BODY_BYTES)
    if read is None:
        return None
    keys, body, real = read
    folder = real.parent
    if workspace is None and is_secret_name(str(real)):
        return None  # a link into ~/.ssh is no skill
    name = keys.get("name", "").strip()
    if not valid_name(name):
        name = skill_file.parent.name
    description = " ".join(keys.get("description", "").split())[:DESCRIPTION_CHARS]
    if not valid_name(name) or not description:
        return None
    return Skill(name, description, body, shown, folder, _files(folder, skill_file, workspace))


def _files(folder: Path, skill_file: Path, workspace: Workspace | None) -> tuple[str, ...]:
    """The skill's files heph may read: regular files inside its folder (never through a
    link), and in a workspace none the secret checks refuse."""
    listed: list[str] = []
    for top, dirs, names in os.walk(folder):  # links to folders are not followed
        dirs.sort()
        for name in sorted(names):
            path = Path(top) / name
            rel = str(path.relative_to(folder))
            if rel == SKILL_FILE or path.is_symlink() or not path.is_file():
                continue
            if workspace is not None:
                in_workspace = (skill_file.parent / rel).relative_to(workspace.root)
                if workspace.is_secret(str(in_workspace)):
                    continue
            elif is_secret_name(rel) or is_secret_name(os.path.realpath(path)):
                continue  # the person's own keys, beside their skill, are no skill's file
            listed.append(rel)
            if len(listed) >= MOST_FILES:
                return tuple(listed)
    return tuple(listed)


def offered(
    workspace: Workspace, trusted: bool, window: int
) -> tuple[dict[str, Skill], str, list[str]]:
    """(the skills a task may load, the prompt's lines of them, what to tell the person:
    skills held back in an untrusted workspace, and those the prompt leaves out)."""
    unusable: list[str] = []
    skills, held = found(workspace, trusted, unusable=unusable)
    text, left_out = listing(skills, window)
    said = []
    if unusable:
        said.append(
            "not skills (a SKILL.md needs front matter with a name and a description, in a "
            "readable file that is no secret or link to one): "
            f"{', '.join(unusable[:5])}{' …' if len(unusable) > 5 else ''}"
        )
    if held:
        shown = ", ".join(held[:5]) + (" …" if len(held) > 5 else "")
        said.append(f"not used until you trust this workspace (heph trust): the skills in {shown}")
    if left_out:
        said.append(
            f"skills: {len(skills) - len(left_out)} of {len(skills)} listed to the model (their "
            f"lines may take {PROMPT_SHARE:.0%} of the {window:,}-token window); left out: "
            + ", ".join(left_out[:10])
            + (" …" if len(left_out) > 10 else "")
        )
    return skills, text, said
