"""The Agent Client Protocol: editors drive heph over stdin/stdout (`heph acp`).

May import: `settings`, `runtime`, `workspace`, `records`, `tools`, `mcp`, `model`, `engine`.
"""
