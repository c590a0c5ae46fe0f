"""Bring your setup: the hooks, skills, custom agents and commands people
already keep in their repositories and home folders (Claude Code's
``.claude/``, Agent Skills' ``SKILL.md``, ``.github/agents`` and
``.github/prompts``), read and run by Rein with its own trust, approvals and
gates."""
