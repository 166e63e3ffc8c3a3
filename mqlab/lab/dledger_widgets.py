"""The DLedger panel: a group's nodes live (role, term, vote, log end, committed index) and
the buttons that break and heal it.

Mirrors no RocketMQ class: it plays the operator and the network of a DLedger group
(``Lab(dledger=3)``). ``dledger_panel(lab)`` returns a ``DLedgerPanel`` with

- a table, one row per node (``dledger_view``): up or down, role, term, ``votedFor``, the
  leader it knows, ``ledgerEndIndex``/``ledgerEndTerm``, ``committedIndex``, its broker's
  brokerId, and the peers its DLedger links are cut from or slowed to;
- buttons: kill, power cut and restart the chosen node; partition the chosen nodes from the
  rest, heal; step to the next vote answered (``Lab.run_until_vote``) or until the next
  election ends (``Lab.run_until_elected``); send one
  message; advance time;
- a log of what each click did, in words (elections, votes, role changes and faults are
  never folded).

Each action validates its inputs first (a bad one is a message saying why, the lab
untouched), calls the Lab (journaled, so ``fork`` replays it), then redraws the table.
Nothing raises into the notebook.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd

from mqlab.lab.dledger_lab import dledger_view
from mqlab.lab.panel_views import words
from mqlab.lab.widgets import (
    LOG_LINES,
    LOG_PX,
    MAX_ADVANCE_MS,
    MAX_MESSAGES,
    PanelInputError,
    _guarded,
    _int,
)

if TYPE_CHECKING:
    from mqlab.lab.lab import Lab

__all__ = ["DLedgerPanel", "dledger_panel", "dledger_view", "DLEDGER_BUTTONS", "KEY_COMPONENTS"]

#: Trace components whose lines the panel's log never folds.
KEY_COMPONENTS = ("DLedgerLeaderElector", "DLedgerRoleChangeHandler", "Lab",
                  "DefaultMQProducerImpl.send")  # fmt: skip
#: The buttons, by name, with their labels.
DLEDGER_BUTTONS = {
    "kill": "kill", "power_cut": "power cut", "restart": "restart", "partition": "partition",
    "heal": "heal", "next_vote": "next vote", "step_election": "step to next election",
    "send": "send",
    "advance": "advance",
}  # fmt: skip


def view_html(df: pd.DataFrame, title: str) -> str:
    """The table as HTML: the leader's row in bold, a node that is down greyed."""
    head = "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in df.columns)
    body = []
    for rec in df.to_dict("records"):
        style = ("font-weight:bold" if rec["role"] == "LEADER" and rec["up"] == "up" else
                 "color:#999" if rec["up"] != "up" else "")  # fmt: skip
        cells = "".join(f"<td>{html.escape(str(v))}</td>" for v in rec.values())
        body.append(f'<tr style="{style}">{cells}</tr>')
    return (f'<div class="mqlab-table"><b>{html.escape(title)}</b><table>'
            f"<tr>{head}</tr>{''.join(body)}</table></div>")  # fmt: skip


class DLedgerPanel:
    """A DLedger group's nodes and the buttons that break it; ``widget`` is the root.

    Attributes:
        lab: the Lab (built with ``dledger=3`` or ``5``).
        name: the broker name whose group the panel shows.
        buttons: by name (``DLEDGER_BUTTONS``).
        inputs: ``nodes`` (the nodes a kill, power cut, restart or partition acts on),
            ``advance_ms``, ``topic``, ``body``.
        table: the nodes' table (HTML), redrawn after each click.
        messages: what the panel said, newest last.

    Raises:
        ValueError: the lab has no DLedger group (build it with ``Lab(dledger=3)``), or no
            group ``name``.
    """

    def __init__(self, lab: Lab, name: str = "broker-a") -> None:
        if not getattr(lab, "dledger", 0):
            raise ValueError("this lab has no DLedger group: build it with Lab(dledger=3) "
                             "for a panel of its nodes")  # fmt: skip
        lab.dledger_nodes(name)  # an unknown group raises here, naming the groups
        self.lab = lab
        self.name = name
        self.messages: list[str] = []
        self.node_names = list(lab.dledger_nodes(name).index)
        lay = widgets.Layout(width="auto")
        self.inputs: dict[str, Any] = {
            "nodes": widgets.SelectMultiple(options=self.node_names, value=(),
                                            description="nodes", rows=len(self.node_names)),
            "advance_ms": widgets.Text(value="1000", description="ms",
                                       layout=widgets.Layout(width="140px")),
            "topic": widgets.Text(value="TopicTest", description="topic",
                                  layout=widgets.Layout(width="220px")),
            "body": widgets.Text(value="hello", description="body",
                                 layout=widgets.Layout(width="200px")),
        }  # fmt: skip
        actions: dict[str, Callable[[], None]] = {
            "kill": self.kill, "power_cut": self.power_cut, "restart": self.restart,
            "partition": self.partition, "heal": self.heal,
            "next_vote": self.next_vote, "step_election": self.step_election, "send": self.send,
            "advance": self.advance,
        }  # fmt: skip
        self.buttons: dict[str, widgets.Button] = {}
        for key, fn in actions.items():
            b = widgets.Button(description=DLEDGER_BUTTONS[key], layout=lay)
            b.on_click(lambda _b, fn=fn: fn())
            self.buttons[key] = b
        self.table = widgets.HTML()
        self.log = widgets.HTML()
        row = widgets.Layout(flex_flow="row wrap", align_items="center")
        b = self.buttons
        self.widget = widgets.VBox([
            widgets.HBox([self.inputs["nodes"],
                          widgets.VBox([widgets.HBox([b["kill"], b["power_cut"], b["restart"]]),
                                        widgets.HBox([b["partition"], b["heal"]])])],
                         layout=row),
            widgets.HBox([b["next_vote"], b["step_election"], self.inputs["advance_ms"],
                          b["advance"]],
                         layout=row),
            widgets.HBox([self.inputs["topic"], self.inputs["body"], b["send"]], layout=row),
            self.table, self.log,
        ])  # fmt: skip
        self.refresh()

    # -- display -------------------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _say(self, *lines: str) -> None:
        self.messages.extend(lines)
        if len(self.messages) > MAX_MESSAGES:
            del self.messages[: len(self.messages) - MAX_MESSAGES]

    def _render_log(self) -> None:
        text = html.escape("\n".join(self.messages[-LOG_LINES:]))
        self.log.value = (
            f'<div style="display:flex;flex-direction:column-reverse;max-height:{LOG_PX}px;'
            f'overflow:auto"><pre style="font-size:11px;margin:0;flex:none">{text}</pre></div>'
        )

    def refresh(self) -> None:
        """Redraw the table from the lab. Never raises: a failure becomes a message."""
        try:
            df = dledger_view(self.lab, self.name)
            leader = self.lab.dledger_leader(self.name)
            title = (f"DLedger group {self.name} at t={self.lab.now} ms: "
                     + (f"{leader} leads" if leader else "no leader"))  # fmt: skip
            self.table.value = view_html(df, title)
        except Exception as e:  # noqa: BLE001 — a notebook click must never raise
            self._say(f"✗ refresh failed: {type(e).__name__}: {e}")
        self._render_log()

    def _do(self, label: str, fn: Callable[[], list[str] | None]) -> None:
        """Say ``label``, run ``fn``, say the events it produced and what it returned."""
        self._say(f"▶ t={self.lab.now} {label}")
        mark = len(self.lab.trace)
        try:
            extra = fn() or []
        finally:
            evs = self.lab.trace.events[mark:]
            self._say(*("  " + s for s in words(evs, keys=KEY_COMPONENTS, limit=30)))
        self._say(*("  → " + s for s in extra))
        self.refresh()

    # -- inputs --------------------------------------------------------------------------------
    def _chosen(self, action: str, *, one: bool = False) -> list[str]:
        chosen = list(self.inputs["nodes"].value)
        bad = [n for n in chosen if n not in self.node_names]
        if bad:
            raise PanelInputError(f"no node {bad[0]!r} in {self.name}; nodes: {self.node_names}")
        if not chosen:
            raise PanelInputError(f"choose the node(s) to {action} in the 'nodes' list")
        if one and len(chosen) > 1:
            raise PanelInputError(f"{action} acts on one node at a time; chosen: {chosen}")
        return chosen

    def _running(self, node: str) -> bool:
        return self.lab.broker(node).running

    # -- actions -------------------------------------------------------------------------------
    @_guarded
    def kill(self) -> None:
        """Kill the chosen nodes (broker and DLedger node, SIGKILL): their logs stay."""
        nodes = self._chosen("kill")
        down = [n for n in nodes if not self._running(n)]
        if down:
            raise PanelInputError(f"{', '.join(down)} is down already: restart it first")

        def run() -> list[str]:
            for n in nodes:
                self.lab.kill(n)
            return [f"{', '.join(nodes)} killed; its log and term stay on disk"]

        self._do(f"kill {', '.join(nodes)}", run)

    @_guarded
    def power_cut(self) -> None:
        """Cut the power of the chosen node: what its last flush pass did not cover is lost."""
        (node,) = self._chosen("power cut", one=True)
        if not self._running(node):
            raise PanelInputError(f"{node} is down already: restart it first")

        def run() -> list[str]:
            out = self.lab.power_cut(node)
            return [f"{node} lost {out.get('dledger_lost_entries', 0)} unflushed DLedger "
                    f"entries; its log ends at index {out.get('dledger_ledger_end_index_after')}"]  # fmt: skip

        self._do(f"power cut {node}", run)

    @_guarded
    def restart(self) -> None:
        """Restart the chosen nodes on their disks: each starts as a CANDIDATE."""
        nodes = self._chosen("restart")
        up = [n for n in nodes if self._running(n)]
        if up:
            raise PanelInputError(f"{', '.join(up)} is running: kill it first")

        def run() -> list[str]:
            for n in nodes:
                self.lab.restart_broker(n, graceful=False)
            self.lab.run_until_idle()
            return [f"{', '.join(nodes)} restarted as CANDIDATE on its log"]

        self._do(f"restart {', '.join(nodes)}", run)

    @_guarded
    def partition(self) -> None:
        """Cut the DLedger links between the chosen nodes and the rest of the group."""
        nodes = self._chosen("partition off")
        if len(nodes) == len(self.node_names):
            raise PanelInputError("a partition needs nodes on both sides: you chose every "
                                  "node; choose the side to cut off")  # fmt: skip

        def run() -> list[str]:
            sides = self.lab.partition(nodes)
            n = len(self.node_names)
            major = "majority" if len(sides["side"]) * 2 > n else "minority"
            return [f"{sides['side']} ({major}) | {sides['rest']}: no DLedger packet crosses"]

        self._do(f"partition {', '.join(nodes)}", run)

    @_guarded
    def heal(self) -> None:
        """Every DLedger link of the group up again."""
        self._do("heal", lambda: self.lab.heal(self.name) or ["every DLedger link is up"])

    @_guarded
    def next_vote(self) -> None:
        """Step until the next vote is answered: an election, vote by vote."""
        lab = self.lab

        def run() -> list[str]:
            try:
                v = lab.run_until_vote(self.name)
            except TimeoutError:
                leader = lab.dledger_leader(self.name)
                return [f"no vote within 60 s: {leader or 'nobody'} leads and its heartbeats "
                        "keep the followers (kill or partition it first)"]  # fmt: skip
            return [f"{v['voter_id']} answers {v['candidate']}'s vote for term {v['term']}: "
                    f"{v['result']} (now in term {v['voter_term']}, voted for {v['vote_for']})"]  # fmt: skip

        self._do("step to the next vote", run)

    @_guarded
    def step_election(self) -> None:
        """Step until the next election ends (a node leads a term no leader held before)."""
        lab = self.lab
        leader = lab.dledger_leader(self.name)

        def run() -> list[str]:
            try:
                won = lab.run_until_elected(self.name)
            except TimeoutError:
                who = (f"{leader} still leads term "
                       f"{lab.dledger_server(leader).member_state.curr_term}"
                       if leader else "no node won a majority")  # fmt: skip
                return [f"no election ended within 60 s: {who} "
                        "(kill or partition the leader first, or heal a split group)"]  # fmt: skip
            return [f"{won['leader']} ({won['self_id']}) won term {won['term']} "
                    f"at t={won['t_ms']}"]  # fmt: skip

        self._do("step to the next election", run)

    @_guarded
    def send(self) -> None:
        """Send one message with the lab's producer and run until it is answered."""
        topic = self.inputs["topic"].value.strip()
        if not topic:
            raise PanelInputError("topic must not be empty")
        body = self.inputs["body"].value

        def run() -> list[str]:
            fut = self.lab.send(topic, body)
            if fut.result is not None:
                r = fut.result
                return [f"{r.send_status.name}: queue {r.message_queue.queue_id} offset "
                        f"{r.queue_offset}, msgId {r.msg_id}"]  # fmt: skip
            return [f"send failed: {str(fut.error).splitlines()[0] if fut.error else 'pending'}"]

        self._do(f"send {body!r} to {topic}", run)

    @_guarded
    def advance(self) -> None:
        """Move virtual time forward by the "ms" input."""
        ms = _int("ms", self.inputs["advance_ms"].value, hi=MAX_ADVANCE_MS,
                  why="one virtual hour at most")  # fmt: skip
        self._do(f"advance {ms} ms", lambda: self.lab.advance(ms) and None)


def dledger_panel(lab: Lab, name: str = "broker-a") -> DLedgerPanel:
    """A panel of DLedger group ``name``'s nodes; leave it as a cell's last expression.

    Raises:
        ValueError: the lab has no DLedger group, or none named ``name``.
    """
    return DLedgerPanel(lab, name)
