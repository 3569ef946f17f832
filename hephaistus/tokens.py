"""Token counts estimated locally: no tokenizer to download, the same answer every time.

Code and English run at about four characters a token in the BPE vocabularies of today's models;
the estimate is that ratio, rounded up, so a text of at most 4*N characters is at most N tokens.
The model client corrects budgets with the server's own count as a run goes (see compaction.py).
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def chars_for(tokens: int) -> int:
    """The most characters that `estimate` counts as at most `tokens`."""
    return max(0, tokens) * CHARS_PER_TOKEN
