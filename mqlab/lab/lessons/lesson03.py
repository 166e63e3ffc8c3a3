"""Lesson 03 — the broker's pull processing in 11 steps (``PullMessageProcessor#processRequest``; the status → code table).

``PullMessageProcessor#processRequest`` checks, in order: 1 broker readable · 2 the
consumer group's subscription config · 3 consume enabled · 4 topic config · 5 queue id <
readQueueNums · 6 subscription / filter data · 7 non-TAG expressions need
enablePropertyFilter · 8 message filter choice · 9 ``getMessage`` · 10 a null result ·
11 commit offset. Each step emits a trace event with that number, so a raw pull walked
with ``lab.step()`` shows the steps in order, and a pull that fails shows where.

Helpers: raw pull fields, ``walk_pull`` (one row per trace event, with the ``lab.step()``
that produced it), the fault catalogue (one broken precondition per step), the
"step ladder" figure, and the ``GetMessageStatus`` → response-code table read from
the processor's own table so the lesson cannot drift from the code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from mqlab.broker.pull_message_processor import GET_MESSAGE_STATUS_TO_RESPONSE_CODE
from mqlab.common.perm_name import PermName
from mqlab.common.sysflag import PullSysFlag
from mqlab.lab import figures
from mqlab.lab.check import Misconception, exercise
from mqlab.lab.lab import Lab
from mqlab.lab.lessons.lesson01 import send_raw
from mqlab.remoting.codes import ResponseCode
from mqlab.runtime.raw_client import Call

__all__ = [
    "send_raw",
    "pull_fields",
    "pull",
    "pull_outcome",
    "walk_pull",
    "Fault",
    "FAULTS",
    "EXERCISE_FAULTS",
    "fault_lab",
    "fault_table",
    "step_ladder",
    "step_ladder_figure",
    "status_code_table",
    "loaded_lab",
    "params_03_1",
    "params_03_2",
    "params_03_3",
    "params_03_4",
]

C_PULL = "PullMessageProcessor.processRequest"
STEPS = [str(i) for i in range(1, 12)]
STEP_NAMES = {
    "1": "broker readable", "2": "subscription group", "3": "consume enabled",
    "4": "topic config / readable", "5": "queue id range", "6": "subscription / filter data",
    "7": "property filter switch", "8": "message filter", "9": "getMessage",
    "10": "null result", "11": "commit offset",
}  # fmt: skip


def pull_fields(
    topic: str = "TopicTest", queue_id: int = 0, offset: int = 0, *, group: str = "CG",
    subscription: str = "*", expression_type: str | None = None,
    sys_flag: int = PullSysFlag.SUBSCRIPTION, max_msg_nums: int = 32, commit_offset: int = 0,
) -> dict:  # fmt: skip
    """PULL_MESSAGE fields (``PullMessageRequestHeader``). The default sysFlag is SUBSCRIPTION only: the
    subscription comes with the request, nothing is committed, and an empty result is
    answered at once instead of parking (SUSPEND is lesson 04)."""
    fields = {
        "consumerGroup": group, "topic": topic, "queueId": queue_id, "queueOffset": offset,
        "maxMsgNums": max_msg_nums, "sysFlag": sys_flag, "commitOffset": commit_offset,
        "suspendTimeoutMillis": 15_000, "subscription": subscription, "subVersion": 0,
    }  # fmt: skip
    if expression_type is not None:
        fields["expressionType"] = expression_type
    return fields


def pull(lab: Lab, fields: dict | None = None, *, broker: str = "broker-a", **kw) -> Call:
    """One raw pull, run until answered (``fields`` or ``pull_fields(**kw)``)."""
    return lab.request(broker, "PULL_MESSAGE", fields if fields is not None else pull_fields(**kw))


def pull_outcome(call: Call) -> dict:
    """A pull's answer in words: code, name, remark (the GetMessageStatus), offsets, messages."""
    from mqlab.common.message_decoder import decodes

    def num(name: str) -> int | None:
        v = call.ext(name)
        return None if v is None else int(v)

    body = call.response.body if call.response is not None else None
    return {
        "code": call.code, "code_name": None if call.code is None else ResponseCode(call.code).name,
        "remark": (call.remark or "").split("\n")[0], "next_begin_offset": num("nextBeginOffset"),
        "min_offset": num("minOffset"), "max_offset": num("maxOffset"),
        "messages": len(decodes(body)) if body else 0,
    }  # fmt: skip


def walk_pull(lab: Lab, fields: dict | None = None, *, broker: str = "broker-a",
              max_steps: int = 50, **kw) -> pd.DataFrame:  # fmt: skip
    """Send a raw pull and run the lab one event at a time (``lab.step()``) until answered.

    Returns:
        One row per trace event: ``lab_step`` (which ``lab.step()`` produced it), ``t_ms``,
        ``node``, ``component``, ``step``, ``text``. ``attrs["call"]`` holds the ``Call``.
    """
    call = lab.request(broker, "PULL_MESSAGE",
                       fields if fields is not None else pull_fields(**kw), run=False)  # fmt: skip
    rows = []
    for n in range(1, max_steps + 1):
        for e in lab.step():
            text = e.fields.get("text") or ", ".join(
                f"{k}={v}" for k, v in sorted(e.fields.items()) if k != "remark"
            )
            rows.append({"lab_step": n, "t_ms": e.t_ms, "node": e.node,
                         "component": e.component, "step": e.step, "text": text})  # fmt: skip
        if call.done:
            break
    df = pd.DataFrame(rows, columns=["lab_step", "t_ms", "node", "component", "step", "text"])
    df.attrs["call"] = call
    return df


def loaded_lab(seed: int, messages: int, *, tags: str = "TagA", **lab_kw) -> Lab:
    """A lab whose TopicTest queue 0 holds ``messages`` messages (queues 1–3 stay empty)."""
    lab = Lab(seed=seed, **lab_kw)
    for i in range(messages):
        send_raw(lab, body=f"m{i}".encode(), tags=tags)
    if not messages:
        send_raw(lab, queue_id=0, body=b"m")  # the topic must exist; queue 0 holds one
    return lab


# -- faults: one broken precondition per step --------------------------------------------------
@dataclass(frozen=True, slots=True)
class Fault:
    """A way to make a pull fail: what to break in the lab, and the pull to send."""

    name: str
    setup: Callable[[Lab], dict]


def _broker_write_only(lab: Lab) -> dict:
    lab.broker().broker_config.broker_permission = PermName.PERM_WRITE
    return pull_fields()


def _no_group_auto_create(lab: Lab) -> dict:
    lab.broker().broker_config.auto_create_subscription_group = False
    return pull_fields(group="NewGroup")


def _consume_disabled(lab: Lab) -> dict:
    body = b'{"groupName":"CG","consumeEnable":false}'
    lab.request("broker-a", "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", {}, body)
    return pull_fields()


def _no_topic(lab: Lab) -> dict:
    return pull_fields(topic="NoSuchTopic")


def _queue_out_of_range(lab: Lab) -> dict:
    return pull_fields(queue_id=7)


def _no_subscription(lab: Lab) -> dict:
    return pull_fields(sys_flag=0)  # no SUBSCRIPTION flag, and the group never sent a heartbeat


def _sql92(lab: Lab) -> dict:
    return pull_fields(subscription="a > 1", expression_type="SQL92")


def _store_not_readable(lab: Lab) -> dict:
    lab.broker().message_store.readable = False
    return pull_fields()


#: One fault per step that can fail, in step order.
FAULTS: tuple[Fault, ...] = (
    Fault("broker permission 2 (write only)", _broker_write_only),
    Fault("unknown group, autoCreateSubscriptionGroup off", _no_group_auto_create),
    Fault("group CG updated with consumeEnable false", _consume_disabled),
    Fault("topic NoSuchTopic", _no_topic),
    Fault("queueId 7 of a 4-queue topic", _queue_out_of_range),
    Fault("no SUBSCRIPTION flag and no heartbeat", _no_subscription),
    Fault("SQL92 expression, enablePropertyFilter off", _sql92),
    Fault("store not readable (RunningFlags)", _store_not_readable),
)
#: The faults exercise 03.2 picks from (steps 1, 3, 4, 5, 6, 7).
EXERCISE_FAULTS = (FAULTS[0], FAULTS[2], FAULTS[3], FAULTS[4], FAULTS[5], FAULTS[6])


def _fault(name: str) -> Fault:
    for f in FAULTS:
        if f.name == name:
            return f
    raise ValueError(f"no fault named {name!r}; faults: {[f.name for f in FAULTS]}")


def fault_lab(seed: int, name: str, *, messages: int = 3) -> tuple[Lab, dict]:
    """A loaded lab with fault ``name`` applied, and the pull fields that will hit it."""
    lab = loaded_lab(seed, messages)
    return lab, _fault(name).setup(lab)


def _failure(events: pd.DataFrame) -> tuple[str | None, set[str]]:
    ev = events[events["component"] == C_PULL]
    failed = ev[ev["text"].str.contains(" fails: ", regex=False)]
    return (None if failed.empty else str(failed["step"].iloc[0])), set(ev["step"])


def fault_table(seed: int = 0) -> pd.DataFrame:
    """Every fault in turn on a fresh lab: the step that failed, the code and the remark."""
    rows = []
    for f in FAULTS:
        lab, fields = fault_lab(seed, f.name)
        with lab:
            walk = walk_pull(lab, fields)
            call = walk.attrs["call"]
            failed, _ = _failure(walk)
            rows.append({"fault": f.name, "failed_step": failed, "code": call.code,
                         "code_name": ResponseCode(call.code).name,
                         "remark": (call.remark or "").split("\n")[0]})  # fmt: skip
    return pd.DataFrame(rows, columns=["fault", "failed_step", "code", "code_name", "remark"])


def step_ladder(seed: int = 0) -> pd.DataFrame:
    """For a healthy pull and each fault: each step passed, failed or not reached."""
    cases = [("healthy pull", None), *((f.name, f) for f in FAULTS)]
    rows = []
    for name, f in cases:
        lab = loaded_lab(seed, 3)
        with lab:
            fields = pull_fields() if f is None else f.setup(lab)
            failed, emitted = _failure(walk_pull(lab, fields))
        for s in STEPS:
            if s == failed:
                state = "failed"
            elif failed is not None and int(s) < int(failed):
                state = "passed"
            elif s in emitted or (s == "10" and "9" in emitted):
                state = "passed"
            else:
                state = "not reached"
            rows.append({"case": name, "step": s, "step_name": STEP_NAMES[s], "state": state})
    return pd.DataFrame(rows, columns=["case", "step", "step_name", "state"])


def step_ladder_figure(ladder: pd.DataFrame) -> go.Figure:
    """The ladder as a grid: one row per case, one column per step, coloured by state."""
    code = {"passed": 0, "failed": 1, "not reached": 2}
    cases = list(dict.fromkeys(ladder["case"]))
    z = [[code[s] for s in ladder[ladder["case"] == c]["state"]] for c in cases]
    text = [list(ladder[ladder["case"] == c]["state"]) for c in cases]
    fig = go.Figure(go.Heatmap(
        z=z, x=[f"{s} {STEP_NAMES[s]}" for s in STEPS], y=cases, text=text, zmin=0, zmax=2,
        hovertemplate="%{y}<br>step %{x}: %{text}<extra></extra>", showscale=False,
        colorscale=[[0, "#2ca02c"], [0.33, "#2ca02c"], [0.34, "#d62728"], [0.66, "#d62728"],
                    [0.67, "#dddddd"], [1, "#dddddd"]], xgap=2, ygap=2,
    ))  # fmt: skip
    fig.update_layout(
        title="PullMessageProcessor#processRequest: where each pull stops<br>"
        "<sup>green passed, red failed, grey not reached</sup>",
        xaxis_title="processRequest step", yaxis_title="",
        yaxis={"autorange": "reversed"}, height=150 + 36 * len(cases),
    )  # fmt: skip
    return figures.house_style(fig)


def status_code_table() -> pd.DataFrame:
    """GetMessageStatus → response code, from the processor's own table."""
    rows = [
        {"status": s.name, "code": int(c), "code_name": ResponseCode(c).name, "condition": ""}
        for s, c in GET_MESSAGE_STATUS_TO_RESPONSE_CODE.items()
    ]
    for s in ("NO_MATCHED_LOGIC_QUEUE", "NO_MESSAGE_IN_QUEUE"):
        rows.append({"status": s, "code": 19, "code_name": "PULL_NOT_FOUND",
                     "condition": "requested queueOffset == 0"})  # fmt: skip
        rows.append({"status": s, "code": 21, "code_name": "PULL_OFFSET_MOVED",
                     "condition": "requested queueOffset != 0"})  # fmt: skip
    return pd.DataFrame(rows, columns=["status", "code", "code_name", "condition"])


# -- exercises -------------------------------------------------------------------------------
def params_03_1(seed: int) -> dict[str, int]:
    """Exercise 03.1: messages in queue 0 (3..12) and the offset pulled from (max − 1 … max + 2)."""
    m = 3 + seed % 10
    return {"messages": m, "offset": m - 1 + (seed // 10) % 4}


def params_03_2(seed: int) -> str:
    """Exercise 03.2: the fault (one of the steps 1, 3, 4, 5, 6, 7)."""
    return EXERCISE_FAULTS[seed % len(EXERCISE_FAULTS)].name


def params_03_3(seed: int) -> dict[str, int]:
    """Exercise 03.3: TagA messages in queue 0 (3..12) and the offset pulled from."""
    m = 3 + seed % 10
    return {"messages": m, "offset": seed % m}


def params_03_4(seed: int) -> int:
    """Exercise 03.4: the offset pulled from the empty queue 3 (0 for even seeds)."""
    return 0 if seed % 2 == 0 else 1 + seed % 50


# fmt: off
_MISC_03_1 = (
    Misconception("an off-by-one in offsets",
                  "the queue's max offset is one past its last message: offset == max finds "
                  "nothing (OFFSET_OVERFLOW_ONE → PULL_NOT_FOUND 19, next = offset)",
                  lambda answer, want, seed: params_03_1(seed)["offset"]
                  == params_03_1(seed)["messages"] and answer[0] == 0),
    Misconception("keeping the requested offset after OFFSET_OVERFLOW_BADLY",
                  "an offset beyond max is PULL_OFFSET_MOVED (21) and nextBeginOffset is the "
                  "queue's minOffset, 0 here",
                  lambda answer, want, seed: want[0] == 21 and answer[0] == 21 and answer[1] != 0),
)
# fmt: on


@exercise("03.1", "Queue 0 of TopicTest holds your number of messages. A pull with sysFlag "
          "SUBSCRIPTION only (no SUSPEND), maxMsgNums 32, asks for your offset. What response "
          "code and nextBeginOffset come back? Answer [code, nextBeginOffset].",
          hint="getMessage: offset < max → FOUND (SUCCESS 0, next = max here); "
               "offset == max → OFFSET_OVERFLOW_ONE (PULL_NOT_FOUND 19, next = offset); offset > "
               "max → OFFSET_OVERFLOW_BADLY (PULL_OFFSET_MOVED 21, next = 0 because minOffset is 0)",
          misconceptions=_MISC_03_1)  # fmt: skip
def _ex_03_1(seed: int) -> list[int]:
    p = params_03_1(seed)
    with loaded_lab(seed, p["messages"]) as lab:
        call = pull(lab, offset=p["offset"])
        return [int(call.code), int(call.ext("nextBeginOffset"))]


@exercise("03.2", "Your fault (params_03_2) is applied to a healthy lab and a pull is sent. At "
          "which step of PullMessageProcessor#processRequest (its numbered checks 1–7 in "
          "mechanisms.md, 'Pull processing') does the pull stop, and with what response code? "
          "Answer [step, code].",
          hint="the checks run 1 broker readable, 2 group config, 3 consumeEnable, 4 topic, "
               "5 queue id, 6 subscription, 7 property filter; NO_PERMISSION 16, TOPIC_NOT_EXIST "
               "17, SYSTEM_ERROR 1, SUBSCRIPTION_NOT_EXIST 24")  # fmt: skip
def _ex_03_2(seed: int) -> list[int]:
    lab, fields = fault_lab(seed, params_03_2(seed))
    with lab:
        walk = walk_pull(lab, fields)
        failed, _ = _failure(walk)
        return [int(failed), int(walk.attrs["call"].code)]


@exercise("03.3", "Queue 0 holds your number of messages, all tagged TagA. A pull with "
          "subscription 'TagB' asks for your offset. What response code and nextBeginOffset "
          "come back? Answer [code, nextBeginOffset].",
          hint="every unit's tags code fails the filter, so getMessage ends NO_MATCHED_MESSAGE "
               "(PULL_RETRY_IMMEDIATELY 20), and nextBeginOffset = offset + units examined")  # fmt: skip
def _ex_03_3(seed: int) -> list[int]:
    p = params_03_3(seed)
    with loaded_lab(seed, p["messages"]) as lab:
        call = pull(lab, offset=p["offset"], subscription="TagB")
        return [int(call.code), int(call.ext("nextBeginOffset"))]


# fmt: off
_HINT_03_4 = ("NO_MESSAGE_IN_QUEUE is PULL_NOT_FOUND (19) only for offset 0; any other offset "
              "is PULL_OFFSET_MOVED (21)")
_MISC_03_4 = (
    Misconception("taking every empty queue for PULL_NOT_FOUND", _HINT_03_4,
                  lambda answer, want, seed: answer[1] == want[1] and [answer[0], want[0]]
                  == [19, 21]),
    Misconception("taking every empty queue for PULL_OFFSET_MOVED", _HINT_03_4,
                  lambda answer, want, seed: answer[1] == want[1] and [answer[0], want[0]]
                  == [21, 19]),
)
# fmt: on


@exercise("03.4", "Queue 3 of TopicTest has never held a message. A pull (SUBSCRIPTION only) asks "
          "for your offset. What response code and remark come back? Answer [code, remark].",
          hint="the remark is the GetMessageStatus name; an empty queue is NO_MESSAGE_IN_QUEUE, "
               "whose code depends on the requested offset (0 → PULL_NOT_FOUND 19, "
               "anything else → PULL_OFFSET_MOVED 21)",
          misconceptions=_MISC_03_4)  # fmt: skip
def _ex_03_4(seed: int) -> list:
    with loaded_lab(seed, 2) as lab:
        call = pull(lab, queue_id=3, offset=params_03_4(seed))
        return [int(call.code), call.remark]
