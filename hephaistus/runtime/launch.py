"""A sandbox's line for a process another program starts where the person can watch it (an
editor's terminal: ACP's terminal/create).

That program's environment is not the command's (an editor's may hold keys of its own), its
standard input is not the command's (heph's commands get none), and bubblewrap's whole line is
no thing to show a person (hundreds of mounts). So the program is given a short line: heph's
Python (the interpreter itself, never a link in the workspace to it), isolated and without its
site (`-I -S`: nothing of the folder, the environment or a virtual environment decides what it
runs), ending with the command itself, which is what the editor shows. The sandbox's line, the
command's exact environment and the launcher's code travel in one variable of the environment
it is given. The launcher checks that the line runs what was shown, keeps nothing else of the
environment, gives no input, closes every other file the program left open, enters the
Landlock domain where the network is shared (see landlock.py), and becomes bubblewrap.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from hephaistus.runtime.landlock import (
    CREATE_RULESET,
    PR_SET_NO_NEW_PRIVS,
    RESTRICT_SELF,
    SCOPE_ABSTRACT_UNIX_SOCKET,
)

VARIABLE = "HEPH_LAUNCH"
START = f"import json, os; exec(json.loads(os.environ[{VARIABLE!r}])['launcher'])"
# The launcher: the standard library only, run by an interpreter outside the workspace with
# neither its site (`-S`: a `.pth` file a command wrote in a virtual environment there) nor
# anything of heph's package (which may lie in the workspace, as a checkout) consulted.
LAUNCHER = f"""
import ctypes, json, os, struct, sys
carried = json.loads(os.environ[{VARIABLE!r}])
line, env, scoped = carried["line"], carried["env"], carried["scoped"]
shown = sys.argv[2:] if sys.argv[1:2] == ["--"] else sys.argv[1:]
if not shown or line[-len(shown):] != shown:
    sys.exit("heph: the sandbox's line does not run the command shown")
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
os.closerange(3, 1 << 16)
if scoped:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    rules = ctypes.create_string_buffer(struct.pack("QQQ", 0, 0, {SCOPE_ABSTRACT_UNIX_SOCKET}))
    ruleset = libc.syscall({CREATE_RULESET}, rules, ctypes.c_size_t(24), 0)
    entered = ruleset >= 0 and not libc.prctl({PR_SET_NO_NEW_PRIVS}, 1, 0, 0, 0)
    if not entered or libc.syscall({RESTRICT_SELF}, ruleset, 0):
        sys.exit("heph: cannot scope the sandbox's abstract sockets")
os.execve(line[0], line, env)
"""


@dataclass(frozen=True)
class Launch:
    """What another program starts: `command` with `args`, adding `env` to its environment."""

    command: str
    args: list[str]
    env: dict[str, str]


def launch(
    line: list[str], env: dict[str, str], argv: list[str], scoped: bool, workspace: Path
) -> Launch | None:
    """The launch of the sandbox's `line` (which ends with `argv`, the command) with exactly
    `env`; `scoped`: in a Landlock domain that reaches no abstract socket of the host. None
    where heph's interpreter lies in `workspace` (a command could have replaced it)."""
    python = Path(os.path.realpath(sys.executable))
    if python.is_relative_to(workspace):
        return None
    carried = json.dumps({"line": line, "env": env, "scoped": scoped, "launcher": LAUNCHER})
    return Launch(str(python), ["-I", "-S", "-c", START, "--", *argv], {VARIABLE: carried})
