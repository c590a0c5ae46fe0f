"""A file with an error the workspace already had (it must not block)."""


def broken() -> int:
    return undefined_legacy_name
