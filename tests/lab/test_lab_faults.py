"""Replication faults in the Lab: a cut link between master and slave and its heal, a lagging
slave, a silent partition, the master's kill / power cut / lost machine, through ``Lab.fault`` and the panel's
"faults" row (issue 24, item 4; mechanisms.md "HA replication").

Numbers (seed 1, the lab's 1 ms links): a slave connects to its master's HA port at ~5 s and
first reports 5 s later; ``lab.send_many`` stores 169 bytes per message ("msg-{i}"), the raw
SEND_MESSAGE_V2 of ``send_ext`` with body "m1" 124 bytes.
"""

from __future__ import annotations

import pytest

from mqlab import Lab
from mqlab.lab.lab import FAULTS
from mqlab.lab.widgets import control_panel
from mqlab.remoting.codes import ResponseCode
from tests.broker.test_slave_broker import send_ext


def ends(lab: Lab) -> tuple[int, int, int]:
    """(master's max offset, its push2SlaveMaxOffset, the slave's max offset)."""
    m, s = lab.broker("broker-a"), lab.broker("broker-a-s1")
    return (
        m.message_store.get_max_phy_offset(),
        m.message_store.ha_service.push2_slave_max_offset,
        s.message_store.get_max_phy_offset(),
    )


def test_cut_link_freezes_replication_and_heal_catches_up(tmp_path, replicate):
    """ASYNC_MASTER: with the link cut, push2SlaveMaxOffset stays at 338 while the master
    grows to 845; the HA connection is gone. After heal_link the slave reconnects on its
    HAClient's turn and holds all 845 bytes 11 000 ms later, the master knows 1 ms after."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        lab.send_many("TopicTest", 2)
        m, s = lab.broker("broker-a"), lab.broker("broker-a-s1")
        assert replicate(lab, m, s) == 338
        lab.advance(1)
        assert (lab.now, ends(lab)) == (11_003, (338, 338, 338))
        lab.cut_link("broker-a", "broker-a-s1")
        lab.send_many("TopicTest", 3)
        lab.advance(30_000)
        assert ends(lab) == (845, 338, 338)
        assert m.message_store.ha_service.connection_count == 0
        [ev] = lab.trace.select(component="Lab", step="cut_link")
        assert ev.fields["a"] == "broker-a" and ev.fields["b"] == "broker-a-s1"
        lab.heal_link("broker-a", "broker-a-s1")
        t0 = lab.now
        assert replicate(lab, m, s) == 507
        assert lab.now - t0 == 11_000
        assert ends(lab)[1] == 338  # the master learns it from the slave's next report
        lab.advance(1)
        assert ends(lab) == (845, 845, 845)
        df = lab.commit_logs("broker-a")
        assert df["broker-a-s1"].tolist() == [True] * 5


def test_cut_link_makes_a_sync_master_answer_slave_not_available(tmp_path):
    """SYNC_MASTER: the cut ends the HA connection, so isSlaveOK is false and the next send
    answers SLAVE_NOT_AVAILABLE at once (2 ms), the message stored on the master only."""
    with Lab(seed=1, slaves=1, broker_role="SYNC_MASTER", store_dir=tmp_path) as lab:
        lab.advance(10_000)
        assert lab.send("TopicTest", b"m0").get().send_status.name == "SEND_OK"
        assert ends(lab) == (166, 166, 166)
        lab.fault("cut_link", "broker-a-s1")
        t0 = lab.now
        fut = lab.send("TopicTest", b"m1", run=False)
        while not fut.done:
            lab.step()
        assert (fut.get().send_status.name, lab.now - t0) == ("SLAVE_NOT_AVAILABLE", 2)
        assert ends(lab) == (332, 166, 166)


def test_a_silent_partition_times_sync_sends_out_until_housekeeping(tmp_path):
    """cut_link(silent=True), the menu's "partition": no reset crosses, so the master keeps
    its HA connection; every send waits slaveTimeout and answers FLUSH_SLAVE_TIMEOUT (12)
    3002 ms later, until the master's read service, 20 000 ms without a report
    (haHousekeepingInterval), closes it: the next send answers SLAVE_NOT_AVAILABLE (11) in
    2 ms. Nothing the master pushed into the partition is lost: its kernel retransmits it,
    and the first retransmission after heal_link (25 600 ms after the first push, 4586 ms
    after the heal) brings the slave's old connection, which the slave kept (its HAClient
    closes only when its own reports stall), the seven pushes and then the master's close.
    The slave reconnects at once, and reports the last message 10 589 ms after the heal.
    (A real slave on loopback may append fewer of them: the master's reset to its first
    report can come back before the next one, tests/conformance/test_ha_partition_vs_real.py.)"""
    with Lab(seed=1, slaves=1, broker_role="SYNC_MASTER", store_dir=tmp_path) as lab:
        lab.advance(10_000)
        assert lab.send("TopicTest", b"m0").get().send_status.name == "SEND_OK"
        ha = lab.broker("broker-a").message_store.ha_service
        lab.fault("partition", "broker-a-s1")
        cut = lab.now
        answers = []
        for _ in range(8):
            t0 = lab.now
            call = lab.request("broker-a", "SEND_MESSAGE_V2", send_ext(lab, "TopicTest"), b"m1",
                               run=False)  # fmt: skip
            while not call.done:
                lab.step()
            answers.append((t0 - cut, call.response.code, lab.now - t0, ha.connection_count))
        assert answers == [
            (0, 12, 3002, 1), (3002, 12, 3002, 1), (6004, 12, 3002, 1), (9006, 12, 3002, 1),
            (12_008, 12, 3002, 1), (15_010, 12, 3002, 1), (18_012, 12, 3002, 0),
            (21_014, 11, 2, 0),
        ]  # fmt: skip
        [ev] = lab.trace.select(component="HAConnection.ReadSocketService", step="11")
        assert ev.t_ms - cut == 20_000
        assert "housekeeping: no report for 20001 ms" in ev.fields["text"]
        assert ends(lab) == (1158, 166, 166)
        lab.heal_link("broker-a", "broker-a-s1")
        healed = lab.now
        while ends(lab)[1] < 1158:
            lab.advance(1)
        assert (lab.now - healed, ends(lab)) == (10_589, (1158, 1158, 1158))
        slave = [(e.t_ms - healed, e.step, e.fields.get("master_offset", e.fields.get("reason")))
                 for e in lab.trace.select(component="HAService.HAClient")
                 if e.t_ms >= healed and e.step in ("9", "11")]  # fmt: skip
        assert slave == [(4586, "9", 166 + 124 * i) for i in range(7)] + [
            (4586, "11", "closed by broker-a"), (10_588, "9", 1034),
        ]  # fmt: skip


def test_lagging_slave_makes_a_sync_master_time_out_after_3000_ms(tmp_path):
    """lag_slave(5000): the master's pushes reach the slave 5 s late; the sync send waits
    slaveTimeout (3000 ms) and answers FLUSH_SLAVE_TIMEOUT (code 12), 3002 ms after it left
    (GroupTransferService at t=14 005). The slave gets the bytes later; lag_slave(None)
    restores the link and sends answer SEND_OK again."""
    with Lab(seed=1, slaves=1, broker_role="SYNC_MASTER", store_dir=tmp_path) as lab:
        lab.advance(10_000)
        assert lab.send("TopicTest", b"m0").get().send_status.name == "SEND_OK"
        lab.lag_slave("broker-a-s1", 5000)
        t0 = lab.now
        call = lab.request("broker-a", "SEND_MESSAGE_V2", send_ext(lab, "TopicTest"), b"m1",
                           run=False)  # fmt: skip
        while not call.done:
            lab.step()
        assert (call.response.code, lab.now - t0) == (ResponseCode.FLUSH_SLAVE_TIMEOUT, 3002)
        assert call.response.code == 12
        [ev] = [e for e in lab.trace.select(component="HAService.GroupTransferService", step="13")
                if e.fields["status"] == "FLUSH_SLAVE_TIMEOUT"]  # fmt: skip
        assert ev.t_ms == 14_005
        assert ends(lab) == (290, 166, 166)
        lab.advance(6000)
        assert ends(lab) == (290, 290, 290)
        lab.lag_slave("broker-a-s1", None)
        assert lab.send("TopicTest", b"m2").get().send_status.name == "SEND_OK"
        assert ends(lab) == (456, 456, 456)


def test_master_kill_power_cut_and_loss_leave_the_slave_its_bytes(tmp_path, replicate):
    """The three master faults through Lab.fault: the slave keeps the 507 replicated bytes in
    each; a power cut returns what the master's store lost; a lost machine restarts empty."""
    for kind in ("kill", "power_cut", "lose"):
        with Lab(seed=1, slaves=1, store_dir=tmp_path / kind) as lab:
            lab.send_many("TopicTest", 3)
            assert replicate(lab, lab.broker("broker-a"), lab.broker("broker-a-s1")) == 507
            out = lab.fault(kind, "broker-a")
            assert not lab.broker("broker-a").running
            assert lab.broker("broker-a-s1").message_store.get_max_phy_offset() == 507
            new = lab.fault("restart", "broker-a")
            lab.run_until_idle()
            end = new.message_store.get_max_phy_offset()
            if kind == "power_cut":  # flushed by then (FlushRealTimeService, every 500 ms)
                assert out == {"commit_log_wrote": 507, "commit_log_flushed": 507,
                               "commit_log_kept": 507, "consume_queue_lost_bytes": 60}  # fmt: skip
            else:
                assert out is None
            assert end == (0 if kind == "lose" else 507)


def test_fault_menu_and_its_errors(tmp_path):
    """FAULTS names every fault; fault() and the link faults refuse nonsense by name."""
    assert list(FAULTS) == [
        "kill", "power_cut", "lose", "restart", "cut_link", "partition", "heal_link",
        "lag_slave",
    ]  # fmt: skip
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        with pytest.raises(ValueError, match=r"unknown fault 'melt'; faults: \['kill'"):
            lab.fault("melt", "broker-a")
        with pytest.raises(ValueError, match="'broker-a' is a master .brokerId 0., not a slave; "
                           r"slaves: \['broker-a-s1'\]"):  # fmt: skip
            lab.fault("cut_link", "broker-a")
        with pytest.raises(ValueError, match="latency_ms must be a whole number of ms >= 0"):
            lab.lag_slave("broker-a-s1", -5)
        with pytest.raises(ValueError, match="two different nodes"):
            lab.cut_link("broker-a", "broker-a")
        with pytest.raises(ValueError):
            lab.cut_link("broker-a", "broker-z")
        assert lab.driver.links == {}  # nothing refused changed a link


def test_fork_replays_the_link_faults(tmp_path, replicate):
    """cut_link / lag_slave are journaled: a fork at the end has the same ends."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        lab.send_many("TopicTest", 2)
        lab.advance(12_000)
        lab.cut_link("broker-a", "broker-a-s1")
        lab.send_many("TopicTest", 1)
        lab.advance(1000)
        f = lab.fork()
        assert ends(f) == ends(lab) == (507, 338, 338)
        assert f.driver.links[("broker-a", "broker-a-s1")].down is True
        f.close()


def test_panel_faults_row(tmp_path):
    """The panel of a lab with slaves has the faults row; a link fault on the master, a bad
    latency and a kill of a node already down are messages saying why; a lag applies."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        p = control_panel(lab)
        assert "faults" in p.sections
        assert list(p.inputs["fault"].options) == list(FAULTS)
        assert list(p.inputs["fault_node"].options) == ["broker-a", "broker-a-s1"]
        p.inputs["fault"].value = "cut_link"
        p.buttons["apply_fault"].click()
        assert p.messages[-1] == (
            "⚠ cut_link acts on the link between a slave and its master, and broker-a is a "
            "master: choose one of its slaves ['broker-a-s1']"
        )
        p.inputs["fault"].value = "lag_slave"
        p.inputs["fault_node"].value = "broker-a-s1"
        p.inputs["latency_ms"].value = "soon"
        p.buttons["apply_fault"].click()
        assert p.messages[-1] == "⚠ latency ms must be a whole number, got 'soon'"
        assert lab.driver.links == {}
        p.inputs["latency_ms"].value = "4000"
        p.buttons["apply_fault"].click()
        assert lab.driver.links[("broker-a", "broker-a-s1")].latency_ms == 4000
        assert p.messages[-1] == "  → " + FAULTS["lag_slave"]
        p.inputs["fault"].value = "kill"
        p.inputs["fault_node"].value = "broker-a"
        p.buttons["apply_fault"].click()
        assert not lab.broker("broker-a").running
        p.buttons["apply_fault"].click()
        assert p.messages[-1] == "⚠ broker-a is not running: restart it first"
    with Lab(seed=1, store_dir=tmp_path / "single") as lab:
        p = control_panel(lab, sections=["faults", "log"])
        p.inputs["fault"].value = "heal_link"
        p.buttons["apply_fault"].click()
        assert p.messages[-1] == (
            "⚠ heal_link acts on the link between a slave and its master, and broker-a is a "
            "master: this lab has no slaves (build it with Lab(slaves=1))"
        )
