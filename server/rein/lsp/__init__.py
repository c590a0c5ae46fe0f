"""lsp layer (see docs/architecture.md)."""
