"""Which endpoint and model a run uses, and where each choice came from.

The endpoint is the person's: `--base-url`, `OPENAI_BASE_URL`, the user config or a trusted
workspace's, else OpenAI's, else a local server found on its usual address. The model is the one
chosen, else the endpoint's only one (several are an error naming them): one choice for tasks,
the chat and `heph models` alike. `describe` says all that for `-v`, before the first request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hephaistus.errors import ConfigError
from hephaistus.model.discovery import LocalServer
from hephaistus.settings.config import OPENAI_URL, Config

SHOWN_MODELS = 20  # named in the error about an endpoint serving several


def with_endpoint(config: Config, tell: Callable[[str], None]) -> Config:
    """`config`, with a local server found on its usual address when no endpoint is set, and
    the model an endpoint serves when none is chosen: one choice everywhere (tasks, the chat,
    `heph models`), never a default the server does not have."""
    if config.resolved_api_key():
        return served_model(config)
    found = local_server()
    names = [model.id for model in found.models]
    configured = config.chosen_model
    if configured and (configured in names or not names):
        model = configured
    elif len(names) == 1:
        model = names[0]
    elif not names:
        raise ConfigError(f"{found.name} at {found.base_url} serves no model; load one first")
    else:
        raise ConfigError(
            f"{found.name} at {found.base_url} serves several models; pass one with -m "
            f"(or HEPH_MODEL): {', '.join(names)}"
        )
    tell(
        f"heph: using {found.name} at {found.base_url}, model {model} (found on this machine; "
        "set OPENAI_BASE_URL to choose)"
    )
    sources = {**dict(config.sources), "base_url": "found on this machine"}
    if model != configured:
        sources["model"] = "the only model that server serves"
    return replace(config, base_url=found.base_url, model=model, sources=tuple(sources.items()))


def served_model(config: Config) -> Config:
    """With an endpoint but no model chosen: the endpoint's only model, or an error naming
    its models when it serves several. OpenAI's own endpoint keeps the default."""
    from hephaistus.model.discovery import ListingError, list_models

    url = config.endpoint_url
    if config.chosen_model or url == OPENAI_URL:
        return config
    try:
        names = [model.id for model in list_models(url, config.resolved_api_key())]
    except ListingError:
        return config  # it does not list them: the request says whether the default exists
    if len(names) == 1:
        sources = {**dict(config.sources), "model": "the only model that server serves"}
        return replace(config, model=names[0], sources=tuple(sources.items()))
    if len(names) > 1:
        shown = ", ".join(names[:SHOWN_MODELS])
        more = (
            f", and {len(names) - SHOWN_MODELS} more (heph models lists them)"
            if len(names) > SHOWN_MODELS
            else ""
        )
        raise ConfigError(
            f"{url} serves several models; pass one with -m (or HEPH_MODEL, or model in the "
            f"user config): {shown}{more}"
        )
    return config


def describe(config: Config) -> str:
    """Where the requests (and the API key) go, and where each choice came from: said by -v
    before the first request."""
    url = config.endpoint_url
    where = config.source_of("base_url")
    if where == "default":
        where = "OpenAI's, as no endpoint is set"
    if config.api_key:
        key = "the API key from OPENAI_API_KEY goes there"
    elif config.resolved_api_key():
        key = "no API key is sent (a placeholder, for a server on this machine)"
    else:
        key = "no API key is set"
    model = f"model {config.model} ({config.source_of('model')})"
    mode = f"{config.mode} mode ({config.source_of('mode')})"
    return f"endpoint: {url} ({where}); {model}; {key}; {mode}"


def local_server() -> LocalServer:
    """A model server on this machine's usual addresses, or the error that none is set."""
    from hephaistus.model.discovery import Busy, discover
    from hephaistus.model.llm import missing_key_message

    try:
        found = discover()
    except Busy as busy:
        raise ConfigError(str(busy)) from None
    if found is None:
        raise ConfigError(missing_key_message())
    return found


def model_used(config: Config, names: list[str]) -> str | None:
    """The model heph would ask: the configured one, or a local server's only one."""
    if config.chosen_model or not config.is_local:
        return str(config.model)
    return names[0] if len(names) == 1 else None


def served_window(url: str, model: str, config: Config) -> int | None:
    """The window a local server runs `model` with, when it says."""
    from hephaistus.model import serverinfo

    found = serverinfo.served_window(url, model, config.resolved_api_key())
    return found[0] if found else None


def check_base_url(config: Config) -> None:
    """A configured endpoint must be an http(s) URL with a host (`127.0.0.1:9` is not): a
    configuration error naming the flag, variable or file it came from."""
    from urllib.parse import urlsplit

    url = config.base_url or ""
    try:
        parts = urlsplit(url)
        if not url or (parts.scheme in ("http", "https") and parts.hostname):
            return
    except ValueError:  # "http://[::1:bad"
        pass
    source = config.source_of("base_url")
    where = source if source.startswith(("--", "environment")) else f"base_url in {source}"
    hint = f" (did you mean http://{url}?)" if "://" not in url else ""
    raise ConfigError(
        f"{where}: '{url}' is not an http(s) URL{hint}; an endpoint is written like "
        "http://localhost:8080/v1"
    )
