"""Rein: an LLM coding-agent harness hosted in a language server."""

__version__ = "0.1.0"
__all__ = ["__version__"]
