"""DLedger's checked failure: a response code and a message; and an unchecked one.

Mirrors ``DLedgerException`` and ``PreConditions#check`` (DLedger 0.2.3): a failed check
raises with the code the caller turns into a response (``DLedgerServer#handleAppend`` answers
NOT_LEADER this way), or, in a dispatcher, into a fall back to COMPARE.
"""

from __future__ import annotations

from mqlab.dledger.protocol import DLedgerResponseCode

__all__ = ["DLedgerException", "JavaRuntimeException", "check"]


class DLedgerException(Exception):
    """Mirrors ``DLedgerException``: ``code`` is a ``DLedgerResponseCode``."""

    def __init__(self, code: DLedgerResponseCode, message: str = "") -> None:
        super().__init__(f"[code={int(code)},name={code.name}] {message}".rstrip())
        self.code = code


class JavaRuntimeException(RuntimeError):
    """An unchecked Java exception a hook throws inside a handler (an ``AppendHook`` on a
    buffer too short). Nothing in 0.2.3 catches it: 4.9.3's ``NettyRemotingAbstract#
    processRequestCommand`` answers SYSTEM_ERROR with ``RemotingHelper#exceptionSimpleDesc``,
    the exception and its top frame, which is ``str(e)``, as JDK 17 writes it."""


def check(expression: bool, code: DLedgerResponseCode, message: str = "") -> None:
    """``PreConditions#check``: raise ``DLedgerException(code)`` when ``expression`` is false."""
    if not expression:
        raise DLedgerException(code, message)
