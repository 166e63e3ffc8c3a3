"""Consumer progress: where each message queue's consumption has got to, and where it is kept.

Mirrors ``OffsetStore``, ``ReadOffsetType``, ``RemoteBrokerOffsetStore``,
``LocalFileOffsetStore`` and ``OffsetSerializeWrapper`` (client/consumer/store, RocketMQ
4.9.3); mechanisms.md "Offsets" (remote for clustering, local file for
broadcasting, persisted every 5 s), mechanisms.md "The consumer's pull loop" (``readOffset`` and the broker's
``queryConsumerOffset``); docs/reference.md §10.12, §7.4 (offsets.json), §11
(RemoteBrokerOffsetStoreTest, LocalFileOffsetStoreTest).

Both stores keep ``offset_table`` (message queue → next offset to consume) in memory and
differ in where it is persisted:

* ``RemoteBrokerOffsetStore`` (clustering): the broker of the queue. READ_FROM_STORE is
  QUERY_CONSUMER_OFFSET to the master (broker refusal → −1, any other failure → −2);
  ``persist_all`` sends a oneway UPDATE_CONSUMER_OFFSET per queue still assigned and
  forgets the others.
* ``LocalFileOffsetStore`` (broadcasting): ``<dir>/<clientId>/<group>/offsets.json`` in
  fastjson's MessageQueue-keyed form (``{"offsetTable":{{"brokerName":…}:12}}``), with
  ``.bak`` fallback on read.

``read_offset`` is a generator in both (``yield from`` it): READ_FROM_STORE on the remote
store waits for the broker. ``update_offset`` only touches memory: increase-only updates
(the consume path) never move an offset back; plain updates (orderly commit, offset
reset) overwrite.

What this module must not know: which queues are assigned (callers pass them) or when to
persist (the client instance's 5 s timer and the rebalance decide).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqlab.client.exception import MQBrokerException, MQClientException
from mqlab.common.message import MessageQueue
from mqlab.common.mix_all import MASTER_ID
from mqlab.common.mix_all_files import bak_path, file2string, string2file
from mqlab.common.util_all import is_blank
from mqlab.remoting.fastjson import FrozenKey, dumps, loads
from mqlab.remoting.headers import (
    QueryConsumerOffsetRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)
from mqlab.runtime.task import Task, spawn
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.client.mq_client_instance import MQClientInstance

__all__ = [
    "ReadOffsetType",
    "OffsetStore",
    "RemoteBrokerOffsetStore",
    "LocalFileOffsetStore",
    "OFFSET_RPC_TIMEOUT_MILLIS",
]

Gen = Generator[Any, Any, Any]

#: ``1000 * 5``: timeout of QUERY/UPDATE_CONSUMER_OFFSET from the offset store.
OFFSET_RPC_TIMEOUT_MILLIS = 5000


class ReadOffsetType(Enum):
    """Mirrors ``ReadOffsetType`` (client/consumer/store)."""

    READ_FROM_MEMORY = "READ_FROM_MEMORY"
    READ_FROM_STORE = "READ_FROM_STORE"
    MEMORY_FIRST_THEN_STORE = "MEMORY_FIRST_THEN_STORE"


class OffsetStore(ABC):
    """What both stores share: the in-memory table and its update rule.

    Mirrors the ``OffsetStore`` interface (client/consumer/store, RocketMQ 4.9.3).
    """

    def __init__(self, instance: MQClientInstance, group_name: str) -> None:
        self.instance = instance
        self.group_name = group_name
        self.offset_table: dict[MessageQueue, int] = {}

    @property
    def _component(self) -> str:
        return type(self).__name__

    def load(self) -> None:  # noqa: B027 - the remote store loads nothing
        """Read persisted offsets into memory (the remote store has nothing to load)."""

    def update_offset(self, mq: MessageQueue, offset: int, increase_only: bool) -> None:
        """Set the in-memory offset: absent → insert; ``increase_only`` → only upwards.

        Mirrors ``RemoteBrokerOffsetStore#updateOffset`` / ``LocalFileOffsetStore#updateOffset``
        (identical in Java); docs/reference.md §10.12 and §11 (1024, then 1023 overwrites, then 1022
        increase-only leaves 1023).
        """
        if mq is None:
            return
        # NOTE: performance — one look-up instead of two or three (a MessageQueue hashes in
        # Python, ~0.15 µs a time; the consume path updates once per message). The values
        # are ints, so a missing key is the only None.
        table = self.offset_table
        offset = int(offset)
        prev = table.get(mq)
        if prev is None or not increase_only:
            table[mq] = offset
        elif offset > prev:  # MixAll#compareAndIncreaseOnly
            table[mq] = offset

    def read_offset_from_memory(self, mq: MessageQueue) -> int:
        """READ_FROM_MEMORY without the generator: the cached offset, −1 if none."""
        return self.offset_table.get(mq, -1)

    @abstractmethod
    def read_offset(self, mq: MessageQueue, type_: ReadOffsetType) -> Gen:
        """Generator → the offset, −1 (none) or −2 (the store could not be read)."""

    @abstractmethod
    def persist_all(self, mqs: Iterable[MessageQueue]) -> None: ...

    def persist_all_blocking(self, mqs: Iterable[MessageQueue]) -> Gen:
        """``persistAll`` as a shutdown runs it: wait for each commit in turn (``yield from``).

        The local file store writes at once, so this is ``persist_all``.
        """
        self.persist_all(mqs)
        return
        yield

    @abstractmethod
    def persist(self, mq: MessageQueue) -> None: ...

    @abstractmethod
    def remove_offset(self, mq: MessageQueue) -> None: ...

    @abstractmethod
    def update_consume_offset_to_broker(
        self, mq: MessageQueue, offset: int, is_oneway: bool
    ) -> Task | None: ...

    def clone_offset_table(self, topic: str | None) -> dict[MessageQueue, int]:
        """A copy of the table, only ``topic``'s queues unless it is blank.

        Mirrors ``#cloneOffsetTable`` (client/consumer/store, RocketMQ 4.9.3).
        """
        return {
            mq: off
            for mq, off in sorted(self.offset_table.items())
            if is_blank(topic) or mq.topic == topic
        }

    def _memory_first(self, mq: MessageQueue, type_: ReadOffsetType) -> int | None:
        """The MEMORY / MEMORY_FIRST_THEN_STORE part of ``readOffset``; None → read the store."""
        if type_ is ReadOffsetType.READ_FROM_STORE:
            return None
        offset = self.offset_table.get(mq)
        if offset is not None:
            return offset
        return -1 if type_ is ReadOffsetType.READ_FROM_MEMORY else None


class RemoteBrokerOffsetStore(OffsetStore):
    """Clustering consumers' offsets, kept by the brokers.

    Mirrors ``RemoteBrokerOffsetStore`` (client/consumer/store, RocketMQ 4.9.3).
    """

    def read_offset(self, mq: MessageQueue, type_: ReadOffsetType) -> Gen:
        """Memory, or QUERY_CONSUMER_OFFSET to the queue's master (then cached).

        Mirrors ``RemoteBrokerOffsetStore#readOffset`` (client/consumer/store, RocketMQ
        4.9.3); mechanisms.md "The consumer's pull loop": a broker refusal (``MQBrokerException``, e.g. QUERY_NOT_FOUND
        for a group that never committed) → −1 "no offset"; any other failure (timeout,
        unknown broker) → −2.
        """
        if mq is None:
            return -1
        cached = self._memory_first(mq, type_)
        if cached is not None:
            return cached
        tracer = self.instance.tracer
        comp = self._component + ".readOffset"
        try:
            broker_offset = yield from self.fetch_consume_offset_from_broker(mq)
        except MQBrokerException as e:
            if tracer.enabled:
                tracer.emit(comp, "READ_FROM_STORE", mq=str(mq), offset=-1, code=e.response_code,
                            text=f"no offset of {self.group_name} for {mq} in the broker "
                            f"(code {e.response_code}): -1")  # fmt: skip
            return -1
        except Exception as e:  # Java: catch (Exception) → -2
            if tracer.enabled:
                tracer.emit(comp, "READ_FROM_STORE", Kind.ERROR, mq=str(mq), offset=-2,
                            error=str(e), text=f"fetchConsumeOffsetFromBroker {mq} failed: {e}; "
                            "-2")  # fmt: skip
            return -2
        self.update_offset(mq, broker_offset, False)
        if tracer.enabled:
            tracer.emit(comp, "READ_FROM_STORE", mq=str(mq), offset=broker_offset,
                        text=f"offset of {self.group_name} for {mq}: {broker_offset}")  # fmt: skip
        return broker_offset

    def _find_master(self, mq: MessageQueue) -> Gen:
        inst = self.instance
        found = inst.find_broker_address_in_subscribe(mq.broker_name, MASTER_ID, True)
        if found is None:
            yield from inst.update_topic_route_info_from_name_server(mq.topic)
            found = inst.find_broker_address_in_subscribe(mq.broker_name, MASTER_ID, False)
        if found is None:
            raise MQClientException(-1, f"The broker[{mq.broker_name}] not exist")
        return found

    def fetch_consume_offset_from_broker(self, mq: MessageQueue) -> Gen:
        """QUERY_CONSUMER_OFFSET to ``mq``'s master. Mirrors ``#fetchConsumeOffsetFromBroker``.

        Raises:
            MQBrokerException: the broker answered another code than SUCCESS.
            MQClientException: the broker is unknown even after a route refresh.
        """
        found = yield from self._find_master(mq)
        header = QueryConsumerOffsetRequestHeader(
            consumer_group=self.group_name, topic=mq.topic, queue_id=mq.queue_id
        )
        return (
            yield from self.instance.mq_client_api_impl.query_consumer_offset(
                found.broker_addr, header, OFFSET_RPC_TIMEOUT_MILLIS
            )
        )

    def persist_all(self, mqs: Iterable[MessageQueue]) -> None:
        """Oneway UPDATE_CONSUMER_OFFSET for each cached queue in ``mqs``; forget the rest.

        Mirrors ``RemoteBrokerOffsetStore#persistAll`` (client/consumer/store, RocketMQ
        4.9.3); docs/reference.md §10.12, mechanisms.md "Offsets" (every 5 s via ``persistAllConsumerOffset``).
        """
        wanted = set(mqs or ())
        if not wanted:
            return
        sent: list[str] = []
        unused: list[MessageQueue] = []
        for mq, offset in sorted(self.offset_table.items()):
            if mq in wanted:
                self.update_consume_offset_to_broker(mq, offset, True)
                sent.append(f"{mq.topic}@{mq.broker_name}:{mq.queue_id}={offset}")
            else:
                unused.append(mq)
        for mq in unused:
            del self.offset_table[mq]
        self._trace_persist_all(sent, unused, "oneway")

    def _trace_persist_all(self, sent: list[str], unused: list[MessageQueue], how: str) -> None:
        """The ``persistAll`` trace event: the commits sent and the queues forgotten."""
        tracer = self.instance.tracer
        if tracer.enabled and (sent or unused):
            tracer.emit(
                self._component + ".persistAll", "persist", group=self.group_name, sent=sent,
                removed=[str(mq) for mq in unused],
                text=f"commit {len(sent)} offset(s) of {self.group_name} ({how})"
                + (f", forget {len(unused)} unassigned queue(s)" if unused else ""),
            )  # fmt: skip

    def persist_all_blocking(self, mqs: Iterable[MessageQueue]) -> Gen:
        """``persistAll`` as the consumer's shutdown runs it: one queue after the other.

        Mirrors ``RemoteBrokerOffsetStore#persistAll`` called from
        ``DefaultMQPushConsumerImpl#persistConsumerOffset`` in ``#shutdown`` (client,
        RocketMQ 4.9.3). Java's call blocks: when the route has no master for a queue's
        broker, ``updateConsumeOffsetToBroker`` asks the name server for the route and
        waits, then takes any node of the broker name (``findBrokerAddressInSubscribe``
        with ``onlyThisBroker`` false: the slave), for each queue in turn. A queue whose
        commit fails (no node of that name at all: "The broker[...] not exist"; the name
        server silent) is logged and the next one is tried. ``persist_all`` starts the
        same commits as tasks and does not wait, as the 5 s timer may.
        """
        wanted = set(mqs or ())
        if not wanted:
            return
        tracer = self.instance.tracer
        sent: list[str] = []
        unused: list[MessageQueue] = []
        for mq, offset in sorted(self.offset_table.items()):
            if mq not in wanted:
                unused.append(mq)
                continue
            try:
                found = yield from self._update_consume_offset_to_broker(mq, offset, True)
            except Exception as e:  # Java: catch (Exception) → log.error, next queue
                if tracer.enabled:
                    tracer.emit(self._component + ".persistAll", "exception", Kind.ERROR,
                                mq=str(mq), offset=offset, error=str(e),
                                text=f"updateConsumeOffsetToBroker exception, {mq}: {e}")  # fmt: skip
                continue
            sent.append(f"{mq.topic}@{mq.broker_name}:{mq.queue_id}={offset}"
                        f"{' (slave)' if found.slave else ''}")  # fmt: skip
        for mq in unused:
            self.offset_table.pop(mq, None)
        self._trace_persist_all(sent, unused, "oneway, waited")

    def persist(self, mq: MessageQueue) -> None:
        """One oneway UPDATE_CONSUMER_OFFSET (queue dropped by rebalance). ``#persist``."""
        offset = self.offset_table.get(mq)
        if offset is not None:
            self.update_consume_offset_to_broker(mq, offset, True)
            tracer = self.instance.tracer
            if tracer.enabled:
                tracer.emit(self._component + ".persist", "persist", mq=str(mq), offset=offset,
                            text=f"commit offset {offset} of {mq} (oneway)")  # fmt: skip

    def remove_offset(self, mq: MessageQueue) -> None:
        """Forget the cached offset. Mirrors ``RemoteBrokerOffsetStore#removeOffset``."""
        if mq is not None:
            self.offset_table.pop(mq, None)

    def update_consume_offset_to_broker(
        self, mq: MessageQueue, offset: int, is_oneway: bool
    ) -> Task:
        """UPDATE_CONSUMER_OFFSET to the queue's master, oneway or waiting for SUCCESS.

        Mirrors ``RemoteBrokerOffsetStore#updateConsumeOffsetToBroker`` (client/consumer/
        store, RocketMQ 4.9.3). Runs as a task (a route refresh may come first); the
        returned ``Task`` tells how it ended (Java's callers log failures).
        """
        comp = self._component + ".updateConsumeOffsetToBroker"

        def on_done(task: Task) -> None:
            if task.error is not None and self.instance.tracer.enabled:
                self.instance.tracer.emit(comp, "exception", Kind.ERROR, mq=str(mq),
                                          error=str(task.error),
                                          text=f"updateConsumeOffsetToBroker {mq} failed: "
                                          f"{task.error}")  # fmt: skip

        gen = self._update_consume_offset_to_broker(mq, offset, is_oneway)
        return spawn(self.instance.ctx, gen, name=f"{comp} {mq}", on_done=on_done)

    def _update_consume_offset_to_broker(
        self, mq: MessageQueue, offset: int, is_oneway: bool
    ) -> Gen:
        found = yield from self._find_master(mq)
        header = UpdateConsumerOffsetRequestHeader(
            consumer_group=self.group_name, topic=mq.topic, queue_id=mq.queue_id,
            commit_offset=offset,
        )  # fmt: skip
        api = self.instance.mq_client_api_impl
        if is_oneway:
            api.update_consumer_offset_oneway(found.broker_addr, header)
        else:
            yield from api.update_consumer_offset(
                found.broker_addr, header, OFFSET_RPC_TIMEOUT_MILLIS
            )
        return found


def _parse_offset_wrapper(text: str) -> dict[MessageQueue, int]:
    """``OffsetSerializeWrapper.fromJson``: ``{"offsetTable":{{mq}:offset,...}}``.

    Raises:
        ValueError: not that shape.
    """
    d = loads(text)
    if not isinstance(d, dict):
        raise ValueError("offsets file is not a JSON object")
    table = d.get("offsetTable") or {}
    if not isinstance(table, dict):
        raise ValueError("offsetTable is not an object")
    out: dict[MessageQueue, int] = {}
    for k, v in table.items():
        key = k.to_dict() if isinstance(k, FrozenKey) else k
        if isinstance(key, str):
            key = loads(key)
        if not isinstance(key, dict):
            raise ValueError(f"offsetTable key is not a MessageQueue: {k!r}")
        out[MessageQueue.from_json_dict(key)] = int(v)
    return out


class LocalFileOffsetStore(OffsetStore):
    """Broadcasting consumers' offsets, in a file of this client.

    Mirrors ``LocalFileOffsetStore`` (client/consumer/store, RocketMQ 4.9.3); docs/reference.md §7.4.

    Args:
        instance: the client instance (its ``client_id`` names the directory).
        group_name: the consumer group.
        base_dir: Java's ``rocketmq.client.localOffsetStoreDir``; None → the client
            config's ``local_offset_store_dir``, else ``~/.rocketmq_offsets``.
    """

    def __init__(
        self,
        instance: MQClientInstance,
        group_name: str,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(instance, group_name)
        root = base_dir or instance.client_config.local_offset_store_dir
        base = Path(root) if root else Path.home() / ".rocketmq_offsets"
        self.store_path = base / instance.client_id / group_name / "offsets.json"

    def load(self) -> None:
        """Read offsets.json (or its ``.bak``) into memory. Mirrors ``#load``.

        Raises:
            MQClientException: neither the file nor the ``.bak`` parses.
        """
        table = self._read_local_offset()
        if table:
            self.offset_table.update(table)
            tracer = self.instance.tracer
            if tracer.enabled:
                tracer.emit(self._component + ".load", "load", group=self.group_name,
                            offsets={str(mq): o for mq, o in sorted(table.items())},
                            text=f"loaded {len(table)} offset(s) of {self.group_name}")  # fmt: skip

    def read_offset(self, mq: MessageQueue, type_: ReadOffsetType) -> Gen:
        """Memory, or the file (then cached); −1 when absent or unreadable.

        Mirrors ``LocalFileOffsetStore#readOffset``; a generator like the remote store's
        although it never waits.
        """
        yield from ()
        if mq is None:
            return -1
        cached = self._memory_first(mq, type_)
        if cached is not None:
            return cached
        try:
            table = self._read_local_offset()
        except MQClientException:
            return -1
        if table is not None and mq in table:
            self.update_offset(mq, table[mq], False)
            return table[mq]
        return -1

    def persist_all(self, mqs: Iterable[MessageQueue]) -> None:
        """Write the offsets of ``mqs`` to offsets.json (pretty fastjson, ``.bak`` kept).

        Mirrors ``LocalFileOffsetStore#persistAll`` + ``OffsetSerializeWrapper#toJson(true)``
        + ``MixAll#string2File``.
        """
        wanted = set(mqs or ())
        if not wanted:
            return
        table = {mq: off for mq, off in sorted(self.offset_table.items()) if mq in wanted}
        string2file(dumps({"offsetTable": table}, pretty=True), self.store_path)
        tracer = self.instance.tracer
        if tracer.enabled:
            tracer.emit(self._component + ".persistAll", "persist", group=self.group_name,
                        offsets={str(mq): o for mq, o in table.items()},
                        text=f"wrote {len(table)} offset(s) to {self.store_path}")  # fmt: skip

    def persist(self, mq: MessageQueue) -> None:
        """Nothing: local offsets are written by ``persist_all`` only. Mirrors ``#persist``."""

    def remove_offset(self, mq: MessageQueue) -> None:
        """Nothing (Java keeps the entry). Mirrors ``LocalFileOffsetStore#removeOffset``."""

    def update_consume_offset_to_broker(
        self, mq: MessageQueue, offset: int, is_oneway: bool
    ) -> Task | None:
        """Nothing: a broadcasting consumer's progress never goes to a broker."""
        return None

    def _read_local_offset(self) -> dict[MessageQueue, int] | None:
        """Mirrors ``#readLocalOffset`` → ``#readLocalOffsetBak`` (docs/reference.md §7.4)."""
        content = file2string(self.store_path)
        if not content:
            return self._read_local_offset_bak()
        try:
            return _parse_offset_wrapper(content)
        except ValueError:
            return self._read_local_offset_bak()

    def _read_local_offset_bak(self) -> dict[MessageQueue, int] | None:
        content = file2string(bak_path(self.store_path))
        if not content:
            return None
        try:
            return _parse_offset_wrapper(content)
        except ValueError as e:
            raise MQClientException(
                -1, "readLocalOffset Exception, maybe fastjson version too low"
            ) from e
