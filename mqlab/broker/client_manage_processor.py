"""Client registration: HEART_BEAT, UNREGISTER_CLIENT, CHECK_CLIENT_CONFIG.

Mirrors ``ClientManageProcessor`` (broker/processor, RocketMQ 4.9.3); mechanisms.md "Rebalancing"
(heartbeats feed the consumer ids that rebalancing allocates over); docs/reference.md §10.5.

A heartbeat registers each of the client's consumer groups (auto-creating the group's
subscription config and its ``%RETRY%group`` topic) and producer groups. When a group's
membership or subscriptions change, the ``ConsumerManager`` calls the broker's
consumer-ids-change listener, which sends NOTIFY_CONSUMER_IDS_CHANGED (oneway) to every
channel of the group — that is what makes every consumer rebalance at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.broker.consumer_manager import ClientChannelInfo
from mqlab.common.filter_api import ExpressionType, SubscriptionData
from mqlab.common.mix_all import get_retry_topic
from mqlab.common.perm_name import PermName
from mqlab.remoting.bodies import HeartbeatData
from mqlab.remoting.codes import ResponseCode
from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.remoting.headers import UnregisterClientRequestHeader
from mqlab.runtime.context import Channel

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["ClientManageProcessor"]

C = "ClientManageProcessor"


class ClientManageProcessor:
    """HEART_BEAT (34), UNREGISTER_CLIENT (35), CHECK_CLIENT_CONFIG (46)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        from mqlab.remoting.codes import RequestCode

        if request.code == RequestCode.HEART_BEAT:
            return self.heart_beat(channel, request)
        if request.code == RequestCode.UNREGISTER_CLIENT:
            return self.unregister_client(channel, request)
        return self.check_client_config(channel, request)

    def heart_beat(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Register the client's consumer and producer groups (``heartBeat``)."""
        broker = self.broker
        now = broker.ctx.now_ms
        try:
            data = HeartbeatData.decode(request.body)
        except RemotingCommandException as e:
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, str(e), ext_fields={})
        info = ClientChannelInfo(
            channel=channel, client_id=data.client_id, language=request.language,
            version=request.version, last_update_timestamp=now,
        )  # fmt: skip
        tracer = broker.tracer
        for cd in data.consumer_data_set:
            sgc = broker.subscription_group_manager.find_subscription_group_config(
                cd.group_name, now
            )
            notify = True
            if sgc is not None:
                notify = sgc.notify_consumer_ids_changed_enable
                topic_sys_flag = 2 if cd.unit_mode else 0
                broker.topic_config_manager.create_topic_in_send_message_back_method(
                    get_retry_topic(cd.group_name), sgc.retry_queue_nums,
                    PermName.PERM_WRITE | PermName.PERM_READ, topic_sys_flag, now,
                )  # fmt: skip
            subs = [SubscriptionData.from_json_dict(s) for s in cd.subscription_data_set]
            changed = broker.consumer_manager.register_consumer(
                cd.group_name, info, cd.consume_type, cd.message_model, cd.consume_from_where,
                subs, notify, now,
            )  # fmt: skip
            if tracer.enabled:
                tracer.emit(
                    C + ".heartBeat", "consumer", group=cd.group_name, client_id=data.client_id,
                    changed=changed, topics=sorted(s.topic for s in subs),
                    text=f"heartbeat: consumer {data.client_id} in {cd.group_name}"
                    + (" (group changed → notify)" if changed else ""),
                )  # fmt: skip
        for pd in data.producer_data_set:
            broker.producer_manager.register_producer(pd.group_name, info, now)
        return RemotingCommand.create_response(ResponseCode.SUCCESS, None, ext_fields={})

    def unregister_client(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """``unregisterClient``: drop the channel from its producer / consumer group."""
        broker = self.broker
        h = UnregisterClientRequestHeader.from_ext_fields(request.ext_fields)
        info = ClientChannelInfo(
            channel=channel, client_id=h.client_id or "", language=request.language,
            version=request.version, last_update_timestamp=broker.ctx.now_ms,
        )  # fmt: skip
        # Java tests ``group != null`` only: an empty group (the C++ client sends "" for
        # the unused one) is looked up, and so auto-created as a subscription group ""
        # (ClientManageProcessor#unregisterClient, broker/processor, rocketmq-all-4.9.3).
        if h.producer_group is not None:
            broker.producer_manager.unregister_producer(h.producer_group, info)
        if h.consumer_group is not None:
            sgc = broker.subscription_group_manager.find_subscription_group_config(
                h.consumer_group, broker.ctx.now_ms
            )
            notify = sgc.notify_consumer_ids_changed_enable if sgc is not None else True
            broker.consumer_manager.unregister_consumer(h.consumer_group, info, notify)
        if broker.tracer.enabled:
            broker.tracer.emit(C + ".unregisterClient", "unregister", client_id=h.client_id,
                               consumer_group=h.consumer_group, producer_group=h.producer_group,
                               text=f"client {h.client_id} unregistered")  # fmt: skip
        return RemotingCommand.create_response(ResponseCode.SUCCESS, None, ext_fields={})

    def check_client_config(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """``checkClientConfig``: a non-TAG subscription must be allowed and compile.

        Mirrors ClientManageProcessor#checkClientConfig (broker/processor, RocketMQ
        4.9.3): ``FilterFactory.INSTANCE.get(type).compile(subString)``, any exception →
        SUBSCRIPTION_PARSE_FAILED with ``e.getMessage()``. That is null for an unknown
        type (no filter registered: NullPointerException) or a missing subString, and for
        a selector that does not compile it is ``MQFilterException``'s cause's
        ``toString()`` (see ``_filter_exception_message``).
        """
        from mqlab.common.sql92 import FilterException, compile_sql92
        from mqlab.remoting.fastjson import loads_json_body

        try:
            body = loads_json_body(request.body)
            sd = body.get("subscriptionData") or {}
            expression_type = sd.get("expressionType")
            sub_string = sd.get("subString")
        except (ValueError, AttributeError) as e:
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, str(e), ext_fields={})
        if ExpressionType.is_tag_type(expression_type):
            return RemotingCommand.create_response(ResponseCode.SUCCESS, None, ext_fields={})
        if not self.broker.broker_config.enable_property_filter:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR,
                f"The broker does not support consumer to filter message by {expression_type}",
                ext_fields={},
            )
        if expression_type != ExpressionType.SQL92 or not isinstance(sub_string, str):
            # FilterFactory.get(type) is null, or the parse cache is asked for a null key:
            # a NullPointerException, whose message is null.
            return RemotingCommand.create_response(
                ResponseCode.SUBSCRIPTION_PARSE_FAILED, None, ext_fields={}
            )
        try:
            compile_sql92(sub_string)
        except FilterException as e:
            return RemotingCommand.create_response(
                ResponseCode.SUBSCRIPTION_PARSE_FAILED, _filter_exception_message(e), ext_fields={}
            )
        return RemotingCommand.create_response(ResponseCode.SUCCESS, None, ext_fields={})


_INVALID = "Invalid MessageSelector. "


def _filter_exception_message(e: Exception) -> str:
    """``MQFilterException#getMessage`` for a selector that does not compile.

    Java builds it as ``MQFilterException("Invalid MessageSelector. ", cause)`` with
    ``super(cause)``, so the message is the cause's ``toString()`` (class name, ": ",
    text) and "Invalid MessageSelector. " is not in it. The cause's class follows from
    mqlab's message; the text after it is mqlab's (JavaCC words it a little differently).
    """
    text = str(e).removeprefix(_INVALID)
    if text.startswith("java."):
        return text  # e.g. java.lang.NumberFormatException: For input string: "..."
    if text.startswith("Lexical error"):
        return f"org.apache.rocketmq.filter.parser.TokenMgrError: {text}"
    if text.startswith(("Encountered", "Expression will not result in a boolean value")):
        return f"org.apache.rocketmq.filter.parser.ParseException: {text}"
    return f"java.lang.RuntimeException: {text}"  # ComparisonExpression / ConstantExpression
