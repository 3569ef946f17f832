"""What heph says when an MCP server fails: one line each, naming the cause (a missing path,
the package not installed, a refused token) rather than the SDK's words, and whether the
connection is gone (started again at the next call) or a call was merely refused; the package's
own log kept off the terminal."""

from __future__ import annotations

import os
from pathlib import Path

from hephaistus.settings.mcp_config import McpServerConfig


def refused_words(server: McpServerConfig, status: int) -> str:
    """A server at a URL refused heph's request: which token was sent, and what to do."""
    from hephaistus.mcp.oauth import signed_in

    variable, login = server.bearer_token_env_var, f"heph mcp login {server.name}"
    if server.from_workspace:
        return (
            f"MCP server {server.name} refused heph (HTTP {status}): a workspace's server is "
            "sent none of your tokens (put the server in your user config to sign in to it)"
        )
    if variable and not os.environ.get(variable):
        sent = f"no token was sent: ${variable} (its bearer_token_env_var) is not set"
    elif variable:
        sent = f"the token in ${variable} (its bearer_token_env_var) was refused"
    elif signed_in(server):
        return (
            f"MCP server {server.name} refused heph (HTTP {status}): the token heph keeps from "
            f"signing in was refused and could not be renewed; `{login}` signs in again"
        )
    else:
        sent = "no token was sent (bearer_token_env_var in your user config names the variable)"
    return (
        f"MCP server {server.name} refused heph (HTTP {status}): {sent}; if it signs in with "
        f"OAuth, `{login}` does"
    )


def sign_in_failure(error: BaseException) -> str:
    """What went wrong signing in, where `error` (or a task group's error in it) is the OAuth
    client's ("": it is none)."""
    inner = getattr(error, "exceptions", None)
    if inner:
        return next((said for e in inner if (said := sign_in_failure(e))), "")
    names = {"OAuthFlowError", "OAuthTokenError", "OAuthRegistrationError", "SignInFailed"}
    return error_line(error) if type(error).__name__ in names else ""


def start_failure(server: McpServerConfig, error: BaseException) -> str:
    """Why `server` did not start, in one line (the package missing: how to install it)."""
    if isinstance(error, ModuleNotFoundError) and (error.name or "").startswith("mcp"):
        return (
            f"MCP server {server.name} was not started: the mcp package is not installed "
            "(pip install 'mcp>=2,<3', or '.[mcp]' in heph's checkout)"
        )
    return f"MCP server {server.name} did not start: {error_line(error)}"


def missing_path(server: McpServerConfig) -> str:
    """` (PATH does not exist)` for the first absolute path the entry names that is not there."""
    named = [server.command, *server.args]
    gone = [word for word in named if os.path.isabs(word) and not os.path.lexists(word)]
    return f" ({gone[0]} does not exist)" if gone else ""


def error_line(error: BaseException) -> str:
    """An error as one line of at most 300 characters (a task group's: its first error's)."""
    inner = getattr(error, "exceptions", None)  # a task group's exception group
    if inner:
        return error_line(inner[0])
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]


def broken(error: BaseException) -> bool:
    """Whether the connection is gone (the server exited or closed its pipes), not merely a
    call it refused."""
    inner = getattr(error, "exceptions", None)
    if inner:
        return any(broken(e) for e in inner)
    names = {"ClosedResourceError", "BrokenResourceError", "EndOfStream", "BrokenPipeError"}
    return type(error).__name__ in names or "connection closed" in str(error).lower()


def quiet_package_logs(path: Path) -> None:
    """The package logs what a server got wrong (garbage on its stdout) with tracebacks: into a
    log file of heph's, never onto the person's terminal."""
    import logging

    logger = logging.getLogger("mcp")
    if logger.handlers:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        logger.addHandler(logging.FileHandler(path, encoding="utf-8"))
    except OSError:
        logger.addHandler(logging.NullHandler())
    logger.propagate = False
