"""The DLedger panel, driven headless: the nodes' table after each click, and bad clicks
that say why and leave the lab alone (mechanisms.md "DLedger in the workbench")."""

from __future__ import annotations

import pytest

from mqlab.lab import Lab
from mqlab.lab.dledger_lab import COLUMNS, dledger_view
from mqlab.lab.dledger_widgets import DLEDGER_BUTTONS, dledger_panel


@pytest.fixture
def lab():
    with Lab(seed=5, dledger=3) as lab:
        yield lab


@pytest.fixture
def panel(lab):
    return dledger_panel(lab)


def said(panel) -> str:
    return "\n".join(panel.messages)


def snapshot(lab: Lab) -> tuple:
    return (lab.now, lab.events_run, len(lab.trace), len(lab._journal))


def rows(lab: Lab) -> dict[str, list]:
    df = dledger_view(lab)
    return {r["node"]: [r[c] for c in COLUMNS[2:]] for r in df.to_dict("records")}


def choose(panel, *nodes: str) -> None:
    panel.inputs["nodes"].value = tuple(nodes)


def test_the_table_shows_each_nodes_role_term_vote_log_end_and_committed_index(lab, panel):
    assert set(panel.buttons) == set(DLEDGER_BUTTONS)
    assert rows(lab) == {
        "broker-a-n0": ["up", "CANDIDATE", 1, "n2", "-", -1, -1, -1, 1, "-", "-"],
        "broker-a-n1": ["up", "CANDIDATE", 1, "n2", "-", -1, -1, -1, 2, "-", "-"],
        "broker-a-n2": ["up", "LEADER", 1, "n2", "n2", -1, -1, -1, 0, "-", "-"],
    }  # fmt: skip
    assert "DLedger group broker-a at t=653 ms: broker-a-n2 leads" in panel.table.value
    assert '<tr style="font-weight:bold"><td>broker-a-n2</td>' in panel.table.value
    panel.buttons["send"].click()
    assert "→ SEND_OK: queue 2 offset 0" in said(panel)
    assert rows(lab)["broker-a-n2"][5:8] == [0, 1, 0]
    assert "<td>FOLLOWER</td>" in panel.table.value  # the followers heard the leader


def test_kill_the_leader_step_the_election_restart_it(lab, panel):
    panel.buttons["send"].click()
    choose(panel, "broker-a-n2")
    panel.buttons["kill"].click()
    assert rows(lab)["broker-a-n2"][:2] == ["DOWN", "LEADER"]
    assert '<tr style="color:#999"><td>broker-a-n2</td>' in panel.table.value
    panel.buttons["step_election"].click()
    assert "→ broker-a-n1 (n1) won term 2 at t=7132" in said(panel)
    # the votes are in the log, never folded
    assert "DLedgerLeaderElector step 4" in said(panel)
    assert rows(lab)["broker-a-n1"][:3] == ["up", "LEADER", 2]
    panel.buttons["restart"].click()
    assert "restarted as CANDIDATE" in said(panel)
    panel.inputs["advance_ms"].value = "5000"
    panel.buttons["advance"].click()
    assert rows(lab)["broker-a-n2"] == ["up", "FOLLOWER", 2, "n2", "n1", 0, 1, 0, 3, "-", "-"]


def test_partition_the_leader_off_then_heal(lab, panel):
    choose(panel, "broker-a-n2")
    panel.buttons["partition"].click()
    assert "→ ['broker-a-n2'] (minority) | ['broker-a-n0', 'broker-a-n1']" in said(panel)
    assert rows(lab)["broker-a-n2"][9] == "n0,n1" and rows(lab)["broker-a-n0"][9] == "n2"
    panel.buttons["step_election"].click()
    assert "→ broker-a-n1 (n1) won term 2" in said(panel)
    panel.buttons["heal"].click()
    assert rows(lab)["broker-a-n2"][9] == "-"
    panel.inputs["advance_ms"].value = "5000"
    panel.buttons["advance"].click()
    assert rows(lab)["broker-a-n2"][:3] == ["up", "FOLLOWER", 2]


def test_power_cut_says_what_the_node_lost(lab, panel):
    panel.buttons["send"].click()  # n0 wrote entry 0 at t=663, SEND_OK at t=665
    choose(panel, "broker-a-n0")
    panel.buttons["power_cut"].click()  # n0's flush passes: t=660, 670
    assert "→ broker-a-n0 lost 1 unflushed DLedger entries; its log ends at index -1" in said(panel)
    assert rows(lab)["broker-a-n0"][:2] == ["DOWN", "FOLLOWER"]
    assert rows(lab)["broker-a-n0"][5] == -1


@pytest.mark.parametrize(
    ("setup", "button", "message"),
    [
        ((), "kill", "choose the node(s) to kill in the 'nodes' list"),
        (("broker-a-n0",), "restart", "broker-a-n0 is running: kill it first"),
        (("broker-a-n0", "broker-a-n1"), "power_cut", "power cut acts on one node at a time"),
        (("broker-a-n0", "broker-a-n1", "broker-a-n2"), "partition",
         "a partition needs nodes on both sides: you chose every node"),
    ],
)  # fmt: skip
def test_bad_clicks_say_why_and_change_nothing(lab, panel, setup, button, message):
    choose(panel, *setup)
    before = snapshot(lab)
    panel.buttons[button].click()
    assert panel.messages[-1] == f"⚠ {message}" or panel.messages[-1].startswith(f"⚠ {message}")
    assert snapshot(lab) == before


def test_nonsense_in_the_ms_box_and_a_second_kill(lab, panel):
    before = snapshot(lab)
    panel.inputs["advance_ms"].value = "soon"
    panel.buttons["advance"].click()
    assert panel.messages[-1] == "⚠ ms must be a whole number, got 'soon'"
    panel.inputs["advance_ms"].value = "-5"
    panel.buttons["advance"].click()
    assert panel.messages[-1] == "⚠ ms must be from 0 to 3600000 (one virtual hour at most), got -5"
    panel.inputs["topic"].value = "  "
    panel.buttons["send"].click()
    assert panel.messages[-1] == "⚠ topic must not be empty"
    assert snapshot(lab) == before
    choose(panel, "broker-a-n1")
    panel.buttons["kill"].click()
    before = snapshot(lab)
    panel.buttons["kill"].click()
    assert panel.messages[-1] == "⚠ broker-a-n1 is down already: restart it first"
    assert snapshot(lab) == before


def test_step_election_with_a_healthy_leader_says_so(lab, panel):
    panel.buttons["step_election"].click()
    assert panel.messages[-1] == (
        "  → no election ended within 60 s: broker-a-n2 still leads term 1 "
        "(kill or partition the leader first, or heal a split group)"
    )


def test_a_lab_without_dledger_is_refused_with_the_way_out():
    with Lab() as plain, pytest.raises(ValueError, match=r"build it with Lab\(dledger=3\)"):
        dledger_panel(plain)
    with Lab(seed=5, dledger=3) as lab, pytest.raises(ValueError, match="no DLedger group 'b'"):
        dledger_panel(lab, "b")


def test_next_vote_steps_an_election_one_answer_at_a_time(lab, panel):
    choose(panel, "broker-a-n2")
    panel.buttons["kill"].click()
    for _ in range(6):
        panel.buttons["next_vote"].click()
    answers = [m for m in panel.messages if m.startswith("  → n")]
    assert answers == [
        "  → n1 answers n1's vote for term 1: REJECT_ALREADY_VOTED (now in term 1, voted for n2)",
        "  → n0 answers n1's vote for term 1: REJECT_ALREADY_VOTED (now in term 1, voted for n2)",
        "  → n0 answers n0's vote for term 1: REJECT_ALREADY_VOTED (now in term 1, voted for n2)",
        "  → n1 answers n0's vote for term 1: REJECT_ALREADY_VOTED (now in term 1, voted for n2)",
        "  → n1 answers n1's vote for term 2: ACCEPT (now in term 2, voted for n1)",
        "  → n0 answers n1's vote for term 2: REJECT_TERM_NOT_READY (now in term 1, voted for n2)",
    ]
    assert rows(lab)["broker-a-n1"][:4] == ["up", "CANDIDATE", 2, "n1"]
    panel.buttons["step_election"].click()
    assert panel.messages[-1] == "  → broker-a-n1 (n1) won term 2 at t=1592"


def test_next_vote_with_a_healthy_leader_says_so(lab, panel):
    panel.buttons["send"].click()
    panel.buttons["next_vote"].click()
    assert panel.messages[-1] == (
        "  → no vote within 60 s: broker-a-n2 leads and its heartbeats keep the followers "
        "(kill or partition it first)"
    )


def test_the_control_panels_link_faults_act_on_dledger_links(lab):
    """``control_panel``'s fault row on a DLedger lab: "partition" of the master cuts it off
    from its group, "heal_link" heals the group, "lag_slave" slows leader -> follower."""
    from mqlab.lab import control_panel

    panel = control_panel(lab)
    i = panel.inputs
    i["fault"].value, i["fault_node"].value = "partition", "broker-a-n2"
    panel.apply_fault()
    assert rows(lab)["broker-a-n2"][9] == "n0,n1"
    i["fault"].value = "heal_link"
    panel.apply_fault()
    assert rows(lab)["broker-a-n2"][9] == "-"
    i["fault"].value, i["fault_node"].value, i["latency_ms"].value = (
        "lag_slave",
        "broker-a-n0",
        "300",
    )
    panel.apply_fault()
    assert rows(lab)["broker-a-n2"][10] == "n0:300ms" and rows(lab)["broker-a-n0"][10] == "n2:300ms"
    i["fault_node"].value = "broker-a-n2"
    panel.apply_fault()
    assert panel.messages[-1].startswith("✗ apply_fault failed: ValueError: lag_slave slows the "
                                         "link from the leader to a follower; broker-a-n2 is the leader")  # fmt: skip


def test_the_control_panels_dledger_view(lab):
    from mqlab.lab import control_panel

    panel = control_panel(lab, views=["dledger", "queues"])
    html = panel.inspector.value
    assert "<b>DLedger nodes (broker-a)</b>" in html
    assert "<td>broker-a-n2</td><td>up</td><td>LEADER</td><td>1</td><td>n2</td>" in html
    with Lab(seed=1) as plain, pytest.raises(ValueError, match=r"Lab\(dledger=3\)"):
        control_panel(plain, views=["dledger"])
