"""`heph acp`: serve an editor over the Agent Client Protocol (see hephaistus.acp.router)."""

from __future__ import annotations

import argparse


def acp(args: argparse.Namespace) -> int:
    """Speak ACP on stdin/stdout until the editor closes the connection."""
    from hephaistus.acp.router import main

    return main()
