"""What the store answers: put / append / get statuses and results, and dispatch requests.

Mirrors ``PutMessageStatus``, ``AppendMessageStatus``, ``GetMessageStatus``,
``PutMessageResult``, ``AppendMessageResult``, ``GetMessageResult`` and
``DispatchRequest`` (store, RocketMQ 4.9.3); docs/reference.md §10.1, §10.6 steps 8–10.

What this module owns: the names (RocketMQ's, including the ``CREATE_MAPEDFILE_FAILED``
spelling) and the shapes. What it must not know: response codes. The broker maps a
``PutMessageStatus`` / ``GetMessageStatus`` to a ``ResponseCode`` (docs/reference.md §10.2 step 11,
§10.6 step 10); a ``GetMessageStatus`` maps conditionally (NO_MESSAGE_IN_QUEUE depends on
the requested offset), so that mapping is code in the pull processor, not a table here.

``GetMessageResult.message_buffers`` holds the raw stored entries (read-only
``memoryview`` slices of the commit log's memory-mapped files): a pull response body is
``b"".join(result.message_buffers)``, as RocketMQ concatenates the selected buffers.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from mqlab.common.message_decoder import create_message_id

__all__ = [
    "PutMessageStatus",
    "AppendMessageStatus",
    "GetMessageStatus",
    "PutMessageResult",
    "AppendMessageResult",
    "GetMessageResult",
    "DispatchRequest",
]


class PutMessageStatus(Enum):
    """Mirrors ``PutMessageStatus`` (store, RocketMQ 4.9.3); docs/reference.md §10.6 step 10."""

    PUT_OK = "PUT_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"
    SERVICE_NOT_AVAILABLE = "SERVICE_NOT_AVAILABLE"
    CREATE_MAPEDFILE_FAILED = "CREATE_MAPEDFILE_FAILED"
    MESSAGE_ILLEGAL = "MESSAGE_ILLEGAL"
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    OS_PAGECACHE_BUSY = "OS_PAGECACHE_BUSY"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"
    LMQ_CONSUME_QUEUE_NUM_EXCEEDED = "LMQ_CONSUME_QUEUE_NUM_EXCEEDED"


class AppendMessageStatus(Enum):
    """Mirrors ``AppendMessageStatus`` (store, RocketMQ 4.9.3)."""

    PUT_OK = "PUT_OK"
    END_OF_FILE = "END_OF_FILE"
    MESSAGE_SIZE_EXCEEDED = "MESSAGE_SIZE_EXCEEDED"
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"


class GetMessageStatus(Enum):
    """Mirrors ``GetMessageStatus`` (store, RocketMQ 4.9.3); docs/reference.md §10.1, mechanisms.md "DefaultMessageStore#getMessage"."""

    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"


class AppendMessageResult:
    """Where an append landed.

    Mirrors ``AppendMessageResult`` (store, RocketMQ 4.9.3). As in 4.9.3 the offset
    message id is computed lazily (Java passes a ``Supplier<String>``): building the hex
    string for every append costs time nobody may need; ``msg_id`` builds it on first
    read. For a batch it is the comma-joined ids of every message.
    """

    __slots__ = (
        "status",
        "wrote_offset",
        "wrote_bytes",
        "_msg_id",
        "_store_host",
        "store_timestamp",
        "logics_offset",
        "page_cache_rt",
        "msg_num",
    )

    def __init__(
        self,
        status: AppendMessageStatus,
        wrote_offset: int = 0,
        wrote_bytes: int = 0,
        msg_id: str | Callable[[], str] | None = None,
        store_timestamp: int = 0,
        logics_offset: int = 0,
        page_cache_rt: int = 0,
        msg_num: int = 1,
        store_host: str | None = None,
    ) -> None:
        self.status = status
        self.wrote_offset = wrote_offset
        self.wrote_bytes = wrote_bytes
        self._msg_id = msg_id
        self._store_host = store_host
        self.store_timestamp = store_timestamp
        self.logics_offset = logics_offset
        self.page_cache_rt = page_cache_rt
        self.msg_num = msg_num

    @property
    def msg_id(self) -> str:
        """The offset message id: given, supplied by a function, or built from
        ``store_host`` and ``wrote_offset`` (``MessageDecoder#createMessageId``)."""
        m = self._msg_id
        if m is None:
            m = create_message_id(self._store_host, self.wrote_offset) if self._store_host else ""
        elif callable(m):
            m = m()
        self._msg_id = m
        return m

    def is_ok(self) -> bool:
        return self.status is AppendMessageStatus.PUT_OK

    def __repr__(self) -> str:
        return (
            f"AppendMessageResult(status={self.status.name}, wrote_offset={self.wrote_offset}, "
            f"wrote_bytes={self.wrote_bytes}, msg_id={self.msg_id!r}, "
            f"store_timestamp={self.store_timestamp}, logics_offset={self.logics_offset}, "
            f"msg_num={self.msg_num})"
        )


class PutMessageResult:
    """Mirrors ``PutMessageResult`` (store, RocketMQ 4.9.3).

    ``is_ok()`` is true whenever the append succeeded, including FLUSH_DISK_TIMEOUT,
    FLUSH_SLAVE_TIMEOUT and SLAVE_NOT_AVAILABLE (the message is stored; docs/reference.md §10.6
    step 10 "counts as sent").
    """

    __slots__ = ("put_message_status", "append_message_result", "replica_request")

    def __init__(
        self,
        put_message_status: PutMessageStatus,
        append_message_result: AppendMessageResult | None = None,
    ) -> None:
        self.put_message_status = put_message_status
        self.append_message_result = append_message_result
        #: SYNC_MASTER: the ``GroupCommitRequest`` still waiting for a slave (4.9.3's
        #: ``replicaResultFuture``); its status, when it comes, overrides PUT_OK
        #: (``thenCombine``). None: nothing to wait for.
        self.replica_request = None

    def is_ok(self) -> bool:
        return self.append_message_result is not None and self.append_message_result.is_ok()

    def __repr__(self) -> str:
        return (
            f"PutMessageResult(put_message_status={self.put_message_status.name}, "
            f"append_message_result={self.append_message_result!r})"
        )


class GetMessageResult:
    """What ``DefaultMessageStore#getMessage`` found.

    Mirrors ``GetMessageResult`` (store, RocketMQ 4.9.3); docs/reference.md §10.1, mechanisms.md "DefaultMessageStore#getMessage".
    ``message_buffers[i]`` is the raw stored entry of the message at logical offset
    ``message_queue_offsets[i]``.
    """

    __slots__ = (
        "status",
        "next_begin_offset",
        "min_offset",
        "max_offset",
        "message_buffers",
        "message_queue_offsets",
        "buffer_total_size",
        "message_count",
        "suggest_pulling_from_slave",
        "msg_count4_commercial",
    )

    def __init__(self) -> None:
        self.status: GetMessageStatus = GetMessageStatus.NO_MESSAGE_IN_QUEUE
        self.next_begin_offset = 0
        self.min_offset = 0
        self.max_offset = 0
        self.message_buffers: list[memoryview | bytes] = []
        self.message_queue_offsets: list[int] = []
        self.buffer_total_size = 0
        self.message_count = 0
        self.suggest_pulling_from_slave = False
        self.msg_count4_commercial = 0

    def add_message(self, buffer: memoryview | bytes, queue_offset: int) -> None:
        """Mirrors ``GetMessageResult#addMessage``."""
        self.message_buffers.append(buffer)
        self.message_queue_offsets.append(queue_offset)
        self.message_count += 1
        self.buffer_total_size += len(buffer)

    def body(self) -> bytes:
        """The pull response body: the entries end to end (docs/reference.md §4.6)."""
        return b"".join(self.message_buffers)

    def __repr__(self) -> str:
        return (
            f"GetMessageResult [status={self.status.name}, nextBeginOffset="
            f"{self.next_begin_offset}, minOffset={self.min_offset}, maxOffset="
            f"{self.max_offset}, bufferTotalSize={self.buffer_total_size}, "
            f"suggestPullingFromSlave={self.suggest_pulling_from_slave}]"
        )


class DispatchRequest:
    """One commit-log entry as the reput service reads it.

    Mirrors ``DispatchRequest`` (store, RocketMQ 4.9.3). ``msg_size`` is the entry size
    (0 for the blank end-of-file marker, -1 for an unreadable entry); ``success`` says
    whether the entry was valid. ``consume_queue_offset`` is the QUEUEOFFSET stored in
    the entry (assigned at append time).
    """

    __slots__ = (
        "topic",
        "queue_id",
        "commit_log_offset",
        "msg_size",
        "tags_code",
        "store_timestamp",
        "consume_queue_offset",
        "keys",
        "success",
        "uniq_key",
        "sys_flag",
        "prepared_transaction_offset",
        "properties_map",
        "bit_map",
        "buffer_size",
    )

    def __init__(
        self,
        msg_size: int,
        success: bool,
        topic: str = "",
        queue_id: int = 0,
        commit_log_offset: int = 0,
        tags_code: int = 0,
        store_timestamp: int = 0,
        consume_queue_offset: int = 0,
        keys: str | None = None,
        uniq_key: str | None = None,
        sys_flag: int = 0,
        prepared_transaction_offset: int = 0,
        properties_map: dict[str, str] | None = None,
    ) -> None:
        self.msg_size = msg_size
        self.success = success
        self.topic = topic
        self.queue_id = queue_id
        self.commit_log_offset = commit_log_offset
        self.tags_code = tags_code
        self.store_timestamp = store_timestamp
        self.consume_queue_offset = consume_queue_offset
        self.keys = keys
        self.uniq_key = uniq_key
        self.sys_flag = sys_flag
        self.prepared_transaction_offset = prepared_transaction_offset
        self.properties_map = properties_map
        self.bit_map: Any = None
        self.buffer_size = -1

    def __repr__(self) -> str:
        return (
            f"DispatchRequest(topic={self.topic!r}, queue_id={self.queue_id}, "
            f"commit_log_offset={self.commit_log_offset}, msg_size={self.msg_size}, "
            f"tags_code={self.tags_code}, store_timestamp={self.store_timestamp}, "
            f"consume_queue_offset={self.consume_queue_offset}, success={self.success})"
        )
