"""One DLedger node on a driver: its state, its threads, and its request handlers.

Mirrors ``DLedgerServer`` (``startup``, ``handleVote``, ``handleHeartBeat``, ``handlePush``,
``handleAppend``, and a client's ``handleMetadata`` and ``handleGet``) and the serving half of
``DLedgerRpcNettyService#processRequest`` (DLedger 0.2.3), PULL included (:data:`PULL_NPE`).
A request frame carries a JSON body (``rpc_body``); one that does not parse
is answered SYSTEM_ERROR, as 4.9.3's remoting answers the exception 0.2.3 throws. The server
checks that it is meant for this node and group (UNKNOWN_MEMBER, UNKNOWN_GROUP, answered with the
request's base info and this node's leader), hands it to the elector or the pusher, and
writes the answer, as 0.2.3 does, in a frame with code 200 and the response as its body,
whenever the answer's future completes (a push waits for the follower's handler). That
frame's header has no ``extFields`` (``empty_ext_fields=False``): byte for byte the frames
real 4.9.3 nodes send each other (docs/dledger.md §2).

The node's ``disk`` (a dict from path to text: the ``currterm`` file) and its store's bytes
outlive a kill; on each start the role, the elector, the pusher and their threads begin
afresh, as a restarted JVM would: a CANDIDATE with the persisted term and vote, and the
log's end read from the store, and the committed index read back from the ``checkpoint``
file, as ``DLedgerMmapFileStore#recover`` does (-1 when there is none). The flush thread
(``FlushDataService``) writes that file to the node's disk every 3 010 ms from its start
(``check_point_period_ms``: the first 10 ms pass after more than ``checkPointInterval``,
3 000 ms), and a graceful stop writes it too (``DLedgerMmapFileStore#shutdown``); so after a
kill the committed index comes back as it was at the last checkpoint, at most the ledger end.

``on_disk=True`` (``python -m mqlab serve``'s nodes, whose memory dies with the process):
the ``disk`` is the filesystem (``FileDisk``) and the store writes its data and index files
through and recovers from them when the server is built (``mqlab.dledger.dledger_files``);
its ``checkpoint`` is a file there, written on the same timer
(``DLedgerMmapFileStore.persistCheckPoint``) and at a graceful stop.

An append (``handle_append``, or an APPEND frame) goes to the leader's store and waits for
the quorum ack (mechanisms.md "DLedger replication" step 1); it also wakes the dispatchers,
whose Java threads spin and would find the entry at once.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_entry import DLedgerEntry
from mqlab.dledger.dledger_entry_pusher import DLedgerEntryPusher
from mqlab.dledger.dledger_files import FileDisk
from mqlab.dledger.dledger_leader_elector import DLedgerLeaderElector
from mqlab.dledger.dledger_mmap_file_store import DLedgerMmapFileStore
from mqlab.dledger.dledger_rpc_service import DLedgerRpcService
from mqlab.dledger.exception import DLedgerException, JavaRuntimeException, check
from mqlab.dledger.leadership_transfer import CHECK_PREFERRED_LEADER
from mqlab.dledger.member_state import MemberState
from mqlab.dledger.protocol import (
    AppendEntryRequest,
    AppendEntryResponse,
    BatchAppendEntryRequest,
    DLedgerRequestCode,
    DLedgerResponseCode,
    GetEntriesRequest,
    GetEntriesResponse,
    HeartBeatRequest,
    HeartBeatResponse,
    LeadershipTransferRequest,
    LeadershipTransferResponse,
    MetadataRequest,
    MetadataResponse,
    PullEntriesRequest,
    PushEntryRequest,
    PushEntryResponse,
    VoteRequest,
    VoteResponse,
)
from mqlab.dledger.rpc_body import from_body, to_body
from mqlab.dledger.service_thread import TimeoutFuture
from mqlab.remoting.codes import ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Channel, Node

__all__ = ["DLedgerServer", "check_point_period_ms"]

C = "DLedgerServer"
CHECK_POINT_TIMER = "DLedgerMmapFileStore.persistCheckPoint"
R = DLedgerResponseCode

_REQUESTS: dict[int, type] = {
    DLedgerRequestCode.VOTE: VoteRequest,
    DLedgerRequestCode.HEART_BEAT: HeartBeatRequest,
    DLedgerRequestCode.PUSH: PushEntryRequest,
    DLedgerRequestCode.APPEND: AppendEntryRequest,
    DLedgerRequestCode.LEADERSHIP_TRANSFER: LeadershipTransferRequest,
    DLedgerRequestCode.METADATA: MetadataRequest,
    DLedgerRequestCode.GET: GetEntriesRequest,
    DLedgerRequestCode.PULL: PullEntriesRequest,
}

#: What 4.9.3's remoting answers, as SYSTEM_ERROR's remark (``NettyRemotingAbstract#
#: processRequestCommand``, ``RemotingHelper#exceptionSimpleDesc``: the exception and its top
#: frame), for the NullPointerExceptions 0.2.3 throws: a PULL, which it parses and has no
#: handler for (``handlePull`` returns null), and a GET without ``beginIndex`` to the leader
#: (``indexCheck`` unboxes it). Worded as JDK 17 words them (helpful NullPointerException
#: messages), the JVM the real nodes run on here; a JDK 8 writes only
#: ``java.lang.NullPointerException`` before the frame.
PULL_NPE = (
    'java.lang.NullPointerException: Cannot invoke "java.util.concurrent.CompletableFuture'
    '.whenCompleteAsync(java.util.function.BiConsumer, java.util.concurrent.Executor)" because '
    '"future" is null, io.openmessaging.storage.dledger.DLedgerRpcNettyService.processRequest'
    "(DLedgerRpcNettyService.java:348)"
)
#: the same for a request frame with no body, whatever its code: ``JSON.parseObject(request.
#: getBody(), ...)`` is handed null
NO_BODY_NPE = (
    'java.lang.NullPointerException: Cannot read the array length because "bytes" is null, '
    "com.alibaba.fastjson.JSON.parseObject(JSON.java:405)"
)
GET_NPE = (
    'java.lang.NullPointerException: Cannot invoke "java.lang.Long.longValue()" because "index" '
    "is null, io.openmessaging.storage.dledger.store.file.DLedgerMmapFileStore.indexCheck("
    "DLedgerMmapFileStore.java:554)"
)


def check_point_period_ms(config: DLedgerConfig) -> int:
    """How often 0.2.3's ``FlushDataService`` writes ``checkpoint``: its passes run every
    ``flushFileInterval`` (10 ms) from the store's start, and a pass writes it when
    ``elapsed(lastCheckPointTimeMs) > checkPointInterval`` (3 000 ms), so at the first pass
    strictly after that: every 3 010 ms with the defaults."""
    flush = max(1, config.flush_file_interval)
    return (config.check_point_interval // flush + 1) * flush


class DLedgerServer(Node):
    """Mirrors ``DLedgerServer`` (DLedger 0.2.3). See the module essay.

    Args:
        config: this node's ``DLedgerConfig`` (its ``selfId`` names the node; it listens on
            its address in ``peers``).
        disk: where the ``currterm`` file lives; pass the same dict to a new server to model
            a restart on the same disk.
        name: the node's name on the driver (default: ``selfId``).
        on_disk: keep ``currterm``, the data and index files and ``checkpoint`` in files
            under ``config.store_base_dir``, and recover from them now (the module essay).
    """

    #: frames to and from a DLedger node carry DLedger's codes (``DLedgerRpcNettyService``)
    remoting_codes = (DLedgerRequestCode, DLedgerResponseCode)

    def __init__(
        self,
        config: DLedgerConfig,
        disk: MutableMapping[str, str] | None = None,
        name: str | None = None,
        *,
        on_disk: bool = False,
    ):
        super().__init__(name or config.self_id, config.peer_map()[config.self_id])
        self.config = config
        self.on_disk = on_disk
        if disk is None:
            disk = FileDisk() if on_disk else {}
        self.disk: MutableMapping[str, str] = disk
        self.epoch = 0
        self.member_state = MemberState(config, self.disk)
        self.store = DLedgerMmapFileStore(
            config, self.member_state, on_disk=on_disk, disk=self.disk
        )
        self.rpc: Any = DLedgerRpcService(self)
        self.elector: DLedgerLeaderElector | None = None
        self.pusher: DLedgerEntryPusher | None = None
        #: handlers the owner registers once (``DLedgerLeaderElector#addRoleChangeHandler``);
        #: each start's elector gets them, after the pusher's own.
        self.role_change_handlers: list = []

    # -- life cycle -----------------------------------------------------------------------------
    def on_start(self) -> None:
        """``DLedgerServer#startup``: store, pusher, elector, each thread from its start."""
        self.epoch += 1
        if self.epoch > 1:  # a restart: what was in memory is gone, the disk is not
            self.member_state = MemberState(self.config, self.disk)
            self.store.member_state = self.member_state
            self.store.committed_index = -1
            self.store.committed_pos = -1
            self.store.recover_committed_index()  # DLedgerMmapFileStore#recover's end
        self.member_state.update_ledger_index_and_term(
            self.store.ledger_end_index, self.store.ledger_end_term
        )
        self.store.clock = lambda: self.ctx.now_ms
        self.elector = DLedgerLeaderElector(self)
        self.pusher = DLedgerEntryPusher(self)
        for handler in self.role_change_handlers:
            self.elector.add_role_change_handler(handler)
        self.ctx.tracer.emit(C, "startup", curr_term=self.member_state.curr_term,
                             vote_for=self.member_state.curr_vote_for,
                             ledger_end_index=self.store.ledger_end_index,
                             committed_index=self.store.committed_index)  # fmt: skip
        self.pusher.startup()
        self.elector.startup()
        self.ctx.set_timer(
            CHECK_PREFERRED_LEADER, 1000, self.elector.transfer.check_preferred_leader,
            period_ms=1000, daemon=True,
        )  # fmt: skip
        # FlushDataService: a pass every flushFileInterval from the start writes the
        # checkpoint once more than checkPointInterval has passed since the last one
        period = check_point_period_ms(self.config)
        self.ctx.set_timer(
            CHECK_POINT_TIMER, period, self.store.persist_check_point,
            period_ms=period, daemon=True,
        )  # fmt: skip

    def on_stop(self) -> None:
        if self.elector is not None:
            self.elector.stop()
        self.store.persist_check_point()  # DLedgerMmapFileStore#shutdown

    # -- requests -------------------------------------------------------------------------------
    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """``DLedgerRpcNettyService#processRequest``: parse the body, handle, answer later."""
        cls = _REQUESTS.get(request.code)
        if cls is None:
            return super().process_request(channel, request)
        if not request.body:  # a frame without a body: the decoder leaves it null
            return self._system_error(NO_BODY_NPE)
        try:
            msg = from_body(cls, request.body)
        except ValueError as e:
            # 0.2.3's JSON.parseObject throws here; 4.9.3's NettyRemotingAbstract answers
            # SYSTEM_ERROR with the exception's text (no body, no extFields).
            return self._system_error(str(e)[:200])
        if request.code == DLedgerRequestCode.VOTE:
            self._write(channel, request, self.handle_vote(msg))
        elif request.code == DLedgerRequestCode.HEART_BEAT:
            self._write(channel, request, self.handle_heart_beat(msg))
        elif request.code == DLedgerRequestCode.METADATA:
            self._write(channel, request, self.handle_metadata(msg))
        elif request.code in (DLedgerRequestCode.GET, DLedgerRequestCode.PULL):
            resp = self.handle_get(msg) if request.code == DLedgerRequestCode.GET else None
            if resp is None:
                npe = PULL_NPE if request.code == DLedgerRequestCode.PULL else GET_NPE
                return self._system_error(npe)
            self._write(channel, request, resp)
        else:
            handler = {
                DLedgerRequestCode.PUSH: self.handle_push,
                DLedgerRequestCode.APPEND: self.handle_append,
                DLedgerRequestCode.LEADERSHIP_TRANSFER: self.handle_leadership_transfer,
            }[DLedgerRequestCode(request.code)]
            try:
                future = handler(msg)
            except JavaRuntimeException as e:  # NettyRemotingAbstract answers what escapes
                return self._system_error(str(e))
            epoch = self.epoch
            future.when_complete(
                lambda resp: self._write(channel, request, resp) if self.epoch == epoch else None
            )
        return None

    def _system_error(self, remark: str) -> RemotingCommand:
        """What 4.9.3's ``NettyRemotingAbstract#processRequestCommand`` answers an exception
        out of 0.2.3's ``processRequest``: SYSTEM_ERROR with ``remark`` (the exception's
        ``exceptionSimpleDesc``), no body, no extFields."""
        self.ctx.tracer.emit(C, "processRequest", kind="error", error=remark)
        return RemotingCommand.create_response(
            ResponseCode.SYSTEM_ERROR, remark, empty_ext_fields=False
        )

    def _write(self, channel: Channel, request: RemotingCommand, response: Any) -> None:
        """``DLedgerRpcNettyService#handleResponse``: code 200, the response as the body."""
        if not self.running:
            return
        cmd = RemotingCommand.create_response(
            int(R.SUCCESS), body=to_body(response), empty_ext_fields=False
        )
        cmd.opaque = request.opaque
        self.ctx.send_response(channel, cmd)

    def _check_target(self, request: Any) -> None:
        ms = self.member_state
        check(
            ms.self_id == request.remote_id,
            R.UNKNOWN_MEMBER,
            f"{request.remote_id} != {ms.self_id}",
        )
        check(ms.group == request.group, R.UNKNOWN_GROUP, f"{request.group} != {ms.group}")

    def handle_vote(self, request: VoteRequest) -> VoteResponse:
        """``DLedgerServer#handleVote``."""
        try:
            self._check_target(request)
        except DLedgerException as e:
            return VoteResponse.of(request, code=e.code, leader_id=self.member_state.leader_id)
        assert self.elector is not None
        return self.elector.handle_vote(request, False)

    def handle_heart_beat(self, request: HeartBeatRequest) -> HeartBeatResponse:
        """``DLedgerServer#handleHeartBeat``."""
        try:
            self._check_target(request)
        except DLedgerException as e:
            return HeartBeatResponse.of(request, code=e.code, leader_id=self.member_state.leader_id)
        assert self.elector is not None
        return self.elector.handle_heart_beat(request)

    def handle_metadata(self, request: MetadataRequest) -> MetadataResponse:
        """``DLedgerServer#handleMetadata``: on any node, the group, its peers and the leader
        this node knows (none while it is a candidate)."""
        ms = self.member_state
        try:
            self._check_target(request)
        except DLedgerException as e:
            return MetadataResponse.of(request, code=e.code, leader_id=ms.leader_id)
        return MetadataResponse(group=ms.group, peers=self.config.peer_map(),
                                leader_id=ms.leader_id)  # fmt: skip

    def handle_get(self, request: GetEntriesRequest) -> GetEntriesResponse | None:
        """``DLedgerServer#handleGet``: on the leader, the entry at ``beginIndex`` (one, whatever
        ``maxSize`` says), committed or not; a follower answers NOT_LEADER, an index outside
        the log INDEX_OUT_OF_RANGE (``DLedgerMmapFileStore#indexCheck``). None where 0.2.3
        throws a NullPointerException instead (no ``beginIndex``; :data:`GET_NPE`)."""
        ms = self.member_state
        try:
            self._check_target(request)
            check(ms.is_leader(), R.NOT_LEADER)
            if request.begin_index is None:
                return None
            entry = self.store.get(request.begin_index)
        except DLedgerException as e:
            return GetEntriesResponse.of(request, code=e.code, leader_id=ms.leader_id)
        return GetEntriesResponse(group=ms.group, entries=(entry,))

    def handle_push(self, request: PushEntryRequest) -> TimeoutFuture:
        """``DLedgerServer#handlePush``."""
        try:
            self._check_target(request)
            assert self.pusher is not None
            return self.pusher.handle_push(request)
        except DLedgerException as e:
            resp = PushEntryResponse.of(request, code=e.code, leader_id=self.member_state.leader_id)
            return TimeoutFuture.completed(self.ctx.now_ms, resp)

    def handle_append(self, request: AppendEntryRequest) -> TimeoutFuture:
        """Append a body on the leader and wait for a quorum (step 1).

        Mirrors ``DLedgerServer#handleAppend``: the target, NOT_LEADER, LEADER_TRANSFERRING,
        LEADER_PENDING_FULL; then ``appendAsLeader`` and ``waitAck``. A
        ``BatchAppendEntryRequest`` appends each of its bodies as an entry of its own, in
        order, and waits for the last one only: its ``BatchAppendFuture`` carries every
        entry's position (no bodies: REQUEST_WITH_EMPTY_BODYS). A batch takes one place
        among the pending appends, however many entries it has.
        """
        ms = self.member_state
        now = self.ctx.now_ms
        try:
            self._check_target(request)
            check(ms.is_leader(), R.NOT_LEADER)
            check(ms.transferee is None, R.LEADER_TRANSFERRING)
            assert self.pusher is not None
            curr_term = ms.curr_term
            if self.pusher.is_pending_full(curr_term):
                resp = AppendEntryResponse(group=ms.group, code=R.LEADER_PENDING_FULL, term=curr_term,
                                           leader_id=ms.self_id)  # fmt: skip
                return TimeoutFuture.completed(now, resp)
            if isinstance(request, BatchAppendEntryRequest):
                check(len(request.batch_msgs) > 0, R.REQUEST_WITH_EMPTY_BODYS,
                      "BatchAppendEntryRequest with empty bodys")  # fmt: skip
                positions = []
                for body in request.batch_msgs:
                    entry = self._append_as_leader(body)
                    positions.append(entry.pos)
                future = self.pusher.wait_ack(entry, batch=True)
                future.positions = positions  # type: ignore[attr-defined]
            else:
                check(request.body is not None, R.UNEXPECTED_ARGUMENT, "no body")
                future = self.pusher.wait_ack(self._append_as_leader(request.body))
            self.pusher.wake_up_dispatchers()
            return future
        except DLedgerException as e:
            self.ctx.tracer.emit("DLedgerServer.handleAppend", "1", code=e.code.name)
            resp = AppendEntryResponse.of(request, code=e.code, leader_id=ms.leader_id)
            return TimeoutFuture.completed(now, resp)

    def _append_as_leader(self, body: bytes) -> DLedgerEntry:
        """``dLedgerStore.appendAsLeader`` of one body, traced as step 1."""
        entry = self.store.append_as_leader(DLedgerEntry(body=body))
        self.ctx.tracer.emit("DLedgerServer.handleAppend", "1", index=entry.index, term=entry.term,
                             pos=entry.pos, size=entry.size)  # fmt: skip
        return entry

    def handle_leadership_transfer(self, request: LeadershipTransferRequest) -> TimeoutFuture:
        """``DLedgerServer#handleLeadershipTransfer``: on the leader (``transferId`` is this
        node) check and start a transfer; on the transferee take leadership; else
        UNEXPECTED_ARGUMENT. mechanisms.md "DLedger election" step 12."""
        ms = self.member_state
        now = self.ctx.now_ms
        assert self.elector is not None
        try:
            self._check_target(request)
            if ms.self_id == request.transfer_id:
                self.elector.transfer.check_server_side(request)
                return self.elector.transfer.handle_leadership_transfer(request)
            if ms.self_id == request.transferee_id:
                check(request.transfer_id == ms.leader_id, R.INCONSISTENT_LEADER,
                      f"transfer={request.transfer_id} is not leader")  # fmt: skip
                return self.elector.transfer.handle_take_leadership(request)
            resp = LeadershipTransferResponse(term=ms.curr_term, code=R.UNEXPECTED_ARGUMENT)
            return TimeoutFuture.completed(now, resp)
        except DLedgerException as e:
            resp = LeadershipTransferResponse.of(request, code=e.code, leader_id=ms.leader_id)
            return TimeoutFuture.completed(now, resp)

    def transfer_leadership(self, transferee_id: str) -> TimeoutFuture:
        """What ``DLedgerClient#leadershipTransfer`` sends this (leader) node: hand over to
        ``transferee_id`` in the current term."""
        ms = self.member_state
        return self.handle_leadership_transfer(LeadershipTransferRequest(
            group=ms.group, remote_id=ms.self_id, term=ms.curr_term, transfer_id=ms.self_id,
            transferee_id=transferee_id,
        ))  # fmt: skip

    def append(self, body: bytes) -> TimeoutFuture:
        """A local client's append (``AppendEntryRequest`` to this node)."""
        ms = self.member_state
        return self.handle_append(
            AppendEntryRequest(group=ms.group, remote_id=ms.self_id, body=body)
        )
