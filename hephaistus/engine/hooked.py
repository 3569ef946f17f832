"""The Stop hooks at a final answer: one that blocks it sends the model back to work, a few
times at most. (The tool hooks are the runtime's: engine.runner.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

STOP_BLOCKS = 3  # answers a Stop hook may send back to the model in one task

if TYPE_CHECKING:
    from hephaistus.engine.base import Run


def stop_blocked(run: Run, answer: str, blocks: int) -> str | None:
    """What to tell the model when a Stop hook blocks its answer (exit 2, `decision: block`),
    so it goes on; None when the answer stands (no hook blocked it, or STOP_BLOCKS did
    already)."""
    hooks = run.runtime.hooks
    if hooks is None or not hooks.any_for("Stop"):
        return None
    said = hooks.fire("Stop", {"stop_hook_active": blocks > 0, "last_assistant_message": answer})
    if said.blocked is None or said.stop:
        return None
    if blocks >= STOP_BLOCKS:
        run.sink.notice(f"a Stop hook blocked the answer {STOP_BLOCKS} times: it stands")
        return None
    run.sink.notice(f"a Stop hook says the task is not done: {said.blocked}")
    return (
        f"Observation: a Stop hook of the user's says the task is not done:\n{said.blocked}"
        "\nGo on with the task, then give your final answer."
    )
