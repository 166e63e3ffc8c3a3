"""Configuration and the MixAll properties helpers behind GET/UPDATE_NAMESRV_CONFIG (318/319).

Expected values of ``string_to_properties`` were produced by ``java.util.Properties#load``
(JDK 17) on the same texts.
"""

import pytest

from mqlab.common.properties import (
    object_to_properties,
    properties_to_object,
    properties_to_string,
    string_to_properties,
)
from mqlab.namesrv import NamesrvConfig
from mqlab.namesrv.configuration import Configuration, NettyServerConfig


def test_properties_to_string_skips_null_and_escapes_nothing():
    """MixAll#properties2String: "key=value\\n" per non-null entry (mqlab: keys sorted)."""
    text = properties_to_string({"b": "x=y:z", "a": "1", "n": None})
    assert text == "a=1\nb=x=y:z\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "a=1\nb = 2\n  c:3\nd 4\n#x=y\n!z=w\ne=\\\n   cont\nf=\\u0041\\t\\q\ng\nh==v\n"
            "i =:v\nk\\ ey=v\n",
            {
                "a": "1",
                "b": "2",
                "c": "3",
                "d": "4",
                "e": "cont",
                "f": "A\tq",
                "g": "",
                "h": "=v",
                "i": ":v",
                "k ey": "v",
            },
        ),  # fmt: skip
        ("a=1\fb=2\r\nc=3\rd=4\x85e=5", {"a": "1\fb=2", "c": "3", "d": "4\xc2\x85e=5"}),
        ("productEnvName=é", {"productEnvName": "Ã©"}),  # UTF-8 bytes read as ISO-8859-1
        ("\\", {"": ""}),
        ("\\\n", {"": ""}),
        ("\\\r\n", {}),
        ("\\\n!c\n=v", {"": "v"}),
        ("a=1\na=2", {"a": "2"}),
    ],
)
def test_string_to_properties_as_java_properties_load(text, expected):
    assert string_to_properties(text) == expected


@pytest.mark.parametrize("text", ["x=\\u00zz", "x=\\u12"])
def test_string_to_properties_malformed_unicode_escape_is_none(text):
    """Properties#load throws "Malformed \\uxxxx encoding."; string2Properties returns null."""
    assert string_to_properties(text) is None


def test_object_to_properties_java_names_and_defaults():
    """MixAll#object2Properties: Java field names, toString values, null fields left out."""
    assert object_to_properties(NamesrvConfig()) == {
        "productEnvName": "center",
        "clusterTest": "false",
        "orderMessageEnable": "false",
    }
    assert object_to_properties(NettyServerConfig()) == {
        "listenPort": "9876", "serverWorkerThreads": "8", "serverCallbackExecutorThreads": "0",
        "serverSelectorThreads": "3", "serverOnewaySemaphoreValue": "256",
        "serverAsyncSemaphoreValue": "64", "serverChannelMaxIdleTimeSeconds": "120",
        "serverSocketSndBufSize": "0", "serverSocketRcvBufSize": "0",
        "writeBufferHighWaterMark": "0", "writeBufferLowWaterMark": "0",
        "serverSocketBacklog": "1024", "serverPooledByteBufAllocatorEnable": "true",
        "useEpollNativeSelector": "false",
    }  # fmt: skip


def test_properties_to_object_parses_like_java():
    """MixAll#properties2Object: Integer.parseInt (failures ignored), Boolean.parseBoolean."""
    cfg = NettyServerConfig()
    props = {
        "listenPort": "+9877", "serverWorkerThreads": " 9", "serverSelectorThreads": "2147483648",
        "serverSocketBacklog": "1_000", "useEpollNativeSelector": "TRUE",
        "serverPooledByteBufAllocatorEnable": "yes",
    }  # fmt: skip
    properties_to_object(props, cfg)
    assert (cfg.listen_port, cfg.server_worker_threads, cfg.server_selector_threads) == (9877, 8, 3)
    assert cfg.server_socket_backlog == 1024
    assert (cfg.use_epoll_native_selector, cfg.server_pooled_byte_buf_allocator_enable) == (
        True,
        False,
    )


def test_configuration_update_merges_existing_keys_and_sets_fields():
    """Configuration#update: mergeIfExist on allConfigs, properties2Object on each object;
    getAllConfigsFormatString re-reads the objects, so an unparsable int shows the old value."""
    ns, netty = NamesrvConfig(), NettyServerConfig()
    conf = Configuration(ns, netty)
    conf.update({"nope": "1", "listenPort": "x", "rocketmqHome": "/opt/rmq", "clusterTest": "true"})
    assert (ns.rocketmq_home, ns.cluster_test, netty.listen_port) == ("/opt/rmq", True, 9876)
    assert "nope" not in conf.all_configs and conf.all_configs["listenPort"] == "x"
    text = conf.get_all_configs_format_string()
    assert "clusterTest=true\norderMessageEnable=false\n" in text
    assert "\nlistenPort=9876\n" in text and "nope" not in text
    # rocketmqHome was null: a new key now, appended to its hash bin
    assert text.endswith("useEpollNativeSelector=false\nrocketmqHome=/opt/rmq\n"
                         "serverPooledByteBufAllocatorEnable=true\n")  # fmt: skip
