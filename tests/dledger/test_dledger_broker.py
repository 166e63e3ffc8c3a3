"""Three brokers with ``enableDLegerCommitLog=true`` on one simulation driver, each on a node of a
3-node ``DLedgerGroup``: what a client's SEND_MESSAGE_V2 gets from the leader's broker, from a
follower's, and from a leader cut off from its followers (docs/dledger.md §5, measured on a
real 4.9.3 group), and what the name server lists as brokerId 0.
"""

from __future__ import annotations

import pytest

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.common.message_decoder import decode_message_id, decodes
from mqlab.dledger.group import DLedgerGroup
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.runtime.raw_client import RawClient
from mqlab.store.config import MessageStoreConfig

NAMESRV = "127.0.0.1:9876"
BUSY = "[PC_SYNCHRONIZED]broker busy, start flow control for a while"


class Raft:
    def __init__(self, tmp_path) -> None:
        self.group = DLedgerGroup(3, seed=5)
        d = self.group.driver
        self.namesrv = NamesrvController()
        d.add_node(self.namesrv)
        self.brokers: dict[str, BrokerController] = {}
        for k, node_id in enumerate(self.group.ids):
            cfg = BrokerConfig(broker_name="RaftNode00", listen_port=30911 + 10 * k,
                               name_server_addr=NAMESRV)  # fmt: skip
            store = MessageStoreConfig(
                store_path_root_dir=str(tmp_path / node_id), enable_d_leger_commit_log=True,
                d_leger_group="default", d_leger_peers=self.group.peers, d_leger_self_id=node_id,
            )  # fmt: skip
            b = BrokerController(cfg, store, name=f"broker-{node_id}",
                                 dledger_server=self.group.server(node_id))  # fmt: skip
            d.add_node(b)
            self.brokers[node_id] = b
        self.client = RawClient("client")
        d.add_node(self.client)

    def send(self, node_id: str, body: bytes, run_ms: int = 200, topic: str = "TopicTest"):
        ext = {
            "a": "PG", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "0",
            "g": str(self.group.now), "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false",
            "m": "false",
        }  # fmt: skip
        call = self.client.send(
            self.brokers[node_id].broker_addr, RequestCode.SEND_MESSAGE_V2, ext, body
        )
        self.group.run_until(lambda: call.done, run_ms + 5_000, slice_ms=1)
        return call

    def pull(self, node_id: str, topic: str):
        """PULL_MESSAGE of queue 0 from offset 0 (sysFlag 4: a subscription, no suspend)."""
        ext = {
            "consumerGroup": "CG", "topic": topic, "queueId": "0", "queueOffset": "0",
            "maxMsgNums": "32", "sysFlag": "4", "commitOffset": "0", "suspendTimeoutMillis": "0",
            "subscription": "*", "subVersion": "0", "expressionType": "TAG",
        }  # fmt: skip
        call = self.client.send(self.brokers[node_id].broker_addr, RequestCode.PULL_MESSAGE, ext)
        self.group.run_until(lambda: call.done, 5_000, slice_ms=1)
        return call

    def master_addrs(self) -> dict[int, str]:
        bd = self.namesrv.route_info_manager.broker_addr_table.get("RaftNode00")
        return {} if bd is None else dict(bd.broker_addrs)


def test_the_leaders_broker_is_listed_as_0_and_answers_send_ok_at_offset_0x30(tmp_path) -> None:
    r = Raft(tmp_path)
    g = r.group
    g.run_until(lambda: 0 in r.master_addrs(), 10_000)
    leader = g.leader()
    assert leader == "n1"
    assert r.master_addrs() == {
        0: r.brokers["n1"].broker_addr, 1: r.brokers["n0"].broker_addr,
        3: r.brokers["n2"].broker_addr,
    }  # fmt: skip
    call = r.send("n1", b"one message")
    assert call.code == ResponseCode.SUCCESS
    assert (call.ext("queueId"), call.ext("queueOffset")) == ("0", "0")
    assert decode_message_id(call.ext("msgId"))[1] == 0x30
    # a follower's broker is a SLAVE: SERVICE_NOT_AVAILABLE, as for any slave
    call = r.send("n0", b"to a follower")
    assert call.code == ResponseCode.SERVICE_NOT_AVAILABLE
    assert call.remark.startswith("service not available now. It may be caused by one of")
    # every broker's consume queue holds the acknowledged message once its node learns the
    # commit (the followers by the next push, a COMMIT at most ~1 s later)
    g.advance(1_500)
    for node_id, b in r.brokers.items():
        store = b.message_store
        assert store.get_max_offset_in_queue("TopicTest", 0) == 1, node_id
        assert store.get_commit_log_offset_in_queue("TopicTest", 0, 0) == 0x30
    # the leader cut off from both followers: the send waits for the quorum 2500 ms, then
    # SYSTEM_ERROR "[PC_SYNCHRONIZED]broker busy" (docs/dledger.md §5)
    g.partition(["n1"])
    t0 = g.now
    call = r.send("n1", b"cut off", run_ms=3_000)
    assert (call.code, call.remark) == (ResponseCode.SYSTEM_ERROR, BUSY)
    assert call.done_at - t0 >= 2500


def test_a_follower_killed_and_restarted_catches_up_with_one_handler(tmp_path) -> None:
    """n0 (broker and DLedger node, one JVM in 4.9.3) killed; a message acknowledged by n1
    and n2 meanwhile; n0 restarted on its stores: it follows again (SLAVE, brokerId 1), its
    node keeps one role change handler, one append hook and one commit listener (the new
    store's), and its consume queue gets both messages once it learns the commit."""
    r = Raft(tmp_path)
    g = r.group
    g.run_until(lambda: 0 in r.master_addrs(), 10_000)
    assert r.send("n1", b"first").code == ResponseCode.SUCCESS
    g.advance(1_500)
    g.driver.stop_node("broker-n0", graceful=False)
    g.kill("n0")
    assert r.send("n1", b"second").code == ResponseCode.SUCCESS
    g.restart("n0")
    g.driver.start_node("broker-n0")
    server = g.server("n0")
    g.run_until(lambda: server.store.committed_index == 1, 10_000)
    g.advance(200)
    b = r.brokers["n0"]
    assert (b.broker_config.broker_id, b.message_store_config.broker_role.value) == (1, "SLAVE")
    assert len(server.role_change_handlers) == 1 and len(server.elector.role_change_handlers) == 2
    assert (len(server.store.append_hooks), len(server.store.commit_listeners)) == (1, 1)
    assert server.store.commit_listeners[0].__self__ is b.message_store.commit_log
    store = b.message_store
    assert store.get_max_offset_in_queue("TopicTest", 0) == 2
    assert [store.look_message_by_offset(store.get_commit_log_offset_in_queue("TopicTest", 0, q)).body
            for q in (0, 1)] == [b"first", b"second"]  # fmt: skip


def test_a_dledger_broker_without_its_node_is_refused(tmp_path) -> None:
    store = MessageStoreConfig(
        store_path_root_dir=str(tmp_path), enable_d_leger_commit_log=True, d_leger_group="g",
        d_leger_peers="n0-127.0.0.1:40911", d_leger_self_id="n0",
    )  # fmt: skip
    with pytest.raises(ValueError, match="pass the node's DLedgerServer"):
        BrokerController(BrokerConfig(), store)


def test_a_broker_whose_role_is_undecided_registers_as_broker_id_minus_1(tmp_path) -> None:
    """n0 alone (n1, n2 and their brokers down from the start): its node stands for election
    and never wins, so its broker keeps ``BrokerStartup``'s brokerId -1 and SLAVE is never
    set. 4.9.3's periodic ``registerBrokerAll`` (first 10 s after start, forceRegister=true)
    still registers it, as brokerId -1: the name server lists it under -1 with its topics
    ignored (not a master). (A lone node never calls the handler: DLedgerLeaderElector
    0.2.3 calls it from changeRoleToCandidate, not for the CANDIDATE role it starts in.)

    A real 4.9.3 node alone (its two peers never started) did the same: the name server
    listed nothing, then {-1: its address} 9.9 s after its broker was up, unchanged 45 s on."""
    r = Raft(tmp_path)
    g = r.group
    for node_id in ("n1", "n2"):
        g.driver.stop_node(f"broker-{node_id}", graceful=False)
        g.kill(node_id)
    g.advance(9_990)
    assert r.master_addrs() == {}  # BrokerController#start registers no DLedger broker
    g.advance(20)  # the periodic registerBrokerAll at 10 000 ms
    b = r.brokers["n0"]
    assert (b.broker_config.broker_id, b.register_count) == (-1, 1)
    assert r.master_addrs() == {-1: b.broker_addr}
    assert r.namesrv.route_info_manager.topic_queue_table.get("TopicTest") is None
    assert "TBW102" not in r.namesrv.route_info_manager.topic_queue_table
    assert g.server("n0").member_state.role.value == "CANDIDATE"
    g.advance(30_000)  # and again every 30 s
    assert (b.broker_config.broker_id, b.register_count) == (-1, 2)


def topics(b: BrokerController) -> list[str]:
    return sorted(t for t in b.topic_config_manager.topic_config_table if t.startswith("Topic"))


def test_followers_sync_the_masters_topics_and_a_new_leader_knows_those_synced(tmp_path) -> None:
    """``changeToSlave`` arms SlaveSynchronize (first in 3 s, then every 10 s) and stops the
    schedule service and the transaction check; ``changeToMaster`` does the reverse
    (BrokerController, RocketMQ 4.9.3). So a topic auto-created on the master reaches the
    followers at their next ``syncAll``, and the follower that wins next knows it. A topic
    auto-created after the last sync does not: the new master answers a pull TOPIC_NOT_EXIST
    until a send creates it again from TBW102, and the message sent before the kill, in the
    committed log and its consume queue on every node, is then pulled with the new one.

    The real 4.9.3 group answered the same (3 JVMs, 1 s per send): the followers held TopicA
    14.0 s after its send, the new leader 5.5 s after the kill had TopicA only; its pulls:
    TopicA FOUND (nextBeginOffset 1), TopicB 17 "topic[TopicB] not exist, apply first
    please!"; TopicB's next send SEND_OK at queueOffset 1, then a pull FOUND with 2."""
    r = Raft(tmp_path)
    g = r.group
    b = r.brokers
    for x in b.values():  # BrokerController#start: none of the three in DLedger mode
        assert (x.message_store.schedule_message_service.started,
                x.transactional_message_check_service.started,
                x.ctx.has_timer("SlaveSynchronize.syncAll")) == (False, False, False)  # fmt: skip
    assert g.run_until(lambda: 0 in r.master_addrs(), 10_000) == 350
    g.advance(10)  # the followers' FOLLOWER change and registration
    changes = [
        (e.t_ms, e.node, e.step) for e in g.trace.select(component="BrokerController.changeRole")
    ]
    assert changes == [
        (331, "broker-n0", "4"), (331, "broker-n2", "4"),  # CANDIDATE: changeToSlave
        (342, "broker-n1", "5"),  # LEADER, log applied: changeToMaster
        (351, "broker-n0", "4"), (351, "broker-n2", "4"),  # FOLLOWER: changeToSlave
    ]  # fmt: skip
    leader_addr = b["n1"].broker_addr
    for n, x in b.items():
        master = n == "n1"
        assert (x.message_store.schedule_message_service.started,
                x.transactional_message_check_service.started,
                x.ctx.has_timer("SlaveSynchronize.syncAll"),
                x.slave_synchronize.master_addr) == (
            (True, True, False, None) if master else (False, False, True, leader_addr)
        ), n  # fmt: skip
    assert r.send("n1", b"a", topic="TopicA").code == ResponseCode.SUCCESS
    assert [topics(b[n]) for n in ("n0", "n2")] == [[], []]
    g.advance(3_400 - g.now)  # each follower's first syncAll: 3 000 ms after its changeToSlave
    assert [e.t_ms for e in g.trace.select(component="SlaveSynchronize.syncAll")] == [3351, 3351]
    assert [topics(b[n]) for n in ("n0", "n2")] == [["TopicA"], ["TopicA"]]
    assert r.send("n1", b"b", topic="TopicB").code == ResponseCode.SUCCESS  # after that sync
    g.advance(1_500)
    assert [topics(b[n]) for n in ("n0", "n2")] == [["TopicA"], ["TopicA"]]
    g.driver.stop_node("broker-n1", graceful=False)
    g.kill("n1")
    g.run_until(lambda: r.master_addrs().get(0) == b["n2"].broker_addr, 30_000)
    assert g.now == 10_824
    new = b["n2"]
    assert (new.broker_config.broker_id, new.message_store_config.broker_role.value) == (
        0,
        "SYNC_MASTER",
    )
    assert (new.message_store.schedule_message_service.started,
            new.transactional_message_check_service.started,
            new.ctx.has_timer("SlaveSynchronize.syncAll"),
            new.slave_synchronize.master_addr) == (True, True, False, None)  # fmt: skip
    assert topics(new) == ["TopicA"]
    pull = r.pull("n2", "TopicA")
    assert (pull.code, pull.remark, pull.ext("nextBeginOffset")) == (
        ResponseCode.SUCCESS,
        "FOUND",
        "1",
    )
    pull = r.pull("n2", "TopicB")
    assert (pull.code, pull.remark) == (
        ResponseCode.TOPIC_NOT_EXIST,
        "topic[TopicB] not exist, apply first please! \n"
        "See http://rocketmq.apache.org/docs/faq/ for further details.",
    )
    call = r.send("n2", b"b2", topic="TopicB")  # createTopicInSendMessageMethod from TBW102
    assert (call.code, call.ext("queueOffset")) == (ResponseCode.SUCCESS, "1")
    assert topics(new) == ["TopicA", "TopicB"]
    pull = r.pull("n2", "TopicB")
    assert (pull.code, pull.ext("nextBeginOffset")) == (ResponseCode.SUCCESS, "2")
    assert [m.body for m in decodes(pull.response.body)] == [b"b", b"b2"]
    # the other follower now syncs from the new master
    assert b["n0"].slave_synchronize.master_addr == new.broker_addr
