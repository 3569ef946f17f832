"""Records: what heph keeps of its runs, so any run can be replayed, continued and undone. Sessions
of spans, the AgentState, checkpoints and the write transaction, snapshots of what commands
changed, undo and redo, plans, and what the recorded sessions say (`heph sessions`, `stats`).

May import: `settings`, `runtime`, `workspace`.
"""
