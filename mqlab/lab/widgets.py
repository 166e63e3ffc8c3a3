"""The control panel: buttons and inputs that drive a Lab, shown in one notebook line.

Mirrors no RocketMQ class: it plays the admin console and the client programs of a
lesson. ``control_panel(lab)`` returns a ``ControlPanel`` whose buttons send messages,
pull one queue by hand, add / remove / kill consumers, trigger a rebalance, persist
offsets, move virtual time (by N ms, to the next timer, or until a parked pull times
out) and flip ``longPollingEnable``, ``autoCreateTopicEnable``, the allocation strategy
and the listener time ("consume ms") of consumers added next and the listener mode of
every consumer (own, succeeds, fails). A lesson picks the panel's rows (``sections``), the
toggles it uses (``toggles``: lesson 01 shows autoCreateTopicEnable only), its
inspector tables (``views``: lesson 02 shows the commit log and the consume queues) and the
trace components its log never folds (``key_components``: lesson 06 follows the pull loop).
A lab with slaves also gets the "faults" row: a fault of ``Lab.FAULTS`` (kill, power cut,
lose the machine, restart, cut / heal the link to a slave's master, lag a slave) applied to
the broker node chosen there.

Every action is a plain method (``send()``, ``pull_once()``, ...) wired to a button. It
validates the inputs first (bad input → a message in ``messages``, state untouched),
then calls the Lab (which journals the call, so ``fork``/``replay`` still work), then
``refresh()``es the inspectors and the timeline in place and appends the trace events
it produced, in words. Nothing raises into the notebook: errors become messages.

This module owns the widgets and their callbacks; what they show (tables, timeline,
words) is ``mqlab.lab.panel_views``. Broker toggles and the listener mode are not in
the Lab's journal: a fork starts with the brokers' constructor settings.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from mqlab.client.allocate import STRATEGIES_BY_NAME
from mqlab.client.exception import MQClientException
from mqlab.client.producer.validators import Validators
from mqlab.common.sysflag import PullSysFlag
from mqlab.lab.lab import FAULTS
from mqlab.lab.panel_views import (
    DEFAULT_VIEWS,
    KEY_COMPONENTS,
    LISTENER_MODES,
    VIEWS,
    PanelListener,
    TimelineView,
    build_inputs,
    call_words,
    govern_listeners,
    inspector_html,
    section_rows,
    strategy_names,
    words,
)

#: The faults that act on the link between a slave (the node chosen) and its master.
LINK_FAULTS = ("cut_link", "partition", "heal_link", "lag_slave")

if TYPE_CHECKING:
    from mqlab.lab.lab import Lab
    from mqlab.runtime.raw_client import Call

__all__ = ["ControlPanel", "control_panel", "SECTIONS", "TOGGLES", "PanelInputError",
           "LINK_FAULTS"]  # fmt: skip

SECTIONS = (
    "send", "pull", "consumers", "time", "faults", "toggles", "inspect", "figure", "log",
)  # fmt: skip
#: Sections shown only when the lab has slaves, unless the lesson asks for them.
GROUP_SECTIONS = ("faults",)
#: The "toggles" row's inputs, left to right; a lesson may show only those it uses.
TOGGLES = ("long_polling", "auto_create_topic", "strategy", "listener")
#: Longest single "advance" a click may ask for (one virtual hour).
MAX_ADVANCE_MS = 3_600_000
#: Rounds of "run what is due now" after a click (see ``ControlPanel._idle``).
SETTLE_ROUNDS = 20
#: Messages kept in ``ControlPanel.messages`` / shown in the log (a scroll box: a few clicks
#: of a lesson, e.g. lesson 07's two 10 s advances, stay in it; older lines are announced).
MAX_MESSAGES, LOG_LINES = 5000, 400
#: The log's height (px) before it scrolls: with the buttons above it, a laptop screen's worth.
LOG_PX = 220
_TOPIC_RE = re.compile(r"^[%|a-zA-Z0-9_-]+$")  # Validators#checkTopic (client, 4.9.3)
#: The largest Java int and long: a request header's queueId and queueOffset hold no more.
JAVA_INT_MAX, JAVA_LONG_MAX = 2**31 - 1, 2**63 - 1


#: Sections that show what the lab is (not buttons or inputs): below the log, in tabs when both.
VIEW_SECTIONS = ("figure", "inspect")
#: Tab titles of the view sections.
VIEW_TITLES = {"figure": "timeline", "inspect": "tables"}


def panel_layout(rows: dict[str, list[Any]], chosen: Sequence[str]) -> list[Any]:
    """The panel's boxes, top to bottom: the control rows in ``chosen`` order, then the log,
    then the timeline and the tables (as two tabs, the timeline first, when both are shown).

    The log comes right under the buttons, so the answer to a click is in view with them: below
    a 400 px timeline and the tables (lesson 00's panel was 1 500–1 800 px tall) it was off a
    laptop's screen (issue 28).
    """
    row = {"flex_flow": "row wrap", "align_items": "center"}

    def box(section: str) -> widgets.HBox:
        return widgets.HBox(rows[section], layout=widgets.Layout(**row))

    out = [box(s) for s in chosen if s != "log" and s not in VIEW_SECTIONS]
    if "log" in chosen:
        out.append(box("log"))
    views = [s for s in VIEW_SECTIONS if s in chosen]
    if len(views) > 1:
        tabs = widgets.Tab(children=[box(s) for s in views])
        tabs.titles = tuple(VIEW_TITLES[s] for s in views)
        out.append(tabs)
    else:
        out += [box(s) for s in views]
    return out


class PanelInputError(ValueError):
    """Bad input in the panel; shown as a message, never raised into the notebook."""


def _guarded(method: Callable[..., Any]) -> Callable[..., None]:
    """Run an action; bad input and errors become messages, the log is redrawn."""

    @functools.wraps(method)
    def wrapper(self: ControlPanel, *args: Any, **kwargs: Any) -> None:
        try:
            method(self, *args, **kwargs)
        except PanelInputError as e:
            self._say(f"⚠ {e}")
        except Exception as e:  # noqa: BLE001 — a notebook click must never raise
            self._say(f"✗ {method.__name__} failed: {type(e).__name__}: {e}")
            self.refresh()
        self._render_log()

    return wrapper


def _int(name: str, raw: Any, *, lo: int = 0, hi: int | None = None, why: str = "") -> int:
    """``raw`` as a whole number from ``lo`` to ``hi``; ``why``: the reason for ``hi``, said
    when the number is out of range."""
    s = str(raw).strip()
    if not re.fullmatch(r"-?\d+", s):
        raise PanelInputError(f"{name} must be a whole number, got {raw!r}")
    v = int(s)
    if v < lo or (hi is not None and v > hi):
        rng = f"from {lo} to {hi}" if hi is not None else f">= {lo}"
        raise PanelInputError(f"{name} must be {rng}{f' ({why})' if why else ''}, got {v}")
    return v


class ControlPanel:
    """Buttons and inputs bound to one Lab; ``widget`` is the ipywidgets root.

    Attributes:
        lab: the Lab the panel drives.
        buttons: by name — send, pull, add_consumer, remove_consumer, kill_consumer,
            rebalance, persist_offsets, advance, next_timer, long_poll_timeout, refresh.
        inputs: by name — topic, tags, body, count, broker, queue_id, offset, suspend,
            timeout_ms, subscription, consumer, group, expression, consume_ms, persist_first,
            advance_ms, long_polling, auto_create_topic, strategy, listener.
        messages: what the panel said, newest last.
        listener: the ``PanelListener`` whose mode ("own", "succeeds", "fails") governs every
            concurrent consumer of the lab (the panel's own and the ones the lesson started).
    """

    def __init__(self, lab: Lab, *, topic: str = "TopicTest", group: str = "CG",
                 sections: list[str] | None = None, window_ms: int = 5000,
                 plot_mode: str | None = None,
                 key_components: Sequence[str] = KEY_COMPONENTS,
                 views: Sequence[str] = DEFAULT_VIEWS,
                 toggles: Sequence[str] = TOGGLES) -> None:  # fmt: skip
        has_slaves = any(b.broker_config.broker_id != 0 for b in lab.brokers)
        if sections is None:
            chosen = [s for s in SECTIONS if has_slaves or s not in GROUP_SECTIONS]
        else:
            chosen = list(sections)
        bad = [s for s in chosen if s not in SECTIONS]
        if bad:
            raise ValueError(f"unknown sections {bad}; choose from {list(SECTIONS)}")
        bad = [t for t in toggles if t not in TOGGLES]
        if bad:
            raise ValueError(f"unknown toggles {bad}; choose from {list(TOGGLES)}")
        bad = [v for v in views if v not in VIEWS]
        if bad:
            raise ValueError(f"unknown inspector views {bad}; choose from {list(VIEWS)}")
        if "dledger" in views and not getattr(lab, "dledger", 0):
            raise ValueError("the 'dledger' view shows a DLedger group: build the lab with "
                             "Lab(dledger=3)")  # fmt: skip
        #: The inspector's tables (``panel_views.VIEWS``), left to right.
        self.views = tuple(views)
        self.lab = lab
        #: Components whose lines the log never folds (``panel_views.words``).
        self.key_components = tuple(key_components)
        self.messages: list[str] = []
        self.listener = PanelListener()
        self._calls: list[tuple[Call, str]] = []  # raw pulls not answered yet
        #: the panel's own pulls: id(call) → (broker, "topic@queue", opaque), to find them among
        #: the held pulls (a push consumer's pulls are parked there too)
        self._pulls: dict[int, tuple[str, str, int]] = {}
        self._syncing = False
        self._click_t0: int | None = None  # when the last click began (the timeline's focus)
        self.strategies = strategy_names()
        self.inputs: dict[str, Any] = build_inputs(lab, topic, group, self.strategies)
        actions = {
            "send": ("send", self.send), "pull": ("pull once", self.pull_once),
            "add_consumer": ("add consumer", self.add_consumer),
            "remove_consumer": ("remove", self.remove_consumer),
            "kill_consumer": ("kill", self.kill_consumer),
            "rebalance": ("rebalance", self.rebalance),
            "persist_offsets": ("persist offsets", self.persist_offsets),
            "advance": ("advance", self.advance),
            "next_timer": ("to next timer", self.advance_to_next_timer),
            "long_poll_timeout": ("let long poll time out", self.let_long_poll_time_out),
            "refresh": ("refresh", self.refresh),
            "apply_fault": ("apply fault", self.apply_fault),
        }  # fmt: skip
        self.buttons: dict[str, widgets.Button] = {}
        for key, (label, fn) in actions.items():
            b = widgets.Button(description=label,
                               layout=widgets.Layout(width="auto", flex="0 0 auto"))  # fmt: skip
            b.on_click(lambda _b, fn=fn: fn())
            self.buttons[key] = b
        self.inputs["long_polling"].observe(lambda c: self.set_long_polling(c["new"]), "value")
        self.inputs["auto_create_topic"].observe(
            lambda c: self.set_auto_create_topic(c["new"]), "value"
        )
        self.inputs["strategy"].observe(lambda c: self.set_strategy(c["new"]), "value")
        self.inputs["listener"].observe(lambda c: self.set_listener(c["new"]), "value")
        self.inspector = widgets.HTML()
        self.log = widgets.HTML()
        self.sections = chosen
        #: The timeline (None when the "figure" section is not shown: it is not drawn then).
        self.timeline = (
            TimelineView(window_ms=window_ms, mode=plot_mode) if "figure" in chosen else None
        )
        figure = self.timeline.widget if self.timeline is not None else None
        rows = section_rows(self.inputs, self.buttons, self.inspector, figure, self.log)
        rows["toggles"] = [self.inputs[t] for t in TOGGLES if t in toggles]
        self.widget = widgets.VBox(panel_layout(rows, chosen))
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
        import html

        shown = self.messages[-LOG_LINES:]
        cut = len(self.messages) - len(shown)
        if cut:
            shown = [f"… {cut} earlier lines not shown (panel.messages keeps them)", *shown]
        text = html.escape("\n".join(shown))
        # A column-reverse scroll box starts scrolled to its end: the newest lines (what the
        # click just did) are in view, in time order. The <pre> must not shrink (flex:none):
        # a shrunk <pre> overflowed downwards and the box cut off the newest lines.
        self.log.value = (
            f'<div style="display:flex;flex-direction:column-reverse;max-height:{LOG_PX}px;'
            f'overflow:auto"><pre style="font-size:11px;margin:0;flex:none">{text}</pre></div>'
        )

    def refresh(self) -> None:
        """Redraw the inspectors, the timeline and the consumer list from the lab.

        Never raises: a failure becomes a message.
        """
        try:
            self._redraw()
        except Exception as e:  # noqa: BLE001 — a notebook click must never raise
            self._say(f"✗ refresh failed: {type(e).__name__}: {e}")
        self._render_log()

    def _redraw(self) -> None:
        lab = self.lab
        self._syncing = True
        try:
            running = self._running_consumers()
            sel = self.inputs["consumer"]
            keep = sel.value if sel.value in running else (running[0] if running else None)
            sel.options = running
            sel.value = keep
            b0 = lab.brokers[0].broker_config
            self.inputs["long_polling"].value = b0.long_polling_enable
            self.inputs["auto_create_topic"].value = b0.auto_create_topic_enable
            self.inputs["fault_node"].options = [b.name for b in lab.brokers]
        finally:
            self._syncing = False
        govern_listeners(lab, self.listener)
        if "inspect" in self.sections:
            self.inspector.value = inspector_html(
                lab,
                self.inputs["topic"].value.strip(),
                self.inputs["group"].value.strip(),
                self.views,
            )
        if self.timeline is not None:
            self.timeline.update(lab, since_ms=self._click_t0)

    def _running_consumers(self) -> list[str]:
        return [
            n for n, c in sorted(self.lab.consumers.items())
            if c.default_mq_push_consumer_impl.mq_client_factory.running
        ]  # fmt: skip

    def _do(self, label: str, fn: Callable[[], list[str] | None]) -> None:
        """Say ``label``, run ``fn``, say the events it produced and what it returned."""
        self._say(f"▶ t={self.lab.now} {label}")
        self._click_t0 = self.lab.now
        mark = len(self.lab.trace)
        try:
            extra = fn() or []
        finally:
            evs = self.lab.trace.events[mark:]
            self._say(*("  " + s for s in words(evs, keys=self.key_components)))
        done = [(c, what) for c, what in self._calls if c.done]
        self._calls = [(c, what) for c, what in self._calls if not c.done]
        for c, _what in done:
            self._pulls.pop(id(c), None)
        self._say(*("  → " + s for s in [*extra, *(call_words(c, w) for c, w in done)]))
        self._redraw()

    # -- inputs --------------------------------------------------------------------------------
    def _topic(self) -> str:
        topic = self.inputs["topic"].value.strip()
        if not topic:
            raise PanelInputError("topic must not be empty")
        try:  # RocketMQ's own words (walk 4 of issue 28: the panel said "is not valid: use …")
            Validators.check_topic(topic)
        except MQClientException as e:
            raise PanelInputError(f"{e.error_message} (Validators#checkTopic)") from None
        return topic

    def _group(self) -> str:
        group = self.inputs["group"].value.strip()
        if not group or len(group) > 255 or not _TOPIC_RE.fullmatch(group):
            raise PanelInputError(
                f"group must be a valid name (a-z A-Z 0-9 _ - % |), got {group!r}"
            )
        return group

    def _consumer(self) -> str:
        name = self.inputs["consumer"].value
        if not name:
            raise PanelInputError("no running consumer chosen: add a consumer first")
        if name not in self._running_consumers():
            raise PanelInputError(f"{name} is not running")
        return name

    # -- actions -------------------------------------------------------------------------------
    @_guarded
    def send(self) -> None:
        """Send ``count`` messages (topic, tags, body with ``{i}``) with the lab's producer."""
        i = self.inputs
        topic, count = self._topic(), _int("count", i["count"].value, lo=1, hi=10_000)
        tags = i["tags"].value.strip() or None
        body = i["body"].value
        if not body:
            raise PanelInputError("body must not be empty (the client rejects an empty body)")
        try:
            body.format(i=0)
        except (KeyError, IndexError, ValueError):
            raise PanelInputError(
                f"body may use {{i}} (the message number) only, got {body!r}"
            ) from None

        def run() -> list[str]:
            futs = self.lab.send_many(topic, count, tags=tags, body=body)
            self._idle()
            ok = [f.result for f in futs if f.done and f.result is not None]
            where = ", ".join(
                f"{r.send_status.name} {r.message_queue.broker_name} queue "
                f"{r.message_queue.queue_id} offset {r.queue_offset}" for r in ok[:8]
            ) + (" …" if len(ok) > 8 else "")  # fmt: skip
            lines = [f"sent {len(ok)}/{count}" + (f": {where}" if ok else "")]
            errors = [str(f.error).splitlines()[0] for f in futs if f.error is not None]
            return lines + [f"send failed: {e}" for e in errors[:3]]

        self._do(f"send {count} to {topic} (tags {tags})", run)

    @_guarded
    def pull_once(self) -> None:
        """One PULL_MESSAGE to the chosen broker and queue, as a push consumer sends it."""
        i = self.inputs
        topic, group = self._topic(), self._group()
        broker = self.lab.broker(i["broker"].value)
        tc = broker.topic_config_manager.topic_config_table.get(topic)
        n = tc.read_queue_nums if tc is not None else None
        qid = _int("queue id", i["queue_id"].value, hi=JAVA_INT_MAX if n is None else n - 1,
                   why="the header's queueId is a Java int" if n is None else
                   f"{topic} has {n} read queues")  # fmt: skip
        raw_off = str(i["offset"].value).strip()
        if raw_off in ("", "max"):
            offset = broker.message_store.get_max_offset_in_queue(topic, qid)
        else:
            offset = _int("offset", raw_off, hi=JAVA_LONG_MAX,
                          why="the header's queueOffset is a Java long")  # fmt: skip
        timeout = _int("timeout ms", i["timeout_ms"].value, hi=MAX_ADVANCE_MS)
        sub = i["subscription"].value.strip() or "*"
        suspend = bool(i["suspend"].value)
        flag = PullSysFlag.build_sys_flag(False, suspend, True, False)
        fields = {
            "consumerGroup": group, "topic": topic, "queueId": qid, "queueOffset": offset,
            "maxMsgNums": 32, "sysFlag": flag, "commitOffset": 0,
            "suspendTimeoutMillis": timeout, "subscription": sub, "subVersion": 0,
        }  # fmt: skip
        what = f"pull {topic}@{qid} offset {offset} from {broker.name}"

        def run() -> list[str]:
            call = self.lab.request(broker.name, "PULL_MESSAGE", fields)
            self._idle()
            self._calls.append((call, what))
            self._pulls[id(call)] = (broker.name, f"{topic}@{qid}", call.request.opaque)
            if not call.done:
                return [f"{what}: no answer yet — the pull is parked (see held pulls)"]
            return []

        self._do(f"{what} (suspend={suspend}, {timeout} ms, {sub!r})", run)

    @_guarded
    def add_consumer(self) -> None:
        """A push consumer on the panel's topic and group, with the panel's listener.

        Each listener call of the new consumer takes "consume ms" of virtual time
        (``DefaultMQPushConsumer.consume_time_ms``, mqlab's model of a slow listener).
        """
        topic, group = self._topic(), self._group()
        expr = self.inputs["expression"].value.strip() or "*"
        name = self.inputs["strategy"].value
        strategy = STRATEGIES_BY_NAME[name]()
        consume_ms = _int("consume ms", self.inputs["consume_ms"].value, hi=MAX_ADVANCE_MS)

        def run() -> list[str]:
            c = self.lab.push_consumer(group, topic, expr, listener=self.listener,
                                       allocate_message_queue_strategy=strategy,
                                       consume_time_ms=consume_ms)  # fmt: skip
            self._idle()
            node = c.default_mq_push_consumer_impl.mq_client_factory.name
            self.inputs["consumer"].options = self._running_consumers()
            self.inputs["consumer"].value = node
            mqs = sorted(mq.queue_id for mq in c.allocation.get(topic, ()))
            return [f"{node} ({name}) now holds {topic} queues {mqs}"]

        slow = f", {consume_ms} ms per listener call" if consume_ms else ""
        self._do(f"add consumer to {group} on {topic} ({expr!r}, {name}{slow})", run)

    @_guarded
    def remove_consumer(self) -> None:
        """Shut the chosen consumer down cleanly (persists offsets, unregisters)."""
        name = self._consumer()

        def run() -> None:
            self.lab.remove_consumer(name)
            self._idle()

        self._do(f"remove {name}", run)

    @_guarded
    def kill_consumer(self) -> None:
        """Crash the chosen consumer (after persisting its offsets if "persist first")."""
        name, first = self._consumer(), bool(self.inputs["persist_first"].value)

        def run() -> None:
            self.lab.kill_consumer(name, persist_first=first)
            self._idle()

        self._do(f"kill {name}" + (" (persist first)" if first else ""), run)

    @_guarded
    def rebalance(self) -> None:
        """Wake the chosen consumer's RebalanceService now."""
        name = self._consumer()

        def run() -> None:
            self.lab.rebalance(name)
            self._idle()

        self._do(f"rebalance {name}", run)

    @_guarded
    def persist_offsets(self) -> None:
        """Commit every running consumer's offsets to the broker now."""
        names = self._running_consumers()
        if not names:
            raise PanelInputError("no running consumer: nothing to persist")

        def run() -> None:
            for n in names:
                self.lab.persist_offsets(n)
            self._idle()

        self._do(f"persist offsets of {', '.join(names)}", run)

    def _idle(self) -> None:
        """Run the replies in flight and whatever was woken to run now.

        ``run_until_idle`` stops when only background timers are left, but a woken service
        (``RebalanceService`` after NOTIFY_CONSUMER_IDS_CHANGED, ``ServiceThread#wakeup``)
        is a background timer due *now*; run those too, a bounded number of rounds.
        """
        lab = self.lab
        lab.run_until_idle(max_ms=MAX_ADVANCE_MS)
        for _ in range(SETTLE_ROUNDS):
            nxt = lab.next_timers(1)
            if not nxt or nxt[0].due_ms > lab.now:
                return
            lab.advance(0)
            lab.run_until_idle(max_ms=MAX_ADVANCE_MS)

    @_guarded
    def apply_fault(self) -> None:
        """Apply the "fault" input to the broker node of "node" (``Lab.fault``).

        The link faults (cut_link, heal_link, lag_slave) take a slave, whose master is the
        other end; lag_slave takes its latency from "latency ms". A fault that cannot apply
        (a link fault on a master, a kill of a node already down) is a message saying why.
        """
        i = self.inputs
        kind, node = i["fault"].value, i["fault_node"].value
        if kind not in FAULTS:
            raise PanelInputError(f"unknown fault {kind!r}; choose one of {list(FAULTS)}")
        names = [b.name for b in self.lab.brokers]
        if node not in names:
            raise PanelInputError(f"no broker node {node!r}; nodes: {names}")
        broker = self.lab.broker(node)
        params: dict[str, Any] = {}
        if (
            kind in LINK_FAULTS
            and broker.broker_config.broker_id == 0
            and not getattr(self.lab, "dledger", 0)
        ):
            slaves = [b.name for b in self.lab.brokers
                      if b.broker_config.broker_name == broker.broker_config.broker_name
                      and b.broker_config.broker_id != 0]  # fmt: skip
            raise PanelInputError(
                f"{kind} acts on the link between a slave and its master, and {node} is a "
                "master: "
                + (f"choose one of its slaves {slaves}" if slaves else
                   "this lab has no slaves (build it with Lab(slaves=1))")
            )  # fmt: skip
        if kind == "lag_slave":
            params["latency_ms"] = _int("latency ms", i["latency_ms"].value, hi=MAX_ADVANCE_MS)
        if kind in ("kill", "power_cut", "lose") and not broker.running:
            raise PanelInputError(f"{node} is not running: restart it first")
        what = f"{kind} {node}" + (f" ({params['latency_ms']} ms)" if params else "")

        def run() -> list[str]:
            out = self.lab.fault(kind, node, **params)
            self._idle()
            if kind == "power_cut":
                return [f"{node} lost {out}"]
            return [FAULTS[kind]]

        self._do(what, run)

    @_guarded
    def advance(self) -> None:
        """Move virtual time forward by the "ms" input."""
        ms = _int("ms", self.inputs["advance_ms"].value, hi=MAX_ADVANCE_MS)

        def run() -> None:
            self.lab.advance(ms)

        self._do(f"advance {ms} ms", run)

    @_guarded
    def advance_to_next_timer(self) -> None:
        """Move time to the next pending timer and run what is due then."""
        nxt = self.lab.next_timers(1)
        if not nxt:
            raise PanelInputError("no timer is pending")
        label = f"advance to the next timer: {nxt[0].name} ({nxt[0].node}) at t={nxt[0].due_ms}"

        def run() -> None:
            self.lab.advance_to_next_timer()

        self._do(label, run)

    @_guarded
    def let_long_poll_time_out(self) -> None:
        """Advance until your parked pull (else the earliest one) is answered by a check.

        "Your pull" is the newest *pull once* still parked; without one, the pull with the
        earliest deadline (a push consumer's). A parked pull is answered at the first check at
        or after suspend + timeout (``PullRequestHoldService#notifyMessageArriving`` step 4);
        checks run every 5 000 ms with long polling, else every ``shortPollingTimeMills``.
        The advance also answers every other pull whose deadline has passed by then.
        """
        held = self.lab.held_pulls()
        if held.empty:
            if "pull" in self.sections:
                how = "pull once on an empty queue first"
            elif "consumers" in self.sections:
                how = "add a consumer first: its pulls park while its queues are empty"
            else:
                how = "no consumer pulls in this lab, so there is nothing to time out"
            raise PanelInputError(f"no pull is parked: {how}")
        row, whose = None, "a push consumer's pull, the earliest deadline"
        for call, _what in reversed(self._calls):
            broker, key, opaque = self._pulls.get(id(call), (None, None, None))
            mine = held[(held["broker"] == broker) & (held["key"] == key)
                        & (held["opaque"] == opaque)]  # fmt: skip
            if not mine.empty:
                row, whose = mine.iloc[0], "your pull once"
                break
        if row is None:
            row = held.sort_values(["deadline", "broker", "key"], kind="stable").iloc[0]
        hs = self.lab.broker(row["broker"]).pull_request_hold_service
        at, deadline = hs.next_check_at, int(row["deadline"])
        while at < deadline:
            at += hs.check_interval()
        what = f"{row['key']} offset {row['pull_from_this_offset']} (deadline t={deadline})"

        def run() -> list[str]:
            self.lab.advance(max(0, at - self.lab.now))
            self._idle()
            return [f"the hold-service check at t={at} answered the parked pull {what}: {whose}"]

        self._do(f"let the parked pull {what} time out ({whose})", run)

    # -- toggles -------------------------------------------------------------------------------
    @_guarded
    def set_long_polling(self, enable: bool) -> None:
        """Set ``longPollingEnable`` on every broker (read at the hold service's next turn)."""
        if self._syncing:
            return
        self.lab.set_broker_config(long_polling_enable=bool(enable))  # journaled: fork replays it
        hs = self.lab.brokers[0].pull_request_hold_service
        self._say(
            f"▶ t={self.lab.now} longPollingEnable={bool(enable)} on every broker",
            f"  → new pulls park for {'their suspend timeout' if enable else 'shortPollingTimeMills'};"
            f" the hold service checks every {hs.check_interval()} ms from its next turn "
            f"(t={hs.next_check_at})",
        )
        self.refresh()

    @_guarded
    def set_auto_create_topic(self, enable: bool) -> None:
        """Set ``autoCreateTopicEnable`` on every broker."""
        if self._syncing:
            return
        self.lab.set_broker_config(auto_create_topic_enable=bool(enable))
        note = (
            "a send to a new topic creates it from TBW102 (if TBW102 still has INHERIT)"
            if enable
            else "the next send to a new topic strips INHERIT from TBW102: no auto-create"
        )
        self._say(f"▶ t={self.lab.now} autoCreateTopicEnable={bool(enable)} on every broker",
                  f"  → {note}")  # fmt: skip
        self.refresh()

    @_guarded
    def set_strategy(self, name: str) -> None:
        """The allocation strategy of consumers added next."""
        if name not in self.strategies:
            raise PanelInputError(f"strategy must be one of {self.strategies}, got {name!r}")
        if self.inputs["strategy"].value != name:
            self.inputs["strategy"].value = name  # fires this again with the same name
            return
        self._say(f"▶ allocation strategy for consumers added next: {name} "
                  "(running consumers keep theirs)")  # fmt: skip

    @_guarded
    def set_listener(self, mode: str) -> None:
        """Govern every concurrent consumer's listener: "own", "succeeds" or "fails".

        "fails" makes each of them answer RECONSUME_LATER, so the next delivery is sent back
        (CONSUMER_SEND_MSG_BACK) and comes again from ``%RETRY%<group>`` after its delay.
        """
        if mode not in LISTENER_MODES:
            raise PanelInputError(f"listener must be one of {list(LISTENER_MODES)}, got {mode!r}")
        if self.inputs["listener"].value != mode:
            self.inputs["listener"].value = mode  # fires this again through the toggle
            return
        self.listener.mode = mode
        governed = govern_listeners(self.lab, self.listener)
        who = ", ".join(governed) if governed else "no consumer yet"
        if mode == "own":
            self._say(f"▶ t={self.lab.now} every consumer runs its own listener again ({who}); "
                      "consumers added here answer CONSUME_SUCCESS")  # fmt: skip
        else:
            status = "RECONSUME_LATER" if mode == "fails" else "CONSUME_SUCCESS"
            self._say(f"▶ t={self.lab.now} every consumer's listener now returns {status} "
                      f"({who}, and consumers added next)")  # fmt: skip
        self._render_log()

    def set_listener_fails(self, fails: bool) -> None:
        """``set_listener("fails" if fails else "succeeds")``."""
        self.set_listener("fails" if fails else "succeeds")


def control_panel(lab: Lab, *, topic: str = "TopicTest", group: str = "CG",
                  sections: list[str] | None = None, window_ms: int = 5000,
                  plot_mode: str | None = None,
                  key_components: Sequence[str] = KEY_COMPONENTS,
                  views: Sequence[str] = DEFAULT_VIEWS,
                  toggles: Sequence[str] = TOGGLES) -> ControlPanel:  # fmt: skip
    """A control panel for ``lab``; leave it as a cell's last expression to show it.

    Args:
        lab: the Lab to drive.
        topic / group: the initial topic and consumer group of the inputs.
        sections: which rows to show, from ``SECTIONS`` (None = all).
        window_ms: how much recent virtual time the timeline shows.
        plot_mode: "live" (FigureWidget) or "static" (Output); default ``MQLAB_PLOT_MODE``.
        key_components: trace components whose lines the log never folds (default: consume
            results, send-backs and retries; lesson 06 passes its pull loop's).
        views: the inspector's tables, from ``panel_views.VIEWS`` (default: queues, held
            pulls, allocation, process queues, consumer offsets; lesson 02 shows the commit
            log and the consume queues).
        toggles: which inputs the "toggles" row shows, from ``TOGGLES`` (default: all;
            lesson 01 shows ``autoCreateTopicEnable`` only).

    Raises:
        ValueError: an unknown section, inspector view, toggle or plot mode.
    """
    return ControlPanel(lab, topic=topic, group=group, sections=sections, window_ms=window_ms,
                        plot_mode=plot_mode, key_components=key_components,
                        views=views, toggles=toggles)  # fmt: skip
