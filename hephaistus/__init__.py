"""Hephaistus: a workspace-scoped AI coding assistant for the terminal.

Importing this package does nothing but define the version: no I/O, no clients, no heavy imports.
"""

__version__ = "0.1.0"
