"""headless layer (see docs/architecture.md)."""
