"""The reasoning loop, behind the Engine protocol so another architecture can be swapped in."""

from hephaistus.engine.base import Engine, Run
from hephaistus.engine.react import ReactEngine

__all__ = ["Engine", "Run", "ReactEngine"]
