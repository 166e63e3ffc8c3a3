"""A master and a slave broker on the simulation driver, joined by HA replication.

No name server: the slave learns its master's HA address from the test
(``DefaultMessageStore#update_ha_master_address``, what its registration would give it).
"""

from __future__ import annotations

import struct

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.common.message_decoder import decodes
from mqlab.remoting.codes import RequestCode
from mqlab.runtime.context import Node
from mqlab.runtime.raw_client import RawClient
from mqlab.runtime.sim import SimDriver
from mqlab.store.config import MessageStoreConfig

MASTER_ADDR = "127.0.0.1:10911"
MASTER_HA = "127.0.0.1:10912"
SLAVE_ADDR = "127.0.0.1:10921"


class HAPair:
    """``master`` (node "master"), ``slave`` (node "slave") and a raw ``client``."""

    def __init__(self, tmp_path, *, role="SYNC_MASTER", latency_ms=None, slave=True, **store_kw):
        self.d = SimDriver(seed=1)
        self.tmp_path = tmp_path
        self.master = BrokerController(
            BrokerConfig(broker_name="broker-a", listen_port=10911),
            MessageStoreConfig(
                store_path_root_dir=str(tmp_path / "master"), broker_role=role, **store_kw
            ),
            name="master",
        )
        self.d.add_node(self.master)
        self.slave = None
        if slave:
            self.slave = BrokerController(
                BrokerConfig(broker_name="broker-a", broker_id=1, listen_port=10921),
                MessageStoreConfig(
                    store_path_root_dir=str(tmp_path / "slave"), broker_role="SLAVE", **store_kw
                ),
                name="slave",
            )
            self.d.add_node(self.slave)
        self.client = RawClient("client")
        self.d.add_node(self.client)
        if latency_ms is not None:
            self.set_latency(latency_ms)

    def set_latency(self, ms: int) -> None:
        self.d.set_link("master", "slave", latency_ms=ms)
        self.d.set_link("slave", "master", latency_ms=ms)

    @property
    def ms(self):
        return self.master.message_store

    @property
    def ss(self):
        return self.slave.message_store

    @property
    def ha(self):
        return self.ms.ha_service

    def fake_slave(self) -> FakeSlave:
        fake = FakeSlave()
        self.d.add_node(fake)
        return fake

    def connect(self) -> None:
        self.ss.update_ha_master_address(MASTER_HA)

    def send(self, topic="TopicTest", body=b"hello", queue_id=0, props=None):
        """SEND_MESSAGE_V2 from the raw client (WAIT=true unless ``props`` says otherwise)."""
        p = {"WAIT": "true", **(props or {})}
        ext = {
            "a": "PG", "b": topic, "c": "TBW102", "d": "4", "e": str(queue_id), "f": "0",
            "g": str(self.d.now), "h": "0",
            "i": "".join(f"{k}\x01{v}\x02" for k, v in p.items())[:-1],
            "j": "0", "k": "false", "m": "false",
        }  # fmt: skip
        return self.client.send(MASTER_ADDR, RequestCode.SEND_MESSAGE_V2, ext, body)

    def commit_log_bytes(self, store) -> bytes:
        """Every written byte of ``store``'s commit log, files in order, from its min offset."""
        out = bytearray()
        for mf in store.commit_log.mapped_file_queue.mapped_files:
            out += mf.mm[: mf.wrote_position]
        return bytes(out)

    def queue_bodies(self, store, topic="TopicTest", queue_id=0):
        """The bodies ``get_message`` finds in the queue, in order."""
        r = store.get_message("CG", topic, queue_id, 0, 32, None)
        if r is None or not r.message_buffers:
            return []
        return [m.body for buf in r.message_buffers for m in decodes(bytes(buf))]


class FakeSlave(Node):
    """A node that connects to the master's HA port and writes whatever 8-byte reports a
    test asks for: nothing checks them (apache/rocketmq#3015). Records what comes back."""

    def __init__(self, name: str = "fake", address: str = "127.0.0.1:20000") -> None:
        super().__init__(name, address)
        self.received: list[tuple[int, bytes]] = []
        self.closed_at: int | None = None
        self.channel = None

    def open(self, addr: str = MASTER_HA) -> None:
        def on_bytes(data: bytes) -> None:
            self.received.append((self.ctx.now_ms, data))

        def on_close(reason: str) -> None:
            self.closed_at = self.ctx.now_ms

        self.channel = self.ctx.open_stream(addr, on_bytes, on_close)

    def report(self, offset: int) -> None:
        self.ctx.send_bytes(self.channel, struct.pack(">q", offset))

    def stream(self) -> bytes:
        return b"".join(data for _, data in self.received)
