"""Docs: `heph docs` finds missing and stale docstrings offline (check) and has the model write
them (fix); `heph init` drafts an AGENTS.md.

May import: `settings`, `runtime`, `workspace`, `records`, `tools`, `mcp`, `model`, `engine`.
"""
