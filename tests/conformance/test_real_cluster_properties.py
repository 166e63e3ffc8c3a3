"""Broker properties reach the real 4.9.3 broker: ``RealCluster(workdir, {key: value})`` applies
broker.conf keys to its config beans, as BrokerStartup does with ``-c``.

Mirrors no RocketMQ class: checks conformance/java's runner through the wire.
"""

from __future__ import annotations

import time

import pytest

from mqlab.conformance.real_cluster import RealCluster
from mqlab.conformance.wire import call_sync
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand

pytestmark = pytest.mark.conformance


@pytest.fixture(scope="module")
def real_cluster_properties() -> dict[str, str]:
    return {
        "autoCreateTopicEnable": "false",
        "enablePropertyFilter": "true",
        "messageDelayLevel": "1s 2s 3s",
    }


def test_get_broker_config_shows_the_properties(real_cluster: RealCluster) -> None:
    """GET_BROKER_CONFIG (26): the body (java.util.Properties text) holds our values, and the
    ports, address and store paths the runner always sets."""
    resp = call_sync(
        real_cluster.broker_addr, RemotingCommand.create_request(RequestCode.GET_BROKER_CONFIG)
    )
    assert resp.code == 0
    config = dict(line.split("=", 1) for line in resp.body.decode().splitlines() if "=" in line)
    assert config["autoCreateTopicEnable"] == "false"
    assert config["enablePropertyFilter"] == "true"
    assert config["messageDelayLevel"] == "1s 2s 3s"
    assert config["brokerIP1"] == "127.0.0.1"
    assert config["namesrvAddr"] == real_cluster.namesrv_addr
    assert config["listenPort"] == real_cluster.broker_addr.rsplit(":", 1)[1]
    assert config["haListenPort"] == str(real_cluster.ha_port)
    assert config["storePathCommitLog"] == str(real_cluster.commitlog_dir)
    assert config["mappedFileSizeCommitLog"] == str(16 * 1024 * 1024)


def test_send_to_a_new_topic_without_auto_creation_is_topic_not_exist(
    real_cluster: RealCluster,
) -> None:
    """autoCreateTopicEnable=false: no TBW102 to copy, so a send to a new topic answers
    TOPIC_NOT_EXIST (17) with 4.9.3's remark."""
    ext = {
        "a": "p", "b": "NoSuchTopic", "c": "TBW102", "d": "4", "e": "0", "f": "0",
        "g": str(int(time.time() * 1000)), "h": "0", "i": "", "j": "0", "k": "false",
        "m": "false",
    }  # fmt: skip
    resp = call_sync(
        real_cluster.broker_addr,
        RemotingCommand.create_request(RequestCode.SEND_MESSAGE_V2, ext, b"x"),
    )
    assert resp.code == 17
    assert resp.remark.startswith("topic[NoSuchTopic] not exist, apply first please!")
