"""DLedger's checked failure: a response code and a message.

Mirrors ``DLedgerException`` and ``PreConditions#check`` (DLedger 0.2.3): a failed check
raises with the code the caller turns into a response (``DLedgerServer#handleAppend`` answers
NOT_LEADER this way), or, in a dispatcher, into a fall back to COMPARE.
"""

from __future__ import annotations

from mqlab.dledger.protocol import DLedgerResponseCode

__all__ = ["DLedgerException", "check"]


class DLedgerException(Exception):
    """Mirrors ``DLedgerException``: ``code`` is a ``DLedgerResponseCode``."""

    def __init__(self, code: DLedgerResponseCode, message: str = "") -> None:
        super().__init__(f"[code={int(code)},name={code.name}] {message}".rstrip())
        self.code = code


def check(expression: bool, code: DLedgerResponseCode, message: str = "") -> None:
    """``PreConditions#check``: raise ``DLedgerException(code)`` when ``expression`` is false."""
    if not expression:
        raise DLedgerException(code, message)
