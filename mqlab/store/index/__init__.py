"""The message index: ``topic#key`` → commit-log offsets, in hash-slot files.

Mirrors ``store/index`` (RocketMQ 4.9.3): ``IndexHeader`` and ``IndexFile`` in
``index_file``, ``IndexService`` and ``QueryOffsetResult`` in ``index_service``.
"""

from mqlab.store.index.index_file import (
    HASH_SLOT_SIZE,
    INDEX_HEADER_SIZE,
    INDEX_SIZE,
    IndexFile,
    IndexHeader,
    index_key_hash,
)
from mqlab.store.index.index_service import IndexService, QueryMessageResult, QueryOffsetResult

__all__ = [
    "HASH_SLOT_SIZE",
    "INDEX_HEADER_SIZE",
    "INDEX_SIZE",
    "IndexFile",
    "IndexHeader",
    "IndexService",
    "QueryMessageResult",
    "QueryOffsetResult",
    "index_key_hash",
]
