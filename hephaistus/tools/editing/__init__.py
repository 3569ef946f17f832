"""How the edit tools find what the model meant and write only what it sent.

`matching` locates a snippet tolerantly and uniquely, `replacing` writes the new lines in its
place (keeping the file's unchanged lines, re-indenting the model's through `indenting`) and
checks that invariant, `patching` reads loose unified diffs and applies them hunk by hunk
through the same two.
"""
