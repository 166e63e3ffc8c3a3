"""The slave as a broker: registration, refused sends, pulls without commits, read suggestions.

Mirrors what RocketMQ 4.9.3 answers on a SLAVE (mechanisms.md "The slave as a broker"):
``BrokerController#doRegisterBrokerAll``, ``DefaultMessageStore#checkStoreStatus``,
``PullMessageProcessor#processRequest``, ``DefaultMessageStore#getMessage``.
"""

from __future__ import annotations

import pytest

from mqlab import Lab
from mqlab.common.message_decoder import decodes
from mqlab.remoting.codes import ResponseCode

SLAVE_ADDR = "127.0.0.1:11911"
MASTER_ADDR = "127.0.0.1:10911"


def send_ext(lab: Lab, topic: str, queue_id: int = 0) -> dict[str, str]:
    """SEND_MESSAGE_V2's short header fields (SendMessageRequestHeaderV2)."""
    return {
        "a": "PG", "b": topic, "c": "TBW102", "d": "4", "e": str(queue_id), "f": "0",
        "g": str(lab.now), "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false",
    }  # fmt: skip


def pull_ext(topic: str, queue_id: int = 0, offset: int = 0, *, sys_flag: int = 6,
             commit_offset: int = 0, max_msgs: int = 32, group: str = "CG") -> dict[str, str]:  # fmt: skip
    return {
        "consumerGroup": group, "topic": topic, "queueId": str(queue_id),
        "queueOffset": str(offset), "maxMsgNums": str(max_msgs), "sysFlag": str(sys_flag),
        "commitOffset": str(commit_offset), "suspendTimeoutMillis": "0", "subscription": "*",
        "subVersion": "0", "expressionType": "TAG",
    }  # fmt: skip


@pytest.fixture
def lab(tmp_path):
    with Lab(seed=3, slaves=1, store_dir=tmp_path) as lab:
        yield lab


def filled(lab: Lab, replicate, count: int = 4) -> None:
    """``count`` messages sent to the master's queue 0, replicated to the slave, topic synced."""
    for i in range(count):
        assert lab.request("broker-a", "SEND_MESSAGE_V2", send_ext(lab, "TopicTest"),
                           f"m{i}".encode()).response.code == ResponseCode.SUCCESS  # fmt: skip
    replicate(lab, lab.broker("broker-a"), lab.broker("broker-a", broker_id=1))
    lab.advance(3_000)  # SlaveSynchronize's first syncAll brings the topic over


def test_slave_registers_with_broker_id_1_and_learns_its_master(lab):
    """The slave registers as brokerId 1; its reply carries the master's HA and broker address."""
    slave = lab.broker("broker-a", broker_id=1)
    master = lab.broker("broker-a")
    bd = lab.namesrv.route_info_manager.broker_addr_table["broker-a"]
    assert bd.broker_addrs == {0: MASTER_ADDR, 1: SLAVE_ADDR}
    assert slave.message_store.ha_master_address == "127.0.0.1:10912"
    assert slave.slave_synchronize.master_addr == MASTER_ADDR
    assert slave.update_master_ha_server_addr_periodically is True
    # a master's reply carries neither: SlaveSynchronize's address stays null
    assert master.message_store.ha_master_address is None
    assert master.slave_synchronize.master_addr is None
    [ev] = lab.trace.select(component="SlaveSynchronize.setMasterAddr")
    assert (ev.t_ms, ev.node, ev.step, ev.fields["new"]) == (2, "broker-a-s1", "1", MASTER_ADDR)


def test_slave_before_its_master_learns_nothing_until_the_master_registers(tmp_path):
    """A slave that registers while no master is known gets no addresses; the next round does."""
    with Lab(seed=3, slaves=1, store_dir=tmp_path) as lab:
        lab.stop("broker-a")
        lab.advance(30_000)  # the slave's 30 s registration: the name server has no master
        slave = lab.broker("broker-a-s1")
        assert slave.slave_synchronize.master_addr is None
        lab.restart_broker("broker-a")
        lab.advance(30_000)
        assert slave.slave_synchronize.master_addr == MASTER_ADDR


def test_send_to_slave_is_service_not_available(lab):
    """checkStoreStatus: a SLAVE store refuses every put; the send answers 14 with its remark."""
    call = lab.request("broker-a-s1", "SEND_MESSAGE_V2", send_ext(lab, "TopicTest"), b"x")
    assert call.response.code == ResponseCode.SERVICE_NOT_AVAILABLE == 14
    assert call.response.remark == (
        "service not available now. It may be caused by one of the following reasons: the "
        "broker's disk is full [CL:  0.00 CQ:  0.00 INDEX:  0.00], messages are put to the "
        "slave, message store has been shut down, etc."
    )
    assert lab.broker("broker-a-s1").message_store.get_max_phy_offset() == 0


def test_slave_serves_pulls_without_committing_offsets(lab, replicate):
    """The slave answers the pull from its own store and ignores the COMMIT_OFFSET flag."""
    filled(lab, replicate)
    slave = lab.broker("broker-a-s1")
    call = lab.request("broker-a-s1", "PULL_MESSAGE", pull_ext("TopicTest", sys_flag=7,
                                                              commit_offset=2))  # fmt: skip
    r = call.response
    assert r.code == ResponseCode.SUCCESS
    assert [m.body for m in decodes(r.body)] == [b"m0", b"m1", b"m2", b"m3"]
    assert (r.ext("nextBeginOffset"), r.ext("suggestWhichBrokerId")) == ("4", "0")
    assert slave.consumer_offset_manager.query_offset("CG", "TopicTest", 0) == -1
    # the same pull on the master commits
    lab.request("broker-a", "PULL_MESSAGE", pull_ext("TopicTest", sys_flag=7, commit_offset=2))
    assert lab.broker("broker-a").consumer_offset_manager.query_offset("CG", "TopicTest", 0) == 2
    [ev] = lab.trace.select(component="PullMessageProcessor.processRequest", step="11",
                            node="broker-a-s1")  # fmt: skip
    assert ev.fields["committed"] is False


def test_slave_without_offset_check_answers_retry_immediately(lab, replicate):
    """offsetCheckInSlave=false: an offset past the slave's end is PULL_RETRY_IMMEDIATELY, not
    corrected; with it on, PULL_OFFSET_MOVED to the corrected offset (minOffset 0 → 0)."""
    filled(lab, replicate)
    r = lab.request("broker-a-s1", "PULL_MESSAGE", pull_ext("TopicTest", offset=9)).response
    assert (r.code, r.remark) == (ResponseCode.PULL_RETRY_IMMEDIATELY, "OFFSET_OVERFLOW_BADLY")
    assert (r.ext("nextBeginOffset"), r.ext("maxOffset"), r.ext("suggestWhichBrokerId")) == (
        "9", "4", "0",
    )  # fmt: skip
    lab.broker("broker-a-s1").message_store_config.offset_check_in_slave = True
    r = lab.request("broker-a-s1", "PULL_MESSAGE", pull_ext("TopicTest", offset=9)).response
    assert (r.code, r.ext("nextBeginOffset")) == (ResponseCode.PULL_OFFSET_MOVED, "0")


def test_master_suggests_the_slave_when_the_pull_reads_beyond_memory(tmp_path, replicate):
    """slaveReadEnable + a pull whose last message lies more than accessMessageInMemoryMaxRatio
    (40 %) of the memory behind the end: suggestWhichBrokerId = whichBrokerWhenConsumeSlowly."""
    # Each message here is 124 bytes; 40 % of 1 000 bytes is 400 bytes of "memory".
    with Lab(seed=3, slaves=1, store_dir=tmp_path, broker={"slave_read_enable": True},
             store={"total_physical_memory_size": 1000}) as lab:  # fmt: skip
        filled(lab, replicate, count=6)
        master = lab.broker("broker-a")
        assert master.message_store.get_max_phy_offset() == 6 * 124

        def suggest(offset: int) -> str:
            ext = pull_ext("TopicTest", offset=offset, max_msgs=1)
            return lab.request("broker-a", "PULL_MESSAGE", ext).response.ext("suggestWhichBrokerId")

        # getMessage judges by the last unit it looked at: with maxMsgNums 1, the unit after
        # the one returned (the batch is full there). From 0: unit 1 at 124, 744 - 124 = 620
        # > 400; from 1: 248, 496 > 400; from 2: 372, 372 <= 400; from 5: itself, 124.
        assert [suggest(i) for i in range(6)] == ["1", "1", "0", "0", "0", "0"]
        lab.set_broker_config("broker-a", slave_read_enable=False)
        assert suggest(0) == "0"


def test_ha_server_addr_is_broker_ip2_and_ha_listen_port(tmp_path):
    """BrokerController#getHAServerAddr: brokerIP2 + ":" + haListenPort is what the master
    registers and what its slave's store is told to replicate from."""
    with Lab(seed=3, slaves=1, store_dir=tmp_path, broker={"broker_ip2": "10.0.0.2"}) as lab:
        live = lab.namesrv.route_info_manager.broker_live_table
        assert live[MASTER_ADDR].ha_server_addr == "10.0.0.2:10912"
        assert live[SLAVE_ADDR].ha_server_addr == "10.0.0.2:11912"
        assert lab.broker("broker-a-s1").message_store.ha_master_address == "10.0.0.2:10912"


def test_slave_runs_slave_synchronize_and_no_schedule_or_transaction_service(lab):
    """handleScheduleMessageService / startProcessorByHa / handleSlaveSynchronize: the
    delayed-message, delay-offset and transaction-check timers run on the master only,
    SlaveSynchronize on the slave only."""
    df = lab.timers(include_bookkeeping=True)
    by_node = {n: set(df[df["node"] == n]["name"]) for n in ("broker-a", "broker-a-s1")}
    role_timers = {
        "ScheduleMessageService.DeliverDelayedMessageTimerTask", "ScheduleMessageService.persist",
        "TransactionalMessageCheckService.onWaitEnd", "SlaveSynchronize.syncAll",
    }  # fmt: skip
    assert by_node["broker-a"] & role_timers == role_timers - {"SlaveSynchronize.syncAll"}
    assert by_node["broker-a-s1"] & role_timers == {"SlaveSynchronize.syncAll"}
    assert (
        len(
            df[
                (df["node"] == "broker-a")
                & (df["name"].str.startswith("ScheduleMessageService.Deliver"))
            ]
        )
        == 18
    )
