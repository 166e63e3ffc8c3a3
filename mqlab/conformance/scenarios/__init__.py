"""The scenarios, by group (mechanism). ``ALL`` is the order they run in."""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, StoredCheck
from mqlab.conformance.scenarios import (
    acl,
    admin,
    admin_broker,
    admin_handled,
    housekeeping,
    long_polling,
    offsets,
    pull,
    reply,
    retry,
    send,
    slave,
    stats,
    stored_bytes,
    transactions,
)
from mqlab.conformance.scenarios.common import SETTLE_MS

__all__ = ["ALL", "GROUPS"]

#: group -> one line for the report.
GROUPS: dict[str, str] = {
    "stored-bytes": "Commit-log entries and consume-queue units read from both stores' files.",
    "send": "SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320), msgCheck, "
    "auto-creation, %RETRY%, limits, permissions.",
    "pull": "PULL_MESSAGE (11): statuses, tag and SQL92 filters, subscriptions, commit "
    "offsets, permissions, the VIP channel.",
    "offsets": "QUERY/UPDATE_CONSUMER_OFFSET, GET_MAX/MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, "
    "GET_EARLIEST_MSG_STORETIME.",
    "long-polling": "Parked pulls on the real clock: suspend timeout, woken by a message, "
    "short polling.",
    "client-housekeeping": "HEART_BEAT, GET_CONSUMER_LIST_BY_GROUP, UNREGISTER_CLIENT, "
    "CHECK_CLIENT_CONFIG, LOCK_BATCH_MQ / UNLOCK_BATCH_MQ.",
    "retry": "CONSUMER_SEND_MSG_BACK to %RETRY% and %DLQ%, scheduled delivery.",
    "transactions": "Half messages, END_TRANSACTION (37) commit / rollback / unknown, op "
    "messages, RESUME_CHECK_HALF_MESSAGE (323).",
    "admin-namesrv": "Topic admin, the name server's routes, cluster info and KV config, "
    "an unknown code.",
    **admin_handled.GROUPS,
    "reply-forwarding": "SEND_REPLY_MESSAGE (324/325) pushed to the requester (326) and "
    "stored; GET_CONSUMER_RUNNING_INFO (307), CONSUME_MESSAGE_DIRECTLY (309), "
    "INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223 → 221) forwarded to a client.",
    "admin-broker": "AdminBrokerProcessor's group, system-topic, housekeeping, offset, "
    "consume-queue, ACL (off) and filter-server codes.",
    "slave": "A slave of broker-a on each side: its registration, a refused send, pulls with "
    "and without slaveReadEnable, consumer offsets, runtime info and config; "
    "SlaveSynchronize's four requests to the master.",
    "stats": "BrokerStatsManager's samples: VIEW_BROKER_STATS_DATA (315), consumeTps, "
    "GET_BROKER_CONSUME_STATS (317).",
}

#: The ``acl`` group (scenarios/acl.py): a broker with ``aclEnable`` and
#: ``<rocketmq_home>/conf/plain_acl.yml`` on each side (``ServeConfig(rocketmq_home=...)``).
GROUPS["acl"] = (
    "A broker with aclEnable=true on each side: unsigned, wrong secret, unknown key, "
    "white-listed, DENY/PUB/SUB per topic and group, admin-only codes, each of the 58 broker "
    "codes refused unsigned, with a wrong secret and without the perm (nothing changed), "
    "codes 50-54, the file reloaded."
)

#: Scenarios that must run after all others: they leave the broker changed for good.
#: auto-create-off: TBW102 loses PERM_INHERIT, so auto-creation stops working;
#: cpp-boolean-1: the real broker stores one entry where mqlab stores two (every later
#: commit-log offset moves), so it is the very last.
#: delay-level-cap: its messages come back 18 s later, when every other scenario is done.
LAST = ("delay-level-cap", "auto-create-off", "cpp-boolean-1")

#: stored-bytes first: its commit-log offsets then start at 0 on both sides.
_ORDER: list[Scenario] = [
    *stored_bytes.SCENARIOS,
    # slaves start for this group and stop after it: no other row sees them. Early, while
    # both masters hold only what the scenarios so far wrote (the SlaveSynchronize rows read
    # whole tables; a later, explained difference would show in them again)
    *slave.SCENARIOS,
    *send.SCENARIOS,
    *pull.SCENARIOS,
    *offsets.SCENARIOS,
    *long_polling.SCENARIOS,
    *housekeeping.SCENARIOS,
    *retry.SCENARIOS,
    *transactions.SCENARIOS,
    *admin.SCENARIOS,
    *admin_handled.SCENARIOS,
    *reply.SCENARIOS,
    *admin_broker.SCENARIOS,
    *stats.SCENARIOS,
    # its own broker with ACL on, started for this group and stopped after: no other row
    # sees it
    *acl.SCENARIOS,
]
#: After every scenario but the LAST ones: the whole store, entry by entry.
WHOLE_STORE = Scenario(
    "stored-bytes",
    "whole-store",
    [
        StoredCheck(
            "everything",
            (),
            wait_ms=SETTLE_MS,
            one_row=True,
            note="every entry the scenarios before wrote",
        )
    ],  # fmt: skip
    doc="Every commit-log entry and consume-queue unit of the run so far, in order.",
)

ALL: list[Scenario] = [
    *[s for s in _ORDER if s.name not in LAST],
    WHOLE_STORE,
    *[s for name in LAST for s in _ORDER if s.name == name],
    # a registered filter server stays in the broker's registrations while the harness's
    # connection is open: after everything else (it writes nothing to the store)
    *admin_broker.LAST_SCENARIOS,
]
