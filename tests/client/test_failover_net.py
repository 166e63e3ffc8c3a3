"""A consumer's shutdown with no master in its route, on the network driver.

4.9.3's ``DefaultMQPushConsumerImpl#shutdown`` blocks in ``RemoteBrokerOffsetStore#persistAll``:
each queue's ``updateConsumeOffsetToBroker`` finds no master, refreshes the route from the
name server, and commits to the slave. ``NetDriver.stop_node`` waits for that shutdown task,
as ``SimDriver.stop_node`` does (tests/client/test_failover.py has the simulated figures).
"""

from __future__ import annotations

import time

from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer.default_mq_push_consumer import DefaultMQPushConsumer
from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus
from mqlab.client.mq_client_instance import MQClientInstance
from mqlab.conformance.wire import call_sync
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.serve import ServeConfig, ServerThread

#: SEND_MESSAGE_V2's short header: one message to TopicTest queue 0, auto-created from TBW102
#: with 4 queues (as tests/net/test_serve_group.py).
SEND_EXT = {
    "a": "PG", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "0", "f": "0",
    "g": "0", "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false",
}  # fmt: skip


def wait_until(pred, what: str, timeout: float = 120.0):
    """Poll ``pred()`` until it is truthy; fail after a long ``timeout`` (load 13 safe)."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.05)


def test_net_consumer_shut_down_without_a_master_commits_its_offsets_to_the_slave(tmp_path):
    """serve --slaves 1: c1 consumes 3 messages of queue 0, the master is killed, c1's route
    loses it; stopping c1 waits while each of its 5 queues refreshes the route and commits to
    the slave, which then holds TopicTest offsets {0: 3, 1: 0, 2: 0, 3: 0} and %RETRY%G 0."""
    server = ServerThread(ServeConfig(namesrv_port=0, broker_port=0, slaves=1,
                                      store=str(tmp_path / "s")))  # fmt: skip
    try:
        master, slave = server.call(
            lambda s: (s.broker_addrs["broker-a"], s.broker_addrs["broker-a-s1"])
        )
        for i in range(3):
            req = RemotingCommand.create_request(RequestCode.SEND_MESSAGE_V2, dict(SEND_EXT),
                                                 f"m{i}".encode())  # fmt: skip
            assert call_sync(master, req).code == ResponseCode.SUCCESS

        persists: list = []
        server.call(lambda s: s.driver.recorder.subscribe(
            lambda e: persists.append(e) if e.node == "c1"
            and e.component == "RemoteBrokerOffsetStore.persistAll" else None))  # fmt: skip
        cfg = ClientConfig(namesrv_addr=server.namesrv_addr, instance_name="c1",
                           poll_name_server_interval=200,
                           local_offset_store_dir=str(tmp_path / "offsets"))  # fmt: skip
        inst = MQClientInstance(cfg, name="c1")
        server.submit(server.server.driver.add_node(inst, listen=False))

        def start(_s) -> DefaultMQPushConsumer:
            c = DefaultMQPushConsumer("G", inst, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
            c.subscribe("TopicTest", "*")
            c.register_message_listener(lambda msgs, ctx: ConsumeConcurrentlyStatus.CONSUME_SUCCESS)
            c.start()
            return c

        c1 = server.call(start)
        wait_until(lambda: server.call(lambda s: len(c1.consumed) == 3), "3 messages consumed")
        # the retry queue comes with the route of %RETRY%G, which the master registers when
        # c1's heartbeat creates it: under load that can come after the 3 messages
        wait_until(lambda: server.call(lambda s: len(c1.process_queue_table) == 5),
                   "c1's 5 queues, %RETRY%G's too")  # fmt: skip
        server.submit(server.server.stop_broker("broker-a", graceful=False))
        wait_until(lambda: server.call(lambda s: inst.broker_addr_table.get("broker-a"))
                   == {1: slave}, "c1's route without the master")  # fmt: skip
        assert server.call(lambda s: c1.default_mq_push_consumer_impl.offset_store.offset_table
                           .get(next(mq for mq in c1.process_queue_table
                                     if mq.topic == "TopicTest" and mq.queue_id == 0)))  == 3  # fmt: skip

        server.submit(server.server.driver.stop_node("c1"), timeout=120)
        assert server.call(lambda s: inst.running) is False
        waited = [e for e in persists if "waited" in e.fields.get("text", "")]
        assert [e.fields["sent"] for e in waited] == [
            ["%RETRY%G@broker-a:0=0 (slave)"]
            + [f"TopicTest@broker-a:{q}={3 if q == 0 else 0} (slave)" for q in range(4)]
        ], [e.describe() for e in persists]

        def slave_offsets(s):
            return {k: dict(v) for k, v in
                    s.broker("broker-a-s1").consumer_offset_manager.offset_table.items()}  # fmt: skip

        expected = {"TopicTest@G": {0: 3, 1: 0, 2: 0, 3: 0}, "%RETRY%G@G": {0: 0}}
        wait_until(lambda: server.call(slave_offsets) == expected,
                   "the slave to take the oneway commits")  # fmt: skip
    finally:
        server.stop()
