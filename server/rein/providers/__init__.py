"""Model implementations: replay (scripted) and, over httpx, OpenAI-compatible
and Anthropic. This package is the only place httpx is imported."""
