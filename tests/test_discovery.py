"""A local model server found without setup, and `heph models`, against loopback servers
that answer as Ollama, llama.cpp and vLLM do (the discovery addresses point at them)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hephaistus.testing import ChatServer, final


@pytest.fixture
def ollama():
    with ChatServer(flavour="ollama", models=("qwen2.5-coder:7b",), context_window=8192) as chat:
        yield chat


def nowhere():
    """A loopback address where nothing listens."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_a_local_server_is_found_and_used(heph, ollama):
    ollama.reply(final("hello from ollama"))
    env = {"OPENAI_BASE_URL": None, "HEPH_DISCOVER": f"{nowhere()},{ollama.url}"}
    result = heph("say hello", env=env)
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "hello from ollama"
    assert f"heph: using a local server at {ollama.url}, model qwen2.5-coder:7b" in result.stderr
    assert ollama.requests[0]["model"] == "qwen2.5-coder:7b"


def test_a_proxy_in_the_environment_does_not_hide_a_local_server(heph, ollama):
    proxy = {name: nowhere() for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")}
    env = {"OPENAI_BASE_URL": None, "HEPH_DISCOVER": ollama.url, **proxy}
    listed = heph("models", env=env)  # discovery, the listing and the window: all direct
    assert listed.code == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split() == ["*", "qwen2.5-coder:7b", "8,192", "unknown"]
    ollama.reply(final("direct"))
    assert heph("say hello", env=env).stdout.strip() == "direct"


def test_several_models_need_a_choice(heph, workspace):
    with ChatServer(models=("llama3", "qwen2.5-coder")) as server:
        env = {"OPENAI_BASE_URL": None, "HEPH_DISCOVER": server.url}
        result = heph("task", env=env)
        assert result.code == 2
        assert "serves several models; pass one with -m" in result.stderr
        assert "llama3, qwen2.5-coder" in result.stderr
        server.reply(final("ok"))
        chosen = heph("-m", "qwen2.5-coder", "task", env=env)
        assert chosen.code == 0 and server.requests[-1]["model"] == "qwen2.5-coder"


def test_nothing_found_is_the_clear_configuration_error(heph):
    result = heph("task", env={"OPENAI_BASE_URL": None, "HEPH_DISCOVER": nowhere()})
    assert result.code == 2 and "no model endpoint is configured" in result.stderr


def test_only_loopback_addresses_are_ever_asked(heph):
    addresses = "http://192.0.2.1:11434/v1, not a url, http://[::1:bad/v1, ftp://127.0.0.1/x"
    env = {"OPENAI_BASE_URL": None, "HEPH_DISCOVER": addresses}
    result = heph("task", env=env, timeout=5)
    assert result.code == 2 and "no model endpoint is configured" in result.stderr


def test_models_lists_the_endpoint_models_marking_the_configured_one(heph):
    with ChatServer(flavour="vllm", models=("a-model", "b-model"), context_window=32768) as vllm:
        result = heph("models", env={"OPENAI_BASE_URL": vllm.url, "HEPH_MODEL": "b-model"})
        assert result.code == 0, result.stderr
        lines = [line.split() for line in result.stdout.splitlines()]
        assert lines[0] == ["MODEL", "CONTEXT", "SCHEMA"]
        assert ["a-model", "32,768", "unknown"] in lines
        assert ["*", "b-model", "32,768", "unknown"] in lines
        data = heph("models", "--json", env={"OPENAI_BASE_URL": vllm.url}).json
        first = {"id": "a-model", "window": 32768, "schema": "unknown", "configured": False}
        assert data["models"][0] == first


def test_models_asks_a_local_server_for_the_window_it_runs(heph, ollama):
    result = heph("models", env={"OPENAI_BASE_URL": None, "HEPH_DISCOVER": ollama.url})
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines()[1].split() == ["*", "qwen2.5-coder:7b", "8,192", "unknown"]
    assert f"a local server at {ollama.url} (found on this machine)" in result.stderr


def test_models_from_an_address_that_is_not_the_api(heph):
    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>a web page</html>")

        def log_message(self, *args):
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    # Polling for shutdown() every 10 ms, not every half second (the default).
    threading.Thread(target=site.serve_forever, args=(0.01,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{site.server_address[1]}/v1"
        result = heph("models", env={"OPENAI_BASE_URL": url})
    finally:
        site.shutdown()
    assert result.code == 1 and "Traceback" not in result.stderr
    assert f"{url}/models did not answer JSON: is it the API's address?" in result.stderr
