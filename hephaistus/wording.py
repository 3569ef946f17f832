"""How heph words what it tells people: small helpers shared by the commands' messages."""

from __future__ import annotations


def counted(number: int, noun: str) -> str:
    """`1 file`, `2 files`: a count with its noun, singular where it is one."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def listed(names: list[str], shown: int) -> str:
    """`a, b and 3 more`: the first `shown` names, and how many are left out."""
    named = ", ".join(names[:shown])
    return f"{named} and {len(names) - shown} more" if len(names) > shown else named
