"""The front matter of a Markdown file (commands, skills, agents): a `---` block of `key: value`
lines at its very start. Only flat keys are read (a value in quotes is unquoted; a `[a, b]`
list is kept as written): what heph needs of it, without a YAML parser for files it did not
write. Anything else in the block is left alone."""

from __future__ import annotations

FENCE = "---"


def split(text: str) -> tuple[dict[str, str], str]:
    """(the front matter's keys, the body after it); ({}, text) when there is none."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != FENCE:
        return {}, text
    for end, line in enumerate(lines[1:], 1):
        if line.strip() == FENCE:
            return _keys(lines[1:end]), "".join(lines[end + 1 :])
    return {}, text  # never closed: no front matter


def _keys(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        if line[:1].isspace() or ":" not in line:
            continue  # a nested or continued value: not read
        key, _, value = line.partition(":")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        found[key.strip()] = value
    return found
