"""Local model servers found without setup, and the models an endpoint serves.

With no endpoint configured, heph looks for a server on its usual loopback address (Ollama on
11434, llama.cpp's server on 8080, LM Studio on 1234) with short timeouts, and uses the first
that answers `/v1/models`. `HEPH_DISCOVER` replaces the addresses (comma-separated base URLs;
empty turns discovery off), so tests never touch a real service. Only loopback addresses are
ever asked.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hephaistus.model.serverinfo import urlopen
from hephaistus.settings.config import is_loopback_url

KNOWN_SERVERS = (
    ("Ollama", "http://127.0.0.1:11434/v1"),
    ("llama.cpp", "http://127.0.0.1:8080/v1"),
    ("LM Studio", "http://127.0.0.1:1234/v1"),
)
PROBE_SECONDS = 0.5  # a loopback server answers at once; refused connections fail at once
LIST_SECONDS = 5.0
BUSY_SECONDS = 10.0  # for a server whose port accepts: llama.cpp answers one request at a time


@dataclass(frozen=True)
class ModelInfo:
    """A model an endpoint lists, with its context window when the listing gives it."""

    id: str
    window: int | None = None  # context tokens, when the listing says (vLLM, LM Studio)
    schema: str = "unknown"  # whether the server enforced the step's schema for it (steps)


@dataclass(frozen=True)
class LocalServer:
    """A model server found on this machine, and the models it serves."""

    name: str
    base_url: str
    models: list[ModelInfo]


class ListingError(RuntimeError):
    """The endpoint did not list its models."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out  # it took the connection, then did not answer in time


class Busy(RuntimeError):
    """A local server took the connection but did not list its models in time."""

    def __init__(self, name: str, base_url: str, seconds: float) -> None:
        super().__init__(
            f"{name} at {base_url} took the connection but did not answer within {seconds:g} s: "
            "it may be busy with another request (llama.cpp's server answers one at a time). "
            "Try again when it is done, or set OPENAI_BASE_URL to use it without asking"
        )


def candidates(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(name, base URL) to probe, loopback only."""
    environ = os.environ if environ is None else environ
    configured = environ.get("HEPH_DISCOVER")
    if configured is None:
        return list(KNOWN_SERVERS)
    urls = [u.strip().rstrip("/") for u in configured.split(",") if u.strip()]
    usable = [u for u in urls if u.startswith(("http://", "https://")) and is_loopback_url(u)]
    return [("a local server", url) for url in usable]


def discover() -> LocalServer | None:
    """The first local server that lists its models, or None. A server whose port takes the
    connection is given longer (it may be answering someone else); one that still says
    nothing is Busy, when no other answered."""
    busy: Busy | None = None
    for name, url in candidates():
        if not _accepts(url):
            continue
        try:
            models = list_models(url, None, timeout=BUSY_SECONDS)
        except ListingError as error:
            if error.timed_out and busy is None:
                busy = Busy(name, url, BUSY_SECONDS)
            continue
        return LocalServer(name, url, models)
    if busy is not None:
        raise busy
    return None


def _accepts(url: str) -> bool:
    """Whether something listens at the URL's port (refused at once when nothing does)."""
    import socket
    from urllib.parse import urlparse

    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", port), PROBE_SECONDS):
            return True
    except OSError:
        return False


def list_models(
    base_url: str, api_key: str | None, timeout: float = LIST_SECONDS
) -> list[ModelInfo]:
    """The models `GET {base_url}/models` lists, with their windows when it says them."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    request = urllib.request.Request(f"{base_url.rstrip('/')}/models", headers=headers)
    try:
        with urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read(1_000_000))
    except urllib.error.HTTPError as error:
        raise ListingError(f"{base_url}/models answered HTTP {error.code}") from None
    except ValueError:
        raise ListingError(
            f"{base_url}/models did not answer JSON: is it the API's address?"
        ) from None
    except OSError as error:
        reason = getattr(error, "reason", error)
        timed_out = isinstance(error, TimeoutError) or isinstance(reason, TimeoutError)
        raise ListingError(f"{base_url}/models: {reason}", timed_out=timed_out) from None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ListingError(f"{base_url}/models did not list models")
    return [
        ModelInfo(str(entry["id"]), _window(entry))
        for entry in entries
        if isinstance(entry, dict) and entry.get("id")
    ]


def _window(entry: dict[str, Any]) -> int | None:
    for key in ("max_model_len", "loaded_context_length", "context_length", "max_context_length"):
        value = entry.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None
