"""The two clusters a conformance run talks to: the real 4.9.3 one and ``mqlab serve``.

A side is anything with a name server address, a broker address and a store directory
(:class:`Side`). :class:`MqlabSide` runs ``mqlab serve`` in this process on its own free
loopback ports; :class:`RealSide` runs the real name server and broker from the Maven
jars (``mqlab.conformance.real_cluster``). Both get the SAME broker properties
(:data:`BROKER_PROPERTIES`), so the only differences left are the ones the
normalization rules name.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Protocol

__all__ = ["Side", "MqlabSide", "RealSide", "BROKER_PROPERTIES", "DELAY_LEVELS"]

#: Level n = n seconds, so delay-level and retry scenarios finish quickly.
DELAY_LEVELS = " ".join(f"{n}s" for n in range(1, 19))

#: broker.properties given to both brokers (besides ports, names and store paths).
BROKER_PROPERTIES: dict[str, str] = {
    "enablePropertyFilter": "true",
    "messageDelayLevel": DELAY_LEVELS,
    # small files: an 8 MiB commit-log file (more than maxMessageSize, 4 MiB, so the
    # oversized-body check is reached), 1,500-unit consume-queue files, a tiny index
    "mappedFileSizeCommitLog": str(8 * 1024 * 1024),
    "mappedFileSizeConsumeQueue": str(1500 * 20),
    "maxHashSlotNum": "1000",
    "maxIndexNum": "4000",
    # relaxed guards: results must not depend on this machine's disk or load
    "diskMaxUsedSpaceRatio": "95",
    "osPageCacheBusyTimeOutMills": "10000",
    "brokerFastFailureEnable": "false",
    # the real runner's own default (RealCluster.java); given to both so that
    # GET_BROKER_CONFIG compares this key too
    "waitTimeMillsInSendQueue": "3000",
    # no transaction check during a run: at its default 60 s the check service would
    # discard or re-put pending half messages (the send group leaves one) at a moment that
    # differs by side; END_TRANSACTION is compared request by request, the check-back by
    # the interop scenarios
    "transactionCheckInterval": str(30 * 60 * 1000),
    # Netty keys of the same broker.conf (BrokerStartup reads them into NettyServerConfig and
    # NettyClientConfig): GET_BROKER_CONFIG compares them; a longer idle limit than 120 s
    "serverWorkerThreads": "4",
    "clientWorkerThreads": "2",
    "serverChannelMaxIdleTimeSeconds": "300",
}


#: What both sides' slaves (the ``slave`` group) get of :data:`BROKER_PROPERTIES`: the store's
#: file sizes must be the master's; the rest as the slave group's own.
SLAVE_KEYS = ("mappedFileSizeCommitLog", "mappedFileSizeConsumeQueue", "maxHashSlotNum",
              "maxIndexNum", "diskMaxUsedSpaceRatio", "osPageCacheBusyTimeOutMills",
              "brokerFastFailureEnable", "waitTimeMillsInSendQueue")  # fmt: skip


#: What both sides' ACL brokers (the ``acl`` group) get of :data:`BROKER_PROPERTIES`, besides
#: ``aclEnable=true``: the store's sizes and the relaxed guards.
ACL_KEYS = SLAVE_KEYS
#: the ACL broker's name on both sides
ACL_BROKER = "broker-acl"


def acl_properties() -> dict[str, str]:
    return {**{k: BROKER_PROPERTIES[k] for k in ACL_KEYS}, "aclEnable": "true"}


def slave_properties() -> dict[str, str]:
    from mqlab.conformance.scenarios.slave import SLAVE_PROPERTIES

    return {**{k: BROKER_PROPERTIES[k] for k in SLAVE_KEYS}, **SLAVE_PROPERTIES}


class Side(Protocol):
    """What the harness needs of a cluster."""

    name: str
    namesrv_addr: str
    broker_addr: str
    store_dir: Path
    #: a slave of broker-a between start_slave() and stop_slave(), else ""
    slave_addr: str
    #: a broker with ACL on between start_acl_broker() and stop_acl_broker(), else ""
    acl_addr: str
    #: the name server that routes to it
    acl_namesrv_addr: str
    #: broker-a's VIP channel (listenPort - 2, BrokerController's fastRemotingServer)
    broker_vip_addr: str

    def start(self) -> None: ...
    def flush(self) -> None: ...
    def stop(self) -> None: ...
    def start_slave(self) -> None: ...
    def stop_slave(self) -> None: ...
    def start_acl_broker(self) -> None: ...
    def stop_acl_broker(self) -> None: ...
    def write_acl_file(self, text: str) -> None: ...
    def record_acl_state(self, label: str) -> None: ...


class MqlabSide:
    """``mqlab serve`` (one name server, one broker ``broker-a``) on an event-loop thread."""

    def __init__(
        self, name: str = "mqlab", properties: dict[str, str] | None = None,
        workdir: Path | None = None,
    ) -> None:  # fmt: skip
        self.name = name
        self.properties = dict(BROKER_PROPERTIES if properties is None else properties)
        self._own_dir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix=f"mqlab-conf-{name}-"))
        self._thread = None
        self.namesrv_addr = ""
        self.broker_addr = ""
        self.broker_vip_addr = ""
        self.store_dir = self.workdir / "broker-a"
        self.slave_addr = ""
        self.acl_addr = ""
        #: the name server the ACL broker registers with (its own serve's)
        self.acl_namesrv_addr = ""
        self.acl_home = self.workdir / "acl-home"
        self._acl_thread = None
        #: label -> the ACL broker's state (``record_acl_state``)
        self.acl_states: dict[str, dict] = {}

    def start(self) -> None:
        from mqlab.serve import ServeConfig, ServerThread

        props = dict(self.properties)
        delay = props.pop("messageDelayLevel", None)
        cfg = ServeConfig(
            host="127.0.0.1", namesrv_port=0, broker_port=0, store=str(self.workdir),
            delay_levels=delay, trace_level="off", run_id=f"conformance-{self.name}",
            properties=props,
        )  # fmt: skip
        self._thread = ServerThread(cfg)
        self.namesrv_addr = self._thread.namesrv_addr
        self.broker_addr = self._thread.call(lambda s: s.broker().broker_addr)
        self.broker_vip_addr = self._thread.call(lambda s: s.broker().vip_addr)
        self.store_dir = Path(self._thread.call(
            lambda s: s.broker().message_store_config.store_path_root_dir
        ))  # fmt: skip

    def flush(self) -> None:
        if self._thread is not None:
            self._thread.call(lambda s: s.broker().message_store.flush())

    def start_slave(self) -> None:
        """An mqlab slave of broker-a (brokerId 1, SLAVE) on the serve's driver, registered
        with its name server; it learns the master's HA address from the registration."""
        from mqlab.conformance.replication import start_broker_node

        assert self._thread is not None, "start() first"
        server = self._thread.server
        broker = self._thread._loop.submit(start_broker_node(
            server.driver, "slave-broker-a", "broker-a", self.namesrv_addr,
            self.workdir / "slave-broker-a", slave=True, properties=slave_properties(),
        ))  # fmt: skip
        self.slave_addr = broker.broker_addr

    def stop_slave(self) -> None:
        if self._thread is not None and self.slave_addr:
            server = self._thread.server
            self._thread._loop.submit(server.driver.stop_node("slave-broker-a"))
        self.slave_addr = ""

    def start_acl_broker(self) -> None:
        """An mqlab broker with ACL on (``aclEnable=true``), reading
        ``<workdir>/acl-home/conf/plain_acl.yml`` (the group's accounts), served with a
        name server of its own; steps ``to="acl"`` go to it."""
        from mqlab.conformance.scenarios.acl_accounts import write_plain_acl
        from mqlab.serve import ServeConfig, ServerThread

        write_plain_acl(self.acl_home)
        cfg = ServeConfig(
            host="127.0.0.1", namesrv_port=0, broker_port=0, store=str(self.workdir / "acl"),
            trace_level="off", run_id=f"conformance-{self.name}-acl",
            properties={**acl_properties(), "brokerName": ACL_BROKER},
            rocketmq_home=str(self.acl_home),
        )  # fmt: skip
        self._acl_thread = ServerThread(cfg)
        self.acl_addr = self._acl_thread.call(lambda s: s.broker(ACL_BROKER).broker_addr)
        self.acl_namesrv_addr = self._acl_thread.namesrv_addr

    def stop_acl_broker(self) -> None:
        """Stop it and remove its store and home: the next start begins afresh."""
        if self._acl_thread is not None:
            self._acl_thread.stop()
            self._acl_thread = None
            shutil.rmtree(self.workdir / "acl", ignore_errors=True)
            shutil.rmtree(self.acl_home, ignore_errors=True)
        self.acl_addr = self.acl_namesrv_addr = ""

    def write_acl_file(self, text: str) -> None:
        from mqlab.conformance.scenarios.acl_accounts import write_plain_acl

        write_plain_acl(self.acl_home, text)

    def record_acl_state(self, label: str) -> None:
        """Keep the ACL broker's state as ``acl_states[label]``
        (:func:`~mqlab.conformance.scenarios.acl_refusals.acl_state`)."""
        from mqlab.conformance.scenarios.acl_refusals import acl_state

        self.acl_states[label] = acl_state(self.acl_addr, self.acl_home)

    def stop(self) -> None:
        self.stop_acl_broker()
        if self._thread is not None:
            self._thread.stop()
            self._thread = None
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)


class RealSide:
    """The real RocketMQ 4.9.3 name server and broker (``RealCluster``)."""

    def __init__(self, properties: dict[str, str] | None = None) -> None:
        self.name = "real"
        self.properties = dict(BROKER_PROPERTIES if properties is None else properties)
        self.workdir = Path(tempfile.mkdtemp(prefix="mqlab-conf-real-"))
        self.cluster = None
        self.namesrv_addr = ""
        self.broker_addr = ""
        self.broker_vip_addr = ""
        self.store_dir = self.workdir
        self.slave_addr = ""
        self.acl_addr = ""
        self.acl_home = self.workdir / "acl-home"
        #: label -> the ACL broker's state (``record_acl_state``)
        self.acl_states: dict[str, dict] = {}

    @property
    def acl_namesrv_addr(self) -> str:
        """The name server the ACL broker registers with: this cluster's."""
        return self.namesrv_addr if self.acl_addr else ""

    def start(self) -> None:
        from mqlab.conformance.real_cluster import RealCluster

        self.cluster = RealCluster(self.workdir, self.properties)
        self.cluster.start()
        self.namesrv_addr = self.cluster.namesrv_addr
        self.broker_addr = self.cluster.broker_addr
        self.broker_vip_addr = self.cluster.broker_vip_addr
        self.store_dir = Path(self.cluster.store_dir)

    def flush(self) -> None:
        """The real broker's files are memory-mapped: readers see puts at once."""

    def log_errors(self, limit: int = 40) -> list[str]:
        """The last ``limit`` ERROR lines the real JVM logged so far (our logback file sends
        WARN and above to ``real-cluster.out``): why the real broker answered as it did, kept
        before :meth:`stop` removes the work directory."""
        if self.cluster is None:
            return []
        errors = [ln for ln in self.cluster.output().splitlines() if " ERROR " in ln]
        return errors[-limit:]

    def start_slave(self) -> None:
        """A real 4.9.3 slave of broker-a in the real cluster's JVM."""
        assert self.cluster is not None, "start() first"
        self.slave_addr = self.cluster.start_slave("broker-a", slave_properties()).broker_addr

    def stop_slave(self) -> None:
        if self.cluster is not None and self.slave_addr:
            self.cluster.stop_slave("broker-a")
        self.slave_addr = ""

    def start_acl_broker(self) -> None:
        """A real 4.9.3 broker with ACL on, in the real cluster's JVM, reading
        ``<workdir>/acl-home/conf/plain_acl.yml`` (``rocketmqHome``, see
        ``RealCluster.start_broker``)."""
        from mqlab.conformance.scenarios.acl_accounts import write_plain_acl

        assert self.cluster is not None, "start() first"
        write_plain_acl(self.acl_home)
        props = {**acl_properties(), "rocketmqHome": str(self.acl_home)}
        self.acl_addr = self.cluster.start_broker(ACL_BROKER, props).broker_addr

    def stop_acl_broker(self) -> None:
        """Stop it and remove its store and home: the next start begins afresh."""
        if self.cluster is not None and self.acl_addr:
            store = self.cluster.brokers[ACL_BROKER].store_dir
            self.cluster.stop_broker(ACL_BROKER)
            shutil.rmtree(store, ignore_errors=True)
            shutil.rmtree(self.acl_home, ignore_errors=True)
        self.acl_addr = ""

    def write_acl_file(self, text: str) -> None:
        from mqlab.conformance.scenarios.acl_accounts import write_plain_acl

        write_plain_acl(self.acl_home, text)

    def record_acl_state(self, label: str) -> None:
        """Keep the ACL broker's state as ``acl_states[label]``
        (:func:`~mqlab.conformance.scenarios.acl_refusals.acl_state`)."""
        from mqlab.conformance.scenarios.acl_refusals import acl_state

        self.acl_states[label] = acl_state(self.acl_addr, self.acl_home)

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
        shutil.rmtree(self.workdir, ignore_errors=True)
