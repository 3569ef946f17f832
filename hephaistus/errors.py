"""Errors that end a command, each with the exit code DESIGN.md gives it.

Messages are written for the user: they name the flag, variable, file or URL to change.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_INTERRUPTED = 130


class HephError(Exception):
    """An error shown to the user as one line, without a traceback."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(HephError):
    """Bad flag, environment variable or config file: exit 2."""

    exit_code = EXIT_USAGE


class KeyRejected(ConfigError):
    """The model endpoint refused the API key (401): a setting to change, exit 2."""


class Refused(HephError):
    """A write the user did not approve (or could not be asked about): exit 3."""

    exit_code = EXIT_REFUSED


class ModelError(HephError):
    """The model endpoint failed in a way retrying did not fix: exit 1."""

    exit_code = EXIT_FAILED


class ContextOverflow(ModelError):
    """The request was larger than the model's context window; `window` is its size in tokens
    and `prompt_tokens` the request's prompt by the server's count, when the server said."""

    def __init__(
        self, message: str, window: int | None = None, prompt_tokens: int | None = None
    ) -> None:
        super().__init__(message)
        self.window = window
        self.prompt_tokens = prompt_tokens


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (the terminal was closed): end as Ctrl-C does, the session saved. Its
    argument is the signal's name."""

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process the signal ended (143 for
        SIGTERM, 129 for SIGHUP)."""
        import signal

        return 128 + signal.Signals[str(self)].value
