"""Test doubles shipped with the package: a scripted model and a loopback Chat Completions server.

They are real parts, not mocks: the server speaks the OpenAI wire format over HTTP on 127.0.0.1,
so the real `openai` client and the real `heph` command can be driven against it.

May import: `settings`, `runtime`, `workspace`, `records`, `tools`, `mcp`, `model`, `docs`,
`engine`.
"""

import sys
from pathlib import Path

from hephaistus.testing.chat_server import ChatServer
from hephaistus.testing.replies import act, final
from hephaistus.testing.scripted_model import ScriptedModel

__all__ = ["ChatServer", "ScriptedModel", "act", "final", "heph_command"]


def heph_command() -> list[str]:
    """How to run the installed `heph`: the script beside this interpreter, else
    `python -m hephaistus`."""
    script = Path(sys.executable).with_name("heph")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hephaistus"]
