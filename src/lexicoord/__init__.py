"""lexicoord: semantic coordination among LLM agents and people."""

__version__ = "0.1.0"
