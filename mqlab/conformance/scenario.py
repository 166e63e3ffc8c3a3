"""Scenarios as data: a named group, an ordered list of requests, each with its waits.

A :class:`Step` is one RemotingCommand as a RocketMQ user would write it down: the
request code (a ``RequestCode`` name such as ``"SEND_MESSAGE_V2"`` or a number), the
custom header's fields (``extFields``), an optional body, where it goes (``"broker"`` or
``"namesrv"``), and how long to wait before sending it. Header values are strings; a
value may refer to an earlier answer of the same side with ``${step.field}``:

* ``${send1.queueOffset}`` — the ``queueOffset`` ext field of step ``send1``'s answer;
* ``${send1.code}`` / ``${send1.remark}`` — its response code / remark;
* ``${now}``, ``${now-5000}`` — this side's wall clock in ms when the step is sent;
* ``${client}`` — this side's client address as the broker sees it (``ip:port``);
* ``${send1.msgId|offset}`` — the commit-log offset inside step ``send1``'s offsetMsgId
  (its last 16 hex digits), e.g. for CONSUMER_SEND_MSG_BACK.

Each side resolves the references against ITS OWN answers, so a later request carries
e.g. the offset that side returned. A :class:`StoredCheck` in the step list compares the
two stores' commit-log entries and consume-queue units of some topics at that point.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mqlab.common.message import Message
from mqlab.common.message_decoder import encode_batch_body, message_properties_to_string
from mqlab.remoting.codes import RequestCode

__all__ = [
    "Step",
    "SideAction",
    "StoredCheck",
    "Scenario",
    "props",
    "batch",
    "json_body",
    "resolve",
    "code_of",
]

Body = bytes | str | Callable[[dict[str, Any]], bytes] | None


@dataclass(frozen=True, slots=True)
class Step:
    """One request, sent to the same address on both sides.

    Attributes:
        name: unique within the scenario; later steps refer to its answer by it.
        code: a ``RequestCode`` name (``"PULL_MESSAGE"``) or number (an unknown code is fine).
        header: the ``extFields``; ``${...}`` references are resolved per side.
        body: bytes, a str (sent as UTF-8), or a function of the side's answers so far.
        to: ``"broker"``, ``"namesrv"``, ``"vip"`` (the broker's VIP channel, listenPort
            - 2), ``"slave"``, ``"acl"`` or a DLedger node's self id.
        wait_ms: sleep this long before sending (both sides, on the real clock).
        background: send and go on; the answer is awaited at the end of the scenario
            (or by the first step naming it in ``after``). A parked pull is one.
        after: wait for these background steps' answers before sending this one.
        timing: compare the elapsed time of the two answers (ms, real clock,
            tolerance :data:`TIMING_TOLERANCE_MS`); for long polling.
        timing_window: ``(lo, hi)`` ms: each side's elapsed time must fall inside, when
            RocketMQ itself only bounds it (a held pull times out at the next hold check,
            whose phase is each broker's own).
        body_kind: how to compare bodies: ``"auto"`` (JSON if it parses, pull responses
            as stored messages, else bytes), ``"json"``, ``"messages"``, ``"bytes"``,
            ``"properties"`` (a ``key=value`` text: key order, then each value).
        timeout_s: how long to wait for the answer.
        note: one line for the report (what this request shows).
        expect: the response code the scenario needs from the real broker (e.g. 0 for
            the sends that set up a pull); another code makes the row UNEXPLAINED, so a
            scenario cannot silently test something else than it says.
        version: the request's ``version`` (the client's MQVersion ordinal; default the
            current one), e.g. an old client's HEART_BEAT.
        credentials: sign the request with this account, as ``AclClientRPCHook`` does
            (``AccessKey`` and ``Signature`` added to the resolved header); None: unsigned.
    """

    name: str
    code: int | str
    header: dict[str, str] = field(default_factory=dict)
    body: Body = None
    to: str = "broker"
    wait_ms: int = 0
    background: bool = False
    after: tuple[str, ...] = ()
    timing: bool = False
    timing_window: tuple[int, int] | None = None
    body_kind: str = "auto"
    timeout_s: float = 30.0
    note: str = ""
    expect: int | None = None
    version: int | None = None
    credentials: Any = None


@dataclass(frozen=True, slots=True)
class SideAction:
    """Not a request: each side does ``side.<method>(*args)`` at this point of the scenario
    (e.g. ``write_acl_file``: edit a file the broker watches). It makes no report row.

    Attributes:
        name: unique within the scenario.
        method: a method every :class:`~mqlab.conformance.sides.Side` of the group has.
        args: its arguments (the same on both sides).
        note: what it changes, for readers of the scenario.
        reconnect: step targets (``to`` values, e.g. a killed node's) whose connections the
            harness closes after the action: the next request there connects afresh, as a
            client whose channel closed (else it might still write to the dead socket).
    """

    name: str
    method: str
    args: tuple[Any, ...] = ()
    note: str = ""
    reconnect: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StoredCheck:
    """Compare the stores: every commit-log entry of ``topics`` in commit-log order,
    field by field (4.9.3 layout), and their consume-queue units (``offset``, ``size``,
    ``tagsCode``). One report row per entry and per queue, then the files and
    ``config/topics.json``. ``wait_ms`` first (flushes).

    ``topics=()`` means every topic of the store; ``one_row`` folds all entries into one
    row and all queues into another (the whole-store check after every scenario)."""

    name: str
    topics: tuple[str, ...]
    wait_ms: int = 0
    note: str = ""
    one_row: bool = False


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named list of requests exercising one mechanism.

    Attributes:
        group: the mechanism (report section), e.g. ``"send"``, ``"pull"``, ``"offsets"``.
        name: unique across all scenarios.
        steps: requests (and stored checks) in order.
        doc: what the scenario shows, one or two sentences.
    """

    group: str
    name: str
    steps: Sequence[Step | StoredCheck | SideAction]
    doc: str = ""


TIMING_TOLERANCE_MS = 300


# -- helpers to write bodies and headers ----------------------------------------------------
def props(**kv: str) -> str:
    """A message's properties string (``name\\u0001value\\u0002``...), in the order given."""
    return message_properties_to_string_in_order(kv)


def message_properties_to_string_in_order(kv: dict[str, str]) -> str:
    """As ``MessageDecoder#messageProperties2String`` writes it, keeping the given order
    (a Java client's ``HashMap`` order is whatever the scenario writes down)."""
    return "".join(f"{k}\u0001{v}\u0002" for k, v in kv.items())


def batch(*messages: tuple[str, bytes, dict[str, str]]) -> bytes:
    """A SEND_BATCH_MESSAGE body: ``(topic, body, properties)`` each, as
    ``MessageDecoder#encodeMessages`` writes it."""
    msgs = []
    for topic, body, p in messages:
        m = Message(topic=topic, body=body)
        m.properties = dict(p)
        msgs.append(m)
    return encode_batch_body(msgs)


def json_body(obj: Any) -> bytes:
    """A JSON request body (compact, as fastjson writes it)."""
    return json.dumps(obj, separators=(",", ":")).encode()


def code_of(code: int | str) -> int:
    if isinstance(code, int):
        return code
    return int(RequestCode[code])


_REF = re.compile(r"\$\{([^}]+)\}")


def resolve(value: str, answers: dict[str, Any], env: dict[str, Any]) -> str:
    """Replace every ``${...}`` in ``value`` from this side's answers and environment."""

    def one(m: re.Match[str]) -> str:
        ref = m.group(1).strip()
        mm = re.fullmatch(r"now\s*([+-]\s*\d+)?", ref)
        if mm:
            delta = int(mm.group(1).replace(" ", "")) if mm.group(1) else 0
            return str(env["now"]() + delta)
        if ref in env and not callable(env[ref]):
            return str(env[ref])
        ref, _, conv = ref.partition("|")
        step, _, fld = ref.partition(".")
        ans = answers.get(step)
        if ans is None or ans.command is None:
            raise KeyError(f"${{{ref}}}: step {step!r} has no answer")
        cmd = ans.command
        if fld == "code":
            return str(cmd.code)
        if fld == "remark":
            return str(cmd.remark)
        v = cmd.ext(fld)
        if v is None:
            raise KeyError(f"${{{ref}}}: step {step!r}'s answer has no ext field {fld!r}")
        if conv == "offset":  # an offsetMsgId's last 16 hex digits: the commit-log offset
            return str(int(v[-16:], 16))
        return v

    return _REF.sub(one, value)


__all__ += ["message_properties_to_string", "TIMING_TOLERANCE_MS"]
