"""The journal of effects: what the tool calls of a run or chat did, in order (files changed,
commits made, commands run). The runtime writes it from each call's ToolResult; git_commit,
git_status, /commit and /diff read it, so nothing keeps a list of its own on the side."""

from __future__ import annotations

from dataclasses import dataclass, field

from hephaistus.values import CommandRun, CommitMade, FileChange, ToolResult


@dataclass
class Journal:
    """The effects of one run or chat, oldest first."""

    files: list[FileChange] = field(default_factory=list)
    commits: list[CommitMade] = field(default_factory=list)
    commands: list[CommandRun] = field(default_factory=list)

    def note(self, result: ToolResult) -> None:
        """Add what the call of `result` did."""
        self.files.extend(result.changed)
        if result.commit:
            self.commits.append(result.commit)
        if result.command:
            self.commands.append(result.command)

    def changed_paths(self) -> list[str]:
        """The workspace files written, each once, in the order first written."""
        return list(dict.fromkeys(change.path for change in self.files))
