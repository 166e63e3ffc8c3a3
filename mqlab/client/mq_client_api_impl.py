"""Every RPC a client makes, as a request builder plus a response mapping.

Mirrors ``MQClientAPIImpl`` (client/impl/MQClientAPIImpl.java, RocketMQ 4.9.3); docs/reference.md §2
(codes, headers, bodies), §3 (client result mappings), §1.8 (what a reply must carry).

Java's methods block on ``invokeSync``. Here each one is a *generator* (run it with
``yield from`` inside a task, ``mqlab.runtime.task``): it builds the ``RemotingCommand``,
``yield``s an ``Rpc`` and resumes with the response, then maps the response code the way
Java does: the accepted codes become a result, any other code raises
``MQBrokerException(code, remark, addr)``. Transport errors (``RemotingTimeoutException``,
``RemotingConnectException``) are thrown in at the ``yield``, where Java throws them.
Oneway sends (``*_oneway``) are plain methods.

What it owns: request shapes and response mappings, the choice of name server, the
asynchronous send retry (``sendMessageAsync`` / ``onExceptionImpl``). What it must not
know: routes, offsets, or which queue to use; the caller passes the address.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from mqlab.client.exception import (
    MQBrokerException,
    MQClientException,
    RemotingTooMuchRequestException,
)
from mqlab.client.producer.message_batch import MessageBatch
from mqlab.client.producer.send_future import CommunicationMode
from mqlab.client.producer.send_result import SendResult, SendStatus
from mqlab.common import message_const as mc
from mqlab.common.message import Message, MessageExt, MessageQueue
from mqlab.common.mix_all import DEFAULT_TRACE_REGION_ID, REPLY_MESSAGE_FLAG, broker_vip_channel
from mqlab.remoting.bodies import (
    GetConsumerListByGroupResponseBody,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
    TopicRouteData,
    UnlockBatchRequestBody,
)
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import (
    CommandCustomHeader,
    ConsumerSendMsgBackRequestHeader,
    GetConsumerListByGroupRequestHeader,
    GetEarliestMsgStoretimeRequestHeader,
    GetEarliestMsgStoretimeResponseHeader,
    GetMaxOffsetRequestHeader,
    GetMaxOffsetResponseHeader,
    GetMinOffsetRequestHeader,
    GetMinOffsetResponseHeader,
    GetRouteInfoRequestHeader,
    PullMessageRequestHeader,
    PullMessageResponseHeader,
    QueryConsumerOffsetRequestHeader,
    QueryConsumerOffsetResponseHeader,
    SearchOffsetRequestHeader,
    SearchOffsetResponseHeader,
    SendMessageRequestHeader,
    SendMessageResponseHeader,
    UnregisterClientRequestHeader,
    UpdateConsumerOffsetRequestHeader,
    send_message_header_v2_to_ext_fields,
)
from mqlab.runtime.context import (
    RemotingConnectException,
    RemotingException,
    RemotingTimeoutException,
)
from mqlab.runtime.task import Rpc
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.client.consumer.pull_api_wrapper import PullResult
    from mqlab.client.mq_client_instance import MQClientInstance
    from mqlab.client.producer.default_mq_producer_impl import DefaultMQProducerImpl
    from mqlab.client.producer.topic_publish_info import TopicPublishInfo

__all__ = ["MQClientAPIImpl", "SEND_RESPONSE_STATUS"]

Gen = Generator[Any, Any, Any]

#: processSendResponse: the four "stored" codes (docs/reference.md §3); any other code throws.
SEND_RESPONSE_STATUS = {
    ResponseCode.SUCCESS: SendStatus.SEND_OK,
    ResponseCode.FLUSH_DISK_TIMEOUT: SendStatus.FLUSH_DISK_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT: SendStatus.FLUSH_SLAVE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE: SendStatus.SLAVE_NOT_AVAILABLE,
}

C = "MQClientAPIImpl"

#: ``NettyRemotingAbstract#scanResponseTable`` drops an async request only once
#: ``beginTimestamp + timeoutMillis + 1000 <= now``.
SCAN_RESPONSE_TABLE_GRACE_MS = 1000


def _request(code: int, header: CommandCustomHeader | None, body: bytes | None = None):
    ext = None if header is None else header.to_ext_fields()
    return RemotingCommand.create_request(code, ext, body)


class MQClientAPIImpl:
    """The RPC layer of one ``MQClientInstance``.

    Args:
        instance: the owning client instance (its ``ctx`` sends oneways, its config gives
            the name servers, the VIP-channel switch and the language).

    Attributes:
        send_smart_msg: ``-Dorg.apache.rocketmq.client.sendSmartMsg`` (default true):
            send with SEND_MESSAGE_V2 (310) and its one-letter header; false → SEND_MESSAGE
            (10). Batches always use SEND_BATCH_MESSAGE (320) (docs/reference.md §2.1).
    """

    def __init__(self, instance: MQClientInstance) -> None:
        self.instance = instance
        self.send_smart_msg = True
        self._namesrv_index = 0
        self._namesrv_chosen: str | None = None

    # -- helpers ----------------------------------------------------------------------------------
    @property
    def _config(self):
        return self.instance.client_config

    def _vip(self, addr: str) -> str:
        return broker_vip_channel(self._config.vip_channel_enabled, addr)

    def get_name_server_address_list(self) -> list[str]:
        return self._config.namesrv_addr_list()

    def _invoke_namesrv(self, request: RemotingCommand, timeout_ms: int) -> Gen:
        """``invokeSync(null, ...)``: the chosen name server, else each one in turn.

        Mirrors ``NettyRemotingClient#getAndCreateNameserverChannel`` (remoting/netty,
        RocketMQ 4.9.3): keep the last name server that worked; when it cannot be reached,
        try the next ones (``namesrvIndex`` + 1, wrapping) within this one call, and throw
        only when none can be reached. Java starts the rotation at a random index; mqlab at
        the first address. A connection that breaks after the request was written
        (``RemotingSendRequestException``) or gives no answer in time is not retried here:
        ``invokeSync`` throws it to the caller, as Java's does.

        Raises:
            RemotingConnectException: no name server configured ("connect to null
                failed") or none reachable ("connect to [a, b] failed").
        """
        addrs = self.get_name_server_address_list()
        if self._namesrv_chosen in addrs:
            try:
                return (yield Rpc(self._namesrv_chosen, request, timeout_ms))
            except RemotingConnectException:
                self._namesrv_chosen = None  # its channel is gone: choose again
        if not addrs:  # Java: no channel, invokeSync throws RemotingConnectException(null)
            raise RemotingConnectException("connect to null failed")
        for _ in addrs:
            addr = addrs[self._namesrv_index % len(addrs)]
            self._namesrv_index += 1
            self._namesrv_chosen = addr
            try:
                return (yield Rpc(addr, request, timeout_ms))
            except RemotingConnectException:
                continue  # createChannel returned null: the next one
        raise RemotingConnectException(f"connect to [{', '.join(addrs)}] failed")

    # -- name server ------------------------------------------------------------------------------
    def get_topic_route_info_from_name_server(
        self, topic: str, timeout_ms: int = 3000, allow_topic_not_exist: bool = True
    ) -> Gen:
        """GET_ROUTEINFO_BY_TOPIC (105) → ``TopicRouteData``.

        Mirrors ``MQClientAPIImpl#getTopicRouteInfoFromNameServer`` (client/impl, RocketMQ
        4.9.3); docs/reference.md §2.5.

        Raises:
            MQClientException: TOPIC_NOT_EXIST (17) or any code other than SUCCESS with a
                body, with the name server's remark.
        """
        request = _request(
            RequestCode.GET_ROUTEINFO_BY_TOPIC, GetRouteInfoRequestHeader(topic=topic)
        )
        response = yield from self._invoke_namesrv(request, timeout_ms)
        if response.code == ResponseCode.SUCCESS and response.body is not None:
            return TopicRouteData.decode(response.body)
        raise MQClientException(response.code, response.remark)

    def get_default_topic_route_info_from_name_server(
        self, topic: str, timeout_ms: int = 3000
    ) -> Gen:
        """The same request for the auto-create key (TBW102); Java only logs less."""
        return (yield from self.get_topic_route_info_from_name_server(topic, timeout_ms, False))

    # -- send --------------------------------------------------------------------------------------
    def build_send_request(self, msg: Message, header: SendMessageRequestHeader) -> RemotingCommand:
        """The send request for ``msg``: code by kind, V2 header, body = ``msg.body``.

        Mirrors the request-building half of ``MQClientAPIImpl#sendMessage`` (docs/reference.md §2.1:
        replies → 325, batches → 320, otherwise 310 with sendSmartMsg, else 10).
        """
        is_reply = msg.get_property(mc.PROPERTY_MESSAGE_TYPE) == REPLY_MESSAGE_FLAG
        is_batch = isinstance(msg, MessageBatch)
        if is_reply:
            if self.send_smart_msg:
                code = RequestCode.SEND_REPLY_MESSAGE_V2
                ext = send_message_header_v2_to_ext_fields(header)
            else:
                code, ext = RequestCode.SEND_REPLY_MESSAGE, header.to_ext_fields()
        elif self.send_smart_msg or is_batch:
            code = RequestCode.SEND_BATCH_MESSAGE if is_batch else RequestCode.SEND_MESSAGE_V2
            ext = send_message_header_v2_to_ext_fields(header)
        else:
            code, ext = RequestCode.SEND_MESSAGE, header.to_ext_fields()
        return RemotingCommand.create_request(code, ext, msg.body)

    def send_message(
        self,
        addr: str,
        broker_name: str,
        msg: Message,
        header: SendMessageRequestHeader,
        timeout_ms: int,
    ) -> Gen:
        """A synchronous send → ``SendResult``.

        Mirrors ``MQClientAPIImpl#sendMessage`` (SYNC) + ``#sendMessageSync`` (client/impl,
        RocketMQ 4.9.3).

        Raises:
            MQBrokerException: any code but 0/10/11/12 (docs/reference.md §3).
        """
        request = self.build_send_request(msg, header)
        response = yield Rpc(addr, request, timeout_ms)
        return self.process_send_response(broker_name, msg, response, addr)

    def send_message_oneway(
        self, addr: str, msg: Message, header: SendMessageRequestHeader
    ) -> None:
        """A oneway send: written, never answered. Mirrors ``#sendMessage`` (ONEWAY)."""
        self.instance.ctx.invoke_oneway(addr, self.build_send_request(msg, header))

    def send_message_async(
        self,
        addr: str | None,
        broker_name: str,
        msg: Message,
        header: SendMessageRequestHeader,
        timeout_ms: int,
        topic_publish_info: TopicPublishInfo | None,
        producer: DefaultMQProducerImpl,
        retry_times_when_send_failed: int,
    ) -> Gen:
        """An asynchronous send with its transport-error retries → ``SendResult``.

        Mirrors ``MQClientAPIImpl#sendMessageAsync`` + ``#onExceptionImpl`` (client/impl,
        RocketMQ 4.9.3): when the request could not be written or timed out, resend the
        *same* request (same queue id) up to ``retry_times_when_send_failed`` more times,
        with what is left of the budget, to the broker of a queue chosen while avoiding
        the failed broker (or to the same broker when there is no publish info, e.g. an
        orderly send). A broker *answer* with a refusing code is not retried: its
        ``MQBrokerException`` goes straight to the callback.

        Timeouts are Java's: an asynchronous request is only given up by
        ``NettyRemotingAbstract#scanResponseTable`` once ``begin + timeout + 1000 <= now``
        (a reply within that second still succeeds). By then the budget is negative, so
        each resend fails in ``NettyRemotingClient#invokeAsync`` before anything is
        written ("invokeAsync call the addr[...] timeout"), and that is what the callback
        finally gets: a timed-out async send is never written twice.

        Raises:
            MQBrokerException: the broker refused (no retry).
            MQClientException: "wait response timeout <n>ms" with no retry left.
            RemotingTooMuchRequestException: a resend with the budget used up (the usual
                end of a timed-out send).
            RemotingConnectException: the last attempt could not connect.
        """
        request = self.build_send_request(msg, header)
        ctx = self.instance.ctx
        times = 0
        while True:
            begin = ctx.now_ms
            try:
                if addr is None:
                    raise RemotingConnectException("connect to null failed")
                # NettyRemotingClient#invokeAsync: `timeoutMillis < costTime` → thrown
                # before writing. (Java gets the channel first, so an unreachable broker
                # would give RemotingConnectException instead; mqlab checks the budget
                # first, as the context connects only when the request is sent.)
                if timeout_ms < 0:
                    raise RemotingTooMuchRequestException(
                        f"invokeAsync call the addr[{addr}] timeout"
                    )
                # NOTE: scanResponseTable runs every 1 s, so Java's timeout fires between
                # timeout + 1000 and timeout + 2000 ms; mqlab leaves out the tick rounding.
                response = yield Rpc(addr, request, timeout_ms + SCAN_RESPONSE_TABLE_GRACE_MS)
            except RemotingException as e:
                error: Exception = e
                if isinstance(e, RemotingTimeoutException):
                    error = MQClientException(-1, f"wait response timeout {timeout_ms}ms")
                    error.__cause__ = e
                times += 1  # onExceptionImpl: curTimes.incrementAndGet()
                timeout_ms -= ctx.now_ms - begin  # `timeoutMillis - cost`, may go negative
                if times > retry_times_when_send_failed:
                    if error is e:
                        raise
                    raise error from e
                retry_broker = broker_name
                if topic_publish_info is not None:
                    retry_broker = producer.select_one_message_queue(
                        topic_publish_info, broker_name
                    ).broker_name
                addr = self.instance.find_broker_address_in_publish(retry_broker)
                if self.instance.tracer.enabled:
                    self.instance.tracer.emit(
                        C + ".onExceptionImpl", "retry", Kind.STEP, times=times,
                        broker=retry_broker, addr=addr, error=str(error),
                        text=f"async send retry {times}/{retry_times_when_send_failed} "
                        f"to {retry_broker} after: {error}",
                    )  # fmt: skip
                broker_name = retry_broker
                continue  # the same request; invoke_async gives it a new opaque
            return self.process_send_response(broker_name, msg, response, addr)

    def process_send_response(
        self, broker_name: str, msg: Message, response: RemotingCommand, addr: str
    ) -> SendResult:
        """Map a send reply to a ``SendResult``.

        Mirrors ``MQClientAPIImpl#processSendResponse`` (client/impl, RocketMQ 4.9.3);
        docs/reference.md §3, §4.5 (``msg_id`` = UNIQ_KEY, batches comma-joined; ``offset_msg_id`` =
        the header's ``msgId``), §1.8 (``MSG_REGION`` default "DefaultRegion", ``TRACE_ON``
        false only if "false").

        Raises:
            MQBrokerException: any code but 0/10/11/12.
        """
        status = SEND_RESPONSE_STATUS.get(response.code)
        if status is None:
            raise MQBrokerException(response.code, response.remark, addr)
        h = SendMessageResponseHeader.from_ext_fields(response.ext_fields)
        mq = MessageQueue(msg.topic, broker_name, h.queue_id if h.queue_id is not None else -1)
        if isinstance(msg, MessageBatch):
            uniq_id: str | None = ",".join(u or "null" for u in msg.uniq_ids())
        else:
            uniq_id = msg.get_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        region = response.ext(mc.PROPERTY_MSG_REGION) or DEFAULT_TRACE_REGION_ID
        return SendResult(
            send_status=status,
            msg_id=uniq_id,
            message_queue=mq,
            queue_offset=h.queue_offset if h.queue_offset is not None else -1,
            offset_msg_id=h.msg_id,
            transaction_id=h.transaction_id,
            region_id=region,
            trace_on=response.ext(mc.PROPERTY_TRACE_SWITCH) != "false",
        )

    # -- pull --------------------------------------------------------------------------------------
    def pull_message(
        self,
        addr: str,
        header: PullMessageRequestHeader,
        timeout_ms: int,
        communication_mode: CommunicationMode = CommunicationMode.SYNC,
    ) -> Gen:
        """PULL_MESSAGE (11) → ``PullResult`` with the raw body in ``message_binary``.

        Mirrors ``MQClientAPIImpl#pullMessage`` + ``#processPullResponse`` (client/impl,
        RocketMQ 4.9.3); mechanisms.md "The consumer's pull loop" (pullKernelImpl → pullMessage); docs/reference.md §3. ASYNC (the push
        consumer, a pull with a callback) is ``pullMessageAsync``: its timeout is found by
        ``scanResponseTable``, ``SCAN_RESPONSE_TABLE_GRACE_MS`` after ``timeout_ms``, and a
        reply arriving before then still counts; SYNC (``pullMessageSync``) waits exactly
        ``timeout_ms``.

        Raises:
            MQBrokerException: any code but 0/19/20/21.
        """
        request = _request(RequestCode.PULL_MESSAGE, header)
        if communication_mode is not CommunicationMode.ASYNC:
            response = yield Rpc(addr, request, timeout_ms)
            return self.process_pull_response(response, addr)
        try:
            response = yield Rpc(addr, request, timeout_ms + SCAN_RESPONSE_TABLE_GRACE_MS)
        except RemotingTimeoutException as e:
            # pullMessageAsync's InvokeCallback (Java appends ". Request: " + the request's
            # toString, a HashMap print of its fields; mqlab leaves that out)
            raise MQClientException(-1, f"wait response from {addr} timeout :{timeout_ms}ms") from e
        return self.process_pull_response(response, addr)

    def process_pull_response(self, response: RemotingCommand, addr: str) -> PullResult:
        """0 FOUND, 19 NO_NEW_MSG, 20 NO_MATCHED_MSG, 21 OFFSET_ILLEGAL; else throw.

        Mirrors ``MQClientAPIImpl#processPullResponse`` (client/impl, RocketMQ 4.9.3).
        """
        # Imported here: the consumer package imports the client instance, which imports us.
        from mqlab.client.consumer.pull_api_wrapper import PULL_RESPONSE_STATUS, PullResult

        status = PULL_RESPONSE_STATUS.get(response.code)
        if status is None:
            raise MQBrokerException(response.code, response.remark, addr)
        h = PullMessageResponseHeader.from_ext_fields(response.ext_fields)
        return PullResult(
            pull_status=status,
            next_begin_offset=h.next_begin_offset or 0,
            min_offset=h.min_offset or 0,
            max_offset=h.max_offset or 0,
            suggest_which_broker_id=h.suggest_which_broker_id or 0,
            message_binary=response.body,
        )

    # -- offsets -----------------------------------------------------------------------------------
    def _offset_call(
        self, addr: str, code: int, header: CommandCustomHeader, timeout_ms: int
    ) -> Gen:
        response = yield Rpc(self._vip(addr), _request(code, header), timeout_ms)
        if response.code != ResponseCode.SUCCESS:
            raise MQBrokerException(response.code, response.remark, addr)
        return response

    def query_consumer_offset(
        self, addr: str, header: QueryConsumerOffsetRequestHeader, timeout_ms: int
    ) -> Gen:
        """QUERY_CONSUMER_OFFSET (14) → the committed offset.

        Mirrors ``MQClientAPIImpl#queryConsumerOffset``; mechanisms.md "The consumer's pull loop" (the broker answers
        QUERY_NOT_FOUND (22) when it has nothing, which raises here).

        Raises:
            MQBrokerException: any code but SUCCESS.
        """
        r = yield from self._offset_call(
            addr, RequestCode.QUERY_CONSUMER_OFFSET, header, timeout_ms
        )
        return QueryConsumerOffsetResponseHeader.from_ext_fields(r.ext_fields).offset

    def update_consumer_offset(
        self, addr: str, header: UpdateConsumerOffsetRequestHeader, timeout_ms: int
    ) -> Gen:
        """UPDATE_CONSUMER_OFFSET (15), waiting for SUCCESS. Mirrors ``#updateConsumerOffset``."""
        yield from self._offset_call(addr, RequestCode.UPDATE_CONSUMER_OFFSET, header, timeout_ms)

    def update_consumer_offset_oneway(
        self, addr: str, header: UpdateConsumerOffsetRequestHeader
    ) -> None:
        """UPDATE_CONSUMER_OFFSET (15), oneway (docs/reference.md §1.3). ``#updateConsumerOffsetOneway``."""
        request = _request(RequestCode.UPDATE_CONSUMER_OFFSET, header)
        self.instance.ctx.invoke_oneway(self._vip(addr), request)

    def get_max_offset(self, addr: str, topic: str, queue_id: int, timeout_ms: int) -> Gen:
        """GET_MAX_OFFSET (30) → the queue's max offset. Mirrors ``#getMaxOffset``."""
        h = GetMaxOffsetRequestHeader(topic=topic, queue_id=queue_id)
        r = yield from self._offset_call(addr, RequestCode.GET_MAX_OFFSET, h, timeout_ms)
        return GetMaxOffsetResponseHeader.from_ext_fields(r.ext_fields).offset

    def get_min_offset(self, addr: str, topic: str, queue_id: int, timeout_ms: int) -> Gen:
        """GET_MIN_OFFSET (31) → the queue's min offset. Mirrors ``#getMinOffset``."""
        h = GetMinOffsetRequestHeader(topic=topic, queue_id=queue_id)
        r = yield from self._offset_call(addr, RequestCode.GET_MIN_OFFSET, h, timeout_ms)
        return GetMinOffsetResponseHeader.from_ext_fields(r.ext_fields).offset

    def search_offset(
        self, addr: str, topic: str, queue_id: int, timestamp: int, timeout_ms: int
    ) -> Gen:
        """SEARCH_OFFSET_BY_TIMESTAMP (29) → an offset. Mirrors ``#searchOffset``."""
        h = SearchOffsetRequestHeader(topic=topic, queue_id=queue_id, timestamp=timestamp)
        r = yield from self._offset_call(
            addr, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, h, timeout_ms
        )
        return SearchOffsetResponseHeader.from_ext_fields(r.ext_fields).offset

    def get_earliest_msg_storetime(
        self, addr: str, topic: str, queue_id: int, timeout_ms: int
    ) -> Gen:
        """GET_EARLIEST_MSG_STORETIME (32) → a timestamp. Mirrors ``#getEarliestMsgStoretime``."""
        h = GetEarliestMsgStoretimeRequestHeader(topic=topic, queue_id=queue_id)
        r = yield from self._offset_call(
            addr, RequestCode.GET_EARLIEST_MSG_STORETIME, h, timeout_ms
        )
        return GetEarliestMsgStoretimeResponseHeader.from_ext_fields(r.ext_fields).timestamp

    # -- consumer groups, heartbeats -------------------------------------------------------------
    def get_consumer_id_list_by_group(self, addr: str, group: str, timeout_ms: int) -> Gen:
        """GET_CONSUMER_LIST_BY_GROUP (38) → client ids (broker order; callers sort).

        Mirrors ``MQClientAPIImpl#getConsumerIdListByGroup``; docs/reference.md §1.8 (a SUCCESS without
        a body counts as failure).

        Raises:
            MQBrokerException: not SUCCESS, or SUCCESS without a body.
        """
        h = GetConsumerListByGroupRequestHeader(consumer_group=group)
        response = yield Rpc(
            self._vip(addr), _request(RequestCode.GET_CONSUMER_LIST_BY_GROUP, h), timeout_ms
        )
        if response.code == ResponseCode.SUCCESS and response.body is not None:
            return list(GetConsumerListByGroupResponseBody.decode(response.body).consumer_id_list)
        raise MQBrokerException(response.code, response.remark, addr)

    def send_heartbeat(self, addr: str, heartbeat_data: HeartbeatData, timeout_ms: int) -> Gen:
        """HEART_BEAT (34) → the broker's ``version`` (recorded as the broker version).

        Mirrors ``MQClientAPIImpl#sendHearbeat`` (sic); docs/reference.md §2.3.

        Raises:
            MQBrokerException: any code but SUCCESS.
        """
        request = RemotingCommand.create_request(
            RequestCode.HEART_BEAT, None, heartbeat_data.encode()
        )
        request.language = self._config.language
        response = yield Rpc(addr, request, timeout_ms)
        if response.code != ResponseCode.SUCCESS:
            raise MQBrokerException(response.code, response.remark, addr)
        return response.version

    def unregister_client(
        self,
        addr: str,
        client_id: str,
        producer_group: str | None,
        consumer_group: str | None,
        timeout_ms: int,
    ) -> Gen:
        """UNREGISTER_CLIENT (35). Mirrors ``MQClientAPIImpl#unregisterClient``.

        Raises:
            MQBrokerException: any code but SUCCESS.
        """
        h = UnregisterClientRequestHeader(
            client_id=client_id, producer_group=producer_group, consumer_group=consumer_group
        )
        response = yield Rpc(addr, _request(RequestCode.UNREGISTER_CLIENT, h), timeout_ms)
        if response.code != ResponseCode.SUCCESS:
            raise MQBrokerException(response.code, response.remark, addr)

    def consumer_send_message_back(
        self,
        addr: str,
        msg: MessageExt,
        consumer_group: str,
        delay_level: int,
        timeout_ms: int,
        max_consume_retry_times: int,
    ) -> Gen:
        """CONSUMER_SEND_MSG_BACK (36): hand a failed message back for a retry.

        Mirrors ``MQClientAPIImpl#consumerSendMessageBack``; docs/reference.md §2.2 (offset = the
        message's commit-log offset, originMsgId = its client msg id, i.e. UNIQ_KEY).

        Raises:
            MQBrokerException: any code but SUCCESS.
        """
        h = ConsumerSendMsgBackRequestHeader(
            offset=msg.commit_log_offset, group=consumer_group, delay_level=delay_level,
            origin_msg_id=msg.client_msg_id(), origin_topic=msg.topic,
            max_reconsume_times=max_consume_retry_times,
        )  # fmt: skip
        response = yield Rpc(
            self._vip(addr), _request(RequestCode.CONSUMER_SEND_MSG_BACK, h), timeout_ms
        )
        if response.code != ResponseCode.SUCCESS:
            raise MQBrokerException(response.code, response.remark, addr)

    # -- orderly locks ----------------------------------------------------------------------------
    def lock_batch_mq(self, addr: str, body: LockBatchRequestBody, timeout_ms: int) -> Gen:
        """LOCK_BATCH_MQ (41) → the queues now locked by this client.

        Mirrors ``MQClientAPIImpl#lockBatchMQ``; docs/reference.md §2.4.

        Raises:
            MQBrokerException: any code but SUCCESS.
        """
        request = RemotingCommand.create_request(RequestCode.LOCK_BATCH_MQ, None, body.encode())
        response = yield Rpc(self._vip(addr), request, timeout_ms)
        if response.code != ResponseCode.SUCCESS:
            raise MQBrokerException(response.code, response.remark, addr)
        return set(LockBatchResponseBody.decode(response.body).lock_ok_mq_set)

    def unlock_batch_mq(
        self, addr: str, body: UnlockBatchRequestBody, timeout_ms: int, oneway: bool
    ) -> Gen:
        """UNLOCK_BATCH_MQ (42), oneway or waiting for SUCCESS. Mirrors ``#unlockBatchMQ``.

        Raises:
            MQBrokerException: (not oneway) any code but SUCCESS.
        """
        request = RemotingCommand.create_request(RequestCode.UNLOCK_BATCH_MQ, None, body.encode())
        if oneway:
            self.instance.ctx.invoke_oneway(addr, request)
            return
        response = yield Rpc(self._vip(addr), request, timeout_ms)
        if response.code != ResponseCode.SUCCESS:
            raise MQBrokerException(response.code, response.remark, addr)
