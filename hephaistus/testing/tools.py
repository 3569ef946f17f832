"""Running one tool the way the loop does, through a Runtime, for tests and benchmarks that
drive tools without a model."""

from __future__ import annotations

from typing import Any

from hephaistus.engine.runner import Runtime
from hephaistus.runtime.policy import Asker, Policy
from hephaistus.tools import Registry, ToolContext, default_registry
from hephaistus.values import ToolResult

_DEFAULT: Registry | None = None


def run_tool(
    ctx: ToolContext,
    name: str,
    args: dict[str, Any] | None = None,
    *,
    mode: str = "auto",
    asker: Asker | None = None,
    dry_run: bool = False,
    registry: Registry | None = None,
) -> ToolResult:
    """Call tool `name` with `args` in `ctx` under a policy of `mode` (auto by default: what the
    tool prepares is carried out; `asker` answers where the mode asks)."""
    global _DEFAULT
    if registry is None:
        _DEFAULT = _DEFAULT or default_registry()
        registry = _DEFAULT
    policy = Policy(mode, dry_run=dry_run, asker=asker)
    return Runtime(registry, ctx, policy).call(name, args or {})
