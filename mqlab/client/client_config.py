"""What every client (producer, push or pull consumer) is configured with.

Mirrors ``ClientConfig`` (client/ClientConfig.java, RocketMQ 4.9.3); docs/reference.md §8.4 and §9
(the client timings). Java reads several defaults from system properties (named in the
field comments); mqlab takes them as plain fields with Java's defaults.

What this module owns: the fields and ``build_mq_client_id``. What it must not know: the
host, the process id or the clock. Java's ``clientIP`` is the first site-local address and
``changeInstanceNameToPID`` turns the default instance name ``"DEFAULT"`` into
``<pid>#<nanoTime>``; in a simulation both would be non-deterministic, so the IP defaults to
``127.0.0.1`` and ``MQClientInstance`` replaces ``"DEFAULT"`` by its node name.
"""

from __future__ import annotations

from dataclasses import dataclass

from mqlab.common.util_all import is_blank

__all__ = ["ClientConfig", "DEFAULT_INSTANCE_NAME"]

#: ``rocketmq.client.name`` default; ``changeInstanceNameToPID`` replaces it.
DEFAULT_INSTANCE_NAME = "DEFAULT"


@dataclass(slots=True)
class ClientConfig:
    """Client-wide settings shared by every producer and consumer of one ``MQClientInstance``.

    Mirrors ``ClientConfig`` (client, RocketMQ 4.9.3); docs/reference.md §8.4.
    """

    namesrv_addr: str | None = "127.0.0.1:9876"  # ';'-separated list (Java: env NAMESRV_ADDR)
    client_ip: str = "127.0.0.1"  # Java: RemotingUtil.getLocalAddress()
    instance_name: str = DEFAULT_INSTANCE_NAME  # Java: -Drocketmq.client.name
    unit_name: str | None = None
    unit_mode: bool = False
    poll_name_server_interval: int = 30_000  # ms between route refreshes
    heartbeat_broker_interval: int = 30_000  # ms between heartbeats
    persist_consumer_offset_interval: int = 5_000  # ms between offset commits
    # ms before a push consumer pulls again after an exception: DefaultMQPushConsumerImpl's
    # constructor copies it over its own field's 3000 (DefaultMQPushConsumerImpl.java:118)
    pull_time_delay_mills_when_exception: int = 1_000
    vip_channel_enabled: bool = False  # -Dcom.rocketmq.sendMessageWithVIPChannel
    mq_client_api_timeout: int = 3_000  # ms, route / heartbeat / admin RPCs
    language: str = "JAVA"
    #: ``-Drocketmq.client.localOffsetStoreDir`` (LocalFileOffsetStore); None → Java's
    #: ``~/.rocketmq_offsets``.
    local_offset_store_dir: str | None = None

    def build_mq_client_id(self) -> str:
        """``<clientIP>@<instanceName>[@<unitName>]``.

        Mirrors ``ClientConfig#buildMQClientId`` (client, RocketMQ 4.9.3); docs/reference.md §8.4.
        """
        cid = f"{self.client_ip}@{self.instance_name}"
        if not is_blank(self.unit_name):
            cid += f"@{self.unit_name}"
        return cid

    def namesrv_addr_list(self) -> list[str]:
        """The name server addresses, in configured order (``updateNameServerAddressList``)."""
        if not self.namesrv_addr:
            return []
        return [a.strip() for a in self.namesrv_addr.split(";") if a.strip()]
