"""PullMessageService (the pull-request queue) and RebalanceService (20 s + wakeups).

mechanisms.md "The consumer's pull loop" steps 1–3 (put / take / pullMessage), mechanisms.md "The consumer's pull loop" "RebalanceService"; docs/reference.md §9.
"""

from __future__ import annotations

from mqlab.client.consumer.pull_message_service import PullMessageService
from mqlab.client.consumer.pull_request import PullRequest
from mqlab.client.consumer.rebalance_service import WAIT_INTERVAL, RebalanceService
from mqlab.client.process_queue import ProcessQueue
from mqlab.common.message import MessageQueue
from mqlab.runtime.context import Node
from mqlab.runtime.sim import SimDriver


class FakeConsumer:
    def __init__(self, d):
        self.d = d
        self.pulled = []

    def pull_message(self, pr):
        self.pulled.append((self.d.now, pr.message_queue.queue_id, pr.next_offset))


class FakeInstance(Node):
    def __init__(self):
        super().__init__("client", "")
        self.consumer_table = {}
        self.rebalances = []
        self.pull_message_service = PullMessageService(self)
        self.rebalance_service = RebalanceService(self)

    def do_rebalance(self):
        self.rebalances.append(self.ctx.now_ms)


def setup():
    d = SimDriver(seed=1)
    inst = FakeInstance()
    d.add_node(inst)
    consumer = FakeConsumer(d)
    inst.consumer_table["CG"] = consumer
    return d, inst, consumer


def pr(queue_id, offset=0, group="CG"):
    return PullRequest(group, MessageQueue("T", "b", queue_id), ProcessQueue(0), offset)


def test_pull_requests_are_served_fifo_one_per_firing():
    """executePullRequestImmediately queues; each PullMessageService.run takes exactly one."""
    d, inst, consumer = setup()
    svc = inst.pull_message_service
    svc.start()
    for q in (2, 0, 1):
        svc.execute_pull_request_immediately(pr(q))
    assert len(svc.pull_request_queue) == 3 and consumer.pulled == []
    d.step()
    assert [p[1] for p in consumer.pulled] == [2]
    d.run_until_idle()
    assert [p[1] for p in consumer.pulled] == [2, 0, 1]
    assert svc.pulls_taken == 3
    steps = [e for e in d.recorder.events if e.component.endswith("executePullRequestImmediately")]
    assert [e.step for e in steps] == ["1", "1", "1"]


def test_requests_queued_before_start_wait_for_start():
    """The service thread only takes once started."""
    d, inst, consumer = setup()
    svc = inst.pull_message_service
    svc.execute_pull_request_immediately(pr(0))
    d.run_until_idle()
    assert consumer.pulled == []
    svc.start()
    d.run_until_idle()
    assert [p[1] for p in consumer.pulled] == [0]


def test_later_is_a_daemon_timer_keyed_by_group_queue_and_sequence():
    """executePullRequestLater: timer PullMessageService.executePullRequestLater keyed
    <group>@<mq>#<n>."""
    d, inst, consumer = setup()
    svc = inst.pull_message_service
    svc.start()
    r = pr(3, offset=9)
    svc.execute_pull_request_later(r, 50)
    (t,) = [t for t in d.next_timers() if t.name == "PullMessageService.executePullRequestLater"]
    assert (t.due_ms, t.key, t.daemon) == (50, f"CG@{r.message_queue}#1", True)
    d.advance(49)
    assert consumer.pulled == []
    d.advance(1)
    assert consumer.pulled == [(50, 3, 9)]


def test_later_requests_of_two_groups_on_one_queue_both_fire():
    """Two groups' requests for one queue (and two tasks) scheduled later: Java's schedule()
    makes a task each, so each fires at its own time; none replaces another."""
    d, inst, consumer = setup()
    other = FakeConsumer(d)
    inst.consumer_table["CG2"] = other
    svc = inst.pull_message_service
    svc.start()
    svc.execute_pull_request_later(pr(0, offset=1), 1000)
    svc.execute_pull_request_later(pr(0, offset=2, group="CG2"), 50)
    fired = []
    svc.execute_task_later(lambda: fired.append(("a", d.now)), 300, key="CG@mq")
    svc.execute_task_later(lambda: fired.append(("b", d.now)), 200, key="CG@mq")
    keys = sorted(t.key for t in d.next_timers() if t.name.startswith("PullMessageService."))
    assert keys == [f"CG2@{MessageQueue('T', 'b', 0)}#2", f"CG@{MessageQueue('T', 'b', 0)}#1",
                    "CG@mq#3", "CG@mq#4"]  # fmt: skip
    d.advance(1000)
    assert other.pulled == [(50, 0, 2)] and consumer.pulled == [(1000, 0, 1)]
    assert fired == [("b", 200), ("a", 300)]


def test_later_for_a_dropped_queue_is_not_rearmed():
    """A dropped process queue's request is discarded instead of re-armed."""
    d, inst, consumer = setup()
    svc = inst.pull_message_service
    svc.start()
    r = pr(0)
    r.process_queue.dropped = True
    svc.execute_pull_request_later(r, 50)
    assert [t for t in d.next_timers() if t.name.startswith("PullMessageService")] == []


def test_unknown_group_is_dropped_with_a_trace():
    """No consumer for the request's group: "No matched consumer for the PullRequest"."""
    d, inst, consumer = setup()
    svc = inst.pull_message_service
    svc.start()
    svc.execute_pull_request_immediately(pr(0, group="OTHER"))
    d.run_until_idle()
    assert consumer.pulled == []
    (e,) = d.recorder.select(component="PullMessageService.pullMessage")
    assert "No matched consumer" in e.fields["text"]


def test_task_later_runs_after_the_delay_and_stops_with_the_service():
    """executeTaskLater (the OFFSET_ILLEGAL fix-up) fires after its delay; nothing after shutdown."""
    d, inst, consumer = setup()
    svc = inst.pull_message_service
    svc.start()
    fired = []
    svc.execute_task_later(lambda: fired.append(d.now), 10_000, key="mq")
    d.advance(10_000)
    assert fired == [10_000]
    svc.shutdown()
    svc.execute_task_later(lambda: fired.append(d.now), 1, key="mq")
    svc.execute_pull_request_immediately(pr(0))
    d.advance(100)
    assert fired == [10_000] and consumer.pulled == []


def test_rebalance_service_runs_every_20_s():
    """RebalanceService.run: waitForRunning(20 000) then doRebalance, forever (daemon)."""
    d, inst, _ = setup()
    inst.rebalance_service.start()
    d.advance(60_000)
    assert inst.rebalances == [20_000, 40_000, 60_000]
    (t,) = [t for t in d.next_timers() if t.name == "RebalanceService.run"]
    assert t.daemon and t.periodic and WAIT_INTERVAL == 20_000


def test_rebalance_wakeup_fires_now_and_restarts_the_wait():
    """wakeup() (consumer start, NOTIFY_CONSUMER_IDS_CHANGED) rebalances now; next one 20 s later."""
    d, inst, _ = setup()
    inst.rebalance_service.start()
    d.advance(5000)
    inst.rebalance_service.wakeup()
    d.advance(25_000)
    assert inst.rebalances == [5000, 25_000]


def test_rebalance_wakeup_before_start_is_remembered():
    """A wakeup before the service runs makes its first round immediate (hasNotified)."""
    d, inst, _ = setup()
    inst.rebalance_service.wakeup()
    inst.rebalance_service.start()
    d.advance(0)
    assert inst.rebalances == [0]
    d.advance(20_000)
    assert inst.rebalances == [0, 20_000]
