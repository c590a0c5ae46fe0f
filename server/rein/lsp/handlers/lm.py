"""The notifications of the vscode-lm provider (:mod:`rein.lsp.editor_lm`; its
requests go out): ``rein/lm/delta`` to the turn that asked,
``rein/lm/consent`` a person allowed the editor's models."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

if TYPE_CHECKING:
    from rein.lsp.editor_lm import LmHandlerServer

__all__ = ["lm_consent", "lm_delta"]

log = logging.getLogger(__name__)


def lm_delta(server: LmHandlerServer, params: Any) -> None:
    server.lm_host.on_delta(params)


def lm_consent(server: LmHandlerServer, params: Any) -> None:
    from rein.lsp._lm_params import ConsentParams
    from rein.lsp.editor_lm import CONSENT
    from rein.lsp.params import parse

    try:
        parsed = parse(ConsentParams, params, CONSENT)
    except JsonRpcInvalidParams as exc:
        log.warning("%s", exc)
        return
    server.lm_host.consented = parsed.granted
