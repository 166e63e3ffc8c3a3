"""A slave copies its master's metadata every 10 s: topics, offsets, delay offsets, groups.

Mirrors ``SlaveSynchronize`` (broker/slave, RocketMQ 4.9.3) and the timer that
``BrokerController#handleSlaveSynchronize`` arms on a SLAVE (first run 3 s after start,
then every 10 s); mechanisms.md "SlaveSynchronize" (steps 1–6).

State: ``master_addr``, the master's broker address as the slave's last registration
reply gave it (``RegisterBrokerResult#masterAddr``: None while the name server knows no
master of this broker name). What it must not know: sockets and clocks. Each of the four
syncs is one request to the master through ``ctx.invoke_async``; Java runs them one after
another with ``invokeSync`` (3 s each), so here each reply (or failure) starts the next.

What each sync does with the master's answer is code, because each has its own rule:

| step | request | on the slave |
|---|---|---|
| 3 | GET_ALL_TOPIC_CONFIG | replace the topic table when the DataVersion differs, persist |
| 4 | GET_ALL_CONSUMER_OFFSET | ``putAll`` over the offset table (entries only the slave has stay), persist |
| 5 | GET_ALL_DELAY_OFFSET | write ``config/delayOffset.json`` (the running table is not reloaded) |
| 6 | GET_ALL_SUBSCRIPTIONGROUP_CONFIG | replace the group table when the DataVersion differs, persist |

Step 4 is why a master that comes back after an outage takes consumer progress back
(apache/rocketmq#1094): offsets committed to the slave meanwhile are overwritten by the
master's older ones. GET_ALL_TOPIC_CONFIG goes to the master's VIP channel
(``BrokerOuterAPI#getAllTopicConfig``: ``MixAll#brokerVIPChannel(true, addr)``, port − 2),
the other three to its main port, as in Java; a broker serves both, in the simulation and
under ``mqlab serve``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mqlab.broker.broker_outer_api import MQBrokerException
from mqlab.broker.config import SubscriptionGroupConfig
from mqlab.common.mix_all import broker_vip_channel
from mqlab.common.mix_all_files import string2file
from mqlab.common.topic_config import DataVersion, TopicConfig
from mqlab.remoting import fastjson
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.store.config import StorePathConfigHelper
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["SlaveSynchronize", "SYNC_ALL_FIRST_DELAY_MS", "SYNC_ALL_PERIOD_MS", "SYNC_TIMEOUT_MS"]

#: ``BrokerController#handleSlaveSynchronize``: scheduleAtFixedRate(syncAll, 1000 * 3, 1000 * 10).
SYNC_ALL_FIRST_DELAY_MS = 3_000
SYNC_ALL_PERIOD_MS = 10_000
#: ``BrokerOuterAPI#getAllTopicConfig`` and the three others: invokeSync(addr, request, 3000).
SYNC_TIMEOUT_MS = 3_000

C = "SlaveSynchronize"


class SlaveSynchronize:
    """The slave's copy of its master's topics, offsets, delay offsets and groups.

    Args:
        broker: the slave's ``BrokerController`` (its managers, store path and context).
    """

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker
        self.master_addr: str | None = None
        self._running = False  # a syncAll chain is waiting for a reply
        self._again = False  # the timer fired meanwhile: run once more when it ends
        #: ``(request code name, outcome)`` of the last chain, for inspection and tests.
        self.last_run: list[tuple[str, str]] = []

    def set_master_addr(self, master_addr: str | None) -> None:
        """Mirrors ``SlaveSynchronize#setMasterAddr``; mechanisms.md "SlaveSynchronize" step 1."""
        broker = self.broker
        if master_addr != self.master_addr and broker.tracer.enabled:
            # step 1: the registration reply names the master (or no master)
            broker.tracer.emit(
                C + ".setMasterAddr", "1", Kind.STATE, old=self.master_addr, new=master_addr,
                text=f"master address {self.master_addr} -> {master_addr}",
            )  # fmt: skip
        self.master_addr = master_addr

    def sync_all(self) -> None:
        """Run the four syncs against the master, one after another.

        Mirrors ``SlaveSynchronize#syncAll`` (broker/slave, RocketMQ 4.9.3); mechanisms.md
        "SlaveSynchronize" steps 2–6. Java's scheduler never overlaps two runs of the task:
        a run that fires while the last one still waits for the master starts when it ends.
        """
        if self._running:
            self._again = True
            return
        self._running = True
        self.last_run = []
        broker = self.broker
        if broker.tracer.enabled:
            # step 2: the 10 s timer fires
            broker.tracer.emit(
                C + ".syncAll", "2", master_addr=self.master_addr,
                text=f"syncAll from master {self.master_addr}",
            )  # fmt: skip
        self._next(0)

    # -- the chain ---------------------------------------------------------------------------------
    def _steps(self) -> list[tuple[str, str, int, Callable[[RemotingCommand, str], str]]]:
        return [
            ("3", "syncTopicConfig", RequestCode.GET_ALL_TOPIC_CONFIG, self._apply_topic_config),
            ("4", "syncConsumerOffset", RequestCode.GET_ALL_CONSUMER_OFFSET,
             self._apply_consumer_offset),
            ("5", "syncDelayOffset", RequestCode.GET_ALL_DELAY_OFFSET, self._apply_delay_offset),
            ("6", "syncSubscriptionGroupConfig", RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
             self._apply_subscription_group),
        ]  # fmt: skip

    def _next(self, i: int) -> None:
        steps = self._steps()
        if i == len(steps) or not self.broker.running:
            self._running = False
            if self._again and self.broker.running:
                self._again = False
                self.sync_all()
            return
        step, method, code, apply = steps[i]
        broker = self.broker
        tracer = broker.tracer
        master = self.master_addr  # masterAddrBak: read once per sync, as Java does
        name = RequestCode(code).name
        # each sync: only with a master address that is not this broker's own
        if master is None or master == broker.broker_addr:
            self.last_run.append((name, "skipped"))
            if tracer.enabled:
                tracer.emit(C + "." + method, step, text=f"{method}: no master address, skipped")
            self._next(i + 1)
            return

        def done(response: RemotingCommand | None, error: Exception | None) -> None:
            outcome = "failed"
            if error is None and response is not None and response.code != ResponseCode.SUCCESS:
                error = MQBrokerException(response.code, response.remark, master)
            if error is None and response is not None:
                try:
                    outcome = apply(response, master)
                except (ValueError, TypeError, KeyError, AttributeError) as e:
                    error = e
            self.last_run.append((name, outcome if error is None else "failed"))
            if error is not None and tracer.enabled:
                # Java logs "<Sync…> Exception, <masterAddr>" and goes on with the next sync.
                tracer.emit(
                    C + "." + method, step, Kind.ERROR, master_addr=master, error=str(error),
                    text=f"{method} from {master} failed: {error}",
                )  # fmt: skip
            self._next(i + 1)

        request = RemotingCommand.create_request(code, {})
        to = (
            broker_vip_channel(True, master) if code == RequestCode.GET_ALL_TOPIC_CONFIG else master
        )
        broker.ctx.invoke_async(to, request, SYNC_TIMEOUT_MS, done)

    # -- what each reply does ------------------------------------------------------------------------
    def _apply_topic_config(self, response: RemotingCommand, master: str) -> str:
        """Step 3: a different DataVersion replaces the whole topic table (``syncTopicConfig``)."""
        broker = self.broker
        tcm = broker.topic_config_manager
        body = fastjson.loads_json_body(response.body)
        version = DataVersion.from_json_dict(body.get("dataVersion") or {})
        if tcm.data_version == version:
            self._emit("syncTopicConfig", "3", "same DataVersion: topic table kept", changed=False)
            return "same"
        table = {
            str(k): TopicConfig.from_json_dict({"topicName": str(k), **v})
            for k, v in (body.get("topicConfigTable") or {}).items()
        }
        tcm.data_version.assign_new_one(version)
        tcm.topic_config_table.clear()
        tcm.topic_config_table.update(table)
        tcm.persist()
        self._emit(
            "syncTopicConfig", "3", f"topic table replaced: {len(table)} topic(s) from {master}",
            changed=True, topics=len(table), data_version=version.to_json_dict(),
        )  # fmt: skip
        return "updated"

    def _apply_consumer_offset(self, response: RemotingCommand, master: str) -> str:
        """Step 4: the master's offsets over the slave's, key by key (``putAll``)."""
        broker = self.broker
        body = fastjson.loads_json_body(response.body)
        raw = body.get("offsetTable") or {}
        com = broker.consumer_offset_manager
        overwritten: dict[str, dict[int, int]] = {}
        for key in sorted(raw):
            offsets = {int(q): int(o) for q, o in raw[key].items()}
            old = com.offset_table.get(str(key))
            if old is not None and old != offsets:
                overwritten[str(key)] = old
            com.offset_table[str(key)] = offsets
        com.persist()
        self._emit(
            "syncConsumerOffset", "4",
            f"{len(raw)} offset entr{'y' if len(raw) == 1 else 'ies'} from {master}"
            + (f", overwriting {sorted(overwritten)}" if overwritten else ""),
            entries=len(raw), overwritten=sorted(overwritten),
        )  # fmt: skip
        return "updated"

    def _apply_delay_offset(self, response: RemotingCommand, master: str) -> str:
        """Step 5: the master's delay offsets to ``config/delayOffset.json`` (file only)."""
        broker = self.broker
        if response.body is None:
            self._emit("syncDelayOffset", "5", "no delay offsets from the master")
            return "same"
        text = bytes(response.body).decode("utf-8")
        path = StorePathConfigHelper.get_delay_offset_store_path(
            broker.message_store_config.store_path_root_dir
        )
        string2file(text, path)
        self._emit("syncDelayOffset", "5", f"delayOffset.json written from {master}")
        return "updated"

    def _apply_subscription_group(self, response: RemotingCommand, master: str) -> str:
        """Step 6: a different DataVersion replaces the whole group table."""
        broker = self.broker
        sgm = broker.subscription_group_manager
        body = fastjson.loads_json_body(response.body)
        version = DataVersion.from_json_dict(body.get("dataVersion") or {})
        if sgm.data_version == version:
            self._emit(
                "syncSubscriptionGroupConfig", "6", "same DataVersion: group table kept",
                changed=False,
            )  # fmt: skip
            return "same"
        table = {
            str(k): SubscriptionGroupConfig.from_json_dict(v)
            for k, v in (body.get("subscriptionGroupTable") or {}).items()
        }
        sgm.data_version.assign_new_one(version)
        sgm.subscription_group_table.clear()
        sgm.subscription_group_table.update(table)
        sgm.persist()
        self._emit(
            "syncSubscriptionGroupConfig", "6",
            f"group table replaced: {len(table)} group(s) from {master}",
            changed=True, groups=len(table),
        )  # fmt: skip
        return "updated"

    def _emit(self, method: str, step: str, text: str, **fields: object) -> None:
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(C + "." + method, step, Kind.STATE, text=text, **fields)
