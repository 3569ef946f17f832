"""The model: the Model protocol, the endpoint and model a run uses, the client (Chat Completions
through `openai`) and how it meets faults, what a server says about itself, the prompt
templates, the reply protocol and its step schema, and the context window's compaction.

May import: `settings`, `runtime`, `workspace`, `records`, `tools`.
"""
