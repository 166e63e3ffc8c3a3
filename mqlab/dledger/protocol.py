"""DLedger's requests, responses and codes.

Mirrors ``protocol/RequestOrResponse``, ``VoteRequest``, ``VoteResponse`` (with ``RESULT`` and
``ParseResult``), ``HeartBeatRequest``, ``HeartBeatResponse``, ``PushEntryRequest`` (with
``Type``), ``PushEntryResponse``, ``AppendEntryRequest``, ``AppendEntryResponse``,
``LeadershipTransferRequest``, ``LeadershipTransferResponse``, the client's ``MetadataRequest``,
``MetadataResponse``, ``GetEntriesRequest`` and ``GetEntriesResponse``, ``PullEntriesRequest``,
``DLedgerRequestCode`` and ``DLedgerResponseCode`` (DLedger 0.2.3).

Every message carries ``RequestOrResponse``'s base fields with 0.2.3's defaults: ``group``,
``remote_id``, ``local_id``, ``code`` (200, SUCCESS), ``leader_id`` and ``term`` (-1). Field
names are 0.2.3's in snake case (``ledger_end_index`` for ``ledgerEndIndex``), so
``rpc_body`` puts them in JSON bodies under 0.2.3's names. Messages are frozen; Java's
builder calls (``new VoteResponse(request).term(t).voteResult(r)``) become
``VoteResponse.of(request, term=t, vote_result=r)``, which copies the base info as
``copyBaseInfo`` does (the same ``localId``, ``remoteId`` and ``leaderId`` as the request:
0.2.3 does not swap them).

Batch push (``PushEntryRequest#batchEntry``) is off by default (``isEnableBatchPush``) and
not modelled here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, IntEnum
from typing import Any, TypeVar

from mqlab.dledger.dledger_entry import DLedgerEntry

__all__ = [
    "DLedgerRequestCode",
    "DLedgerResponseCode",
    "RequestOrResponse",
    "VoteRequest",
    "VoteResponse",
    "VoteResult",
    "ParseResult",
    "HeartBeatRequest",
    "HeartBeatResponse",
    "PushEntryRequest",
    "PushEntryResponse",
    "PushEntryType",
    "AppendEntryRequest",
    "AppendEntryResponse",
    "BatchAppendEntryRequest",
    "LeadershipTransferRequest",
    "LeadershipTransferResponse",
    "MetadataRequest",
    "MetadataResponse",
    "GetEntriesRequest",
    "GetEntriesResponse",
    "PullEntriesRequest",
]


class DLedgerRequestCode(IntEnum):
    """Mirrors ``DLedgerRequestCode`` (DLedger 0.2.3)."""

    UNKNOWN = -1
    METADATA = 50000
    APPEND = 50001
    GET = 50002
    VOTE = 51001
    HEART_BEAT = 51002
    PULL = 51003
    PUSH = 51004
    LEADERSHIP_TRANSFER = 51005


class DLedgerResponseCode(IntEnum):
    """Mirrors ``DLedgerResponseCode`` (DLedger 0.2.3)."""

    UNKNOWN = -1
    SUCCESS = 200
    TIMEOUT = 300
    METADATA_ERROR = 301
    NETWORK_ERROR = 302
    UNSUPPORTED = 303
    UNKNOWN_GROUP = 400
    UNKNOWN_MEMBER = 401
    UNEXPECTED_MEMBER = 402
    EXPIRED_TERM = 403
    NOT_LEADER = 404
    NOT_FOLLOWER = 405
    INCONSISTENT_STATE = 406
    INCONSISTENT_TERM = 407
    INCONSISTENT_INDEX = 408
    INCONSISTENT_LEADER = 409
    INDEX_OUT_OF_RANGE = 410
    UNEXPECTED_ARGUMENT = 411
    REPEATED_REQUEST = 412
    REPEATED_PUSH = 413
    DISK_ERROR = 414
    DISK_FULL = 415
    TERM_NOT_READY = 416
    FALL_BEHIND_TOO_MUCH = 417
    TAKE_LEADERSHIP_FAILED = 418
    INDEX_LESS_THAN_LOCAL_BEGIN = 419
    REQUEST_WITH_EMPTY_BODYS = 420
    INTERNAL_ERROR = 500
    TERM_CHANGED = 501
    WAIT_QUORUM_ACK_TIMEOUT = 502
    LEADER_PENDING_FULL = 503
    ILLEGAL_MEMBER_STATE = 504
    LEADER_NOT_READY = 505
    LEADER_TRANSFERRING = 506

    @classmethod
    def value_of(cls, code: int) -> DLedgerResponseCode:
        """``DLedgerResponseCode#valueOf(int)``: an unknown number is UNKNOWN."""
        try:
            return cls(code)
        except ValueError:
            return cls.UNKNOWN


class VoteResult(Enum):
    """Mirrors ``VoteResponse.RESULT`` (DLedger 0.2.3), in its declaration order."""

    UNKNOWN = "UNKNOWN"
    ACCEPT = "ACCEPT"
    REJECT_UNKNOWN_LEADER = "REJECT_UNKNOWN_LEADER"
    REJECT_UNEXPECTED_LEADER = "REJECT_UNEXPECTED_LEADER"
    REJECT_EXPIRED_VOTE_TERM = "REJECT_EXPIRED_VOTE_TERM"
    REJECT_ALREADY_VOTED = "REJECT_ALREADY_VOTED"
    REJECT_ALREADY_HAS_LEADER = "REJECT_ALREADY_HAS_LEADER"
    REJECT_TERM_NOT_READY = "REJECT_TERM_NOT_READY"
    REJECT_TERM_SMALL_THAN_LEDGER = "REJECT_TERM_SMALL_THAN_LEDGER"
    REJECT_EXPIRED_LEDGER_TERM = "REJECT_EXPIRED_LEDGER_TERM"
    REJECT_SMALL_LEDGER_END_INDEX = "REJECT_SMALL_LEDGER_END_INDEX"
    REJECT_TAKING_LEADERSHIP = "REJECT_TAKING_LEADERSHIP"


class ParseResult(Enum):
    """Mirrors ``VoteResponse.ParseResult`` (DLedger 0.2.3): a candidate's reading of a round."""

    WAIT_TO_REVOTE = "WAIT_TO_REVOTE"
    REVOTE_IMMEDIATELY = "REVOTE_IMMEDIATELY"
    PASSED = "PASSED"
    WAIT_TO_VOTE_NEXT = "WAIT_TO_VOTE_NEXT"


class PushEntryType(Enum):
    """Mirrors ``PushEntryRequest.Type`` (DLedger 0.2.3)."""

    APPEND = "APPEND"
    COMMIT = "COMMIT"
    COMPARE = "COMPARE"
    TRUNCATE = "TRUNCATE"


_R = TypeVar("_R", bound="RequestOrResponse")


@dataclass(frozen=True)
class RequestOrResponse:
    """Mirrors ``RequestOrResponse`` (DLedger 0.2.3): the base fields with their defaults."""

    group: str | None = None
    remote_id: str | None = None
    local_id: str | None = None
    code: int = DLedgerResponseCode.SUCCESS
    leader_id: str | None = None
    term: int = -1

    @classmethod
    def of(cls: type[_R], other: RequestOrResponse, **changes: Any) -> _R:
        """A new message with ``other``'s base info (``copyBaseInfo``), then ``changes``."""
        base: dict[str, Any] = {
            "group": other.group, "term": other.term, "code": other.code,
            "local_id": other.local_id, "remote_id": other.remote_id, "leader_id": other.leader_id,
        }  # fmt: skip
        base.update(changes)
        return cls(**base)

    def with_(self: _R, **changes: Any) -> _R:
        return replace(self, **changes)

    def base_info(self) -> str:
        """``RequestOrResponse#baseInfo``."""
        return (
            f"info[group={self.group},term={self.term},code={int(self.code)},"
            f"local={self.local_id},remote={self.remote_id},leader={self.leader_id}]"
        )


@dataclass(frozen=True)
class VoteRequest(RequestOrResponse):
    """Mirrors ``VoteRequest``: the candidate is ``leader_id``."""

    ledger_end_index: int = -1
    ledger_end_term: int = -1


@dataclass(frozen=True)
class VoteResponse(RequestOrResponse):
    """Mirrors ``VoteResponse``. A failed RPC is ``VoteResponse()``: result UNKNOWN."""

    vote_result: VoteResult = VoteResult.UNKNOWN


@dataclass(frozen=True)
class HeartBeatRequest(RequestOrResponse):
    """Mirrors ``HeartBeatRequest`` (base fields only)."""


@dataclass(frozen=True)
class HeartBeatResponse(RequestOrResponse):
    """Mirrors ``HeartBeatResponse`` (base fields only)."""


@dataclass(frozen=True)
class PushEntryRequest(RequestOrResponse):
    """Mirrors ``PushEntryRequest`` without its batch fields."""

    commit_index: int = -1
    type: PushEntryType = PushEntryType.APPEND
    entry: DLedgerEntry | None = None

    def get_first_entry_index(self) -> int:
        """``getFirstEntryIndex``: the entry's index, -1 without one."""
        return self.entry.index if self.entry is not None else -1

    def get_last_entry_index(self) -> int:
        """``getLastEntryIndex`` (no batch: the same as the first)."""
        return self.get_first_entry_index()


@dataclass(frozen=True)
class PushEntryResponse(RequestOrResponse):
    """Mirrors ``PushEntryResponse``: ``index`` is a ``Long`` (null for COMMIT)."""

    index: int | None = None
    begin_index: int = 0
    end_index: int = 0


@dataclass(frozen=True)
class AppendEntryRequest(RequestOrResponse):
    """Mirrors ``AppendEntryRequest``: a client's body for the leader to append."""

    body: bytes | None = None


@dataclass(frozen=True)
class BatchAppendEntryRequest(AppendEntryRequest):
    """Mirrors ``BatchAppendEntryRequest``: several bodies, each appended as an entry of its
    own (``DLedgerCommitLog#asyncPutMessages`` sends one; 0.2.3 has no wire form of it)."""

    batch_msgs: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class AppendEntryResponse(RequestOrResponse):
    """Mirrors ``AppendEntryResponse``: the entry's index and data position, -1 when refused."""

    index: int = -1
    pos: int = -1


@dataclass(frozen=True)
class LeadershipTransferRequest(RequestOrResponse):
    """Mirrors ``LeadershipTransferRequest``."""

    transfer_id: str | None = None
    transferee_id: str | None = None
    take_leadership_ledger_index: int = 0


@dataclass(frozen=True)
class LeadershipTransferResponse(RequestOrResponse):
    """Mirrors ``LeadershipTransferResponse`` (base fields only)."""


@dataclass(frozen=True)
class MetadataRequest(RequestOrResponse):
    """Mirrors ``MetadataRequest`` (base fields only): what ``DLedgerClient#updateMetadata``
    asks each peer."""


@dataclass(frozen=True)
class MetadataResponse(RequestOrResponse):
    """Mirrors ``MetadataResponse``: the group's peers (self id -> address, in the order the
    node's ``dLegerPeers`` names them; ``rpc_body`` writes them in ``HashMap`` order) and its
    leader."""

    peers: dict[str, str] | None = None


@dataclass(frozen=True)
class GetEntriesRequest(RequestOrResponse):
    """Mirrors ``GetEntriesRequest``: ``begin_index`` is a ``Long`` (null when not given);
    0.2.3's ``handleGet`` reads nothing else."""

    begin_index: int | None = None
    max_size: int = 0
    index_list: list[int] | None = None


@dataclass(frozen=True)
class GetEntriesResponse(RequestOrResponse):
    """Mirrors ``GetEntriesResponse``: ``entries`` is never null (an empty list by default)."""

    entries: tuple[DLedgerEntry, ...] = ()


@dataclass(frozen=True)
class PullEntriesRequest(RequestOrResponse):
    """Mirrors ``PullEntriesRequest``. 0.2.3 parses it and has no handler for it
    (``DLedgerServer#handlePull`` returns null)."""

    node_id: str | None = None
    begin_index: int | None = None
