"""Ready-made scenarios for ``mqlab.explore``, each with the outcome classes RocketMQ
4.9.3's documented behaviour allows, written down before any search ran.

Mirrors no RocketMQ class. Each ``ExploreScenario`` is a small ``mqlab.experiments``
``Scenario`` (one broker, a few messages, short timeouts), the scenario time ``arm_ms``
from which the explorer decides, the faults it may inject, a latency set, default bounds
small enough for an exhaustive search in seconds, and:

- ``allowed``: the outcome keys (``mqlab.explore.outcome.OUTCOME_KEYS``) RocketMQ's
  guarantees allow here. A class with another key is a bug (or a mutant);
- ``expected``: keys that the documentation says *can* happen, so the search must find
  a class with each.

The expectations, with their sources:

- ``consumer_join``: at-least-once, so a rebalance may deliver a message twice (the
  queue's old owner consumed it, its offset had not reached the broker when the new owner
  read it: ``RebalancePushImpl#removeUnnecessaryMessageQueue`` persists it, but
  asynchronously, see notebooks/mechanisms.md, rebalancing), and nothing is lost.
- ``consumer_join_at_persist``: the same cluster, consumer-2 joining 7 994 ms in, so
  that its QUERY_CONSUMER_OFFSET for queue 1 reaches the broker in the same ms as
  consumer-1's first offset persist (``MQClientInstance#persistAllConsumerOffset``, 10 s
  after consumer-1 started): whichever the broker serves first decides whether queue 1's
  consumed message is delivered again, so ``dup:rebalance`` is expected (lesson 11).
- ``async_flush_power_cut``: ``FlushDiskType.ASYNC_FLUSH`` acknowledges a message once it
  is in the page cache (``CommitLog#handleDiskFlush``); a power cut before
  ``FlushRealTimeService`` runs loses it: ``lost`` is allowed and expected.
- ``sync_flush_power_cut``: with ``SYNC_FLUSH`` the SEND_OK waits for ``GroupCommitService``;
  an acknowledged message is never lost: no ``lost``.
- ``orderly_lock_expiry``: an orderly consumer consumes a queue only while it holds the
  broker's lock (``ConsumeMessageOrderlyService.ConsumeRequest#run``); when a consumer
  is paused past the lock's lifetime another may take the queue: duplicates are allowed,
  order within a queue and lost messages are not. (``find_duplicates`` names a duplicate
  with a fault between its two deliveries ``dup:crash``: the freeze is that fault.)
  Two consumers inside the listener for one queue at once (``concurrent``) are not
  allowed in any orderly scenario. With a menu (latencies 1/5 ms, a 1 ms window) that
  orders the woken consumer-1's frames, expected before the search: ``overlap`` alone
  still. consumer-1 froze inside queue 0's listener and wakes inside it, but consumer-2
  holds queue 1 only (the allocation is fixed before the arm point); every later call of
  consumer-1 checks its client lock, expired after 30 s (``ProcessQueue#isLockExpired``),
  and relocks first, which queue 1's broker lock (consumer-2's) refuses: no duplicate,
  no ``concurrent``.
- ``orderly_join``: the same without the freeze: the lock moves on a join (lesson 5
  replays its default run). The menu (latencies 1/5 ms, a 1 ms reorder window) moves the
  join's rebalance against consumer-1's listener calls (20 ms each). Expected before the
  search: when consumer-1 is inside the listener of the queue it gives away,
  ``RebalancePushImpl#removeUnnecessaryMessageQueue`` cannot take the consume lock and
  keeps the queue (and its broker lock); the call's offset is not committed
  (``processConsumeResult`` skips a dropped ProcessQueue), so consumer-2, which locks the
  queue later, consumes the message again: ``dup:rebalance`` (with ``overlap``). When
  the rebalance comes between two calls, the offset is committed and persisted before
  the unlock: ``overlap`` alone. Never ``concurrent``, ``order``, ``lost``, ``pending``
  (the broker lock lasts 60 s at most, the run 65 s).
- ``orderly_slow_listener``: ``orderly_join`` with one message per queue and a slow
  listener (1.5 s), armed at the send, so that the menu (the same) lets either queue's
  message reach consumer-1's listener first, and the join's rebalance meets it inside.
  Expected before the search: ``dup:rebalance`` (inside the listener of the queue it
  gives away, as above) and ``overlap`` alone (inside the other queue's: the given-away
  queue still holds its message, ``hasTempMessage``, so the unlock waits 20 s,
  ``#unlockDelay``, and consumer-2 takes the message once). Never ``concurrent``. The
  planted bug ``consume_lock_skipped`` gives the queue away while its listener runs:
  consumer-2 locks it and consumes the message while consumer-1 is still inside
  (``concurrent``). The search (depth 8, 115 runs; depth 4 kept) found ``overlap``
  alone, never ``dup:rebalance``: consumer-1 does consume the given-away queue first and
  keeps it ("is consuming, so can not unlock it"), and its commit is skipped, but the
  queue's pull, still held at the broker, comes back NO_NEW_MSG 15 s later, and with
  nothing cached ``DefaultMQPushConsumerImpl#correctTagsOffset`` moves the offset past
  the message even though the ProcessQueue is dropped (the pull callback does not check
  it); the 20 s rebalance persists that offset before it unlocks, and consumer-2 starts
  after the message. ``orderly_join``'s queue still caches a second message, so there
  the correction does not happen and the duplicate does.
  Random walks of depth 40 then found ``ok`` (shrunk to 4 moves), beyond depth 4.
  Expected before the deeper search: ``overlap`` is of the rebalance views (each
  consumer's allocation, ``allocation_heatmap_frame``): consumer-2's first rebalance
  allocates queue 1 at 2 022 ms, 2 ms before consumer-1's gives it up. Nothing orders
  the two: consumer-2's comes from its own GET_CONSUMER_LIST_BY_GROUP
  (``RebalanceImpl#rebalanceByTopic``), consumer-1's from the broker's
  NOTIFY_CONSUMER_IDS_CHANGED on another connection. When consumer-2's request is a few
  ms slower, consumer-1 gives queue 1 up first (its ProcessQueue stays, consuming, and
  the broker lock stays consumer-1's, so consumer-2's lock fails as before): the views
  never overlap, ``ok``, one move. Its reach bounds (``deviations=1,depth=40``, the
  walks' depth, 47 runs: ``mqlab.bench.explore.REACH_BOUNDS``) found it: ``d26 l1``
  (that request 5 ms), and no other class.
- ``consumer_crash``: two consumers, 5 messages a queue, 2 s a message, one thread
  each: consumer-1 starts offset k of queue 0 at 4 + 2 000 k ms. Its first offset persist
  (``MQClientInstance#persistAllConsumerOffset``, 10 s after the client started, 8 000 ms
  here) commits queue 0's offset 3 (offsets 0-2 consumed, 3 inside the listener,
  ``ProcessQueue#removeMessage`` keeps the least one not done); its pulls commit nothing
  (the first pull took the whole queue, the next is held). The scenario kills it at
  8 006 ms, inside offset 4; the menu offers the same kill (``kill(consumer-1)``, budget 1)
  at any of the first 6 choice points from 7 995 ms. consumer-2 takes queue 0 over from
  the broker's offset and consumes again what consumer-1 began (at-least-once,
  ``dup:crash``). Expected before the search: killed after the persist, inside offset 4
  (the default): ``dup:crash=2`` (offsets 3, 4); killed after the persist but before
  offset 4 starts: ``dup:crash=1``; killed before the persist: ``dup:crash=4`` (offsets
  0-3). A UPDATE_CONSUMER_OFFSET written before the kill still arrives (TCP sends what
  was written before the FIN). Never ``lost``. ``dup:crash=5`` (offset 3 done before the
  persist, the kill between) needs the listener's end and the persist reordered, which
  a reorder window allows but this menu does not (window 5 ms: 3 336 runs, 508 s).
  The planted bug ``offset_before_consume`` (the offset moves when a message is submitted,
  not consumed) commits offset 5 with consumer-1's second pull: killed before offset 4
  starts, offset 4 is ``lost``; killed inside it (the default), nothing is.
  100 walks of depth 40 shrank ``dup:crash=1`` to ``d2 F:kill(consumer-1)``, shorter than
  the search's ``d5 F:kill``: the search had read the state after that kill first in a
  level-1 run whose sleep set left only the fault (``d2 o1 F:kill``) and pruned
  ``d2 F:kill`` there. Such a run is now read only up to the fault, and the rest runs
  again at its own level (``mqlab.explore.search``): the search gives ``d2 F:kill``.
  The search found the three: it also showed that a kill in the same ms as a frame's
  arrival dropped the frame (``SimDriver#stop_node`` closed the connection at once when
  the last frame was due *now*; now it closes after it).
- ``retry_rebalance``: a failed message goes to ``%RETRY%`` and comes back
  (``retry`` expected); a rebalance at the same time may also duplicate it; nothing lost.
  The menu (latencies 1/5 ms, a 1 ms reorder window) moves the retry's pull and the
  join's rebalance against each other. Expected before the search: ``retry`` and ``dlq``
  in every class (each message fails twice and its second failure goes to ``%DLQ%``);
  ``dup:rebalance`` when both consumers pull the retry queue's message around the
  rebalance; and a class with no duplicate (``retry=2 dlq=2``: the rebalance meets no
  retry in flight). Never ``lost``, ``order`` or ``concurrent`` (not orderly).
  The search at depth 8 found ``retry=2 dlq=2`` (``d6 l1``) and the default's class;
  random walks of depth 40 found two more. Expected before the deeper search: consumer-1
  gives queue 1 up and commits its offset 1 with a oneway UPDATE_CONSUMER_OFFSET
  (``RebalancePushImpl#removeUnnecessaryMessageQueue``, ``RemoteBrokerOffsetStore#persist``);
  consumer-2 reads queue 1's offset with QUERY_CONSUMER_OFFSET on its own connection.
  ``overlap`` says which consumer's rebalance view came first, ``dup:rebalance`` which
  of those two frames reached the broker first, and nothing in 4.9.3 orders either
  pair, so all four combinations are allowed: consumer-2 first in both (the default);
  its query slowed past the commit (``overlap=1 retry=2 dlq=2``, one move); its
  GET_CONSUMER_LIST_BY_GROUP answer slowed so that consumer-1 rebalances first
  (``retry=2 dlq=2``); that and consumer-1's commit slowed past consumer-2's query
  (``dup:rebalance=1 dup:sent-back-twice=1 retry=3 dlq=3``, two moves). Its reach bounds
  (``deviations=2,depth=24``, 269 runs) found the four: ``d16 l1`` (the query 5 ms) and
  ``d8 l1 d5 l1`` (the answer 5 ms, then the commit 5 ms: it reaches the broker at
  3 019 ms, the query at 3 017 ms).

Replication (broker-a with one slave, broker-a-s1; mechanisms.md "HA replication"). The
warm-up (12 s) lets the slave connect (its ``HAClient`` turns 5 s after it learns the
master's HA address) and send its first report (``haSendHeartbeatInterval``, 5 s, after
it connected), so the master knows the slave before the send. The explorer schedules the
HA stream's chunks and reports like frames (each direction FIFO):

- ``async_master_lost``: ASYNC_MASTER answers SEND_OK once the message is in its commit
  log (``CommitLog#submitReplicaRequest`` waits for nothing); the write service pushes
  it at its next pass. The master's machine lost before that (``Lab.lose``: store and
  all) takes the message with it: ``lost`` is allowed and expected (alibaba/rocketmq#400).
- ``sync_master_lost``: SYNC_MASTER answers SEND_OK only when the slave has reported an
  offset past the message (``GroupTransferService#doWaitTransfer``); the consumer then
  reads it from the slave: no ``lost``. The planted bug ``slave_ack_at_message_start``
  (``mqlab.common.mutants``) wakes the sender when the slave has reached the message's
  start: the search finds ``lost``.
- Both: ``pending`` is allowed, not expected. PCT at depth 40 found it (``d10
  F:lose(broker-a)`` on sync_master_lost): the machine is lost at 12 011 ms, once the slave
  has the message and the SEND_OK is on its way. A machine without power sends no FIN
  (``SimDriver._machine_down``), so nothing tells anyone: the name server keeps the master
  until 120 s pass without a registration (``RouteInfoManager#scanNotActiveBroker``), and
  consumer-1, started at 14 006 ms, finds it in its route; its rebalance asks the dead
  master for the group's consumers (``MQClientInstance#findConsumerIdList``), whose connect
  waits out the 3 s connect timeout. The acknowledged message waits on the slave, and the
  run ends first. Depth 5 cannot place the loss there; the reach bounds
  (``deviations=1,depth=40``, ``mqlab.bench.explore.REACH_BOUNDS``) find it at level 0+1F,
  ``d6`` on async_master_lost.
- ``master_returns``: apache/rocketmq#1094. consumer-1 consumes 2 messages and leaves
  (offsets 1 on the master, copied to the slave by ``SlaveSynchronize``); 2 more are sent,
  then the master is killed; consumer-2 consumes them from the slave, and its 5 s offset
  persist (``MQClientInstance#persistAllConsumerOffset``, first 10 s after its start)
  commits offsets 2 *there* (``RemoteBrokerOffsetStore#updateConsumeOffsetToBroker``
  finds no master, refreshes the route, and takes the slave), then it leaves. At 15 500 ms
  the master returns with its offsets of before (1) and consumer-3 joins in the same ms.
  ``find_duplicates`` names a duplicate with a fault between its deliveries ``dup:crash``
  (the master's kill). The menu (latencies 1/10/20 ms, depth 3) delays the returning
  master's REGISTER_BROKER to the name server against consumer-3's route queries.
  Expected before the search: ``#fetchConsumeOffsetFromBroker`` asks the master
  (``findBrokerAddressInSubscribe(brokerName, MASTER_ID, true)``); with no master in the
  route it refreshes the route once and then takes any broker of the name. So each of
  consumer-3's two queues reads its offset from the master (1: that queue's message is
  consumed again) or, when the master's registration reaches the name server after that
  queue's refresh, from the slave (2: not again, until the slave's next ``syncAll``
  copies the master's offsets over its own). Three classes: ``dup:crash=2`` (both from
  the master, the default), ``dup:crash=1`` (one from each), ``ok`` (both from the
  slave); never ``lost``.
  The search (24 runs, depth 3) found the three: ``l1`` (the registration 10 ms late:
  queue 0 reads the slave, queue 1 the master, after the registration) and ``l2`` (20 ms).
  consumer-2's periodic persist commits to the slave, and its shutdown commits the same
  offsets there: with no master in its route it refreshes the route for each queue first,
  and its node stops once that is done, as 4.9.3's blocking ``shutdown`` does.

DLedger (``mqlab.explore.dledger``: a ``DLedgerGroup`` of 3, no broker; outcome keys
``DLEDGER_KEYS``). Seed 0 elects n2 in term 1 during the 1 s warm-up; heartbeats every
500 ms. The four safety keys (``two_leaders``, ``leader_missing``, ``lost``, ``diverged``:
Election Safety, Leader Completeness, durability of an acknowledged append, State Machine
Safety; Ongaro and Ousterhout 2014, Figure 3) are allowed in none. Written before the
search:

- ``dledger_leader_killed``: an append through n2, a kill of the leader at any choice
  point of the append. Killed before any follower has the entry: no answer (``unacked``);
  the followers elect n1 or n0 (``DLedgerLeaderElector#maintainAsFollower`` after 3
  missed heartbeats) with empty logs, the new leader writes ``b`` at index 0, and when n2
  comes back its ``a`` is cut (``EntryDispatcher#doCompare``, ``#doTruncate``,
  ``DLedgerMmapFileStore#truncate``): ``unacked truncated``. Killed after a follower
  appended it but before the quorum ack: only that follower can win the vote (it answers
  the other REJECT_SMALL_LEDGER_END_INDEX, ``DLedgerLeaderElector#handleVote``), and
  ``a`` is committed in the new term with ``b``: ``unacked`` alone. Killed after the ack: ``ok``.
- ``dledger_leader_isolated``: the same with the leader cut off by a partition instead
  (healed at 3 s): its waiting append ends WAIT_QUORUM_ACK_TIMEOUT or TERM_CHANGED
  (``QuorumAckChecker#doWork``), the majority elects a leader of term 2, and after the
  heal n2 follows it (``handleHeartBeat``: a larger term) and its uncommitted entry is
  cut: the same three classes. Two leaders at once in different terms are allowed (Raft
  forbids two in one term only).
- ``dledger_split_vote``: n2 is killed at the warm-up's end; n0 and n1 give it up in the
  same 10 ms tick and both stand in term 1 (refused: each voted for n2), then draw new
  timeouts (``getNextTimeToRequestVote``). n1's comes first; when the explorer delays its
  VoteRequest past n0's timeout (500 ms), n0 stands in term 2 too and votes for itself,
  each refuses the other (REJECT_ALREADY_VOTED): ``split``, and term 3 elects.
  Without the delay: ``ok``.

Planted DLedger mutants (``mqlab.common.mutants``): ``dledger_vote_twice`` was expected
to give two leaders in term 1 of the split vote (the two followers that voted for n2 vote
for each other); the search found it sooner, in every default run: a group starts with
every node standing in term 0 at 0 ms (a three-way split vote), and with the mutant each
accepts the other two, so all three lead term 0 (``two_leaders=1``, schedule ``(default)``);
``dledger_minority_quorum`` acknowledges an append the
followers do not have, lost with the killed leader; ``dledger_truncate_skipped`` leaves
n2's ``a`` at index 0 where the others committed ``b``: ``diverged``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mqlab.experiments.scenario import Scenario
from mqlab.explore.dledger import DLedgerScenario

__all__ = ["ExploreScenario", "SCENARIOS", "get_scenario"]


@dataclass(frozen=True)
class ExploreScenario:
    name: str
    scenario: Scenario
    arm_ms: int = 0
    faults: tuple[str, ...] = ()
    latencies: tuple[int, ...] = ()
    depth: int = 6
    fault_budget: int = 0
    window_ms: int = 0
    allowed: frozenset[str] = frozenset()
    expected: frozenset[str] = frozenset()
    text: str = ""
    #: faults at fixed scenario times, ``(at_ms, fault name)`` (``engine.apply_fault``)
    scripted: tuple[tuple[int, str], ...] = ()
    #: broker groups: slaves per broker name, and the masters' ``brokerRole`` (``Lab``)
    slaves: int = 0
    broker_role: str | None = None


def _scn(name: str, **kw) -> Scenario:
    base = dict(
        name=name, seed=0, duration_ms=100, drain_ms=3000, warmup_ms=2000,
        topics=[{"name": "TopicTest", "queues": 2}],
        producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 2}]}],
        consumers=[{"count": 1}],
    )  # fmt: skip
    base.update(kw)
    return Scenario.from_dict(base)


SCENARIOS: dict[str, ExploreScenario] = {}  # and DLedgerScenarios (the same fields)


def _add(xs: ExploreScenario) -> None:
    SCENARIOS[xs.name] = xs


_add(ExploreScenario(
    "consumer_join",
    _scn("consumer_join", faults=[{"at_ms": 10, "action": "join"}],
         consumers=[{"count": 1, "consume_time_ms": 20, "consume_thread": 1}],
         producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 4}]}]),
    arm_ms=10, depth=8, latencies=(1, 5),
    allowed=frozenset({"dup:rebalance", "overlap"}),
    expected=frozenset({"dup:rebalance"}),
    text="consumer-2 joins while consumer-1 consumes 4 messages on 2 queues",
))  # fmt: skip

_add(ExploreScenario(
    "consumer_join_at_persist",
    _scn("consumer_join_at_persist", duration_ms=8094,
         faults=[{"at_ms": 7994, "action": "join"}],
         consumers=[{"count": 1, "consume_time_ms": 20, "consume_thread": 1}],
         producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 4}]}]),
    arm_ms=8000, depth=8, latencies=(1, 5),
    allowed=frozenset({"dup:rebalance", "overlap"}),
    expected=frozenset({"dup:rebalance"}),
    text="consumer-2 joins 7994 ms in: its QUERY_CONSUMER_OFFSET meets consumer-1's first "
         "5 s offset persist at the broker",
))  # fmt: skip

_add(ExploreScenario(
    "async_flush_power_cut",
    _scn("async_flush_power_cut", consumers=[{"count": 1, "start_ms": 2000}],
         producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 1}]}]),
    arm_ms=0, faults=("power_cut(broker-a)",), depth=6, fault_budget=1,
    allowed=frozenset({"lost"}), expected=frozenset({"lost"}),
    text="one send, then a power cut of broker-a somewhere before the flush (ASYNC_FLUSH)",
))  # fmt: skip

_add(ExploreScenario(
    "sync_flush_power_cut",
    _scn("sync_flush_power_cut", consumers=[{"count": 1, "start_ms": 2000}],
         producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 1}]}],
         store={"flush_disk_type": "SYNC_FLUSH"}),
    arm_ms=0, faults=("power_cut(broker-a)",), depth=6, fault_budget=1,
    allowed=frozenset(), expected=frozenset(),
    text="the same with SYNC_FLUSH: an acknowledged message is on disk",
))  # fmt: skip

_add(ExploreScenario(
    "retry_rebalance",
    _scn("retry_rebalance", delay_levels="1s 1s 1s 1s", duration_ms=1100,
         consumers=[{"count": 1, "failure_rate": 1.0, "max_reconsume_times": 1}],
         faults=[{"at_ms": 1000, "action": "join"}]),
    arm_ms=1000, depth=8, latencies=(1, 5), window_ms=1,
    allowed=frozenset({"retry", "dlq", "dup:rebalance", "dup:sent-back-twice", "overlap"}),
    expected=frozenset({"retry", "dlq", "dup:rebalance"}),
    text="2 messages that always fail (1 retry, then %DLQ%); consumer-2 joins as the retry is due",
))  # fmt: skip

_add(ExploreScenario(
    "orderly_join",
    _scn("orderly_join", faults=[{"at_ms": 10, "action": "join"}], drain_ms=65_000,
         consumers=[{"count": 1, "consume_time_ms": 20, "consume_thread": 1,
                     "settings": {"orderly": True}}],
         producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 4}]}]),
    arm_ms=10, depth=8, latencies=(1, 5), window_ms=1,
    allowed=frozenset({"dup:rebalance", "overlap"}),
    expected=frozenset({"dup:rebalance", "overlap"}),
    text="orderly consumer-1 holds both queues' locks; consumer-2 joins while it consumes",
))  # fmt: skip

_add(ExploreScenario(
    "orderly_slow_listener",
    _scn("orderly_slow_listener", faults=[{"at_ms": 10, "action": "join"}], drain_ms=65_000,
         consumers=[{"count": 1, "consume_time_ms": 1500, "consume_thread": 1,
                     "settings": {"orderly": True}}],
         producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 2}]}]),
    arm_ms=0, depth=4, latencies=(1, 5), window_ms=1,
    allowed=frozenset({"dup:rebalance", "overlap"}),
    expected=frozenset({"overlap"}),
    text="orderly consumer-1 holds both queues' locks; consumer-2 joins while consumer-1 is "
         "inside its listener (1.5 s a message, one message a queue)",
))  # fmt: skip

_add(ExploreScenario(
    "orderly_lock_expiry",
    _scn("orderly_lock_expiry", faults=[{"at_ms": 1040, "action": "join"}], drain_ms=100_000,
         consumers=[{"count": 1, "consume_time_ms": 20, "consume_thread": 1, "start_ms": 5,
                     "settings": {"orderly": True}}],
         producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 6}]}]),
    scripted=((1040, "freeze(consumer-1,90000)"),), arm_ms=91_039, depth=4,
    latencies=(1, 5), window_ms=1,
    allowed=frozenset({"dup:rebalance", "dup:crash", "overlap", "pending"}),
    expected=frozenset(),
    text="orderly consumer-1 freezes 90 s (past its 30 s client lock and the broker's 60 s) "
         "as consumer-2 joins; the explorer orders what the woken consumer-1 does first",
))  # fmt: skip

_add(ExploreScenario(
    "consumer_crash",
    _scn("consumer_crash", duration_ms=8106, drain_ms=15_000,
         consumers=[{"count": 2, "consume_time_ms": 2000, "consume_thread": 1}],
         producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 10}]}],
         faults=[{"at_ms": 8006, "action": "kill_consumer", "target": "consumer-1"}]),
    arm_ms=7995, faults=("kill(consumer-1)",), fault_budget=1, depth=6,
    allowed=frozenset({"dup:crash", "dup:rebalance", "overlap"}),
    expected=frozenset({"dup:crash"}),
    text="consumer-1 is killed while it works through its queue (2 s per message), just "
         "after its first offset persist, or (the menu) earlier; consumer-2 takes the queue over",
))  # fmt: skip


def _ha_scn(name: str, **kw) -> Scenario:
    """A replication scenario: one message at 0 ms, after a 12 s warm-up (the slave has
    connected and reported); a consumer starts 2 s in (after any loss)."""
    base: dict = dict(warmup_ms=12_000, consumers=[{"count": 1, "start_ms": 2000}],
                      producers=[{"rate_per_s": 0, "bursts": [{"at_ms": 0, "count": 1}]}])  # fmt: skip
    base.update(kw)
    return _scn(name, **base)


_add(ExploreScenario(
    "async_master_lost", _ha_scn("async_master_lost"),
    arm_ms=0, faults=("lose(broker-a)",), depth=5, fault_budget=1,
    slaves=1, broker_role="ASYNC_MASTER",
    allowed=frozenset({"lost", "pending"}), expected=frozenset({"lost"}),
    text="ASYNC_MASTER + 1 slave: one send, the master's machine lost somewhere",
))  # fmt: skip

_add(ExploreScenario(
    "sync_master_lost", _ha_scn("sync_master_lost"),
    arm_ms=0, faults=("lose(broker-a)",), depth=5, fault_budget=1,
    slaves=1, broker_role="SYNC_MASTER",
    allowed=frozenset({"pending"}), expected=frozenset(),
    text="the same with SYNC_MASTER: an acknowledged message is on the slave",
))  # fmt: skip

_add(ExploreScenario(
    "master_returns",
    _scn("master_returns", warmup_ms=12_000, duration_ms=15_600, drain_ms=12_000,
         consumers=[{"count": 1}],
         producers=[{"rate_per_s": 0,
                     "bursts": [{"at_ms": 0, "count": 2}, {"at_ms": 1500, "count": 2}]}],
         faults=[{"at_ms": 500, "action": "leave", "target": "consumer-1"},
                 {"at_ms": 4000, "action": "kill_broker", "target": "broker-a"},
                 {"at_ms": 4500, "action": "join"},
                 {"at_ms": 15_000, "action": "leave", "target": "consumer-2"},
                 {"at_ms": 15_500, "action": "restart_broker", "target": "broker-a",
                  "graceful": False},
                 {"at_ms": 15_500, "action": "join"}]),
    arm_ms=15_500, depth=3, latencies=(1, 10, 20), slaves=1, broker_role="ASYNC_MASTER",
    allowed=frozenset({"dup:crash", "dup:rebalance", "overlap"}),
    expected=frozenset({"dup:crash"}),
    text="offsets committed to the slave during the master's outage; the master returns "
         "with older ones and consumer-3 consumes again (apache/rocketmq#1094), unless it "
         "reads the slave's first",
))  # fmt: skip


# -- DLedger (mqlab.explore.dledger): a group of 3 on one driver, no broker ---------------------
#: heartbeats every 500 ms (0.2.3: 2 000), so that a follower gives its leader up after
#: 1.5 s (``maxHeartBeatLeak`` 3) and a run with a failover lasts 5 s of simulated time
_DLEDGER_CONFIG = (("heart_beat_time_interval_ms", 500),)

_add(DLedgerScenario(  # type: ignore[arg-type]
    "dledger_leader_killed", config=_DLEDGER_CONFIG,
    appends=((0, b"a"), (2500, b"b")), scripted=((3000, "restart(all)"),), end_ms=5000,
    arm_ms=0, faults=("kill(leader)",), fault_budget=1, depth=12,
    allowed=frozenset({"unacked", "truncated", "split"}),
    expected=frozenset({"unacked", "truncated"}),
    text="DLedger, 3 nodes: an append through leader n2, which is killed somewhere in it; "
         "a second append through the new leader, then n2 restarts",
))  # fmt: skip

_add(DLedgerScenario(  # type: ignore[arg-type]
    "dledger_leader_isolated", config=_DLEDGER_CONFIG,
    appends=((0, b"a"), (2500, b"b")), scripted=((3000, "heal"),), end_ms=5000,
    arm_ms=0, faults=("isolate(leader)",), fault_budget=1, depth=12,
    allowed=frozenset({"unacked", "truncated", "split"}),
    expected=frozenset({"unacked", "truncated"}),
    text="DLedger, 3 nodes: an append through leader n2, which a partition cuts off "
         "somewhere in it; a second append through the majority's leader, then the heal",
))  # fmt: skip

_add(DLedgerScenario(  # type: ignore[arg-type]
    "dledger_split_vote", config=_DLEDGER_CONFIG,
    scripted=((0, "kill(n2)"),), end_ms=2600,
    arm_ms=1720, latencies=(1, 500), depth=8,
    allowed=frozenset({"split"}), expected=frozenset({"split"}),
    text="DLedger, 3 nodes: leader n2 killed; n0 and n1 time out in the same tick and stand "
         "in the same term; the explorer delays their vote requests (1 or 500 ms)",
))  # fmt: skip


def get_scenario(name: str) -> ExploreScenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"no explore scenario {name!r}; known: {sorted(SCENARIOS)}") from None
