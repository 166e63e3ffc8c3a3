"""Delayed messages: move due messages from SCHEDULE_TOPIC_XXXX to their real topic.

Mirrors ``ScheduleMessageService`` and its ``DeliverDelayedMessageTimerTask`` (store/
schedule, RocketMQ 4.9.3); docs/reference.md §10.8 (delay levels) and §10.9 (delivery), §7.4
(``delayOffset.json``), §11 (ScheduleMessageServiceTest).

How it works: the commit log parks a message with ``DELAY`` = level in
``SCHEDULE_TOPIC_XXXX`` queue ``level − 1``, and the reput service writes its consume-
queue unit with the *delivery timestamp* (store time + the level's delay) as tags code.
One timer chain per level reads that queue in order; a unit that is due is re-stored
under ``REAL_TOPIC`` / ``REAL_QID``; the first unit that is not due yet ends the pass.

What this module owns: the level table, ``offset_table`` (level → the next queue
offset to deliver, persisted to ``<root>/config/delayOffset.json`` as fastjson writes
it, with unquoted int keys: ``{"offsetTable":{1:0,2:5}}``) and each chain's position.
What it must not know: timers. ``start(now_ms)`` returns ``(level, 1000)`` first
delays, and the owner calls ``execute_on_time_up(level, now_ms)`` when a level's timer
fires and re-arms it with the delay that call returns (100 ms after a pass or when
nothing is due; 10 000 ms after an unexpected error; None once the service is shut
down, when RocketMQ's task stops rescheduling itself). ``persist()`` is for the owner's
timer: first 10 000 ms after start, then every ``flush_delay_offset_interval`` (10 s).

Three 4.9.3 details, kept on purpose and documented:

* ``messageTimeup`` computes the delivered message's stored properties string *before*
  it clears ``DELAY`` (and sets ``WAIT=false``) in the property map, so the re-stored
  message still carries ``DELAY``, ``REAL_TOPIC`` and ``REAL_QID`` (docs/reference.md §10.9,
  inferred from statement order). Because the map no longer has ``DELAY``, the store
  does not park it again.
* ``start()`` re-reads ``delayOffset.json`` (4.9.3's ``start()`` calls ``super.load()``
  again), which undoes ``correctDelayOffset``: each chain starts at the file's offset,
  and one outside the queue's range is only moved to the queue's min or max by the
  chain's first run (1000 ms later; it delivers nothing). ``offset_table`` and the next
  persist keep the file's value until the level delivers. A stored offset beyond the
  end can so skip messages parked before that first run, as in 4.9.3.
* 4.9.3 persists "task start offset + 1" after a delivery (a quirk that can re-deliver
  after a restart); mqlab persists "delivered unit's offset + 1", as docs/reference.md §10.9 asks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mqlab.common import message_const as mc
from mqlab.common.filter_api import tags_string_to_tags_code
from mqlab.common.message import MessageExt, MessageExtBrokerInner
from mqlab.common.message_decoder import message_properties_to_string
from mqlab.common.mix_all import SCHEDULE_CONSUMER_GROUP
from mqlab.common.mix_all_files import config_manager_load, string2file
from mqlab.common.topic_validator import RMQ_SYS_SCHEDULE_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC
from mqlab.remoting.fastjson import dumps, loads
from mqlab.store.config import StorePathConfigHelper
from mqlab.store.status import PutMessageStatus

if TYPE_CHECKING:
    from mqlab.store.default_message_store import DefaultMessageStore

__all__ = ["ScheduleMessageService"]

_TIME_UNIT_TABLE = {"s": 1000, "m": 1000 * 60, "h": 1000 * 60 * 60, "d": 1000 * 60 * 60 * 24}

C_TASK = "ScheduleMessageService.DeliverDelayedMessageTimerTask"

#: ``Long.parseLong``: an optional sign, then decimal digits (Unicode Nd, as Java's).
_LONG = re.compile(r"[+-]?\d+")


def _parse_long(text: str) -> int:
    """Mirrors ``Long.parseLong``: ValueError unless a signed decimal within 64 bits."""
    if not _LONG.fullmatch(text) or not -(1 << 63) <= int(text) < 1 << 63:
        raise ValueError(f"For input string: {text!r}")
    return int(text)


def _to_long(n: int) -> int:
    """``n`` as a Java ``long`` (two's complement wrap of ``tu * num``)."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _loads_offset_table(text: str) -> dict[int, int]:
    """Parse ``delayOffset.json`` (fastjson's lenient syntax, unquoted int keys)."""
    data = loads(text)
    table = data.get("offsetTable") if isinstance(data, dict) else None
    if not isinstance(table, dict):
        return {}
    return {int(k): int(v) for k, v in table.items()}


class ScheduleMessageService:
    """Mirrors ``ScheduleMessageService`` (store/schedule, RocketMQ 4.9.3).

    Attributes:
        delay_level_table: level (1-based) → delay in ms, from ``message_delay_level``.
        max_delay_level: the number of levels (18 with the default string).
        offset_table: level → next queue offset to deliver (the persisted table).
        task_offset_table: level → the offset the level's timer chain reads next.
    """

    FIRST_DELAY_TIME = 1000
    DELAY_FOR_A_WHILE = 100
    DELAY_FOR_A_PERIOD = 10000

    def __init__(self, store: DefaultMessageStore) -> None:
        self.store = store
        self.delay_level_table: dict[int, int] = {}
        self.offset_table: dict[int, int] = {}
        self.task_offset_table: dict[int, int] = {}
        self.max_delay_level = 0
        self.started = False
        #: level → the unit last reported as "not due yet" (so polls don't repeat it).
        self._waiting_traced: dict[int, int] = {}
        # RocketMQ parses in load(); mqlab also parses here so the commit log can cap
        # levels before load() (parsing twice gives the same table).
        self.parse_delay_level()

    # -- level arithmetic --------------------------------------------------------------
    @staticmethod
    def queue_id_to_delay_level(queue_id: int) -> int:
        """Mirrors ``ScheduleMessageService#queueId2DelayLevel``: queue + 1."""
        return queue_id + 1

    @staticmethod
    def delay_level_to_queue_id(delay_level: int) -> int:
        """Mirrors ``ScheduleMessageService#delayLevel2QueueId``: level − 1."""
        return delay_level - 1

    def compute_deliver_timestamp(self, delay_level: int, store_timestamp: int) -> int:
        """store time + the level's delay; an unknown level → store time + 1000.

        Mirrors ``ScheduleMessageService#computeDeliverTimestamp``; docs/reference.md §10.8.
        """
        delay = self.delay_level_table.get(delay_level)
        if delay is not None:
            return delay + store_timestamp
        return store_timestamp + 1000

    def parse_delay_level(self) -> bool:
        """Build the level table from ``message_delay_level`` ("1s 5s 10s …", units
        s/m/h/d). Mirrors ``ScheduleMessageService#parseDelayLevel``.

        Java's ``String.split(" ")`` drops trailing empty strings only, so trailing
        spaces are fine but a leading or doubled space leaves an empty entry, which
        fails (``substring(-1)``). An entry with an unknown unit or a bad number still
        counts in ``max_delay_level`` (Java raises ``maxDelayLevel`` before it fails).

        Returns:
            False (and the table of the entries before it) if an entry is empty, has
            an unknown unit or its number is not a Java long.
        """
        level_string = self.store.message_store_config.message_delay_level
        values = level_string.split(" ")
        if len(values) > 1:  # String.split(" ") without a match returns [the string]
            while values and not values[-1]:
                values.pop()
        table: dict[int, int] = {}
        max_level = 0
        try:
            for i, value in enumerate(values):
                tu = _TIME_UNIT_TABLE.get(value[-1])  # "" → IndexError (Java: substring)
                level = i + 1
                max_level = max(max_level, level)
                # an unknown unit → None * n → TypeError (Java: NullPointerException)
                table[level] = _to_long(tu * _parse_long(value[:-1]))
        except (IndexError, TypeError, ValueError):
            self.delay_level_table = table
            self.max_delay_level = max_level
            return False
        self.delay_level_table = table
        self.max_delay_level = max_level
        return True

    # -- persistence (ConfigManager) ---------------------------------------------------
    def config_file_path(self) -> str:
        """Mirrors ``ScheduleMessageService#configFilePath``: ``<root>/config/delayOffset.json``."""
        return StorePathConfigHelper.get_delay_offset_store_path(self.store.root_dir)

    def encode(self, pretty_format: bool = True) -> str:
        """Mirrors ``ScheduleMessageService#encode`` (``DelayOffsetSerializeWrapper#toJson``):
        ``{"offsetTable":{1:0,…}}``, keys in level order, pretty = tab-indented."""
        table = {k: self.offset_table[k] for k in sorted(self.offset_table)}
        return dumps({"offsetTable": table}, pretty=pretty_format)

    def decode(self, json_string: str) -> None:
        """Mirrors ``ScheduleMessageService#decode``: merge the file's table."""
        self.offset_table.update(_loads_offset_table(json_string))

    def persist(self) -> None:
        """Write ``delayOffset.json``. Mirrors ``ConfigManager#persist``."""
        string2file(self.encode(True), self.config_file_path())

    def _load_config(self) -> bool:
        """Mirrors ``ConfigManager#load`` / ``#loadBak``: the file, else its ``.bak``."""
        return config_manager_load(self.config_file_path(), self.decode)

    def load(self) -> bool:
        """Load the offsets, parse the levels, clamp the offsets into each queue's range.

        Mirrors ``ScheduleMessageService#load``.
        """
        result = self._load_config()
        result = result and self.parse_delay_level()
        result = result and self.correct_delay_offset()
        return result

    def correct_delay_offset(self) -> bool:
        """Clamp each stored offset into [min, max] of its schedule queue.

        Mirrors ``ScheduleMessageService#correctDelayOffset``; docs/reference.md §11 (an empty queue
        clamps to 0).
        """
        for level in sorted(self.delay_level_table):
            current = self.offset_table.get(level)
            if current is None:
                continue
            cq = self.store.find_consume_queue(
                RMQ_SYS_SCHEDULE_TOPIC, self.delay_level_to_queue_id(level)
            )
            corrected = current
            cq_min = cq.get_min_offset_in_queue()
            cq_max = cq.get_max_offset_in_queue()
            if current < cq_min:
                corrected = cq_min
            if current > cq_max:
                corrected = cq_max
            if corrected != current:
                self.offset_table[level] = corrected
        return True

    # -- lifecycle -----------------------------------------------------------------------
    def start(self, now_ms: int) -> list[tuple[int, int]]:
        """Re-read ``delayOffset.json``, then begin one timer chain per level at its
        stored offset (0 if none).

        Mirrors ``ScheduleMessageService#start``; docs/reference.md §10.9. The first persist is the
        owner's: RocketMQ runs it 10 000 ms after start, then every
        ``flush_delay_offset_interval``.

        Returns:
            ``(level, FIRST_DELAY_TIME = 1000)`` for every level, in level order; [] if
            already started.
        """
        if self.started:
            return []
        self.started = True
        # ScheduleMessageService.java:130 runs ConfigManager#load again: the file's
        # offsets overwrite the ones correctDelayOffset clamped in load() (module essay).
        self._load_config()
        timers = []
        for level in sorted(self.delay_level_table):
            self.task_offset_table[level] = self.offset_table.get(level, 0)
            timers.append((level, self.FIRST_DELAY_TIME))
        tracer = self.store.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(
                "ScheduleMessageService.start",
                "start",
                "state",
                now_ms=now_ms,
                levels=len(timers),
                offsets={str(k): v for k, v in self.task_offset_table.items()},
            )
        return timers

    def shutdown(self) -> None:
        """Stop the chains and persist. Mirrors ``ScheduleMessageService#shutdown``."""
        if self.started:
            self.started = False
            self.persist()

    def update_offset(self, delay_level: int, offset: int) -> None:
        """Mirrors ``ScheduleMessageService#updateOffset``."""
        self.offset_table[delay_level] = offset

    # -- the timer task -----------------------------------------------------------------
    def correct_deliver_timestamp(self, now_ms: int, deliver_timestamp: int, level: int) -> int:
        """A delivery time more than the level's delay in the future means the clock
        moved back: deliver now. Mirrors ``DeliverDelayedMessageTimerTask#correctDeliverTimestamp``."""
        max_timestamp = now_ms + self.delay_level_table.get(level, 0)
        return now_ms if deliver_timestamp > max_timestamp else deliver_timestamp

    def execute_on_time_up(self, level: int, now_ms: int) -> int | None:
        """One run of the level's ``DeliverDelayedMessageTimerTask``.

        Mirrors ``DeliverDelayedMessageTimerTask#run`` / ``#executeOnTimeup`` (store/
        schedule, RocketMQ 4.9.3); docs/reference.md §10.9:

        1. no unit at the chain's offset → again in 100 ms (offset clamped into
           [min, max] if it fell out);
        2. for each unit in order: deliver time = its tags code (corrected for clock
           skew); not due → stop, again in 100 ms from this unit; due → load the
           message, rebuild it for REAL_TOPIC / REAL_QID (``message_time_up``) and put
           it synchronously (a real topic of RMQ_SYS_TRANS_HALF_TOPIC is dropped); a
           failed put → stop, again in 100 ms from this unit; success → offset_table
           := this unit's offset + 1;
        3. after the last unit: again in 100 ms from the next offset. An error inside
           the loop retries the failing unit in 100 ms; any other error, the same
           offset in 10 000 ms.

        Returns:
            The delay in ms before the level's next run, or None when the service is
            not started (RocketMQ's task then does nothing and stops rescheduling).

        Raises:
            ValueError: ``level`` is not a configured delay level.
        """
        if level not in self.delay_level_table:
            raise ValueError(f"level must be one of 1..{self.max_delay_level}, got {level!r}")
        if not self.started:
            return None
        offset = self.task_offset_table.get(level, 0)
        try:
            return self._execute_on_time_up(level, offset, now_ms)
        except Exception as e:  # run(): any error → same offset, 10 s later
            self.task_offset_table[level] = offset
            self._trace(level, "error", "error", offset=offset, text=f"{type(e).__name__}: {e}")
            return self.DELAY_FOR_A_PERIOD

    def _execute_on_time_up(self, level: int, offset: int, now_ms: int) -> int:
        store = self.store
        cq = store.find_consume_queue(RMQ_SYS_SCHEDULE_TOPIC, self.delay_level_to_queue_id(level))
        buffer_cq = cq.get_index_buffer(offset)
        if buffer_cq is None:
            reset_offset = offset
            cq_min = cq.get_min_offset_in_queue()
            cq_max = cq.get_max_offset_in_queue()
            if cq_min > offset:
                reset_offset = cq_min
            elif cq_max < offset:
                reset_offset = cq_max
            self.task_offset_table[level] = reset_offset
            # An empty poll is not a step: tracing it would add 18 events per 100 ms.
            return self.DELAY_FOR_A_WHILE
        from mqlab.store.consume_queue import CQ_STORE_UNIT_SIZE, CQ_UNIT

        mf, start, end = buffer_cq
        next_offset = offset
        delivered = 0
        try:
            for i in range(0, end - start, CQ_STORE_UNIT_SIZE):
                offset_py, size_py, tags_code = CQ_UNIT.unpack_from(mf.mm, start + i)
                deliver_timestamp = self.correct_deliver_timestamp(now_ms, tags_code, level)
                next_offset = offset + i // CQ_STORE_UNIT_SIZE
                if deliver_timestamp - now_ms > 0:
                    self.task_offset_table[level] = next_offset
                    if self._waiting_traced.get(level) == next_offset:
                        return self.DELAY_FOR_A_WHILE  # already said it waits; poll quietly
                    self._waiting_traced[level] = next_offset
                    self._trace(
                        level,
                        "2",
                        offset=next_offset,
                        deliver_timestamp=deliver_timestamp,
                        delivered=delivered,
                        text=f"not due for {deliver_timestamp - now_ms} ms",
                    )
                    return self.DELAY_FOR_A_WHILE
                msg_ext = store.look_message_by_offset(offset_py, size_py)
                if msg_ext is None:
                    continue
                msg_inner = self.message_time_up(msg_ext)
                if msg_inner.topic == RMQ_SYS_TRANS_HALF_TOPIC:
                    continue
                result = store.put_message(msg_inner, now_ms)
                if result.put_message_status is not PutMessageStatus.PUT_OK:
                    self.task_offset_table[level] = next_offset
                    self._trace(
                        level,
                        "2",
                        offset=next_offset,
                        status=result.put_message_status.name,
                        text="deliver failed; retry in 100 ms",
                    )
                    return self.DELAY_FOR_A_WHILE
                # mqlab persists the delivered unit's offset + 1 (module essay).
                self.update_offset(level, next_offset + 1)
                delivered += 1
                amr = result.append_message_result
                bsm = store.broker_stats_manager
                if bsm is not None and amr is not None:
                    # PutResultProcess#onSuccess (enableScheduleMessageStats, default true)
                    n, size = amr.msg_num, amr.wrote_bytes
                    bsm.inc_queue_get_nums(
                        SCHEDULE_CONSUMER_GROUP, RMQ_SYS_SCHEDULE_TOPIC, level - 1, n
                    )
                    bsm.inc_queue_get_size(
                        SCHEDULE_CONSUMER_GROUP, RMQ_SYS_SCHEDULE_TOPIC, level - 1, size
                    )
                    bsm.inc_group_get_nums(SCHEDULE_CONSUMER_GROUP, RMQ_SYS_SCHEDULE_TOPIC, n)
                    bsm.inc_group_get_size(SCHEDULE_CONSUMER_GROUP, RMQ_SYS_SCHEDULE_TOPIC, size)
                    bsm.inc_topic_put_nums(msg_inner.topic, n, 1)
                    bsm.inc_topic_put_size(msg_inner.topic, size)
                    bsm.inc_broker_put_nums(n)
                self._trace(
                    level,
                    "2",
                    offset=next_offset,
                    msg_id=msg_ext.msg_id,
                    real_topic=msg_inner.topic,
                    real_queue_id=msg_inner.queue_id,
                    queue_offset=amr.logics_offset if amr is not None else None,
                    text="delivered",
                )
            next_offset = offset + (end - start) // CQ_STORE_UNIT_SIZE
        except Exception as e:  # executeOnTimeup's catch: retry from the failing unit
            self._trace(
                level, "error", "error", offset=next_offset, text=f"{type(e).__name__}: {e}"
            )
        self.task_offset_table[level] = next_offset
        if delivered:
            self._trace(
                level, "3", offset=next_offset, delivered=delivered,
                text=f"level {level}: delivered {delivered} message(s); next offset {next_offset}",
            )  # fmt: skip
        return self.DELAY_FOR_A_WHILE

    def message_time_up(self, msg_ext: MessageExt) -> MessageExtBrokerInner:
        """The message to re-store under its real topic and queue.

        Mirrors ``ScheduleMessageService#messageTimeup`` (RocketMQ 4.9.3): body, flag,
        sys flag, born time / host, store host and reconsume times copied; tags code
        recomputed; properties string computed *before* ``WAIT=false`` is set and
        ``DELAY`` is cleared (module essay); topic := REAL_TOPIC, queue := REAL_QID.

        Raises:
            KeyError: REAL_TOPIC or REAL_QID is missing; ValueError: REAL_QID is not an
                int (Java throws too, and the task retries).
        """
        properties = dict(msg_ext.properties)
        inner = MessageExtBrokerInner(
            topic=msg_ext.topic,
            body=msg_ext.body,
            flag=msg_ext.flag,
            properties=properties,
            sys_flag=msg_ext.sys_flag,
            born_timestamp=msg_ext.born_timestamp,
            born_host=msg_ext.born_host,
            store_host=msg_ext.store_host,
            reconsume_times=msg_ext.reconsume_times,
        )
        inner.tags_code = tags_string_to_tags_code(properties.get(mc.PROPERTY_TAGS))
        inner.properties_string = message_properties_to_string(properties)
        properties[mc.PROPERTY_WAIT_STORE_MSG_OK] = "false"
        properties.pop(mc.PROPERTY_DELAY_TIME_LEVEL, None)
        inner.topic = properties[mc.PROPERTY_REAL_TOPIC]
        inner.queue_id = int(properties[mc.PROPERTY_REAL_QUEUE_ID])
        return inner

    def _trace(self, level: int, step: str, kind: str = "step", **fields: object) -> None:
        tracer = self.store.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(C_TASK, step, kind, level=level, **fields)
