"""HA replication on the wire, against the real broker, in both directions.

Not a RocketMQ class: the harness that checks mqlab's ``HAService`` (master side) and
``HAClient`` (slave side) against 4.9.3's own (mechanisms.md "HA replication").

* **B1, real master -> mqlab slave.** The real cluster's master ``broker-a``; an mqlab
  ``BrokerController`` on the net driver as its slave (``brokerId`` 1, ``SLAVE``), registered
  with the real name server, which hands it the master's HA address in the registration
  result (``BrokerController#registerBrokerAll`` → ``updateHaMasterAddress``).
* **B2, mqlab master -> real slave.** An mqlab master ``broker-b`` registered with the same
  real name server, and a real 4.9.3 slave of ``broker-b`` started in the real cluster's JVM
  (``RealCluster.start_slave``), which learns the mqlab master's HA address the same way.

Each direction:

1. creates its topic on the master (UPDATE_AND_CREATE_TOPIC, 4 queues) before the slave
   starts, so the slave's first SlaveSynchronize (3 s after its start) copies it;
2. sends :data:`MESSAGES` messages with raw SEND_MESSAGE_V2 to fixed queues, one of them
   longer than haTransferBatchSize (it crosses an HA block boundary),
   so every byte count and queue offset is the same on every run (queue ``i % 4``);
3. waits until the slave's commit log reaches the master's max offset and its reput has
   built a consume-queue unit for every message;
4. compares the commit-log range ``[0, max offset)`` byte for byte, read from both stores'
   files (both map their files shared, so a reader sees every put), and each queue's
   consume-queue units ``(commit-log offset, size, tags code)``;
5. stops the master, then runs the Java client (``DefaultMQPullConsumer``, the
   ``read-all:`` scenario of ``org.mqlab.interop.JavaScenarios``) against the name server:
   with no master in the route it pulls every message from the slave.

The slaves report every 1 s (``haSendHeartbeatInterval=1000`` on the slave side only): a
4.9.3 slave's first report waits one interval after its connect and the master pushes
nothing before it; the default 5 s would add 8 s of waiting and no bytes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqlab.conformance.real_cluster import RealCluster, free_port
from mqlab.conformance.wire import call_sync, registered_addr, send_v2, wait_until
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import loads as fastjson_loads

__all__ = [
    "BIG_BODY",
    "BIG_INDEX",
    "MESSAGES",
    "QUEUES",
    "ReplicationCheck",
    "ReplicationError",
    "body_of",
    "check_replication",
    "commit_log_bytes",
    "consume_queue_units",
    "first_difference",
    "start_broker_node",
    "summary_line",
]

MESSAGES = 8
QUEUES = 4
#: the slaves' report interval (ms); see the module docstring
SLAVE_HEARTBEAT_MS = 1000
CQ_UNIT = 20
PRODUCER_GROUP = "ha_wire_producer"
#: the master's properties a real slave started by the check also gets
SLAVE_KEYS = ("mappedFileSizeCommitLog", "mappedFileSizeConsumeQueue")


#: message BIG_INDEX carries a body longer than haTransferBatchSize (32 KiB): it crosses an
#: HA block boundary, so each slave's reput meets it half there
BIG_INDEX = 3
BIG_BODY = 40_000


def body_of(topic: str, i: int) -> str:
    """Message ``i``'s body: ``ha-<topic>-<i>``, and for :data:`BIG_INDEX` 40,000 dots more."""
    return f"ha-{topic}-{i:02d}" + ("." * BIG_BODY if i == BIG_INDEX else "")


class ReplicationError(RuntimeError):
    """A direction did not replicate, or replicated different bytes."""


@dataclass(slots=True)
class ReplicationCheck:
    """One direction's outcome: what the master holds, what the slave holds, what was read."""

    label: str
    topic: str
    #: where the slave's commit log starts (0 for a master with one file)
    replicated_from: int
    master_max_offset: int
    slave_max_offset: int
    #: the first offset where the slave's commit log differs from the master's, or None
    first_difference: int | None
    master_queues: dict[int, list[tuple[int, int, int]]]
    slave_queues: dict[int, list[tuple[int, int, int]]]
    #: the SEND_MESSAGE_V2 answers: (queue id, queue offset) per message
    sends: list[tuple[int, int]]
    #: what the Java consumer read from the slave, master stopped: (queue id, queue offset, body)
    read_from_slave: list[tuple[int, int, str]] = field(default_factory=list)
    #: the master's HA address the slave learned from its registration (an mqlab slave's)
    learned_ha_address: str | None = None
    #: how many other topics' consume queues were compared too (``all_topics``), and each
    #: difference found among them
    other_topics: int = 0
    other_topic_problems: list[str] = field(default_factory=list)

    @property
    def replicated_bytes(self) -> int:
        """The length of the compared commit-log range."""
        return min(self.master_max_offset, self.slave_max_offset) - self.replicated_from

    @property
    def bytes_identical(self) -> bool:
        return self.first_difference is None and self.master_max_offset == self.slave_max_offset

    @property
    def queues_match(self) -> bool:
        return self.master_queues == self.slave_queues

    def problems(self) -> list[str]:
        """Why this direction fails (empty when it passes)."""
        out = []
        if self.master_max_offset != self.slave_max_offset:
            out.append(
                f"{self.label}: master max offset {self.master_max_offset}, "
                f"slave {self.slave_max_offset}"
            )
        if self.first_difference is not None:
            out.append(f"{self.label}: commit logs differ first at offset {self.first_difference}")
        out += queue_differences(self.label, self.topic, self.master_queues, self.slave_queues)
        out += self.other_topic_problems
        want = sorted((q, o, body_of(self.topic, i)) for i, (q, o) in enumerate(self.sends))
        if self.read_from_slave and sorted(self.read_from_slave) != want:
            out.append(f"{self.label}: the Java consumer read {sorted(self.read_from_slave)}, "
                       f"sent {want}")  # fmt: skip
        return out


def queue_differences(
    label: str, topic: str, master: dict[int, list[tuple[int, int, int]]],
    slave: dict[int, list[tuple[int, int, int]]],
) -> list[str]:  # fmt: skip
    """One line per queue whose units differ, naming the first differing queue offset."""
    out = []
    for qid in sorted(set(master) | set(slave)):
        m, s = master.get(qid, []), slave.get(qid, [])
        if m != s:
            at = next((i for i, (a, b) in enumerate(zip(m, s, strict=False)) if a != b),
                      min(len(m), len(s)))  # fmt: skip
            out.append(
                f"{label}: {topic} queue {qid} differs first at queue offset {at} "
                f"(master {len(m)} units, slave {len(s)})"
            )
    return out


# -- reading stores -------------------------------------------------------------------------------


def commit_log_bytes(commitlog_dir: Path, start: int, end: int) -> bytes:
    """The commit log's bytes ``[start, end)`` from its files (each named by its first offset).

    Raises:
        ReplicationError: the files do not hold the whole range.
    """
    out = bytearray()
    at = start
    for f in sorted(commitlog_dir.iterdir(), key=lambda p: int(p.name)):
        first = int(f.name)
        size = f.stat().st_size
        if first + size <= at or at >= end:
            continue
        if first > at:
            raise ReplicationError(f"{commitlog_dir}: no file holds offset {at}")
        with open(f, "rb") as fh:
            fh.seek(at - first)
            chunk = fh.read(min(end, first + size) - at)
        out += chunk
        at += len(chunk)
    if at < end:
        raise ReplicationError(f"{commitlog_dir}: holds offsets up to {at}, fewer than {end}")
    return bytes(out)


def consume_queue_units(store_dir: Path, topic: str) -> dict[int, list[tuple[int, int, int]]]:
    """Each queue's units ``(commit-log offset, size, tags code)`` from the consume-queue files,
    up to the first empty unit (size 0)."""
    out: dict[int, list[tuple[int, int, int]]] = {}
    root = store_dir / "consumequeue" / topic
    if not root.is_dir():
        return out
    for qdir in sorted(root.iterdir(), key=lambda p: int(p.name)):
        units: list[tuple[int, int, int]] = []
        for f in sorted(qdir.iterdir(), key=lambda p: int(p.name)):
            data = f.read_bytes()
            done = False
            for pos in range(0, len(data) - CQ_UNIT + 1, CQ_UNIT):
                phy = int.from_bytes(data[pos : pos + 8], "big", signed=True)
                size = int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
                tags = int.from_bytes(data[pos + 12 : pos + 20], "big", signed=True)
                if size == 0:
                    done = True
                    break
                units.append((phy, size, tags))
            if done:
                break
        out[int(qdir.name)] = units
    return out


def first_difference(a: bytes, b: bytes) -> int | None:
    """The first offset where ``a`` and ``b`` differ (the shorter's length if one is a
    prefix of the other), or None when they are equal."""
    if a == b:
        return None
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


# -- requests ---------------------------------------------------------------------------------------


def _create_topic(broker_addr: str, topic: str) -> None:
    ext = {
        "topic": topic, "defaultTopic": "TBW102", "readQueueNums": str(QUEUES),
        "writeQueueNums": str(QUEUES), "perm": "6", "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": "0", "order": "false",
    }  # fmt: skip
    resp = call_sync(
        broker_addr, RemotingCommand.create_request(RequestCode.UPDATE_AND_CREATE_TOPIC, ext)
    )
    if resp.code != 0:
        raise ReplicationError(
            f"UPDATE_AND_CREATE_TOPIC {topic} at {broker_addr}: {resp.code} {resp.remark}"
        )


def _send(broker_addr: str, topic: str, i: int) -> tuple[int, int]:
    resp = send_v2(
        broker_addr, topic, body_of(topic, i).encode(), group=PRODUCER_GROUP,
        queue_id=i % QUEUES, properties={"TAGS": f"Tag{i % 2}", "KEYS": f"k{i:02d}"},
    )  # fmt: skip
    if resp.code != 0:
        raise ReplicationError(f"send {i} to {broker_addr}: {resp.code} {resp.remark}")
    return int(resp.ext("queueId")), int(resp.ext("queueOffset"))


def runtime_info(broker_addr: str) -> dict[str, str]:
    """GET_BROKER_RUNTIME_INFO's table."""
    resp = call_sync(
        broker_addr, RemotingCommand.create_request(RequestCode.GET_BROKER_RUNTIME_INFO)
    )
    if resp.code != 0:
        raise ReplicationError(
            f"GET_BROKER_RUNTIME_INFO at {broker_addr}: {resp.code} {resp.remark}"
        )
    return fastjson_loads(resp.body.decode())["table"]


def _wait(cond, timeout_s: float, what: str) -> None:
    wait_until(cond, timeout_s, what, error=ReplicationError)


# -- mqlab brokers on the net driver ----------------------------------------------------------------


async def start_broker_node(
    driver: Any, node: str, broker_name: str, namesrv_addr: str, store_dir: Path, *,
    slave: bool, properties: dict[str, str] | None = None,
) -> Any:  # fmt: skip
    """Start an mqlab master (ASYNC_MASTER) or slave (brokerId 1) on ``driver`` (a NetDriver,
    on its loop), registered with ``namesrv_addr``, on free loopback ports: VIP channel,
    HA, broker, as the real runner's (a real slave's SlaveSynchronize sends to the master's
    VIP channel, listenPort - 2).

    ``properties`` are ``broker.properties`` keys (``mappedFileSizeCommitLog``, ...), read
    as ``mqlab serve`` reads them; name, id, role, ports and paths are always ours.
    """
    from mqlab.broker.broker_controller import BrokerController
    from mqlab.runtime.net import bind_socket
    from mqlab.serve import load_properties
    from mqlab.store.config import MessageStoreConfig

    text = "".join(f"{k}={v}\n" for k, v in (properties or {}).items())
    base_config, store_values, _ = load_properties(text)
    for attempt in range(3):
        # VIP (listenPort - 2), the broker (base + 2) and HA (listenPort + 1, bound by
        # on_start): four in a row free. free_port(3) left HA's port unchecked, and in CI
        # a self-check's slave failed with "Address already in use" on it
        base = free_port(4)
        try:
            sock = bind_socket("127.0.0.1", base + 2)
        except OSError:
            if attempt == 2:
                raise
            continue
        try:
            vip = bind_socket("127.0.0.1", base)
        except OSError:
            sock.close()
            if attempt == 2:
                raise
            continue
        break
    port = base + 2
    broker = BrokerController(
        dataclasses.replace(
            base_config, broker_name=broker_name, broker_id=1 if slave else 0,
            listen_port=port, name_server_addr=namesrv_addr, broker_ip1="127.0.0.1",
            broker_ip2="127.0.0.1",
        ),
        MessageStoreConfig(**{
            **store_values, "store_path_root_dir": str(store_dir),
            "broker_role": "SLAVE" if slave else "ASYNC_MASTER",
        }),
        name=node,
    )  # fmt: skip
    await driver.add_node(broker, sock=sock, extra_socks=(vip,))
    return broker


class MqlabBrokers:
    """mqlab ``BrokerController`` nodes on one ``NetDriver``, on a loop thread of their own."""

    def __init__(self) -> None:
        from mqlab.runtime.net import LoopThread, NetDriver

        self._loop = LoopThread("mqlab-ha-wire")

        async def make() -> Any:
            return NetDriver(run_id="ha-wire")

        self.driver = self._loop.submit(make())
        self.brokers: dict[str, Any] = {}

    def add_broker(
        self, node: str, broker_name: str, namesrv_addr: str, store_dir: Path, *,
        slave: bool, properties: dict[str, str] | None = None,
    ) -> Any:  # fmt: skip
        """Start a master (ASYNC_MASTER) or a slave (brokerId 1); see :func:`start_broker_node`."""
        broker = self._loop.submit(start_broker_node(
            self.driver, node, broker_name, namesrv_addr, store_dir, slave=slave,
            properties=properties,
        ))  # fmt: skip
        self.brokers[node] = broker
        return broker

    def call(self, fn) -> Any:
        return self._loop.call(fn)

    def stop_broker(self, node: str) -> None:
        self._loop.submit(self.driver.stop_node(node))

    def errors(self) -> list[str]:
        return list(self.driver.errors)

    def close(self) -> None:
        async def close() -> None:
            await self.driver.close()

        try:
            self._loop.submit(close())
        finally:
            self._loop.close()


# -- the check --------------------------------------------------------------------------------------


def _read_with_java(namesrv_addr: str, topics: list[str], workdir: Path) -> dict[str, list[dict]]:
    from mqlab.interop.java_client import run_java_scenario

    r = run_java_scenario("read-all:" + ",".join(topics), namesrv_addr, "HA_", workdir)
    return r["topics"]


def check_replication(
    real: RealCluster, workdir: Path, *, properties: dict[str, str] | None = None,
    java_consumer: bool = True, catch_up_s: float = 60, all_topics: bool = False,
) -> tuple[ReplicationCheck, ReplicationCheck]:  # fmt: skip
    """Run B1 and B2 side by side against ``real`` (a started :class:`RealCluster` whose
    master is ``broker-a``); returns ``(b1, b2)``. Stops the real master and the mqlab master
    on the way (step 5); the caller stops ``real``.

    ``all_topics``: B1 also compares the consume queues of every other topic the real
    master has queues for (after a conformance run: every scenario's).

    ``properties``: the real master's broker properties; the mqlab brokers get them all, the
    real slave the keys of :data:`SLAVE_KEYS` (its store files must be the master's size).

    Raises:
        ReplicationError: a step failed (a send, a timeout); a difference is not raised but
            recorded (``problems()``).
    """
    workdir = Path(workdir)
    topic_a, topic_b = "HaWireRealMaster", "HaWireMqlabMaster"
    mq = MqlabBrokers()
    try:
        # B2's master first: the real slave must find it registered
        props = dict(properties or {})
        master_b = mq.add_broker("mqlab-master-b", "broker-b", real.namesrv_addr,
                                 workdir / "mqlab-master-b", slave=False, properties=props)  # fmt: skip
        _wait(lambda: registered_addr(real.namesrv_addr, "broker-b", 0) == master_b.broker_addr,
              15, "the mqlab master broker-b in the real name server")  # fmt: skip
        # 1. topics first, so the slaves' first SlaveSynchronize copies them
        _create_topic(real.broker_addr, topic_a)
        _create_topic(master_b.broker_addr, topic_b)
        slave_a = mq.add_broker(
            "mqlab-slave-a", "broker-a", real.namesrv_addr, workdir / "mqlab-slave-a", slave=True,
            properties={**props, "haSendHeartbeatInterval": str(SLAVE_HEARTBEAT_MS)},
        )  # fmt: skip
        slave_b = real.start_slave("broker-b", {
            **{k: v for k, v in props.items() if k in SLAVE_KEYS},
            "haSendHeartbeatInterval": str(SLAVE_HEARTBEAT_MS),
        })  # fmt: skip
        # 2. the messages
        sends_a = [_send(real.broker_addr, topic_a, i) for i in range(MESSAGES)]
        sends_b = [_send(master_b.broker_addr, topic_b, i) for i in range(MESSAGES)]
        max_a = int(runtime_info(real.broker_addr)["commitLogMaxOffset"])
        max_b = mq.call(lambda: master_b.message_store.get_max_phy_offset())
        mq.call(lambda: master_b.message_store.flush())
        # 3. the slaves catch up: commit log, then a consume-queue unit for every message
        _wait(lambda: mq.call(lambda: slave_a.message_store.get_max_phy_offset()) >= max_a,
              catch_up_s, f"the mqlab slave to reach offset {max_a}")  # fmt: skip
        _wait(lambda: int(runtime_info(slave_b.broker_addr)["commitLogMaxOffset"]) >= max_b,
              catch_up_s, f"the real slave to reach offset {max_b}")  # fmt: skip
        _wait(lambda: _units(slave_a.store_dir, topic_a) >= MESSAGES, catch_up_s,
              "the mqlab slave's consume queues")  # fmt: skip
        _wait(lambda: _units(slave_b.store_dir, topic_b) >= MESSAGES, catch_up_s,
              "the real slave's consume queues")  # fmt: skip
        mq.call(lambda: slave_a.message_store.flush())
        learned = mq.call(lambda: slave_a.message_store.ha_service.ha_client.master_address)
        slave_max_a = mq.call(lambda: slave_a.message_store.get_max_phy_offset())
        slave_max_b = int(runtime_info(slave_b.broker_addr)["commitLogMaxOffset"])
        # 4. compare
        b1 = _compare(
            "real master -> mqlab slave", topic_a, sends_a,
            (real.commitlog_dir, real.store_dir, max_a),
            (slave_a.store_dir / "commitlog", slave_a.store_dir, slave_max_a),
        )  # fmt: skip
        if all_topics:
            _compare_other_topics(b1, real.store_dir, slave_a.store_dir)
        b2 = _compare(
            "mqlab master -> real slave", topic_b, sends_b,
            (master_b.store_dir / "commitlog", master_b.store_dir, max_b),
            (slave_b.commitlog_dir, slave_b.store_dir, slave_max_b),
        )  # fmt: skip
        b1.learned_ha_address = learned
        # 5. the masters stop; the Java client reads every message from the slaves
        if java_consumer:
            # each slave serves a pull only for a topic its SlaveSynchronize has copied
            _wait(lambda: mq.call(lambda: topic_a in slave_a.topic_config_manager.topic_config_table),
                  30, f"the mqlab slave's SlaveSynchronize to copy {topic_a}")  # fmt: skip
            _wait(lambda: topic_b in _read_text(slave_b.store_dir / "config" / "topics.json"),
                  30, f"the real slave's SlaveSynchronize to copy {topic_b}")  # fmt: skip
            real.stop_master()
            mq.stop_broker("mqlab-master-b")
            _wait(lambda: registered_addr(real.namesrv_addr, "broker-a", 0) is None
                  and registered_addr(real.namesrv_addr, "broker-b", 0) is None,
                  30, "both masters to leave the name server's route")  # fmt: skip
            read = _read_with_java(real.namesrv_addr, [topic_a, topic_b], workdir / "java")
            for check in (b1, b2):
                check.read_from_slave = [
                    (m["queueId"], m["queueOffset"], m["body"]) for m in read[check.topic]
                ]
        errors = mq.errors()
        if errors:
            raise ReplicationError(f"the mqlab net driver logged errors: {errors[:5]}")
        return b1, b2
    finally:
        mq.close()


def _compare(
    label: str, topic: str, sends: list[tuple[int, int]],
    master: tuple[Path, Path, int], slave: tuple[Path, Path, int],
) -> ReplicationCheck:  # fmt: skip
    m_log, m_store, m_max = master
    s_log, s_store, s_max = slave
    # a slave that starts empty is sent the master's last file from its start
    # (HAConnection.WriteSocketService#run): the replicated range starts there
    start = min(int(f.name) for f in s_log.iterdir())
    end = min(m_max, s_max)
    diff = first_difference(
        commit_log_bytes(m_log, start, end), commit_log_bytes(s_log, start, end)
    )
    return ReplicationCheck(
        label=label, topic=topic, replicated_from=start,
        master_max_offset=m_max, slave_max_offset=s_max,
        first_difference=None if diff is None else start + diff,
        master_queues=consume_queue_units(m_store, topic),
        slave_queues=consume_queue_units(s_store, topic), sends=sends,
    )  # fmt: skip


def _compare_other_topics(check: ReplicationCheck, master_store: Path, slave_store: Path) -> None:
    """Every topic with queues in the master's ``consumequeue`` besides the check's own (a
    topic the master deleted keeps an empty directory there and is left out)."""
    root = master_store / "consumequeue"
    for tdir in sorted(root.iterdir()):
        if tdir.name == check.topic or not any(tdir.iterdir()):
            continue
        check.other_topics += 1
        check.other_topic_problems += queue_differences(
            check.label, tdir.name, consume_queue_units(master_store, tdir.name),
            consume_queue_units(slave_store, tdir.name),
        )  # fmt: skip


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _units(store_dir: Path, topic: str) -> int:
    return sum(len(u) for u in consume_queue_units(Path(store_dir), topic).values())


def summary_line(b1: ReplicationCheck, b2: ReplicationCheck) -> str:
    """The conformance run's third summary line."""

    def part(c: ReplicationCheck) -> str:
        same = c.bytes_identical and c.queues_match and not c.problems()
        return f"{c.replicated_bytes} bytes {'identical' if same else 'DIFFERENT'}"

    return (
        f"replication: real master -> mqlab slave {part(b1)}, mqlab master -> real slave {part(b2)}"
    )
