"""Ten short tasks in a two-file project, for a real small model (tests/test_real_server.py and
benchmarks/structured.py): what is measured is the protocol, not the model's work."""

from __future__ import annotations

from pathlib import Path

SHORT_TASKS = (
    "read app.py and say what add does",
    "list the files",
    "what does test_app.py test?",
    "search for 'def ' and name the functions",
    "say hello",
    "is there a README?",
    "read test_app.py",
    "which file defines add?",
    "how many lines does app.py have?",
    "say what this project is",
)


def small_project(root: Path) -> None:
    """app.py with add(), and its test."""
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "test_app.py").write_text(
        "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
