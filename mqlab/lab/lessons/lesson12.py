"""Lesson 12 — replication and failover: a master, its slave, and what survives a lost machine.

The notebook's logic: a broker group (``Lab(slaves=1, broker_role=…)``), the HA stream of one
SYNC_MASTER send as trace rows (mechanisms.md "HA replication", steps 8-14), a lost master
under ASYNC_MASTER and SYNC_MASTER (``mqlab.experiments.master_loss``), the recorded sweep's
table and figure, a pull that the master redirects to its slave under memory pressure
(``accessMessageInMemoryMaxRatio``, ``suggestWhichBrokerId``, ``slaveReadEnable``), and the
duplicates of apache/rocketmq#1094 when a master returns after an outage (mechanisms.md
"SlaveSynchronize"). Mirrors ``HAService``, ``HAConnection``, ``CommitLog#submitReplicaRequest``,
``DefaultMessageStore#getMessage`` and ``SlaveSynchronize`` (rocketmq-all-4.9.3) through the Lab.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from mqlab.experiments import master_loss
from mqlab.lab.check import Misconception, exercise, wrong_answer
from mqlab.lab.lab import Lab
from mqlab.lab.widgets import ControlPanel, PanelInputError, _guarded

__all__ = [
    "TOPIC",
    "HA_COMPONENTS",
    "group_lab",
    "replicate",
    "ha_stream",
    "one_sync_send",
    "lose_master",
    "tradeoff",
    "tradeoff_figure",
    "pull_far_behind",
    "outage",
    "partition",
    "machine_down",
    "machine_down_figure",
    "ReplicationPanel",
    "replication_panel",
    "params_12_1",
    "params_12_2",
    "params_12_3",
    "params_12_4",
    "params_12_5",
]

TOPIC = "TopicTest"
#: The trace components of the HA stream and of a send waiting for it.
HA_COMPONENTS = (
    "CommitLog.submitReplicaRequest",
    "HAConnection.WriteSocketService",
    "HAService.HAClient",
    "HAConnection.ReadSocketService",
    "HAService.notifyTransferSome",
    "HAService.GroupTransferService",
    "SendMessageProcessor.handlePutMessageResultFuture",
)


def group_lab(seed: int, role: str = "SYNC_MASTER", **kwargs: Any) -> Lab:
    """A lab with one broker group: master ``broker-a`` (``role``) and slave ``broker-a-s1``."""
    return Lab(seed=seed, slaves=1, broker_role=role, **kwargs)


def replicate(lab: Lab, limit_ms: int = 60_000) -> int:
    """Advance 1 ms at a time until the slave holds every byte of the master's commit log;
    returns the virtual ms waited."""
    master = lab.broker("broker-a").message_store
    slave = lab.broker("broker-a-s1").message_store
    end = master.commit_log.get_max_offset()
    waited = 0
    while slave.commit_log.get_max_offset() < end or slave.reput_from_offset < end:
        if waited >= limit_ms:
            raise RuntimeError(f"the slave did not catch up within {limit_ms} ms")
        lab.advance(1)
        waited += 1
    return waited


def ha_stream(lab: Lab, since_ms: int = 0) -> pd.DataFrame:
    """The HA steps since ``since_ms``: t_ms, node, component, step, text."""
    ev = lab.events()
    ev = ev[(ev["t_ms"] >= since_ms) & ev["component"].isin(HA_COMPONENTS)]
    return ev[["t_ms", "node", "component", "step", "text"]].reset_index(drop=True)


def one_sync_send(seed: int) -> tuple[Lab, Any, int]:
    """A SYNC_MASTER group whose slave has caught up (one message replicated, 12 s); then one
    more send, run to its answer. Returns the lab, the ``SendResult`` and the send's start."""
    lab = group_lab(seed, "SYNC_MASTER")
    lab.send(TOPIC, b"first")
    lab.advance(12_000)
    start = lab.now
    result = lab.send(TOPIC, b"hello").get()
    return lab, result, start


def lose_master(role: str, lose_after: int, seed: int = 0) -> pd.DataFrame:
    """One run of the master-loss sweep (``mqlab.experiments.master_loss.run_point``): one
    row per send (n, sent_ms, answered_ms, status, latency_ms, acked, on_slave)."""
    rows, _ = master_loss.run_point(master_loss.Point(role, "ASYNC_FLUSH", lose_after, seed=seed))
    cols = ["n", "sent_ms", "answered_ms", "status", "latency_ms", "acked", "on_slave"]
    return pd.DataFrame(rows)[cols]


def tradeoff() -> pd.DataFrame:
    """The recorded sweep (``datasets/master_loss``) aggregated: one row per (role, flush,
    loss moment) with send latency p50 / p99 and acknowledged messages lost."""
    return master_loss.summary(master_loss.load_sends())


def tradeoff_figure(table: pd.DataFrame | None = None) -> Any:
    """Send latency (p50, p99) against acknowledged messages lost."""
    return master_loss.figure(tradeoff() if table is None else table)


def _pull(lab: Lab, broker: str, offset: int) -> Any:
    ext = {"consumerGroup": "CG", "topic": TOPIC, "queueId": 0, "queueOffset": offset,
           "maxMsgNums": 1, "sysFlag": 6, "commitOffset": 0, "suspendTimeoutMillis": 0,
           "subscription": "*", "subVersion": 0, "expressionType": "TAG"}  # fmt: skip
    return lab.request(broker, "PULL_MESSAGE", ext).response


def pull_far_behind(seed: int, memory: int | None, *, slave_read_enable: bool = True,
                    messages: int = 8) -> dict[str, Any]:  # fmt: skip
    """A group whose master holds ``messages`` messages in queue 0 (replicated); a pull of
    queue 0 from offset 0 on the master with ``total_physical_memory_size`` = ``memory``
    (None: the machine's), ``slaveReadEnable`` set on both by ``lab.set_broker_config``.
    Returns the master's answer (code, ``suggestWhichBrokerId``), then the slave's."""
    with group_lab(seed, "ASYNC_MASTER") as lab:
        lab.set_broker_config(slave_read_enable=slave_read_enable)  # master and slave
        call = lab.request("broker-a", "UPDATE_AND_CREATE_TOPIC",
                           {"topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": 1,
                            "writeQueueNums": 1, "perm": 6, "topicFilterType": "SINGLE_TAG",
                            "topicSysFlag": 0, "order": "false"})  # fmt: skip
        assert call.code == 0, call.remark
        lab.send_many(TOPIC, messages)
        replicate(lab)
        if memory is not None:
            lab.set_store_config("broker-a", total_physical_memory_size=memory)
        master = _pull(lab, "broker-a", 0)
        slave = _pull(lab, "broker-a-s1", 0)
        return {
            "master_code": master.code,
            "suggest_which_broker_id": int(master.ext("suggestWhichBrokerId")),
            "slave_code": slave.code,
            "slave_suggests": int(slave.ext("suggestWhichBrokerId")),
        }


def outage(seed: int, messages: int = 8) -> dict[str, Any]:
    """apache/rocketmq#1094 step by step on an ASYNC_MASTER group with one slave.

    4 messages are consumed by ``c1`` of group G (offsets 1 per queue, on the master and, by
    SlaveSynchronize, on the slave); ``messages`` more reach the slave; the master is killed;
    ``c2`` of G reads them from the slave and commits its offsets there; the master restarts
    with its old offsets, the slave's next syncAll copies them over the slave's, and ``c3``
    of G, which asks the master first, consumes the ``messages`` again. Returns what each stage left, by name.
    """
    out: dict[str, Any] = {}
    with group_lab(seed, "ASYNC_MASTER") as lab:
        master, slave = lab.broker("broker-a"), lab.broker("broker-a-s1")
        lab.send_many(TOPIC, 4)
        lab.push_consumer("G", TOPIC, name="c1", consume_from_where="CONSUME_FROM_FIRST_OFFSET")
        lab.advance(12_000)
        lab.remove_consumer("c1")
        lab.run_until_idle()
        out["before"] = dict(master.consumer_offset_manager.offset_table[f"{TOPIC}@G"])
        lab.send_many(TOPIC, messages)
        replicate(lab)
        lab.advance(10_000)
        lab.kill("broker-a")
        lab.run_until_idle()
        out["killed_ms"] = lab.now
        c2 = lab.push_consumer("G", TOPIC, name="c2",
                               consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
        lab.advance(30_000)
        out["consumed_from_slave"] = len(c2.consumed)
        lab.remove_consumer("c2")
        lab.run_until_idle()
        out["slave_during_outage"] = dict(slave.consumer_offset_manager.offset_table[f"{TOPIC}@G"])
        back = lab.restart_broker("broker-a")
        lab.run_until_idle()
        out["restarted_ms"] = lab.now
        out["master_after_restart"] = dict(back.consumer_offset_manager.offset_table[f"{TOPIC}@G"])
        lab.advance(21_000)
        out["slave_after_sync"] = dict(slave.consumer_offset_manager.offset_table[f"{TOPIC}@G"])
        synced = [e for e in lab.trace.select(component="SlaveSynchronize.syncConsumerOffset")
                  if e.fields.get("overwritten")]  # fmt: skip
        out["overwritten_ms"] = synced[0].t_ms if synced else None
        c3 = lab.push_consumer("G", TOPIC, name="c3",
                               consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
        lab.advance(30_000)
        out["consumed_again"] = len(c3.consumed)
    return out


def _send_ext(lab: Lab) -> dict[str, str]:
    """SEND_MESSAGE_V2's short header fields (``SendMessageRequestHeaderV2``), to queue 0."""
    return {
        "a": "PG", "b": TOPIC, "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": str(lab.now),
        "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false",
    }  # fmt: skip


def partition(seed: int, sends: int = 8, heal_after_ms: int | None = None) -> dict[str, Any]:
    """A SYNC_MASTER group whose master and slave are cut apart silently (the panel's
    "partition": ``Lab.cut_link(..., silent=True)``), then healed.

    One send replicates first; then ``sends`` SEND_MESSAGE_V2 requests go straight to the
    master, one after the other, each run until answered (a producer's 3 s timeout would
    end before the master's 3 s wait). Returns, by name: ``sends`` (a table: sent, ms after
    the cut; the answer's code name; waited, ms; the master's HA connections after it),
    ``closed_ms`` (when the master's housekeeping closed the HA connection, after the cut),
    ``held`` (the bytes the master's kernel kept for the slave: the retransmit row's count,
    since and at, ms after the cut), ``after_heal`` (the slave's HA rows from the heal on:
    ms after the heal, step, text), ``first_append_ms`` (the slave's first append after the
    heal, ms after the cut) and ``caught_up_ms`` (when the slave held every byte, after the
    heal).

    ``heal_after_ms``: heal that many ms after the cut instead, after one send (it must come
    after that send's answer, at 3002, and before the master's housekeeping, at 20 000).
    """
    from mqlab.remoting.codes import ResponseCode

    if heal_after_ms is not None:
        if not 3002 <= heal_after_ms < 20_000:
            raise ValueError(f"heal_after_ms must be in [3002, 20000), got {heal_after_ms}")
        sends = 1
    with group_lab(seed, "SYNC_MASTER") as lab:
        lab.advance(10_000)
        lab.send(TOPIC, b"m0").get()
        ha = lab.broker("broker-a").message_store.ha_service
        lab.fault("partition", "broker-a-s1")
        cut = lab.now
        rows = []
        for i in range(sends):
            t0 = lab.now
            call = lab.request("broker-a", "SEND_MESSAGE_V2", _send_ext(lab), b"m%d" % (i + 1),
                               run=False)  # fmt: skip
            while not call.done:
                lab.step()
            rows.append((t0 - cut, ResponseCode(call.response.code).name, lab.now - t0,
                         ha.connection_count))  # fmt: skip
            if call.response.code == ResponseCode.SLAVE_NOT_AVAILABLE:
                break
        if heal_after_ms is not None:
            lab.advance(cut + heal_after_ms - lab.now)
        closed = lab.trace.select(component="HAConnection.ReadSocketService", step="11")
        lab.heal_link("broker-a", "broker-a-s1")
        healed = lab.now
        waited = replicate(lab)
        [held] = [e.fields for e in lab.trace.select(component="SimNetwork", step="retransmit")
                  if e.node == "broker-a" and e.fields.get("to") == "broker-a-s1"]  # fmt: skip
        ev = lab.events()
        ev = ev[(ev["t_ms"] >= healed) & (ev["node"] == "broker-a-s1")
                & (ev["component"] == "HAService.HAClient")]  # fmt: skip
        after = pd.DataFrame({"after_heal_ms": ev["t_ms"] - healed, "step": ev["step"],
                              "text": ev["text"]}).reset_index(drop=True)  # fmt: skip
    appends = after[after["step"] == "9"]["after_heal_ms"]
    return {
        "sends": pd.DataFrame(rows, columns=["sent", "answer", "waited", "ha_connections"]),
        "closed_ms": closed[0].t_ms - cut if closed else None,
        "held": {"count": held["held"], "since": held["since"] - cut, "at": held["at"] - cut},
        "heal_ms": healed - cut,
        "after_heal": after,
        "first_append_ms": int(appends.iloc[0]) + healed - cut,
        "caught_up_ms": waited,
    }


MACHINE_FAULTS = ("kill", "power_cut")


def machine_down(seed: int, fault: str = "power_cut", *, cut_at_ms: int = 40_000,
                 sends: int = 60, every_ms: int = 3000) -> dict[str, Any]:  # fmt: skip
    """Two brokers, ``broker-a`` and ``broker-b``, topic ``T`` with 2 queues on each, one
    producer. At ``cut_at_ms`` broker-a's process is killed (``fault="kill"``: its kernel
    closes its connections) or its machine loses power (``"power_cut"``: nothing is closed,
    nobody is told); then the producer sends ``sends`` messages, each ``every_ms`` after the
    previous one's answer, and the run goes on until the producer's route has left broker-a
    out.

    Returns, by name: ``sends`` (a table: sent_ms and answered_ms, virtual ms; waited_ms;
    ``result``: the broker that stored it, or the error), ``failed`` (how many sends failed),
    ``last_registration_ms`` (when the name server read broker-a's last REGISTER_BROKER: one
    sent just before the cut still arrives after it), ``dropped_ms`` (when the name server dropped broker-a:
    ``RouteInfoManager#onChannelDestroy``), ``dropped_by`` (``"close"``: its channel closed;
    ``"idle"``: Netty's idle handler closed it) and ``route_ms`` (the producer's first route
    without broker-a).

    Raises:
        ValueError: an unknown ``fault``, or a ``cut_at_ms``, ``sends`` or ``every_ms`` that
            is not a whole number in range.
    """
    from mqlab.common.message import Message

    if fault not in MACHINE_FAULTS:
        raise ValueError(f"fault must be one of {list(MACHINE_FAULTS)}, got {fault!r}")
    for name, v, lo in (("cut_at_ms", cut_at_ms, 1000), ("sends", sends, 1),
                        ("every_ms", every_ms, 1)):  # fmt: skip
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
    with Lab(seed=seed, brokers=2) as lab:
        for b in ("broker-a", "broker-b"):
            call = lab.request(b, "UPDATE_AND_CREATE_TOPIC", {
                "topic": "T", "defaultTopic": "TBW102", "readQueueNums": 2,
                "writeQueueNums": 2, "perm": 6, "topicFilterType": "SINGLE_TAG",
                "topicSysFlag": 0, "order": "false"})  # fmt: skip
            assert call.code == 0, call.remark
        producer = lab.producer("PG")
        lab.advance(cut_at_ms - lab.now)
        getattr(lab, fault)("broker-a")
        rows = []
        for i in range(sends):
            sent = lab.now
            fut = producer.send(Message("T", b"m%d" % i))
            while not fut.done:
                lab.step()
            r = fut.result
            result = r.message_queue.broker_name if r is not None else str(fut.error)
            rows.append((sent, lab.now, lab.now - sent, result))
            lab.advance(every_ms)

        def route_without_a() -> list[int]:
            return [e.t_ms for e in lab.trace.select(component=(
                "MQClientInstance.updateTopicRouteInfoFromNameServer"))
                if e.node == "producer-1" and "T: route [broker-b:2w/2r] (changed)" in e.describe()]  # fmt: skip

        while not route_without_a() and lab.now < cut_at_ms + 300_000:
            lab.advance(10_000)
        drops = [e for e in lab.trace.select(component="RouteInfoManager.onChannelDestroy")
                 if e.fields.get("broker_name") == "broker-a"]  # fmt: skip
        idle = [e for e in lab.trace.select(step="idle") if e.node == "namesrv"]
        route = route_without_a()
        # (one sent just before the cut may still arrive after it)
        regs = [e.t_ms for e in lab.trace.select(component="RouteInfoManager.registerBroker")
                if e.fields.get("broker_name") == "broker-a"]  # fmt: skip
    table = pd.DataFrame(rows, columns=["sent_ms", "answered_ms", "waited_ms", "result"])
    return {
        "sends": table,
        "failed": int((~table["result"].str.startswith("broker-")).sum()),
        "last_registration_ms": max(regs),
        "dropped_ms": drops[0].t_ms if drops else None,
        "dropped_by": "idle" if idle and drops and idle[0].t_ms == drops[0].t_ms else "close",
        "route_ms": route[0] if route else None,
    }


def machine_down_figure(kill: dict[str, Any], power_cut: dict[str, Any]) -> Any:
    """Each send's wait against when it left, after a kill and after a power cut
    (``machine_down``'s results), with the power cut's two turning points marked: the name
    server drops broker-a, the producer's route follows."""
    import plotly.graph_objects as go

    from mqlab.lab.figures import house_style

    fig = go.Figure()
    for name, run, color in (("kill", kill, "#1f77b4"), ("power cut", power_cut, "#d62728")):
        t = run["sends"]
        fig.add_trace(go.Scatter(
            x=t["sent_ms"] / 1000, y=t["waited_ms"], mode="markers", name=name,
            marker={"color": color, "size": 8}, customdata=t[["result"]].to_numpy(),
            hovertemplate=(f"{name}<br>sent at %{{x:.3f}} s<br>waited %{{y}} ms"
                           "<br>%{customdata[0]}<extra></extra>"),
        ))  # fmt: skip
    marks = ((power_cut["dropped_ms"], "right", "grey: the name server drops broker-a "),
             (power_cut["route_ms"], "left", " grey: the producer's route follows"))  # fmt: skip
    for at, side, text in marks:
        if at is None:
            continue
        fig.add_vline(x=at / 1000, line={"color": "#555555", "dash": "dash", "width": 1})
        fig.add_annotation(x=at / 1000, y=0.55, yref="paper", xanchor=side, text=text,
                           showarrow=False, font={"size": 12}, bgcolor="white")  # fmt: skip
    fig.update_layout(
        title="broker-a lost at 40 s: a kill fails no send,<br>a power cut times out every "
              "send to broker-a for two minutes",
        xaxis_title="send left at (virtual s)", yaxis_title="waited (virtual ms)",
        legend_title="broker-a's fault", template="plotly_white",
    )  # fmt: skip
    return house_style(fig)


# -- the panel ---------------------------------------------------------------------------------
class ReplicationPanel(ControlPanel):
    """The control panel's send and time rows and its log, on a broker group, plus a fault row
    (*lose master*: ``Lab.lose``; *restart master*: ``Lab.restart_broker``) and the two commit
    logs side by side (``Lab.commit_logs``) with the replicated offset and what the master
    believes its slave holds (``push2SlaveMaxOffset``)."""

    def __init__(self, lab: Lab, *, topic: str = TOPIC) -> None:
        self.replication_view = widgets.HTML()
        super().__init__(lab, topic=topic, sections=["send", "time", "log"])
        self.buttons["long_poll_timeout"].layout.display = "none"  # nothing pulls here
        for key, label, fn in (("lose_master", "lose master", self.lose_master),
                               ("restart_master", "restart master", self.restart_master)):  # fmt: skip
            b = widgets.Button(description=label,
                               layout=widgets.Layout(width="auto", flex="0 0 auto"))  # fmt: skip
            b.on_click(lambda _b, fn=fn: fn())
            self.buttons[key] = b
        row = widgets.HBox([self.buttons["lose_master"], self.buttons["restart_master"]],
                           layout=widgets.Layout(flex_flow="row wrap", align_items="center"))  # fmt: skip
        self.widget.children = (row, self.replication_view, *self.widget.children)
        self.refresh()

    def _redraw(self) -> None:
        super()._redraw()
        if hasattr(self, "replication_view"):
            self.replication_view.value = self.replication_html()

    def replication_html(self) -> str:
        """Master and slave commit logs side by side (the last 8 of the master's entries)."""
        master = self.lab.broker("broker-a")
        head = f"<b>t={self.lab.now} ms</b> · broker-a ({master.message_store_config.broker_role})"
        if not master.running:
            slave = self.lab.broker("broker-a-s1").message_store.get_max_phy_offset()
            return (f'<div style="font-size:11px">{head} is down · broker-a-s1 holds '
                    f"{slave} bytes</div>")  # fmt: skip
        logs = self.lab.commit_logs("broker-a")
        a = logs.attrs
        head += (f" · master's end {a['max_offsets']['broker-a']}, slave's end "
                 f"{a['max_offsets']['broker-a-s1']}, replicated offset {a['replicated_offset']}, "
                 f"push2SlaveMaxOffset {a['push2_slave_max_offset']}")  # fmt: skip
        cols = ["commit_log_offset", "size", "topic", "queue_id", "queue_offset", "broker-a",
                "broker-a-s1"]  # fmt: skip
        shown = logs[cols].tail(8).copy()
        for node in ("broker-a", "broker-a-s1"):  # does this node hold the entry?
            shown[node] = ["✔" if pd.notna(held) and bool(held) else "—" for held in shown[node]]
        table = shown.to_html(index=False) if len(logs) else ""
        # a line of text high: an HTML widget's content inherits ipywidgets' 28 px
        return f'<div style="font-size:11px;line-height:1.4">{head}{table}</div>'

    @_guarded
    def lose_master(self) -> None:
        """``Lab.lose("broker-a")``: the master's process and disk are gone."""
        if not self.lab.broker("broker-a").running:
            raise PanelInputError("broker-a must be running to be lost: it is lost already "
                                  "(restart master first)")  # fmt: skip

        def run() -> list[str]:
            self.lab.lose("broker-a")
            self._idle()
            held = self.lab.broker("broker-a-s1").message_store.get_max_phy_offset()
            return [f"broker-a is lost; broker-a-s1 holds {held} bytes of commit log"]

        self._do("lose master", run)

    @_guarded
    def restart_master(self) -> None:
        """``Lab.restart_broker("broker-a")``: a new machine on the same address."""

        def run() -> list[str]:
            new = self.lab.restart_broker("broker-a")
            self._idle()
            return [f"broker-a restarted with {new.message_store.get_max_phy_offset()} bytes"]

        self._do("restart master", run)


def replication_panel(lab: Lab) -> ReplicationPanel:
    """A ``ReplicationPanel`` for a group lab; leave it as a cell's last expression."""
    return ReplicationPanel(lab)


# -- exercises ---------------------------------------------------------------------------------
def params_12_1(seed: int) -> int:
    """Exercise 12.1's loss moment: the master is lost right after this many answers."""
    return (23, 37, 58, 64, 81)[seed % 5]


def _lost(role: str, lose_after: int, seed: int) -> int:
    df = lose_master(role, lose_after, seed)
    return int((df["acked"] & ~df["on_slave"]).sum())


MISCONCEPTIONS_12_1 = (
    wrong_answer(
        "believing SEND_OK means the slave has the message",
        "an ASYNC_MASTER answers SEND_OK as soon as its own commit log holds the message; the "
        "slave gets it only at the master's next push (HA step 8)",
        lambda want, seed: 0,
    ),
    wrong_answer(
        "believing a lost master loses everything it acknowledged",
        "the slave keeps what the master pushed before the loss: only the messages since the "
        "last push are gone",
        lambda want, seed: params_12_1(seed),
    ),
)


@exercise("12.1", "An ASYNC_MASTER broker-a with one slave; a producer sends a message every "
          "10 ms (each answered 2 ms later); broker-a's machine is lost right after the "
          "producer's L.params_12_1(SEED)-th SEND_OK. How many acknowledged messages are not on "
          "the slave? (L.lose_master('ASYNC_MASTER', n, SEED) runs it; predict first.)",
          hint="the master's WriteSocketService, finding nothing to push, waits 100 ms before "
               "it looks again (HA step 8); what it acknowledged after the last push that reached "
               "the slave is only on the lost machine: at most 10 sends here. Run "
               "L.lose_master('ASYNC_MASTER', n, SEED) and count acked rows not on_slave",
          misconceptions=MISCONCEPTIONS_12_1)  # fmt: skip
def _ex_12_1(seed: int) -> int:
    return _lost("ASYNC_MASTER", params_12_1(seed), seed)


def params_12_2(seed: int) -> int:
    """Exercise 12.2's loss moment."""
    return (31, 44, 52, 69, 90)[seed % 5]


MISCONCEPTIONS_12_2 = (
    Misconception(
        "believing SYNC_MASTER loses what ASYNC_MASTER loses",
        "a SYNC_MASTER answers only once the slave reported the message's end (steps 12-14): "
        "whatever it acknowledged is on the slave",
        lambda answer, want, seed: answer[0] > 0,
    ),
    Misconception(
        "forgetting the round trip to the slave",
        "each SYNC_MASTER send waits for a push to the slave and its report back: 2 ms more "
        "than the producer's round trip, plus the link's jitter",
        lambda answer, want, seed: answer[0] == 0 and answer[1] <= 2,
    ),
)


@exercise("12.2", "The same with a SYNC_MASTER, lost after the L.params_12_2(SEED)-th SEND_OK, "
          "the link master ↔ slave having 0..4 ms of jitter each way. Answer [acknowledged "
          "messages lost, the median send latency of the acknowledged sends in ms].",
          hint="SYNC_MASTER answers after the slave's report: nothing acknowledged is lost; the "
               "median latency is the producer's 2 ms plus the master → slave → master trip: "
               "run L.lose_master('SYNC_MASTER', n, SEED) and take the median of latency_ms "
               "where acked",
          misconceptions=MISCONCEPTIONS_12_2)  # fmt: skip
def _ex_12_2(seed: int) -> list[float]:
    df = lose_master("SYNC_MASTER", params_12_2(seed), seed)
    lost = int((df["acked"] & ~df["on_slave"]).sum())
    return [lost, float(df[df["acked"]]["latency_ms"].median())]


def params_12_3(seed: int) -> int:
    """Exercise 12.3: how many messages reach the slave before the master is killed."""
    return (4, 8, 12)[seed % 3]


MISCONCEPTIONS_12_3 = (
    wrong_answer(
        "believing offsets committed to the slave are kept",
        "they never reach the master (4.9.3 has no slave → master offset sync): c3 reads the "
        "returning master's older offsets, and the slave's SlaveSynchronize copies those over "
        "its own (syncConsumerOffset)",
        lambda want, seed: 0,
    ),
)


@exercise("12.3", "As in section 5: c1 consumed 4 messages; L.params_12_3(SEED) more reach the "
          "slave; the master is killed; c2 of the same group consumes them from the slave; the "
          "master returns. How many messages does c3 of the group consume when it starts, after "
          "the slave's next syncAll?",
          hint="during the outage c2's offsets went to the slave (findBrokerAddressInSubscribe "
               "finds no master, so any node of the name); nothing copies them back to the "
               "master, which still has the offsets of before the outage, and c3 asks the "
               "master first; the slave's syncAll then copies the master's over its own too "
               "(apache/rocketmq#1094)",
          misconceptions=MISCONCEPTIONS_12_3)  # fmt: skip
def _ex_12_3(seed: int) -> int:
    return int(outage(seed, params_12_3(seed))["consumed_again"])


def params_12_4(seed: int) -> int:
    """Exercise 12.4: when the link heals, in ms after the cut."""
    return (5_000, 9_000, 14_000)[seed % 3]


MISCONCEPTIONS_12_4 = (
    wrong_answer(
        "believing the bytes go across the moment the link is back",
        "nothing tells the master's kernel that the link is back: it sends the push again "
        "only when its retransmission timer fires",
        lambda want, seed: params_12_4(seed) + 1,
    ),
    wrong_answer(
        "believing the retransmission timer starts again at the heal",
        "the timer runs from the push, 1 ms after the cut, and its gaps double: 200, 200, "
        "400, 800 ... ms",
        lambda want, seed: params_12_4(seed) + 201,
    ),
)


@exercise("12.4", "As in section 6: the master and its slave are cut apart; one send is pushed "
          "1 ms after the cut, into the partition. The link heals L.params_12_4(SEED) ms after "
          "the cut. When does the slave append that push, in ms after the cut?",
          hint="the master's kernel sends the push again 200, 400, 800 ms ... after it first "
               "sent it (each gap doubling), until one gets through: the first of those after "
               "the heal, plus the link's 1 ms",
          misconceptions=MISCONCEPTIONS_12_4)  # fmt: skip
def _ex_12_4(seed: int) -> int:
    return int(partition(seed, heal_after_ms=params_12_4(seed))["first_append_ms"])


def params_12_5(seed: int) -> int:
    """Exercise 12.5: when broker-a's machine loses power, in virtual ms."""
    return (25_000, 47_000, 75_000)[seed % 3]


def _next_scan_after(t: int) -> int:
    """``scanNotActiveBroker``'s first pass (5 s, then every 10 s) after ``t``."""
    return 5_000 + 10_000 * ((t - 5_000) // 10_000 + 1)


MISCONCEPTIONS_12_5 = (
    wrong_answer(
        "believing the name server learns of it at once",
        "that is a kill: the dead process's kernel closes its sockets and the name server's "
        "channel closes; a machine without power sends nothing, so nothing closes",
        lambda want, seed: params_12_5(seed) + 1,
    ),
    wrong_answer(
        "starting the 120 s at the power cut",
        "the name server cannot see the cut: its clock runs from the last frame it read or "
        "wrote on broker-a's channel, the registration before the cut (every 30 s from 10 s)",
        lambda want, seed: params_12_5(seed) + 120_000,
    ),
    wrong_answer(
        "waiting for scanNotActiveBroker",
        "the scan (every 10 s) would drop it, but Netty's idle handler on the channel fires "
        "first, exactly 120 s after its last read or write",
        lambda want, seed: _next_scan_after(want),
    ),
)


@exercise("12.5", "As in section 7: broker-a's machine loses power at L.params_12_5(SEED) ms "
          "(virtual). When does the name server drop broker-a, in virtual ms?",
          hint="a powered-off machine sends no FIN: the name server finds out when broker-a's "
               "channel has gone 120 s (serverChannelMaxIdleTimeSeconds) without a read or a "
               "write; brokers register at 10 001 ms and every 30 s after",
          misconceptions=MISCONCEPTIONS_12_5)  # fmt: skip
def _ex_12_5(seed: int) -> int:
    return int(machine_down(seed, cut_at_ms=params_12_5(seed), sends=1)["dropped_ms"])
