"""The `heph` command line: one-shot tasks, the chat, and the subcommands of DESIGN.md.

Only the standard library is imported at start-up: `heph --version` and `heph --help` must be
instant, so each command imports what it needs when it runs. The grammar (options, and one
declaration per subcommand) is in `grammar`; the commands are in `task`, `records`, `docs` and
`setup`.

May import: `settings`, `runtime`, `workspace`, `records`, `tools`, `mcp`, `model`, `docs`,
`engine`, `ui`, `acp`, `hooks`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hephaistus.cli.grammar import parse, parse_subcommand, split_command, task_parser
from hephaistus.errors import EXIT_INTERRUPTED, ConfigError, HephError


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (sys.argv's by default) and return the exit code. heph's own
    errors are printed, never raised; Ctrl-C and a closed pipe end it as a shell tool would."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _never_fail_to_print()
    previous = _end_on_signals()
    try:
        _current_folder()
        command, rest = split_command(argv)
        if command is None:
            from hephaistus.cli.task import run_task

            return run_task(parse(task_parser(), rest))
        return command.run(parse_subcommand(command, rest))
    except HephError as error:
        from hephaistus.cli.common import say

        if error.message:  # argparse has already explained a usage error
            prefix = "" if error.message.startswith("heph") else "heph: "
            say(f"{prefix}{error.message}", sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as stop:
        print(f"heph: interrupted{f' by {stop}' if str(stop) else ''}", file=sys.stderr)
        return int(getattr(stop, "exit_code", EXIT_INTERRUPTED))  # a signal's own code
    except BrokenPipeError:  # `heph ... | head -1`: the reader has all it wanted
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    finally:
        _restore_signals(previous)


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as the shell's own tools end


def _never_fail_to_print() -> None:
    """A terminal or pipe that takes no UTF-8 (LC_ALL=C, PYTHONIOENCODING=ascii) gets what it
    cannot show as escapes (`\\U0001f600`), never a traceback over the answer."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # a test's capture, a closed stream
            pass


def _current_folder() -> None:
    """The folder heph was started in must still be there (a shell can stay in a deleted one)."""
    import os

    try:
        os.getcwd()
    except FileNotFoundError:
        raise ConfigError(
            "the current folder no longer exists (it was deleted or moved); cd into the project"
        ) from None


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so what is still buffered cannot fail again at exit."""
    import os

    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test's capture)
        pass


def _end_on_signals() -> dict[int, Any]:
    """SIGTERM and SIGHUP (a closed terminal) end a run as Ctrl-C does: the session is ended
    and saved, files are never left half written. Returns the handlers it replaced."""
    import signal

    from hephaistus.errors import Terminated

    def stop(number: int, _frame: Any) -> None:
        raise Terminated(signal.Signals(number).name)

    replaced: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            replaced[number] = signal.signal(number, stop)
        except ValueError:  # not the main thread (an embedding program): leave them be
            break
    return replaced


def _restore_signals(previous: dict[int, Any]) -> None:
    import signal

    for number, handler in previous.items():
        signal.signal(number, handler)
