"""Plans: the final answer of a plan-mode task, saved as `.heph/plans/<session>.md` for the
person to read (and edit), and carried out by "go" (`/go` in the chat, `heph -c --mode edits go`)
with the plan in the agent state.

Which plan is the last one comes from the signed agent state (never from the folder's listing),
and the file is read as heph reads its own files (no links, no pipes), so a plan that came with
a repository's files is never taken for the person's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hephaistus.errors import ConfigError
from hephaistus.textfile import atomic_write, read_real

if TYPE_CHECKING:
    from hephaistus.records.state import AgentState

FOLDER = "plans"
MAX_PLAN_BYTES = 256 * 1024
GO_WORDS = ("go", "/go")
AGAIN_WORDS = ("go again", "/go again")  # a plan carried out already, once more
GO_TASK = (
    'Carry out the plan ("plan to carry out" in the agent state), step by step, as it reads '
    "there: the user may have edited it since it was first proposed. In your final answer, say "
    "what was done and anything of the plan that was not."
)
CUT_NOTE = "\n\n[the plan was cut here: it was longer than heph keeps]"


def path_of(heph_dir: Path, session_id: str) -> Path:
    """Where the plan of session `session_id` is kept."""
    return heph_dir / FOLDER / f"{session_id}.md"


def save(heph_dir: Path, session_id: str, plan: str) -> Path:
    """Keep `plan` as the plan of session `session_id`; its path."""
    path = path_of(heph_dir, session_id)
    data = plan.rstrip("\n").encode("utf-8", "backslashreplace")
    if len(data) > MAX_PLAN_BYTES:  # kept whole only when "go" could read it back
        note = CUT_NOTE.encode()
        data = data[: MAX_PLAN_BYTES - len(note) - 1].decode("utf-8", "ignore").encode() + note
    # A `real` write: a plans folder that is a link (one a repository planted) is never
    # written through.
    atomic_write(path, data + b"\n", temp_dir=heph_dir / "tmp", real=True)
    return path


def load(heph_dir: Path, session_id: str) -> str | None:
    """The plan of session `session_id` as its file holds it now (the person may have edited
    it), or None when there is none or it is no plain file of a sensible size."""
    try:
        data = read_real(path_of(heph_dir, session_id), MAX_PLAN_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_PLAN_BYTES:
        return None
    text = data.decode("utf-8", "replace").strip()
    return text or None


def is_go(task: str) -> bool:
    """Whether `task` says to carry out the last plan."""
    return _said(task) in GO_WORDS + AGAIN_WORDS


def is_again(task: str) -> bool:
    """Whether `task` says to carry out the last plan even if that was done already."""
    return _said(task) in AGAIN_WORDS


def _said(task: str) -> str:
    return " ".join(task.lower().rstrip(" .!").split())


def done_already(where: Path, again: str = "`go again`") -> str:
    """Why a plain "go" does not carry out a plan again (it would do the work twice); `again`
    is how the person says it anyway."""
    return (
        f"the last plan ({where}) was carried out already; {again} carries it out once more, "
        "and a new plan comes from plan mode"
    )


def task_for(task: str, state: AgentState, mode: str, heph_dir: Path) -> str:
    """The task for the model: "go" carries out the last plan, which goes into the agent
    state; anything else (and "go" where no plan was ever made) is itself. After a plan, a "go"
    that cannot carry it out is an error: sent as it is, the model would do what the
    conversation suggests, maybe the plan the person threw away."""
    if not is_go(task) or not state.plan_session:
        return task
    if mode == "plan":
        raise ConfigError(
            "go carries out the last plan, and plan mode never does: /go in the chat, or "
            "heph -c --mode edits go"
        )
    where = path_of(heph_dir, state.plan_session)
    if state.plan_done == state.plan_session and not is_again(task):
        raise ConfigError(done_already(where))
    plan = load(heph_dir, state.plan_session)
    if plan is None:
        raise ConfigError(gone(where))
    state.carry_out(plan)
    return GO_TASK


def gone(where: Path) -> str:
    """Why the last plan cannot be carried out: its file is gone, or no longer plain."""
    return (
        f"the last plan ({where}) is gone, or is no plain file of at most "
        f"{MAX_PLAN_BYTES // 1024} KB: nothing was carried out"
    )
