"""The consumer's pull call: which broker node to ask, the request, and the decoding after.

Mirrors ``PullAPIWrapper`` (client/impl/consumer), ``PullResult`` / ``PullResultExt`` and
``PullStatus`` (client/consumer, client/impl/consumer), RocketMQ 4.9.3; mechanisms.md "The consumer's pull loop"
("PullAPIWrapper#pullKernelImpl", "#recalculatePullFromWhichNode",
"#processPullResult"); docs/reference.md §2.2 (PullMessageRequestHeader, PullSysFlag), §3 (status
mapping), §4.6 (body decoding), §10.14 (processPullResult).

What it owns: for each message queue, the broker id the last reply suggested
(``pull_from_which_node_table``); building PULL_MESSAGE from the caller's numbers; turning
a FOUND reply's raw body into messages, re-filtered by tag string, stamped with
MIN_OFFSET / MAX_OFFSET and the broker name. What it must not know: process queues, flow
control, what to do with each status (that is the pull loop's business).

``pull_kernel_impl`` is a generator (``yield from`` it in a task): it resumes with the
``PullResult`` (``message_binary`` still set) or throws what Java's callback
``onException`` receives.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from mqlab.client.exception import MQClientException
from mqlab.client.producer.send_future import CommunicationMode
from mqlab.common import message_const as mc
from mqlab.common.filter_api import ExpressionType, SubscriptionData
from mqlab.common.message import MessageExt, MessageQueue
from mqlab.common.message_decoder import decodes
from mqlab.common.mix_all import MASTER_ID
from mqlab.common.sysflag import PullSysFlag
from mqlab.remoting.codes import ResponseCode
from mqlab.remoting.headers import PullMessageRequestHeader
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.client.mq_client_instance import MQClientInstance

__all__ = [
    "PullStatus",
    "PullResult",
    "PULL_RESPONSE_STATUS",
    "PullAPIWrapper",
    "V4_1_0_SNAPSHOT",
]

#: ``MQVersion.Version.V4_1_0_SNAPSHOT.ordinal()``: oldest broker that filters by SQL92.
V4_1_0_SNAPSHOT = 232

C = "PullAPIWrapper"


class PullStatus(Enum):
    """Mirrors ``PullStatus`` (client/consumer, RocketMQ 4.9.3)."""

    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    NO_LATEST_MSG = "NO_LATEST_MSG"  # lite pull only; never produced by the response mapping
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


#: processPullResponse (docs/reference.md §3, mechanisms.md "The consumer's pull loop"): response code → pull status; others throw.
PULL_RESPONSE_STATUS = {
    ResponseCode.SUCCESS: PullStatus.FOUND,
    ResponseCode.PULL_NOT_FOUND: PullStatus.NO_NEW_MSG,
    ResponseCode.PULL_RETRY_IMMEDIATELY: PullStatus.NO_MATCHED_MSG,
    ResponseCode.PULL_OFFSET_MOVED: PullStatus.OFFSET_ILLEGAL,
}


@dataclass(slots=True, kw_only=True)
class PullResult:
    """One pull's outcome: ``PullResult`` and ``PullResultExt`` in one class.

    ``message_binary`` is the raw reply body until ``process_pull_result`` decodes it
    into ``msg_found_list`` (and clears it, as Java does).
    """

    pull_status: PullStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    msg_found_list: list[MessageExt] = field(default_factory=list)
    suggest_which_broker_id: int = MASTER_ID
    message_binary: bytes | None = None

    def __str__(self) -> str:
        """Java's ``PullResult#toString``."""
        return (
            f"PullResult [pullStatus={self.pull_status.name}, nextBeginOffset="
            f"{self.next_begin_offset}, minOffset={self.min_offset}, maxOffset="
            f"{self.max_offset}, msgFoundList={len(self.msg_found_list)}]"
        )


class PullAPIWrapper:
    """Pull requests of one consumer group.

    Mirrors ``PullAPIWrapper`` (client/impl/consumer, RocketMQ 4.9.3).

    Args:
        instance: the client instance (broker address lookup, routes, RPCs).
        consumer_group: the group written into every request.
        unit_mode: the consumer's unit mode (kept for filter hooks; unused otherwise).
    """

    def __init__(self, instance: MQClientInstance, consumer_group: str, unit_mode: bool = False):
        self.instance = instance
        self.consumer_group = consumer_group
        self.unit_mode = unit_mode
        self.pull_from_which_node_table: dict[MessageQueue, int] = {}
        self.connect_broker_by_user = False
        self.default_broker_id = MASTER_ID

    # -- which node ------------------------------------------------------------------------------
    def update_pull_from_which_node(self, mq: MessageQueue, broker_id: int) -> None:
        """Remember the broker id a reply suggested. Mirrors ``#updatePullFromWhichNode``."""
        self.pull_from_which_node_table[mq] = broker_id

    def recalculate_pull_from_which_node(self, mq: MessageQueue) -> int:
        """The broker id to pull ``mq`` from: user's choice, last suggestion, else master.

        Mirrors ``PullAPIWrapper#recalculatePullFromWhichNode``; mechanisms.md "The consumer's pull loop".
        """
        if self.connect_broker_by_user:
            return self.default_broker_id
        return self.pull_from_which_node_table.get(mq, MASTER_ID)

    # -- the request ------------------------------------------------------------------------------
    def pull_kernel_impl(
        self,
        mq: MessageQueue,
        sub_expression: str | None,
        expression_type: str | None,
        sub_version: int,
        offset: int,
        max_nums: int,
        sys_flag: int,
        commit_offset: int,
        broker_suspend_max_time_millis: int,
        timeout_millis: int,
        communication_mode: CommunicationMode = CommunicationMode.SYNC,
    ) -> Generator[Any, Any, PullResult]:
        """Find the broker node for ``mq`` and send PULL_MESSAGE → ``PullResult``.

        Mirrors ``PullAPIWrapper#pullKernelImpl`` (client/impl/consumer, RocketMQ 4.9.3);
        mechanisms.md "The consumer's pull loop": look the broker up (refreshing the route once if unknown); refuse a
        non-TAG expression against a broker older than V4_1_0_SNAPSHOT; clear
        COMMIT_OFFSET when the node is a slave; pull.

        Raises:
            MQClientException: the broker is unknown even after a route refresh ("The
                broker[<name>] not exist"), or too old for the expression type.
            MQBrokerException: the reply code is not 0/19/20/21.
            RemotingException: transport errors.
        """
        inst = self.instance
        broker_id = self.recalculate_pull_from_which_node(mq)
        found = inst.find_broker_address_in_subscribe(mq.broker_name, broker_id, False)
        if found is None:
            yield from inst.update_topic_route_info_from_name_server(mq.topic)
            broker_id = self.recalculate_pull_from_which_node(mq)
            found = inst.find_broker_address_in_subscribe(mq.broker_name, broker_id, False)
        if found is None:
            raise MQClientException(-1, f"The broker[{mq.broker_name}] not exist")
        if (
            not ExpressionType.is_tag_type(expression_type)
            and found.broker_version < V4_1_0_SNAPSHOT
        ):
            raise MQClientException(
                -1,
                f"The broker[{mq.broker_name}, {found.broker_version}] does not upgrade to "
                f"support for filter message by {expression_type}",
            )
        sys_flag_inner = sys_flag
        if found.slave:
            sys_flag_inner = PullSysFlag.clear_commit_offset_flag(sys_flag_inner)
        header = PullMessageRequestHeader(
            consumer_group=self.consumer_group, topic=mq.topic, queue_id=mq.queue_id,
            queue_offset=offset, max_msg_nums=max_nums, sys_flag=sys_flag_inner,
            commit_offset=commit_offset, suspend_timeout_millis=broker_suspend_max_time_millis,
            subscription=sub_expression, sub_version=sub_version, expression_type=expression_type,
        )  # fmt: skip
        broker_addr = found.broker_addr
        if PullSysFlag.has_class_filter_flag(sys_flag_inner):
            broker_addr = self._compute_pull_from_which_filter_server(mq.topic, broker_addr)
        if inst.tracer.enabled:
            inst.tracer.emit(
                C + ".pullKernelImpl", "pull", Kind.STEP, mq=str(mq), broker_addr=broker_addr,
                broker_id=broker_id, offset=offset, max_nums=max_nums, sys_flag=sys_flag_inner,
                commit_offset=commit_offset,
                text=f"PULL_MESSAGE {mq.topic}@{mq.queue_id} from {broker_addr} at offset "
                f"{offset} (sysFlag {sys_flag_inner})",
            )  # fmt: skip
        return (
            yield from inst.mq_client_api_impl.pull_message(
                broker_addr, header, timeout_millis, communication_mode
            )
        )

    def _compute_pull_from_which_filter_server(self, topic: str, broker_addr: str) -> str:
        """A random filter server of the broker. Mirrors ``#computPullFromWhichFilterServer``."""
        route = self.instance.topic_route_table.get(topic)
        servers = [] if route is None else route.filter_server_table.get(broker_addr) or []
        if servers:
            return servers[
                self.instance.ctx.rng("PullAPIWrapper.randomNum").randrange(len(servers))
            ]
        raise MQClientException(
            -1, f"Find Filter Server Failed, Broker Addr: {broker_addr} topic: {topic}"
        )

    # -- the reply -------------------------------------------------------------------------------
    def process_pull_result(
        self, mq: MessageQueue, pull_result: PullResult, subscription_data: SubscriptionData
    ) -> PullResult:
        """Decode a FOUND body, re-filter by tag, stamp the offsets; remember the node.

        Mirrors ``PullAPIWrapper#processPullResult`` (client/impl/consumer, RocketMQ 4.9.3);
        mechanisms.md "The consumer's pull loop"; docs/reference.md §10.14 / §4.6: messages without TAGS, or whose TAGS is not in the
        subscription's tag set, are dropped (the broker filtered by hash code only);
        MIN_OFFSET / MAX_OFFSET come from the reply header; the broker name is set. The raw
        body is cleared.
        """
        self.update_pull_from_which_node(mq, pull_result.suggest_which_broker_id)
        if pull_result.pull_status is PullStatus.FOUND:
            msgs = decodes(pull_result.message_binary or b"")
            kept = msgs
            if subscription_data.tags_set and not subscription_data.class_filter_mode:
                tags = set(subscription_data.tags_set)
                tags_key = mc.PROPERTY_TAGS
                kept = [
                    m for m in msgs if (t := m.properties.get(tags_key)) is not None and t in tags
                ]
            # NOTE: performance — the two offsets are formatted once per pull, not per message.
            min_offset = str(pull_result.min_offset)
            max_offset = str(pull_result.max_offset)
            broker_name = mq.broker_name
            for m in kept:
                # Java also sets transactionId := UNIQ_KEY on TRAN_MSG messages; MessageExt
                # has no transaction_id field in mqlab (transactions are not modelled).
                props = m.properties
                props[mc.PROPERTY_MIN_OFFSET] = min_offset
                props[mc.PROPERTY_MAX_OFFSET] = max_offset
                m.broker_name = broker_name
            pull_result.msg_found_list = kept
            tracer = self.instance.tracer
            if tracer.enabled:
                tracer.emit(
                    C + ".processPullResult", "filter", Kind.STEP, mq=str(mq),
                    decoded=len(msgs), kept=len(kept),
                    next_begin_offset=pull_result.next_begin_offset,
                    text=f"FOUND {len(msgs)} message(s) on {mq.topic}@{mq.queue_id}, "
                    f"{len(kept)} after the client-side tag filter",
                )  # fmt: skip
        pull_result.message_binary = None
        return pull_result
