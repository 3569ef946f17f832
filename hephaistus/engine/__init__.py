"""The engine: the reasoning loop behind the Engine protocol (so another architecture can be
swapped in): the JSON-mode ReAct loop, the runner (the one call the loop makes per action), and
the Agent that runs the loop (a model, a toolchain and the workspace's sessions, one task at a
time).

May import: `settings`, `runtime`, `workspace`, `records`, `tools`, `mcp`, `model`, `hooks`.
"""

from hephaistus.engine.base import Engine, Run
from hephaistus.engine.react import ReactEngine

__all__ = ["Engine", "Run", "ReactEngine"]
