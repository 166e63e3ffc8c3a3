"""Commit / rollback lookups, the op message, and the check: the op-queue scan.

Mirrors ``TransactionalMessageServiceImpl`` (broker/transaction/queue, RocketMQ 4.9.3).

``check`` (run by ``TransactionalMessageCheckService``) walks each queue of
RMQ_SYS_TRANS_HALF_TOPIC from the CID_RMQ_SYS_TRANS offset, in ten numbered steps
(trace component ``TransactionalMessageServiceImpl.check``):

1. the half topic's queues (``fetchMessageQueues``; none → nothing to do);
2. per queue: the half offset and the op offset (same queue id of
   RMQ_SYS_TRANS_OP_HALF_TOPIC) of CID_RMQ_SYS_TRANS; a negative one → skip the queue;
3. ``fillOpRemoveMap``: up to 32 op messages; an op (tag "d") for a half offset at or
   past the half offset goes into ``removeMap`` (half offset → op offset), an older one
   straight into ``doneOpOffset``;
4. a half offset in ``removeMap`` was committed or rolled back: done, next;
5. ``getHalfMsg``: no message → stop (NO_NEW_MSG) or jump to ``nextBeginOffset``;
6. ``needDiscard`` (checked ``transactionCheckMax`` times already) or ``needSkip``
   (born longer ago than ``fileReservedTime`` hours) → ``resolveDiscardMsg``
   (TRANS_CHECK_MAX_TIME_TOPIC), next;
7. stored at or after the scan's start → stop (check it next time);
8. the immunity time (``transactionTimeOut``, or CHECK_IMMUNITY_TIME_IN_SECONDS ×
   1000): younger → stop (or, with the property, ``checkPrepareQueueOffset``);
9. ``isNeedCheck`` → ``putBackHalfMsgQueue`` (the half message is written again at the
   end of the half queue, with TRANSACTION_CHECK_TIMES) and ``resolveHalfMsg``
   (CHECK_TRANSACTION_STATE to a producer); otherwise read more op messages (step 3);
10. commit the new half offset and ``calculateOpOffset``'s op offset for CID_RMQ_SYS_TRANS.

Java stops a queue's scan after ``MAX_PROCESS_TIME_LIMIT`` (60 s) of wall time; on the
simulation driver the scan takes no time, so that limit never applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqlab.broker.transaction.transactional_message_bridge import (
    REMOVETAG,
    TransactionalMessageBridge,
    build_half_topic,
    build_op_topic,
)
from mqlab.client.consumer.pull_api_wrapper import PullResult, PullStatus
from mqlab.common import message_const as mc
from mqlab.common.message import MessageExt
from mqlab.remoting.codes import ResponseCode
from mqlab.store.status import PutMessageStatus
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.broker.transaction.transactional_message_check_listener import (
        DefaultTransactionalMessageCheckListener,
    )

__all__ = ["TransactionalMessageServiceImpl", "OperationResult"]

C = "TransactionalMessageServiceImpl"
C_CHECK = C + ".check"

PULL_MSG_RETRY_NUMBER = 1
MAX_PROCESS_TIME_LIMIT = 60_000
MAX_RETRY_COUNT_WHEN_HALF_NULL = 1
#: ``fillOpRemoveMap`` reads this many op messages at a time.
OP_PULL_NUMS = 32


@dataclass(slots=True)
class OperationResult:
    """Mirrors ``OperationResult`` (broker/transaction)."""

    prepare_message: MessageExt | None = None
    response_remark: str | None = None
    response_code: int = ResponseCode.SUCCESS


def _get_long(s: str) -> int:
    """``getLong``: -1 when it does not parse."""
    try:
        return int(s)
    except (TypeError, ValueError):
        return -1


def _get_int(s: str) -> int:
    """``getInt``: -1 when it does not parse (or is out of int range)."""
    v = _get_long(s)
    return v if -(2**31) <= v < 2**31 else -1


class TransactionalMessageServiceImpl:
    """The broker's transaction service."""

    def __init__(self, bridge: TransactionalMessageBridge) -> None:
        self.bridge = bridge

    @property
    def _tracer(self) -> Any:
        return self.bridge.broker.tracer

    def _emit(self, step: str, kind: str = Kind.STEP, **fields: Any) -> None:
        tracer = self._tracer
        if tracer.enabled:
            tracer.emit(C_CHECK, step, kind, **fields)

    # -- END_TRANSACTION ----------------------------------------------------------------------------
    def prepare_message(self, msg) -> Any:
        """Mirrors ``#prepareMessage`` → ``TransactionalMessageBridge#putHalfMessage``."""
        return self.bridge.put_half_message(msg)

    def get_half_message_by_offset(self, commit_log_offset: int) -> OperationResult:
        """Mirrors ``#getHalfMessageByOffset``: the message at that commit-log offset, or
        SYSTEM_ERROR "Find prepared transaction message failed"."""
        msg = self.bridge.look_message_by_offset(commit_log_offset)
        if msg is not None:
            return OperationResult(prepare_message=msg)
        return OperationResult(
            response_code=ResponseCode.SYSTEM_ERROR,
            response_remark="Find prepared transaction message failed",
        )

    commit_message = get_half_message_by_offset  # ``#commitMessage(header)``
    rollback_message = get_half_message_by_offset  # ``#rollbackMessage(header)``

    def delete_prepare_message(self, msg_ext: MessageExt) -> bool:
        """The op message (tag "d") for a half message. Mirrors ``#deletePrepareMessage``."""
        return self.bridge.put_op_message(msg_ext, REMOVETAG)

    # -- check ------------------------------------------------------------------------------------------
    def check(
        self,
        transaction_timeout: int,
        transaction_check_max: int,
        listener: DefaultTransactionalMessageCheckListener,
    ) -> None:
        """The op-queue scan; steps 1–10 of the module docstring. Mirrors ``#check``."""
        bridge = self.bridge
        topic = build_half_topic()
        # step 1: the half topic's queues
        queues = bridge.fetch_message_queues(topic)
        if not queues:
            self._emit("1", text=f"the queue of topic is empty: {topic}")
            return
        for queue_id in queues:
            self._check_queue(queue_id, transaction_timeout, transaction_check_max, listener)

    def _check_queue(self, queue_id: int, transaction_timeout: int, check_max: int,
                     listener: DefaultTransactionalMessageCheckListener) -> None:  # fmt: skip
        bridge = self.bridge
        broker = bridge.broker
        half_topic, op_topic = build_half_topic(), build_op_topic()
        start_time = broker.ctx.now_ms
        # step 2: the half and op offsets of CID_RMQ_SYS_TRANS
        half_offset = bridge.fetch_consume_offset(half_topic, queue_id)
        op_offset = bridge.fetch_consume_offset(op_topic, queue_id)
        self._emit(
            "2", queue_id=queue_id, half_offset=half_offset, op_offset=op_offset,
            text=f"check half queue {queue_id} from offset {half_offset}, op queue from "
            f"{op_offset}",
        )  # fmt: skip
        if half_offset < 0 or op_offset < 0:
            self._emit("2", Kind.ERROR, queue_id=queue_id, text="illegal offset: skip the queue")
            return
        done_op_offset: list[int] = []
        remove_map: dict[int, int] = {}
        # step 3: fillOpRemoveMap
        pull_result = self.fill_op_remove_map(
            remove_map, queue_id, op_offset, half_offset, done_op_offset
        )
        if pull_result is None:
            return
        get_message_null_count = 1
        new_offset = half_offset
        i = half_offset
        while True:
            if broker.ctx.now_ms - start_time > MAX_PROCESS_TIME_LIMIT:
                break
            if i in remove_map:
                # step 4: committed or rolled back
                done_op_offset.append(remove_map.pop(i))
                self._emit("4", queue_id=queue_id, half_offset=i,
                           text=f"half offset {i} has been committed/rolled back")  # fmt: skip
            else:
                # step 5: the half message at i
                get = bridge.get_half_message(queue_id, i, PULL_MSG_RETRY_NUMBER)
                msg_ext = get.msg_found_list[0] if get is not None and get.msg_found_list else None
                if msg_ext is None:
                    get_message_null_count += 1
                    if get_message_null_count - 1 > MAX_RETRY_COUNT_WHEN_HALF_NULL:
                        break
                    if get is None or get.pull_status is PullStatus.NO_NEW_MSG:
                        self._emit("5", queue_id=queue_id, half_offset=i,
                                   text=f"no half message at {i}: stop")  # fmt: skip
                        break
                    i = get.next_begin_offset
                    new_offset = i
                    self._emit("5", queue_id=queue_id, half_offset=i,
                               text=f"illegal half offset, go on at {i}")  # fmt: skip
                    continue
                # step 6: checked too often, or older than the file reserved time
                if self.need_discard(msg_ext, check_max) or self.need_skip(msg_ext):
                    self._emit(
                        "6", queue_id=queue_id, half_offset=i,
                        check_times=msg_ext.properties.get(mc.PROPERTY_TRANSACTION_CHECK_TIMES),
                        text=f"half offset {i}: checked {check_max} times (or too old): discard",
                    )  # fmt: skip
                    listener.resolve_discard_msg(msg_ext)
                    new_offset = i + 1
                    i += 1
                    continue
                # step 7: stored after the scan began
                if msg_ext.store_timestamp >= start_time:
                    self._emit("7", queue_id=queue_id, half_offset=i,
                               text=f"half offset {i} stored just now: check it later")  # fmt: skip
                    break
                # step 8: the immunity time
                now = broker.ctx.now_ms
                age = now - msg_ext.born_timestamp
                immunity = transaction_timeout
                immunity_str = msg_ext.properties.get(mc.PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS)
                if immunity_str is not None:
                    immunity = self.get_immunity_time(immunity_str, transaction_timeout)
                    if age < immunity:
                        if self.check_prepare_queue_offset(remove_map, done_op_offset, msg_ext):
                            new_offset = i + 1
                            i += 1
                            continue
                elif 0 <= age < immunity:
                    self._emit(
                        "8", queue_id=queue_id, half_offset=i, age_ms=age, immunity_ms=immunity,
                        text=f"half offset {i} is {age} ms old < {immunity} ms: check it later",
                    )  # fmt: skip
                    break
                # step 9: check it, or read more op messages first
                op_msg = pull_result.msg_found_list
                # NOTE: Java tests `age > immunity` here and, when every op message is read
                # and age == immunity, reads the op queue again until its clock moves on
                # (1 ms later it checks). Virtual time does not move inside the scan, so
                # that case checks at once (>=), which is where Java ends up.
                need_check = (
                    (op_msg is None and age >= immunity)
                    or (op_msg is not None
                        and op_msg[-1].born_timestamp - start_time > transaction_timeout)
                    or age <= -1
                )  # fmt: skip
                if need_check:
                    if not self.put_back_half_msg_queue(msg_ext, i):
                        # NOTE: Java retries the same offset (`continue`) until its 60 s
                        # limit; with no time passing here that would never end: stop the
                        # queue's scan, as Java does once the limit is reached.
                        self._emit("9", Kind.ERROR, queue_id=queue_id, half_offset=i,
                                   text=f"half offset {i}: put back failed, stop")  # fmt: skip
                        break
                    self._emit(
                        "9", queue_id=queue_id, half_offset=i,
                        new_half_offset=msg_ext.queue_offset, age_ms=age,
                        check_times=msg_ext.properties.get(mc.PROPERTY_TRANSACTION_CHECK_TIMES),
                        text=f"half offset {i} ({age} ms old) written again at "
                        f"{msg_ext.queue_offset}: check its producer",
                    )  # fmt: skip
                    listener.resolve_half_msg(msg_ext)
                else:
                    self._emit("9", queue_id=queue_id, half_offset=i,
                               text=f"half offset {i}: read more op messages")  # fmt: skip
                    pull_result = self.fill_op_remove_map(
                        remove_map, queue_id, pull_result.next_begin_offset, half_offset,
                        done_op_offset,
                    )  # fmt: skip
                    if pull_result is None:
                        break
                    continue
            new_offset = i + 1
            i += 1
        # step 10: the new offsets of CID_RMQ_SYS_TRANS
        if new_offset != half_offset:
            bridge.update_consume_offset(half_topic, queue_id, new_offset)
        new_op_offset = self.calculate_op_offset(done_op_offset, op_offset)
        if new_op_offset != op_offset:
            bridge.update_consume_offset(op_topic, queue_id, new_op_offset)
        self._emit(
            "10", queue_id=queue_id, half_offset=new_offset, op_offset=new_op_offset,
            text=f"half queue {queue_id}: offset {half_offset} → {new_offset}, op offset "
            f"{op_offset} → {new_op_offset}",
        )  # fmt: skip

    def fill_op_remove_map(
        self, remove_map: dict[int, int], queue_id: int, pull_offset_of_op: int,
        mini_offset: int, done_op_offset: list[int],
    ) -> PullResult | None:  # fmt: skip
        """Read up to 32 op messages into ``remove_map`` / ``done_op_offset``.

        Mirrors ``#fillOpRemoveMap``: OFFSET_ILLEGAL / NO_MATCHED_MSG moves the op offset
        to ``nextBeginOffset``; each op message's body is a half offset: below
        ``mini_offset`` → done, else half offset → op offset in ``remove_map``.
        """
        bridge = self.bridge
        result = bridge.get_op_message(queue_id, pull_offset_of_op, OP_PULL_NUMS)
        if result is None:
            return None
        if result.pull_status in (PullStatus.OFFSET_ILLEGAL, PullStatus.NO_MATCHED_MSG):
            bridge.update_consume_offset(build_op_topic(), queue_id, result.next_begin_offset)
            return result
        if result.pull_status is PullStatus.NO_NEW_MSG or result.msg_found_list is None:
            self._emit("3", queue_id=queue_id, op_offset=pull_offset_of_op, ops=0,
                       text=f"no op message from op offset {pull_offset_of_op}")  # fmt: skip
            return result
        for op in result.msg_found_list:
            half = _get_long(op.body.decode("utf-8", "replace"))
            if op.tags == REMOVETAG:
                if half < mini_offset:
                    done_op_offset.append(op.queue_offset)
                else:
                    remove_map[half] = op.queue_offset
        self._emit(
            "3", queue_id=queue_id, op_offset=pull_offset_of_op,
            ops=len(result.msg_found_list), remove_map=dict(sorted(remove_map.items())),
            done_op_offset=list(done_op_offset),
            text=f"{len(result.msg_found_list)} op message(s) from op offset "
            f"{pull_offset_of_op}: half offsets done {sorted(remove_map)}",
        )  # fmt: skip
        return result

    @staticmethod
    def need_discard(msg_ext: MessageExt, transaction_check_max: int) -> bool:
        """Mirrors ``#needDiscard``: TRANSACTION_CHECK_TIMES ≥ max → discard; else count
        one more check (the first check writes 1)."""
        check_times = msg_ext.properties.get(mc.PROPERTY_TRANSACTION_CHECK_TIMES)
        check_time = 1
        if check_times is not None:
            check_time = _get_int(check_times)
            if check_time >= transaction_check_max:
                return True
            check_time += 1
        msg_ext.properties[mc.PROPERTY_TRANSACTION_CHECK_TIMES] = str(check_time)
        return False

    def need_skip(self, msg_ext: MessageExt) -> bool:
        """Mirrors ``#needSkip``: born longer ago than ``fileReservedTime`` hours."""
        broker = self.bridge.broker
        age = broker.ctx.now_ms - msg_ext.born_timestamp
        return age > broker.message_store_config.file_reserved_time * 3600 * 1000

    @staticmethod
    def get_immunity_time(immunity_str: str, transaction_timeout: int) -> int:
        """Mirrors ``#getImmunityTime``: seconds → ms; -1 (or not a number) → the timeout."""
        t = _get_long(immunity_str)
        return transaction_timeout if t == -1 else t * 1000

    def check_prepare_queue_offset(
        self, remove_map: dict[int, int], done_op_offset: list[int], msg_ext: MessageExt
    ) -> bool:
        """Mirrors ``#checkPrepareQueueOffset``: True → skip this half message."""
        s = msg_ext.properties.get(mc.PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET)
        if s is None:
            return self.bridge.put_message(self.bridge.renew_immunity_half_message_inner(msg_ext))
        prepare_queue_offset = _get_long(s)
        if prepare_queue_offset == -1:
            return False
        if prepare_queue_offset in remove_map:
            done_op_offset.append(remove_map.pop(prepare_queue_offset))
            return True
        return self.bridge.put_message(self.bridge.renew_immunity_half_message_inner(msg_ext))

    def put_back_half_msg_queue(self, msg_ext: MessageExt, offset: int) -> bool:
        """Write the half message again; ``msg_ext`` takes the new queue offset, commit-log
        offset and msg id. Mirrors ``#putBackHalfMsgQueue``."""
        bridge = self.bridge
        r = bridge.put_message_return_result(bridge.renew_half_message_inner(msg_ext))
        if r is not None and r.put_message_status is PutMessageStatus.PUT_OK:
            amr = r.append_message_result
            msg_ext.queue_offset = amr.logics_offset
            msg_ext.commit_log_offset = amr.wrote_offset
            msg_ext.msg_id = amr.msg_id
            return True
        return False

    @staticmethod
    def calculate_op_offset(done_offset: list[int], old_offset: int) -> int:
        """Mirrors ``#calculateOpOffset``: advance over the consecutive done op offsets."""
        new_offset = old_offset
        for off in sorted(done_offset):
            if off == new_offset:
                new_offset += 1
            else:
                break
        return new_offset
