"""Metrics of one run on scenarios with known answers (mqlab.experiments.run, .metrics)."""

import pytest

from mqlab.experiments.listener import fails
from mqlab.experiments.run import run
from mqlab.experiments.scenario import Scenario
from mqlab.experiments.schema import METRIC_COLUMNS


def _scenario(**kw) -> Scenario:
    base = {"name": "t", "duration_ms": 4000, "drain_ms": 3000,
            "producers": [{"rate_per_s": 20}], "consumers": [{"count": 2}]}  # fmt: skip
    base.update(kw)
    return Scenario.from_dict(base)


@pytest.mark.parametrize("seed", [0, 1])
def test_no_faults_no_duplicates_no_loss(seed):
    """No faults: every acknowledged message reaches the group once; nothing lost (at-least-once)."""
    m = run(_scenario(seed=seed, producers=[{"rate_per_s": 20, "arrival": "poisson"}])).metrics
    assert m["sent"] > 50 and m["send_failed"] == 0
    assert m["delivered"] == m["sent"] == m["stored"] == m["deliveries"]
    assert (m["duplicates"], m["lost"], m["lost_allowed_by"], m["retries"], m["dlq"]) == (
        0, 0, "", 0, 0)  # fmt: skip
    assert m["final_lag"] == 0 and m["membership_changes"] == 0 and m["convergence_ms"] is None
    assert set(m) == {n for n, _ in METRIC_COLUMNS} | {"run_id"}


def test_short_polling_issues_ten_times_more_pulls_over_60s_idle():
    """60 s idle: short polling answers a parked pull every 2 s (1 000 ms checks), long polling
    every 20 s (15 s suspend, 5 000 ms checks): ≥ 10× the PULL_MESSAGE requests (mechanisms.md "Long polling")."""
    idle = {"duration_ms": 60_000, "drain_ms": 0, "producers": [{"rate_per_s": 0}],
            "consumers": [{"count": 1}]}  # fmt: skip
    long_ = run(_scenario(**idle, broker={"long_polling_enable": True})).metrics
    short = run(_scenario(**idle, broker={"long_polling_enable": False})).metrics
    assert long_["pulls_issued"] == 15  # 5 queues (4 + %RETRY%CG) × 3 answers in 60 s
    assert short["pulls_issued"] >= 10 * long_["pulls_issued"]
    assert short["pulls_empty"] == short["pulls_issued"] and long_["pulls_found"] == 0
    assert long_["latency_p50_ms"] is None  # nothing was sent


def test_failures_retry_then_go_to_the_dlq():
    """failure_rate 1, maxReconsumeTimes 1: each message is delivered, retried once (delay
    level 3 = 1 s here) and then stored in %DLQ%CG (docs/reference.md §10.7); retries are not duplicates."""
    m = run(_scenario(
        duration_ms=1000, drain_ms=8000, delay_levels="1s 1s 1s 1s 1s",
        producers=[{"rate_per_s": 5}], consumers=[{"count": 1, "failure_rate": 1.0,
                                                   "max_reconsume_times": 1}],
    )).metrics  # fmt: skip
    assert (m["sent"], m["delivered"], m["deliveries"], m["retries"], m["dlq"]) == (5, 5, 10, 5, 5)
    assert (m["duplicates"], m["lost"]) == (0, 0)


def test_failure_decision_is_a_seeded_hash():
    """The listener's failure draw depends on (seed, group, msg id, reconsume times) only."""
    draws = [fails(1, "CG", f"id-{i}", 0, 0.3) for i in range(1000)]
    assert draws == [fails(1, "CG", f"id-{i}", 0, 0.3) for i in range(1000)]
    assert 250 <= sum(draws) <= 350
    assert draws != [fails(2, "CG", f"id-{i}", 0, 0.3) for i in range(1000)]


def test_flow_control_episodes_follow_the_threshold():
    """A burst of 200 on one slow consumer: pullThresholdForQueue 4 holds pulls back (mechanisms.md "The consumer's pull loop"
    step 2.1), 1 000 never does."""

    def fc(threshold):
        return run(_scenario(
            duration_ms=2000, drain_ms=5000,
            producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 100, "count": 200}]}],
            consumers=[{"count": 1, "consume_thread": 2, "consume_time_ms": 10,
                        "pull_threshold_for_queue": threshold}],
        )).metrics  # fmt: skip

    low, high = fc(4), fc(1000)
    assert low["flow_control_episodes"] > 0 and low["flow_control_deferrals"] > 0
    assert high["flow_control_episodes"] == high["flow_control_deferrals"] == 0
    assert low["delivered"] == high["delivered"] == 200 and low["lost"] == high["lost"] == 0


def test_membership_changes_converge_and_move_queues():
    """A join and a leave: two membership changes, each settled (every queue one owner), queues
    moved between consumers (mechanisms.md "Rebalancing" rebalance), nothing lost."""
    m = run(_scenario(
        duration_ms=6000, topics=[{"name": "TopicTest", "queues": 8}],
        faults=[{"at_ms": 1000, "action": "join"},
                {"at_ms": 3000, "action": "leave", "target": "consumer-1"}],
    )).metrics  # fmt: skip
    assert m["membership_changes"] == 2 and m["unconverged_changes"] == 0
    assert m["convergence_ms"] is not None and 0 <= m["convergence_ms"] < 1000
    assert m["queue_moves"] > 0 and m["rebalances"] > 0
    assert m["lost"] == 0 and m["delivered"] == m["sent"]


def test_loss_is_explained_by_the_fault_that_allows_it():
    """Killing the only broker strands stored messages: lost > 0, and lost_allowed_by names
    the kill (scenario time); sends after the kill fail and are not counted as sent."""
    m = run(_scenario(
        duration_ms=3000, drain_ms=2000, producers=[{"rate_per_s": 20}],
        consumers=[{"count": 1, "consume_thread": 1, "consume_time_ms": 500}],
        faults=[{"at_ms": 1500, "action": "kill_broker", "target": "broker-a"}],
    )).metrics  # fmt: skip
    assert m["lost"] > 0 and m["lost_not_stored"] == 0
    assert m["lost_allowed_by"].startswith("kill_broker broker-a@1500")
    assert m["send_failed"] > 0


def test_a_power_cut_loses_acknowledged_messages_that_a_kill_keeps():
    """The run above with power_cut_broker instead of kill_broker: the 30 acknowledged
    messages were never flushed (under 4 dirty pages, no thorough pass yet), so none is left
    in the commit log; the 20 not consumed before the cut are lost and not stored (a kill
    keeps all 30 stored), and lost_allowed_by names the power cut."""
    m = run(_scenario(
        duration_ms=3000, drain_ms=2000, producers=[{"rate_per_s": 20}],
        consumers=[{"count": 1, "consume_thread": 1, "consume_time_ms": 500}],
        faults=[{"at_ms": 1500, "action": "power_cut_broker", "target": "broker-a"}],
    )).metrics  # fmt: skip
    assert (m["sent"], m["stored"], m["delivered"], m["lost"], m["lost_not_stored"]) == (
        30, 0, 10, 20, 20)  # fmt: skip
    assert m["lost_allowed_by"].startswith("power_cut_broker broker-a@1500")


def test_same_scenario_same_metrics_and_trace():
    """A run is a function of its scenario: the same seed gives the same row and events."""
    s = _scenario(seed=5, consumers=[{"count": 2, "failure_rate": 0.2}])
    a, b = run(s), run(s)
    assert a.metrics == b.metrics
    assert [e.to_row() for e in a.events] == [e.to_row() for e in b.events]
    assert a.run_id == "t-s5" and a.events[0].run_id == "t-s5"
