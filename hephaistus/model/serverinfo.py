"""What an OpenAI-compatible server can tell about the model it serves: its context window, and
what kind of server it is (which decides how it takes a step's schema: see steps).

Each kind of server says it its own way: vLLM in `/v1/models` (max_model_len), llama.cpp's server
in `/props` (n_ctx), Ollama in `/api/show` (num_ctx, the size it truncates prompts to), LM Studio
in `/api/v0/models`. Asked with short timeouts, once per endpoint and model (the answer is cached in
the workspace, and in the user's state for their other workspaces); servers that say nothing leave
the choice to the table of known models. A server busy with another request (llama-cpp-python
serves one at a time) is asked once more; if it still does not answer, what it said before holds.
"""

from __future__ import annotations

import functools
import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from hephaistus.settings.config import is_loopback_url

ASK_SECONDS = 2.0
OLLAMA_DEFAULT_NUM_CTX = 4096  # what Ollama runs a model with when num_ctx is not set
CACHE_DAYS = 7


@dataclass(frozen=True)
class ServerFacts:
    """What a server's own endpoints told: the window it runs the model with (0: it did not
    say), which server said it, and the server's kind (llama.cpp, vllm, ...; "" unknown);
    `answered` is False when it was too busy to say anything."""

    window: int
    source: str
    kind: str
    answered: bool = True


class _Busy(Exception):
    """The server took the request but gave no answer in time."""


# What `owned_by` says in /v1/models, for servers that say who they are there.
OWNERS = {"me": "llama-cpp-python", "llamacpp": "llama.cpp", "vllm": "vllm"}


def served_window(base_url: str, model: str, api_key: str | None) -> tuple[int, str] | None:
    """(window in tokens, which server said it), or None when the server does not say."""
    facts = probe(base_url, model, api_key)
    return (facts.window, facts.source) if facts.window else None


def probe(base_url: str, model: str, api_key: str | None) -> ServerFacts:
    """Ask the server's own endpoints (not the chat) what it is and what window it runs; once
    more when it is too busy to answer in time."""
    for _ in range(2):
        try:
            return _probe(base_url, model, api_key)
        except _Busy:
            continue
    return ServerFacts(0, "", "", answered=False)


def _probe(base_url: str, model: str, api_key: str | None) -> ServerFacts:
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    models = _get(f"{base_url.rstrip('/')}/models", headers)
    entries = [e for e in (models or {}).get("data") or [] if isinstance(e, dict)]
    owners = {e.get("owned_by") for e in entries}
    kind = next((OWNERS[o] for o in owners if isinstance(o, str) and o in OWNERS), "")
    for entry in entries:
        size = entry.get("max_model_len")
        if isinstance(size, int) and (entry.get("id") == model or len(entries) == 1):
            return ServerFacts(size, "the server (vLLM max_model_len)", "vllm")
    if kind == "llama-cpp-python":
        return ServerFacts(0, "", kind)  # it has no endpoint that tells its window
    props = _get(f"{root}/props", headers)
    settings = (props or {}).get("default_generation_settings") or props or {}
    if isinstance(settings.get("n_ctx"), int):
        return ServerFacts(settings["n_ctx"], "the server (llama.cpp n_ctx)", "llama.cpp")
    show = _post(f"{root}/api/show", {"model": model}, headers)
    if show and ("model_info" in show or "parameters" in show):
        num_ctx = re.search(r"^num_ctx\s+(\d+)", str(show.get("parameters") or ""), re.M)
        if num_ctx:
            return ServerFacts(int(num_ctx.group(1)), "the server (Ollama num_ctx)", "ollama")
        return ServerFacts(
            OLLAMA_DEFAULT_NUM_CTX, "Ollama's default num_ctx (set num_ctx to use more)", "ollama"
        )
    studio = _get(f"{root}/api/v0/models", headers)
    loaded = [e for e in (studio or {}).get("data") or [] if isinstance(e, dict)]
    for entry in loaded:
        size = entry.get("loaded_context_length") or entry.get("max_context_length")
        if isinstance(size, int) and (entry.get("id") == model or len(loaded) == 1):
            return ServerFacts(size, "the server (LM Studio)", "lmstudio")
    return ServerFacts(0, "", kind or ("lmstudio" if loaded else ""))


def cached_facts(cache: Path, base_url: str, model: str, api_key: str | None) -> ServerFacts:
    """probe, remembered in `cache` (a JSON file) per endpoint and model. A server too busy
    to answer is taken for what it said before, here or in the person's other workspaces
    (a busy llama.cpp server still enforces the step's schema), and asked again next run."""
    key = f"{base_url.rstrip('/')} {model}"
    known = _read(cache)
    entry = known.get(key)
    if _is_entry(entry) and time.time() - entry[2] < CACHE_DAYS * 86400:
        return _facts_of(entry)
    found = probe(base_url, model, api_key)
    if not found.answered:
        before = entry if _is_entry(entry) else _user_record().get(key)
        return _facts_of(before) if _is_entry(before) else found
    known[key] = [found.window, found.source, time.time(), found.kind]
    _write(cache, known)  # asking again next time only costs a moment, if it cannot be
    _remember_for_the_user(key, known[key])
    return found


def _is_entry(entry: Any) -> TypeGuard[list[Any]]:
    """Whether `entry` is a cache entry: [window, source, time, kind]."""
    return isinstance(entry, list) and len(entry) >= 3 and isinstance(entry[2], (int, float))


def _facts_of(entry: list[Any]) -> ServerFacts:
    kind = entry[3] if len(entry) > 3 and isinstance(entry[3], str) else ""
    window = entry[0] if isinstance(entry[0], int) else 0
    return ServerFacts(window, entry[1] if isinstance(entry[1], str) else "", kind)


USER_RECORD = "servers.json"  # in the user's state folder: what each server said last


def _user_record() -> dict[str, Any]:
    from hephaistus.settings.userdirs import state_dir

    try:
        known = json.loads((state_dir() / USER_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def _remember_for_the_user(key: str, entry: list[Any]) -> None:
    """Keep what the server said for the person's other workspaces (their state folder,
    which no repository can write)."""
    from hephaistus.settings.userdirs import state_dir
    from hephaistus.textfile import atomic_write

    known = {**_user_record(), key: entry}
    try:
        state_dir().mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(state_dir() / USER_RECORD, json.dumps(known).encode(), mode=0o600)
    except OSError:
        pass  # only costs the fallback when the server is busy


def cached_window(
    cache: Path, base_url: str, model: str, api_key: str | None
) -> tuple[int, str] | None:
    """served_window, remembered in `cache` per endpoint and model."""
    facts = cached_facts(cache, base_url, model, api_key)
    return (facts.window, facts.source) if facts.window else None


def remembered_window(cache: Path, base_url: str, model: str) -> int | None:
    """The window kept in `cache` for this endpoint and model (the server said it, or its
    overflow error taught it), without asking the server."""
    entry = _read(cache).get(f"{base_url.rstrip('/')} {model}")
    return (_facts_of(entry).window or None) if _is_entry(entry) else None


def remember_window(cache: Path, base_url: str, model: str, window: int, source: str) -> None:
    """Keep a window learned another way (a server's overflow error) for the next runs."""
    known = _read(cache)
    key = f"{base_url.rstrip('/')} {model}"
    entry = known.get(key)
    kind = entry[3] if isinstance(entry, list) and len(entry) > 3 else ""
    known[key] = [window, source, time.time(), kind]
    _write(cache, known)


class SchemaRecord:
    """Whether a server enforced the step's schema for a model (`.heph/cache/schema.json`):
    "enforced" once a reply kept to it, "not enforced" once one broke it (for CACHE_DAYS:
    the server may be updated), "unknown" before either."""

    def __init__(self, cache: Path, base_url: str, model: str) -> None:
        self.cache = cache
        self.key = f"{base_url.rstrip('/')} {model}"
        self._verdict: str | None = None

    def verdict(self) -> str:
        """enforced, not enforced or unknown (read from the cache once)."""
        if self._verdict is None:
            entry = _read(self.cache, "schema").get(self.key)
            self._verdict = "unknown"
            if (
                isinstance(entry, list)
                and len(entry) == 2
                and isinstance(entry[1], float)
                and time.time() - entry[1] < CACHE_DAYS * 86400
            ):
                self._verdict = str(entry[0])
        return self._verdict

    def note(self, verdict: str) -> None:
        """What the last reply showed; "not enforced" is not undone by a reply that kept to
        the schema by chance."""
        if self.verdict() in (verdict, "not enforced"):
            return
        self._verdict = verdict
        known = _read(self.cache, "schema")
        known[self.key] = [verdict, time.time()]
        _write(self.cache, known, "schema")

    def refused(self) -> set[str]:
        """The schema shapes the server answered 400 to (for CACHE_DAYS): not sent again."""
        entry = _read(self.cache, "schema").get(f"refused {self.key}")  # no URL key's spelling
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], float)):
            return set()
        shapes, when = entry
        if time.time() - when >= CACHE_DAYS * 86400 or not isinstance(shapes, list):
            return set()
        return {shape for shape in shapes if isinstance(shape, str)}

    def refuse(self, shape: str) -> None:
        """The server answered 400 to `shape`: later runs do not send it either."""
        known = _read(self.cache, "schema")
        known[f"refused {self.key}"] = [sorted(self.refused() | {shape}), time.time()]
        _write(self.cache, known, "schema")


def schema_verdicts(cache: Path, base_url: str) -> dict[str, str]:
    """Each model's verdict for the server at `base_url` (see SchemaRecord)."""
    prefix = f"{base_url.rstrip('/')} "
    return {
        key[len(prefix) :]: SchemaRecord(cache, base_url, key[len(prefix) :]).verdict()
        for key in _read(cache, "schema")
        if key.startswith(prefix)
    }


def _read(cache: Path, what: str = "windows") -> dict[str, Any]:
    """What is remembered, if heph itself sealed the file here (see provenance)."""
    from hephaistus.workspace.provenance import read_cache

    known = read_cache(cache, what)
    return known if isinstance(known, dict) else {}


def _write(cache: Path, known: dict[str, Any], what: str = "windows") -> None:
    from hephaistus.workspace.provenance import write_cache

    write_cache(cache, what, known)


def _get(url: str, headers: dict[str, str]) -> Any:
    return _ask(urllib.request.Request(url, headers=headers))


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={**headers, "Content-Type": "application/json"}
    )
    return _ask(request)


def _ask(request: urllib.request.Request) -> Any:
    """The JSON answer, or None (no such endpoint, nothing listening, not JSON); _Busy when
    the server took the request and did not answer within ASK_SECONDS."""
    try:
        with urlopen(request, timeout=ASK_SECONDS) as response:
            return json.loads(response.read(1_000_000))
    except TimeoutError:
        raise _Busy from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            raise _Busy from None
        return None
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
