"""What an OpenAI-compatible server can tell about the model it serves: its context window.

Each kind of server says it its own way: vLLM in `/v1/models` (max_model_len), llama.cpp's server
in `/props` (n_ctx), Ollama in `/api/show` (num_ctx, the size it truncates prompts to), LM Studio
in `/api/v0/models`. Asked with short timeouts, once per endpoint and model (the answer is cached in
the workspace); servers that say nothing leave the choice to the table of known models.
"""

from __future__ import annotations

import functools
import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

from hephaistus.config import is_loopback_url

ASK_SECONDS = 2.0
OLLAMA_DEFAULT_NUM_CTX = 4096  # what Ollama runs a model with when num_ctx is not set
CACHE_DAYS = 7


def served_window(base_url: str, model: str, api_key: str | None) -> tuple[int, str] | None:
    """(window in tokens, which server said it), or None when the server does not say."""
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    models = _get(f"{base_url.rstrip('/')}/models", headers)
    entries = [e for e in (models or {}).get("data") or [] if isinstance(e, dict)]
    for entry in entries:
        size = entry.get("max_model_len")
        if isinstance(size, int) and (entry.get("id") == model or len(entries) == 1):
            return size, "the server (vLLM max_model_len)"
    props = _get(f"{root}/props", headers)
    settings = (props or {}).get("default_generation_settings") or props or {}
    if isinstance(settings.get("n_ctx"), int):
        return settings["n_ctx"], "the server (llama.cpp n_ctx)"
    show = _post(f"{root}/api/show", {"model": model}, headers)
    if show and ("model_info" in show or "parameters" in show):
        num_ctx = re.search(r"^num_ctx\s+(\d+)", str(show.get("parameters") or ""), re.M)
        if num_ctx:
            return int(num_ctx.group(1)), "the server (Ollama num_ctx)"
        return OLLAMA_DEFAULT_NUM_CTX, "Ollama's default num_ctx (set num_ctx to use more)"
    studio = _get(f"{root}/api/v0/models", headers)
    loaded = [e for e in (studio or {}).get("data") or [] if isinstance(e, dict)]
    for entry in loaded:
        size = entry.get("loaded_context_length") or entry.get("max_context_length")
        if isinstance(size, int) and (entry.get("id") == model or len(loaded) == 1):
            return size, "the server (LM Studio)"
    return None


def cached_window(
    cache: Path, base_url: str, model: str, api_key: str | None
) -> tuple[int, str] | None:
    """served_window, remembered in `cache` (a JSON file) per endpoint and model."""
    key = f"{base_url.rstrip('/')} {model}"
    known = _read(cache)
    entry = known.get(key) if isinstance(known, dict) else None
    if isinstance(entry, list) and len(entry) == 3 and time.time() - entry[2] < CACHE_DAYS * 86400:
        return (entry[0], entry[1]) if entry[0] else None
    found = served_window(base_url, model, api_key)
    known[key] = [found[0], found[1], time.time()] if found else [0, "", time.time()]
    _write(cache, known)  # asking again next time only costs a moment, if it cannot be
    return found


def remember_window(cache: Path, base_url: str, model: str, window: int, source: str) -> None:
    """Keep a window learned another way (a server's overflow error) for the next runs."""
    known = _read(cache)
    known[f"{base_url.rstrip('/')} {model}"] = [window, source, time.time()]
    _write(cache, known)


def _read(cache: Path) -> dict[str, Any]:
    """The windows remembered, if heph itself sealed the file here (see provenance)."""
    from hephaistus.provenance import unseal
    from hephaistus.textfile import read_real

    try:
        data = unseal(_kind(cache), read_real(cache))
        known = json.loads(data) if data is not None else {}
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def _write(cache: Path, known: dict[str, Any]) -> None:
    from hephaistus.provenance import seal
    from hephaistus.textfile import atomic_write

    data = seal(_kind(cache), json.dumps(known, indent=1).encode())
    try:  # a rename over the file: a link planted in its place is replaced, never followed
        atomic_write(cache, data, temp_dir=cache.parent.parent / "tmp")
    except OSError:
        pass


def _kind(cache: Path) -> str:
    """The seal's kind: the windows cache of this workspace (`.heph/cache/windows.json`)."""
    return f"windows {cache.parent.parent.parent}"


def _get(url: str, headers: dict[str, str]) -> Any:
    return _ask(urllib.request.Request(url, headers=headers))


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={**headers, "Content-Type": "application/json"}
    )
    return _ask(request)


def _ask(request: urllib.request.Request) -> Any:
    try:
        with urlopen(request, timeout=ASK_SECONDS) as response:
            return json.loads(response.read(1_000_000))
    except (OSError, ValueError):
        return None


def urlopen(request: urllib.request.Request, timeout: float) -> Any:
    """Open `request`: a server on this machine directly, whatever proxy the environment sets
    (a proxy cannot reach the loopback address), as the model client does."""
    if is_loopback_url(request.full_url):
        return _direct().open(request, timeout=timeout)
    return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310


@functools.cache
def _direct() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))
