"""HA replication on the network driver: a master and a slave broker on loopback TCP.

The byte streams of ``NetContext`` (asyncio on 127.0.0.1) carry the same 8-byte reports
and 12-byte headers as the simulation (mechanisms.md "HA replication"); a SYNC_MASTER
send answers SEND_OK once the slave has reported it, and the slave's commit log is the
master's, byte for byte.
"""

from __future__ import annotations

import asyncio

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.runtime.net import NetDriver, bind_socket
from mqlab.runtime.raw_client import RawClient
from mqlab.store.config import MessageStoreConfig


def _free_pair() -> int:
    """A port p with p and p + 1 free (the broker's and its HA port)."""
    for _ in range(50):
        s = bind_socket("127.0.0.1", 0)
        port = s.getsockname()[1]
        try:
            bind_socket("127.0.0.1", port + 1).close()
        except OSError:
            s.close()
            continue
        s.close()
        return port
    raise RuntimeError("no two adjacent free ports")


def _commit_log(store) -> bytes:
    return b"".join(
        bytes(mf.mm[: mf.wrote_position]) for mf in store.commit_log.mapped_file_queue.mapped_files
    )


def test_sync_master_replicates_to_a_slave_over_tcp(tmp_path):
    """The slave connects to the master's HA port on 127.0.0.1, replicates a message, and
    SYNC_MASTER answers SEND_OK; the commit logs are byte-identical."""

    async def main():
        driver = NetDriver()
        mp, sp = _free_pair(), _free_pair()
        fast = {"ha_send_heartbeat_interval": 50}
        master = BrokerController(
            BrokerConfig(broker_name="broker-a", listen_port=mp, name_server_addr="127.0.0.1:1"),
            MessageStoreConfig(
                store_path_root_dir=str(tmp_path / "m"), broker_role="SYNC_MASTER", **fast
            ),
            name="master",
        )
        await driver.add_node(master)
        slave = BrokerController(
            BrokerConfig(
                broker_name="broker-a", broker_id=1, listen_port=sp, name_server_addr="127.0.0.1:1"
            ),
            MessageStoreConfig(
                store_path_root_dir=str(tmp_path / "s"),
                broker_role="SLAVE",
                ha_master_address=master.ha_server_addr,
                **fast,
            ),  # fmt: skip
            name="slave",
        )
        await driver.add_node(slave)
        client = RawClient("client")
        await driver.add_node(client)
        ha = master.message_store.ha_service
        for _ in range(500):
            if ha.connection_list and ha.connection_list[0].slave_request_offset >= 0:
                break
            await asyncio.sleep(0.02)
        assert ha.connection_count == 1
        ext = {
            "a": "PG", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "0", "f": "0",
            "g": "0", "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false",
        }  # fmt: skip
        call = client.send(master.broker_addr, RequestCode.SEND_MESSAGE_V2, ext, b"hello")
        for _ in range(500):
            if call.done:
                break
            await asyncio.sleep(0.02)
        assert call.code == ResponseCode.SUCCESS
        assert ha.push2_slave_max_offset == master.message_store.get_max_phy_offset() == 127
        assert _commit_log(slave.message_store) == _commit_log(master.message_store)
        assert ha.listen_addr == f"127.0.0.1:{mp + 1}"
        await driver.close()
        assert driver.errors == []

    asyncio.run(main())


def test_slave_waits_5_s_after_a_failed_connect(tmp_path):
    """Nothing listens at the master's HA address: one connect, then the next only 5 s
    later (HAClient#run: waitForRunning(5000)), not a busy loop of connects."""

    async def main():
        driver = NetDriver()
        sp, dead = _free_pair(), _free_pair()
        slave = BrokerController(
            BrokerConfig(
                broker_name="broker-a", broker_id=1, listen_port=sp, name_server_addr="127.0.0.1:1"
            ),
            MessageStoreConfig(
                store_path_root_dir=str(tmp_path / "s"),
                broker_role="SLAVE",
                ha_master_address=f"127.0.0.1:{dead + 1}",
            ),  # fmt: skip
            name="slave",
        )
        await driver.add_node(slave)

        def tries():
            return [
                e for e in driver.recorder.events
                if (e.component, e.step) == ("HAService.HAClient", "1") and "master" in e.fields
            ]  # fmt: skip

        # until the failed connect is seen (the next try is 5 s later; 30 s if loaded)
        deadline = asyncio.get_running_loop().time() + 30
        while len(tries()) < 2 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)  # a busy loop would have connected again by now
        tries = tries()
        assert [e.fields["connected"] for e in tries] == [True, False]  # connecting, then failed
        assert slave.message_store.ha_service.ha_client.channel is None
        await driver.close()
        assert driver.errors == []

    asyncio.run(main())


def test_a_broker_answers_on_its_vip_channel_too(tmp_path):
    """A broker added with ``extra_socks`` (its VIP channel, listenPort - 2, as 4.9.3's
    fastRemotingServer) answers the same requests there: GET_ALL_TOPIC_CONFIG (21), which a
    4.9.3 slave's SlaveSynchronize sends to ``MixAll#brokerVIPChannel(true, masterAddr)``.
    Without it a real slave of an mqlab master never learns a topic (found by the replication
    check, mqlab/conformance/replication.py). Stopping the node closes both sockets."""

    async def main():
        driver = NetDriver()
        port = _free_pair()
        vip = bind_socket("127.0.0.1", 0)
        vip_port = vip.getsockname()[1]
        master = BrokerController(
            BrokerConfig(broker_name="broker-b", listen_port=port, name_server_addr="127.0.0.1:1"),
            MessageStoreConfig(store_path_root_dir=str(tmp_path / "m")),
            name="master",
        )
        await driver.add_node(master, sock=bind_socket("127.0.0.1", port), extra_socks=(vip,))
        client = RawClient("client")
        await driver.add_node(client)
        calls = [
            client.send(addr, RequestCode.GET_ALL_TOPIC_CONFIG, {}, b"")
            for addr in (master.broker_addr, f"127.0.0.1:{vip_port}")
        ]
        for _ in range(500):
            if all(c.done for c in calls):
                break
            await asyncio.sleep(0.02)
        assert [c.code for c in calls] == [ResponseCode.SUCCESS, ResponseCode.SUCCESS]
        bodies = [c.response.body for c in calls]
        assert bodies[0] == bodies[1] and b'"TBW102"' in bodies[1]
        await driver.stop_node("master")
        assert driver.extra_servers == {}
        try:
            bind_socket("127.0.0.1", vip_port).close()  # free again
        finally:
            await driver.close()
        assert driver.errors == []

    asyncio.run(main())
