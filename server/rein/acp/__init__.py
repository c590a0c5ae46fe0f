"""Rein over the Agent Client Protocol (``rein acp``): the same sessions as
``rein serve`` and ``rein run``, for the editors that speak ACP (Zed, the
JetBrains IDEs, Neovim, Emacs). Imported only by ``rein acp``."""
