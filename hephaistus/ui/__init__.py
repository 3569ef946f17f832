"""The terminal: everything a person sees and types. Rendering, approval prompts, the chat and its
slash commands, replay, tables, `--output jsonl`.

May import: `settings`, `runtime`, `workspace`, `records`, `tools`, `mcp`, `model`, `docs`,
`engine`.
"""
