"""Reading a Markdown file heph did not write (a command file, a skill): followed to its real
path once, read as text up to a limit, its front matter apart from its body."""

from __future__ import annotations

from pathlib import Path

from hephaistus.frontmatter import split
from hephaistus.textfile import NotTextError, decode, read_real
from hephaistus.workspace import real_path


def read_markdown(path: Path, shown: str, limit: int) -> tuple[dict[str, str], str, Path] | None:
    """(its front matter's keys, its body, its real path); None when it cannot be read as
    text (a link that loops, a binary file, a FIFO)."""
    real = real_path(path)
    if real is None:
        return None
    try:
        text = decode(read_real(Path(real), limit), shown).text
    except (OSError, NotTextError):
        return None
    keys, body = split(text)
    return keys, body, Path(real)
