"""Lab broker groups: a master and slaves per broker name, machine faults per node, and the
duplicates of apache/rocketmq#1094 end to end (mechanisms.md "SlaveSynchronize")."""

from __future__ import annotations

import pytest

from mqlab import Lab


def nodes(lab: Lab) -> list[tuple]:
    return [
        (b.name, b.broker_config.broker_name, b.broker_config.broker_id, b.broker_addr,
         str(b.message_store_config.broker_role), b.message_store_config.ha_listen_port,
         b.store_dir.name)
        for b in lab.brokers
    ]  # fmt: skip


def test_groups_of_a_master_and_two_slaves(tmp_path):
    """brokers=2, slaves=2: six nodes, ids 0-2 per name, own ports, HA ports and stores."""
    with Lab(seed=1, brokers=2, slaves=2, broker_role="SYNC_MASTER", store_dir=tmp_path) as lab:
        assert nodes(lab) == [
            ("broker-a", "broker-a", 0, "127.0.0.1:10911", "SYNC_MASTER", 10912, "broker-a"),
            ("broker-a-s1", "broker-a", 1, "127.0.0.1:11911", "SLAVE", 11912, "broker-a-s1"),
            ("broker-a-s2", "broker-a", 2, "127.0.0.1:12911", "SLAVE", 12912, "broker-a-s2"),
            ("broker-b", "broker-b", 0, "127.0.0.1:10921", "SYNC_MASTER", 10922, "broker-b"),
            ("broker-b-s1", "broker-b", 1, "127.0.0.1:11921", "SLAVE", 11922, "broker-b-s1"),
            ("broker-b-s2", "broker-b", 2, "127.0.0.1:12921", "SLAVE", 12922, "broker-b-s2"),
        ]
        rim = lab.namesrv.route_info_manager
        assert rim.cluster_addr_table == {"DefaultCluster": {"broker-a", "broker-b"}}
        assert rim.broker_addr_table["broker-b"].broker_addrs == {
            0: "127.0.0.1:10921", 1: "127.0.0.1:11921", 2: "127.0.0.1:12921",
        }  # fmt: skip
        assert lab.broker("broker-b") is lab.brokers[3]
        assert lab.broker("broker-b", broker_id=2) is lab.broker("broker-b-s2") is lab.brokers[5]
        # each slave learned its own master's HA address
        assert [lab.broker(n).message_store.ha_master_address
                for n in ("broker-a-s2", "broker-b-s1")] == ["127.0.0.1:10912", "127.0.0.1:10922"]  # fmt: skip


def test_default_lab_is_one_async_master():
    """Lab() is unchanged: one ASYNC_MASTER broker-a, no slave."""
    with Lab(seed=1) as lab:
        assert [(n[0], n[2], n[3], n[4]) for n in nodes(lab)] == [
            ("broker-a", 0, "127.0.0.1:10911", "ASYNC_MASTER")
        ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"slaves": 3}, "slaves must be 0, 1 or 2, got 3"),
        ({"slaves": True}, "slaves must be 0, 1 or 2, got True"),
        ({"broker_role": "SLAVE"},
         "broker_role must be one of ['ASYNC_MASTER', 'SYNC_MASTER'], got 'SLAVE'"),
    ],
)  # fmt: skip
def test_bad_group_arguments(kwargs, message):
    """A bad slaves count or master role is a ValueError naming it."""
    with pytest.raises(ValueError) as e:
        Lab(seed=1, **kwargs)
    assert str(e.value) == message


def test_broker_lookup_errors(tmp_path):
    """Asking for a slave id that does not exist names the nodes there are."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        with pytest.raises(ValueError) as e:
            lab.broker("broker-a", broker_id=2)
        assert str(e.value) == (
            "no broker named 'broker-a' with broker_id 2; brokers: ['broker-a', 'broker-a-s1']"
        )
        with pytest.raises(ValueError, match="broker_id must be an int >= 0, got -1"):
            lab.broker("broker-a", broker_id=-1)


def test_killing_a_slave_leaves_the_master_serving(tmp_path):
    """A slave's kill takes only its node down: the name server drops id 1, sends go on."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        lab.kill("broker-a-s1")
        lab.run_until_idle()
        assert lab.namesrv.route_info_manager.broker_addr_table["broker-a"].broker_addrs == {
            0: "127.0.0.1:10911"
        }
        assert lab.send("TopicTest", b"x").get().send_status.name == "SEND_OK"
        assert lab.broker("broker-a").running and not lab.broker("broker-a-s1").running


def test_lost_master_machine_comes_back_empty(tmp_path, replicate):
    """lose(): the store directory is gone; restart_broker starts a new machine with an empty
    store on the same address, which registers as master again."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        lab.send_many("TopicTest", 3)
        master = lab.broker("broker-a")
        assert master.message_store.get_max_phy_offset() > 0
        replicate(lab, master, lab.broker("broker-a-s1"))
        lab.lose("broker-a")
        assert not (tmp_path / "broker-a").exists()
        assert (tmp_path / "broker-a-s1" / "commitlog").exists()
        [ev] = lab.trace.select(component="Lab", step="lose")
        assert ev.fields["broker"] == "broker-a"
        new = lab.restart_broker("broker-a")
        lab.run_until_idle()
        assert new.message_store.get_max_phy_offset() == 0
        assert new.topic_config_manager.select_topic_config("TopicTest") is None
        assert lab.namesrv.route_info_manager.broker_addr_table["broker-a"].broker_addrs == {
            0: "127.0.0.1:10911", 1: "127.0.0.1:11911",
        }  # fmt: skip
        # the slave still holds the three messages
        slave = lab.broker("broker-a-s1")
        assert (
            sum(slave.message_store.get_max_offset_in_queue("TopicTest", q) for q in range(4)) == 3
        )


def test_power_cut_and_restart_of_a_slave_keep_its_name(tmp_path):
    """A slave's power cut and restart act on its node; it comes back as brokerId 1."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        lab.power_cut("broker-a-s1")
        new = lab.restart_broker("broker-a-s1")
        lab.run_until_idle()
        assert (new.name, new.broker_config.broker_id, new.broker_addr) == (
            "broker-a-s1", 1, "127.0.0.1:11911",
        )  # fmt: skip
        assert new.message_store.last_shutdown_normal is False
        assert new.slave_synchronize.master_addr == "127.0.0.1:10911"


def test_fork_replays_a_group(tmp_path):
    """A fork rebuilds the slaves too and replays to the same trace."""
    with Lab(seed=4, slaves=1, store_dir=tmp_path) as lab:
        lab.send_many("TopicTest", 2)
        lab.advance(15_000)
        other = lab.fork()
        try:
            assert [b.name for b in other.brokers] == ["broker-a", "broker-a-s1"]
            assert lab.diff(other).attrs["diverges_at"] is None
        finally:
            other.close()


def test_offsets_committed_to_the_slave_are_lost_when_the_master_returns(tmp_path, replicate):
    """apache/rocketmq#1094 end to end: consumption during the master's outage commits to the
    slave; the returning master's older offsets overwrite the slave's at the next syncAll,
    and a consumer of the same group that reads its offsets again consumes all 8 again."""
    with Lab(seed=7, slaves=1, store_dir=tmp_path) as lab:
        master, slave = lab.broker("broker-a"), lab.broker("broker-a-s1")
        # Before the outage: 4 messages consumed, offsets 1 on both (the slave by syncAll).
        lab.send_many("TopicTest", 4)
        lab.push_consumer(
            "G", "TopicTest", name="c1", consume_from_where="CONSUME_FROM_FIRST_OFFSET"
        )
        lab.advance(12_000)
        lab.remove_consumer("c1")
        lab.run_until_idle()
        before = {q: 1 for q in range(4)}
        assert master.consumer_offset_manager.offset_table["TopicTest@G"] == before
        assert slave.consumer_offset_manager.offset_table["TopicTest@G"] == before
        # 8 more messages reach the slave over HA, then the master dies.
        lab.send_many("TopicTest", 8)
        replicate(lab, master, slave)
        lab.advance(10_000)
        lab.kill("broker-a")
        lab.run_until_idle()
        assert lab.now == 22_103
        # The outage: c2 reads the 8 from the slave and commits offsets 3 there.
        c2 = lab.push_consumer("G", "TopicTest", name="c2",
                               consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
        lab.advance(30_000)
        assert sorted((r.mq.queue_id, r.queue_offset) for r in c2.consumed) == [
            (q, o) for q in range(4) for o in (1, 2)
        ]
        assert {r.t_ms for r in c2.consumed} == {22_127}
        lab.remove_consumer("c2")
        lab.run_until_idle()
        assert slave.consumer_offset_manager.offset_table["TopicTest@G"] == {q: 3 for q in range(4)}
        assert slave.slave_synchronize.master_addr is None  # registered at 40 000: no master
        # The master returns with its offsets of before the outage.
        back = lab.restart_broker("broker-a")
        lab.run_until_idle()
        # c2's shutdown waited 10 ms for its 5 route refreshes (no master in its route),
        # then 4 ms for its UNREGISTER_CLIENTs to the slave (G, then CLIENT_INNER_PRODUCER),
        # each answered before the next is sent
        assert lab.now == 52_121
        assert back.consumer_offset_manager.offset_table["TopicTest@G"] == before
        lab.advance(
            21_000
        )  # the slave's registration at 70 000 names the master; syncAll at 73 000
        assert slave.consumer_offset_manager.offset_table["TopicTest@G"] == before
        [ev] = [e for e in lab.trace.select(component="SlaveSynchronize.syncConsumerOffset")
                if e.fields.get("overwritten")]  # fmt: skip
        assert (ev.t_ms, ev.fields["overwritten"]) == (73_004, ["TopicTest@G"])
        # A consumer of the group that reads its offsets again gets the 8 messages a second time.
        c3 = lab.push_consumer("G", "TopicTest", name="c3",
                               consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
        lab.advance(30_000)
        again = sorted((r.mq.queue_id, r.queue_offset) for r in c3.consumed)
        assert again == sorted((r.mq.queue_id, r.queue_offset) for r in c2.consumed)
        assert len(again) == 8


def test_commit_logs_side_by_side_mark_what_each_slave_holds(tmp_path, replicate):
    """commit_logs(): rows are the master's entries; a slave's column is True where it holds
    the same bytes, None past its end; attrs give each end, the replicated offset and what the
    master believes (push2SlaveMaxOffset). Both slaves replicate the first two entries by
    t=11 002 (connect at ~5 s, first report 5 s later); the third is not replicated yet."""
    with Lab(seed=1, slaves=2, store_dir=tmp_path) as lab:
        lab.send_many("TopicTest", 2)
        master = lab.broker("broker-a")
        assert replicate(lab, master, lab.broker("broker-a-s1")) == 338
        assert lab.now == 11_002
        lab.send_many("TopicTest", 1)
        df = lab.commit_logs("broker-a")
        sizes = df["size"].tolist()
        assert sizes == [169, 169, 169]
        assert df["commit_log_offset"].tolist() == [0, 169, 338]
        assert df["broker-a"].tolist() == [True, True, True]
        assert df["broker-a-s1"].tolist() == [True, True, None]
        assert df["broker-a-s2"].tolist() == [True, True, None]
        assert df.attrs["max_offsets"] == {"broker-a": 507, "broker-a-s1": 338, "broker-a-s2": 338}
        assert df.attrs["replicated_offset"] == 338
        assert df.attrs["push2_slave_max_offset"] == 338
        with pytest.raises(ValueError, match="no broker name 'broker-z' with a master"):
            lab.commit_logs("broker-z")


def test_set_store_config_brings_memory_pressure_at_run_time(tmp_path):
    """set_store_config(total_physical_memory_size=…) on the master: with slaveReadEnable its
    next pull from far behind suggests the slave; bad fields are refused by name."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path, broker={"slave_read_enable": True}) as lab:
        lab.send_many("TopicTest", 8)
        ext = {"consumerGroup": "CG", "topic": "TopicTest", "queueId": 0, "queueOffset": 0,
               "maxMsgNums": 1, "sysFlag": 6, "commitOffset": 0, "suspendTimeoutMillis": 0,
               "subscription": "*", "subVersion": 0, "expressionType": "TAG"}  # fmt: skip
        assert (
            lab.request("broker-a", "PULL_MESSAGE", ext).response.ext("suggestWhichBrokerId") == "0"
        )
        lab.set_store_config("broker-a", total_physical_memory_size=100)
        assert lab.broker("broker-a-s1").message_store_config.total_physical_memory_size is None
        assert (
            lab.request("broker-a", "PULL_MESSAGE", ext).response.ext("suggestWhichBrokerId") == "1"
        )
        with pytest.raises(ValueError, match="MessageStoreConfig has no field 'memory'"):
            lab.set_store_config(memory=1)
        with pytest.raises(ValueError, match="broker_role cannot change at run time"):
            lab.set_store_config(broker_role="SLAVE")
