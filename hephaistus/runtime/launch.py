"""A sandbox's line for a process another program starts where the person can watch it (an
editor's terminal: ACP's terminal/create).

That program's environment is not the command's (an editor's may hold keys of its own), its
standard input is not the command's (heph's commands get none), and bubblewrap's whole line is
no thing to show a person (hundreds of mounts). So the program is given a short line: heph's
own Python, isolated (`-I`: nothing of the folder or the environment decides what it imports),
ending with the command itself, which is what the editor shows. The sandbox's line and the
command's exact environment travel in one variable of the environment it is given. The
launcher checks that the line runs what was shown, keeps nothing else of the environment,
gives no input, enters the Landlock domain where the network is shared (see landlock.py), and
becomes bubblewrap.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

VARIABLE = "HEPH_LAUNCH"


@dataclass(frozen=True)
class Launch:
    """What another program starts: `command` with `args`, adding `env` to its environment."""

    command: str
    args: list[str]
    env: dict[str, str]


def launch(line: list[str], env: dict[str, str], argv: list[str], scoped: bool) -> Launch:
    """The launch of the sandbox's `line` (which ends with `argv`, the command) with exactly
    `env`; `scoped`: in a Landlock domain that reaches no abstract socket of the host."""
    package = Path(__file__).resolve().parent.parent.parent
    start = (
        f"import sys; sys.path.insert(0, {str(package)!r}); "
        "from hephaistus.runtime.launch import main; main(sys.argv[1:])"
    )
    carried = json.dumps({"line": line, "env": env, "scoped": scoped})
    return Launch(sys.executable, ["-I", "-c", start, "--", *argv], {VARIABLE: carried})


def main(shown: list[str]) -> None:
    """Become the sandbox's line carried in the environment, if it runs `shown`."""
    try:
        carried = json.loads(os.environ[VARIABLE])
        line, env, scoped = carried["line"], carried["env"], carried["scoped"]
    except (KeyError, ValueError, TypeError) as error:
        raise SystemExit(f"heph: no sandbox line to run ({error})") from None
    argv = shown[1:] if shown[:1] == ["--"] else shown
    if not argv or line[-len(argv) :] != argv:
        raise SystemExit("heph: the sandbox's line does not run the command shown")
    no_input = os.open(os.devnull, os.O_RDONLY)
    os.dup2(no_input, 0)
    if scoped:
        from hephaistus.runtime.landlock import scoping

        enter = scoping(line[0])
        if not callable(enter):
            raise SystemExit(f"heph: cannot scope the sandbox's abstract sockets: {enter}")
        enter()
    os.execve(line[0], line, env)
