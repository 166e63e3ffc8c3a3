"""Transactions: a prepared send parks the message in RMQ_SYS_TRANS_HALF_TOPIC;
END_TRANSACTION (37) commits it to its real topic or rolls it back, writing the op message
(tag "d") to RMQ_SYS_TRANS_OP_HALF_TOPIC either way.

The Java client sends END_TRANSACTION oneway; these rows send it as a normal request, to see
what the broker answers. Every half message a scenario stores is ended before it ends; the
check service is off during a run (``transactionCheckInterval`` 30 min on both sides, see
``sides.BROKER_PROPERTIES``): the check-back is compared by the interop scenarios.
"""

from __future__ import annotations

from dataclasses import replace

from mqlab.conformance.scenario import Scenario, Step, StoredCheck
from mqlab.conformance.scenarios.common import SETTLE_MS, pull, send_v2, uniq

__all__ = ["SCENARIOS"]

T = "cf_tx"
PG = "cf_tx_pg"
G = "cf_tx_group"
HALF = "RMQ_SYS_TRANS_HALF_TOPIC"
OP = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
COMMIT, ROLLBACK, UNKNOWN = "8", "12", "0"


def _prepared(name: str, n: int, queue_id: int = 1, body: bytes = b"tx", *, group: str = PG,
              note: str = "") -> Step:  # fmt: skip
    """SEND_MESSAGE_V2 as ``sendMessageInTransaction`` sends it: TRAN_MSG=true, PGROUP, and
    sysFlag TRANSACTION_PREPARED_TYPE (4)."""
    return send_v2(name, T, queue_id, body, n=n, group=group, f="4",
                   extra={"TRAN_MSG": "true", "PGROUP": group}, expect=0, note=note)  # fmt: skip


def _end(name: str, send: str, state: str, *, group: str = PG, offset: str | None = None,
         table_offset: str | None = None, from_check: str = "false", n: int = 0,
         note: str = "", expect: int | None = None, timeout_s: float = 30.0,
         wait_ms: int = 0) -> Step:  # fmt: skip
    """END_TRANSACTION as ``DefaultMQProducerImpl#endTransaction`` builds it: commitLogOffset
    from the send's offsetMsgId, tranStateTableOffset = its queueOffset, msgId = UNIQ_KEY."""
    return Step(name, "END_TRANSACTION", {
        "producerGroup": group,
        "tranStateTableOffset": table_offset or f"${{{send}.queueOffset}}",
        "commitLogOffset": offset or f"${{{send}.msgId|offset}}",
        "commitOrRollback": state, "fromTransactionCheck": from_check, "msgId": uniq(n),
    }, note=note, expect=expect, timeout_s=timeout_s, wait_ms=wait_ms)  # fmt: skip


def _without(name: str, step: Step, field: str, note: str = "") -> Step:
    """``step`` renamed, with the header field ``field`` left out of the request."""
    return replace(step, name=name, header={**step.header, field: None},
                   note=note or f"no {field}")  # fmt: skip


def _max(name: str, topic: str, queue_id: int, *, wait_ms: int = SETTLE_MS, note: str = "") -> Step:
    return Step(name, "GET_MAX_OFFSET", {"topic": topic, "queueId": str(queue_id)},
                wait_ms=wait_ms, note=note)  # fmt: skip


SCENARIOS = [
    Scenario(
        "transactions",
        "commit",
        [
            _prepared(
                "half",
                3000,
                note="stored in RMQ_SYS_TRANS_HALF_TOPIC queue 0; the "
                "answer names queue 1 and the half queue's offset",
            ),  # fmt: skip
            _max("real_before", T, 1, note="not on its topic yet"),
            _max("half_max", HALF, 0, wait_ms=0),
            pull("pull_before", G, T, 1, 0, note="invisible to consumers"),
            _end(
                "commit",
                "half",
                COMMIT,
                n=3000,
                expect=0,
                note="commit: answered although the client sends it oneway",
            ),  # fmt: skip
            _max("real_after", T, 1, note="delivered on its real topic"),
            pull("pull_after", G, T, 1, 0, note="the committed message as a consumer sees it"),
            _max("op_max", OP, 0, wait_ms=0),
            pull(
                "pull_op",
                G,
                OP,
                0,
                0,
                note="the op message (tag d, body = half offset); TOPIC_NOT_EXIST while the op "
                "topic has no config (the send group creates one by sending to it)",
            ),
            pull("pull_half", G, HALF, 0, 0, note="the half message itself"),
            StoredCheck("stored", (T, HALF, OP), wait_ms=SETTLE_MS),
        ],
        doc="A prepared message is parked in the half topic, then END_TRANSACTION commit "
        "writes it to its real topic (COMMIT type, preparedTransactionOffset) and the op "
        "message.",
    ),
    Scenario(
        "transactions",
        "rollback",
        [
            _prepared("half", 3001, queue_id=2),
            _end("rollback", "half", ROLLBACK, n=3001, expect=0, note="rollback: op only"),
            _max("real_after", T, 2, note="never delivered"),
            _max("op_max", OP, 0, wait_ms=0, note="one more op message"),
            StoredCheck("stored", (T, HALF, OP), wait_ms=SETTLE_MS),
        ],
        doc="END_TRANSACTION rollback writes only the op message; the real topic stays empty.",
    ),
    Scenario(
        "transactions",
        "unknown-state",
        [
            _prepared("half", 3002, queue_id=3),
            _end(
                "unknown",
                "half",
                UNKNOWN,
                n=3002,
                timeout_s=1,
                note="state 0 (UNKNOW): the broker writes no answer at all",
            ),  # fmt: skip
            _end(
                "unknown_from_check",
                "half",
                UNKNOWN,
                n=3002,
                from_check="true",
                timeout_s=1,
                note="the same, as an answer to a check",
            ),  # fmt: skip
            _max("real_after", T, 3, note="nothing delivered"),
            _max("op_max", OP, 0, wait_ms=0, note="no op message"),
            _end(
                "rollback_from_check",
                "half",
                ROLLBACK,
                n=3002,
                from_check="true",
                expect=0,
                note="fromTransactionCheck rollback: the same as a first one",
            ),  # fmt: skip
            StoredCheck("stored", (T, HALF, OP), wait_ms=SETTLE_MS),
        ],
        doc="An unknown state gets no response and changes nothing (the check service would "
        "ask later); a check's answer ends it like a first END_TRANSACTION.",
    ),
    Scenario(
        "transactions",
        "second-end",
        [
            _prepared("half", 3003, queue_id=0),
            _end("commit", "half", COMMIT, n=3003, expect=0),
            _end(
                "commit_again",
                "half",
                COMMIT,
                n=3003,
                note="the half message is still there: committed again",
            ),  # fmt: skip
            _end(
                "rollback_after_commit",
                "half",
                ROLLBACK,
                n=3003,
                note="and a rollback after the commit",
            ),  # fmt: skip
            _max("real_after", T, 0),
            _max("op_max", OP, 0, wait_ms=0),
            StoredCheck("stored", (T, HALF, OP), wait_ms=SETTLE_MS),
        ],
        doc="4.9.3 keeps no state per transaction: a second END_TRANSACTION for the same "
        "half message is processed again.",
    ),
    Scenario(
        "transactions",
        "bad-end",
        [
            send_v2(
                "plain",
                T,
                0,
                b"not-a-half",
                n=3004,
                expect=0,
                note="a normal message, to point END_TRANSACTION at",
            ),  # fmt: skip
            _prepared("half", 3005, queue_id=1),
            _end(
                "beyond_end",
                "half",
                COMMIT,
                n=3005,
                offset="999999999",
                note="no message at that commit-log offset",
            ),  # fmt: skip
            _end(
                "not_a_half",
                "plain",
                COMMIT,
                n=3005,
                table_offset="${half.queueOffset}",
                note="a normal message (no PGROUP property)",
            ),  # fmt: skip
            _end("wrong_group", "half", COMMIT, n=3005, group="cf_tx_other"),
            _end("wrong_table_offset", "half", ROLLBACK, n=3005, table_offset="77"),
            _end("bad_state", "half", "5", n=3005, note="commitOrRollback 5"),
            _without("no_offset", _end("x", "half", COMMIT, n=3005), "commitLogOffset"),
            _without(
                "no_group",
                _end("x", "half", ROLLBACK, n=3005),
                "producerGroup",
                note="no producerGroup: compared with PGROUP like a wrong one",
            ),  # fmt: skip
            _without(
                "no_msg_id",
                _end("x", "half", COMMIT, n=3005),
                "msgId",
                note="msgId is only logged: the commit goes through",
            ),  # fmt: skip
            _max("real_after", T, 1, note="only the commit without msgId delivered it"),
            _end("commit", "half", COMMIT, n=3005, expect=0, note="the right one still works"),
            Step("resume_bad_id", "RESUME_CHECK_HALF_MESSAGE", {"msgId": "nothex"}),
            Step(
                "resume_beyond",
                "RESUME_CHECK_HALF_MESSAGE",
                {"msgId": "7F00000100002A9F000000003B9AC9FF"},
                note="an offset message id past the end of the commit log",
            ),  # fmt: skip
            StoredCheck("stored", (T, HALF, OP), wait_ms=SETTLE_MS),
        ],
        doc="END_TRANSACTION for no message, a normal message, the wrong group or half "
        "offset, and a bad state; RESUME_CHECK_HALF_MESSAGE (323) for no message.",
    ),
]
