"""Planted bugs, for testing the explorer (mutation testing). Never on by default.

Mirrors no RocketMQ class. The core's own switches live here, below every core package,
so that the core never imports ``mqlab.explore`` (which sits above ``mqlab.lab``;
docs/design.md §4); ``mqlab.explore.mutants`` re-exports this module. Each mutant is one flag that a one-line check in the core
reads (``mutants.ACTIVE``); it is off unless a test turns it on with ``mutant(name)`` or
the environment variable ``MQLAB_MUTANTS`` (comma-separated names) is set when mqlab is
imported (for worker processes). The search must find an outcome class with the mutant
that it cannot find without it.

- ``dropped_pq_consumed``: ``ConsumeMessageConcurrentlyService.ConsumeRequest#run``
  consumes the messages of a dropped ProcessQueue (4.9.3 skips them);
- ``offset_before_consume``: ``ConsumeMessageConcurrentlyService#submitConsumeRequest``
  commits a pulled batch's offset when it queues the batch, before any listener ran
  (4.9.3 commits from ``processConsumeResult``, after);
- ``orderly_lock_unchecked``: ``ConsumeMessageOrderlyService.ConsumeRequest#run``
  consumes without holding (or renewing) the broker's queue lock;
- ``consume_lock_skipped``: ``RebalancePushImpl#removeUnnecessaryMessageQueue`` gives
  an orderly queue away (unlocks it on the broker) without taking the ProcessQueue's
  consume lock, so while the listener still runs on it (4.9.3 waits for
  ``pq.getConsumeLock().tryLock`` and keeps the queue when it is held);
- ``flush_before_write``: SYNC_FLUSH forces the commit log *before* appending the
  message (the flushed position passes the old end, not the new one), so the SEND_OK
  goes out while the message is only in the page cache;
- ``slave_ack_at_message_start``: SYNC_MASTER's ``GroupTransferService#doWaitTransfer``
  wakes the waiting sender once ``push2SlaveMaxOffset`` reaches the message's *start*
  (``wroteOffset``) instead of passing its end (``nextOffset``), so the SEND_OK can go
  out before the slave has the message (4.9.3 compares with ``req.getNextOffset()``);
- ``dledger_vote_twice``: ``DLedgerLeaderElector#handleVote`` accepts a second candidate
  in a term it already voted in (DLedger 0.2.3 answers REJECT_ALREADY_VOTED);
- ``dledger_minority_quorum``: ``DLedgerEntryPusher.QuorumAckChecker#doWork`` takes the
  index a minority holds (the ``size / 2 - 1``-th largest water mark: the leader's own
  in a group of 3) as the quorum index, so it commits and acknowledges an entry no
  follower has;
- ``dledger_truncate_skipped``: ``DLedgerEntryPusher.EntryHandler#handleDoTruncate``
  answers SUCCESS without truncating when the follower has entries from the truncate
  index on (0.2.3 calls ``DLedgerMmapFileStore#truncate``), so it keeps its uncommitted
  entries where the leader's differ. (A follower with nothing there still gets the
  leader's entry written: 0.2.3 fills an empty follower's first entry by a truncate.)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MUTANTS", "ACTIVE", "mutant", "active"]

MUTANTS = ("dropped_pq_consumed", "offset_before_consume", "orderly_lock_unchecked",
           "consume_lock_skipped", "flush_before_write", "slave_ack_at_message_start",
           "dledger_vote_twice", "dledger_minority_quorum", "dledger_truncate_skipped")  # fmt: skip

#: The mutants switched on (read by the core's one-line checks).
ACTIVE: set[str] = {m for m in os.environ.get("MQLAB_MUTANTS", "").split(",") if m}
for _m in ACTIVE:
    if _m not in MUTANTS:
        raise ValueError(f"MQLAB_MUTANTS: unknown mutant {_m!r}; known: {list(MUTANTS)}")


def active() -> tuple[str, ...]:
    return tuple(sorted(ACTIVE))


@contextmanager
def mutant(*names: str) -> Iterator[None]:
    """Switch mutants on inside the ``with`` block (tests only)."""
    for n in names:
        if n not in MUTANTS:
            raise ValueError(f"unknown mutant {n!r}; known: {list(MUTANTS)}")
    before = set(ACTIVE)
    ACTIVE.update(names)
    try:
        yield
    finally:
        ACTIVE.clear()
        ACTIVE.update(before)
