"""Test doubles shipped with the package: a scripted model and a loopback Chat Completions server.

They are real parts, not mocks: the server speaks the OpenAI wire format over HTTP on 127.0.0.1,
so the real `openai` client and the real `heph` command can be driven against it.
"""

from hephaistus.testing.chat_server import ChatServer
from hephaistus.testing.scripted_model import ScriptedModel

__all__ = ["ChatServer", "ScriptedModel"]
