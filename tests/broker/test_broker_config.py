"""Tests for mqlab.broker.config: BrokerConfig defaults (docs/reference.md §8.1), the broker.properties
loader, SubscriptionGroupConfig (docs/reference.md §8.3, §7.4)."""

from __future__ import annotations

import pytest

from mqlab.broker.config import (
    BrokerConfig,
    SubscriptionGroupConfig,
    from_properties,
    parse_properties,
)
from mqlab.remoting import fastjson

# docs/reference.md §8.1, plus the documented mqlab choices for host-derived values.
DEFAULTS = {
    "broker_cluster_name": "DefaultCluster",
    "broker_name": "broker-a",
    "broker_id": 0,
    "broker_ip1": "127.0.0.1",
    "listen_port": 10911,
    "name_server_addr": "127.0.0.1:9876",
    "broker_permission": 6,
    "default_topic_queue_nums": 8,
    "auto_create_topic_enable": True,
    "cluster_topic_enable": True,
    "broker_topic_enable": True,
    "auto_create_subscription_group": True,
    "trace_topic_enable": False,
    "msg_trace_topic_name": "RMQ_SYS_TRACE_TOPIC",
    "flush_consumer_offset_interval": 5000,
    "flush_consumer_offset_history_interval": 60000,
    "register_name_server_period": 30000,
    "register_broker_timeout_mills": 6000,
    "long_polling_enable": True,
    "short_polling_time_mills": 1000,
    "notify_consumer_ids_changed_enable": True,
    "transfer_msg_by_heap": True,
    "slave_read_enable": False,
    "filter_support_retry": False,
    "enable_property_filter": False,
    "reject_transaction_message": False,
    "start_accept_send_request_time_stamp": 0,
    "trace_on": True,
    "region_id": "DefaultRegion",
    "broker_fast_failure_enable": True,
    "wait_time_mills_in_send_queue": 200,
    "wait_time_mills_in_pull_queue": 5000,
    "wait_time_mills_in_heartbeat_queue": 31000,
    "wait_time_mills_in_transaction_queue": 3000,
    "disable_consume_if_consumer_read_slowly": False,
    "consumer_fallbehind_threshold": 17179869184,
    "max_delay_time": 40,
    "transaction_time_out": 6000,
    "transaction_check_max": 15,
    "transaction_check_interval": 60000,
    "acl_enable": False,
    "compressed_register": False,
    "force_register": True,
}


@pytest.mark.parametrize(("field", "value"), sorted(DEFAULTS.items()))
def test_broker_config_default(field, value):
    """Each BrokerConfig default is RocketMQ 4.9.3's (docs/reference.md §8.1)."""
    assert getattr(BrokerConfig(), field) == value


def test_broker_addr_is_ip1_and_listen_port():
    """broker_addr = brokerIP1:listenPort = 127.0.0.1:10911 by default."""
    assert BrokerConfig().broker_addr == "127.0.0.1:10911"
    assert BrokerConfig(broker_ip1="10.0.0.1", listen_port=20911).broker_addr == "10.0.0.1:20911"


def test_namesrv_addr_alias():
    """namesrv_addr (RocketMQ's spelling) reads and writes name_server_addr."""
    bc = BrokerConfig()
    bc.namesrv_addr = "10.0.0.9:9876"
    assert bc.name_server_addr == "10.0.0.9:9876"
    assert bc.namesrv_addr == "10.0.0.9:9876"


BROKER_CONF = """\
# RocketMQ distribution conf/broker.conf, plus a few typed keys
brokerClusterName = DefaultCluster
brokerName = broker-b
brokerId = 0
deleteWhen = 04
fileReservedTime = 48
brokerRole = ASYNC_MASTER
flushDiskType = ASYNC_FLUSH
brokerIP1=192.168.0.7
namesrvAddr:10.0.0.1:9876;10.0.0.2:9876
listenPort 30911
autoCreateTopicEnable = FALSE
shortPollingTimeMills = 500
! a bang comment
defaultTopicQueueNums = \\
    4
"""
STORE_KEYS = ("deleteWhen", "fileReservedTime", "brokerRole", "flushDiskType")


def test_from_properties_reads_typed_values():
    """broker.conf keys map to typed fields: brokerIP1, namesrvAddr, listenPort, booleans, ints."""
    bc = from_properties(BROKER_CONF, ignore_keys=STORE_KEYS)
    assert bc.broker_name == "broker-b"
    assert bc.broker_ip1 == "192.168.0.7"
    assert bc.name_server_addr == "10.0.0.1:9876;10.0.0.2:9876"
    assert bc.listen_port == 30911
    assert bc.auto_create_topic_enable is False
    assert bc.short_polling_time_mills == 500
    assert bc.default_topic_queue_nums == 4
    assert bc.broker_addr == "192.168.0.7:30911"
    assert bc.broker_permission == 6  # untouched default


def test_from_properties_unknown_key_names_it():
    """A key that is no BrokerConfig field (and not ignored) raises ValueError naming it."""
    with pytest.raises(ValueError, match="deleteWhen"):
        BrokerConfig.from_properties(BROKER_CONF)
    with pytest.raises(ValueError, match="brokerNmae"):
        BrokerConfig.from_properties("brokerNmae=x\n")


def test_from_properties_bad_values_name_the_key():
    """Non-integer and non-boolean values raise ValueError naming the key."""
    with pytest.raises(ValueError, match="listenPort"):
        BrokerConfig.from_properties("listenPort=abc")
    with pytest.raises(ValueError, match="longPollingEnable"):
        BrokerConfig.from_properties("longPollingEnable=yes")


def test_from_properties_every_field_has_a_key():
    """Every field is settable through its Java property name (camelCase, brokerIP1/2, namesrvAddr)."""
    text = (
        "rocketmqHome=/opt/rmq\nbrokerIP2=10.1.1.1\nisolateLogEnable=true\nmessageStorePlugIn=p\n"
    )
    bc = BrokerConfig.from_properties(text)
    assert (bc.rocketmq_home, bc.broker_ip2, bc.isolate_log_enable, bc.message_store_plug_in) == (
        "/opt/rmq",
        "10.1.1.1",
        True,
        "p",
    )


def test_parse_properties_syntax():
    """Java Properties syntax: comments, = : and space separators, continuation, escapes."""
    text = "# c\n\n a = 1 \nb:2\nc 3\nd=x\\\n   y\ne=\\u0041\\tB\nf\n"
    assert parse_properties(text) == {
        "a": "1 ",
        "b": "2",
        "c": "3",
        "d": "xy",
        "e": "A\tB",
        "f": "",
    }


def test_parse_properties_ends_lines_only_at_cr_and_lf():
    """Properties#load ends a line at \\n, \\r or \\r\\n only: U+0085 and form feed are text
    (str.splitlines would split there); a malformed \\uXXXX is refused."""
    assert parse_properties("a=x\x85y\rb=1\r\nc=\x0cz") == {"a": "x\x85y", "b": "1", "c": "z"}
    with pytest.raises(ValueError, match="Malformed"):
        parse_properties("a=\\u12")


def test_subscription_group_config_defaults():
    """consumeEnable/FromMin/Broadcast true, retryQueueNums 1, retryMaxTimes 16, brokerId 0,
    whichBrokerWhenConsumeSlowly 1, notifyConsumerIdsChangedEnable true (docs/reference.md §8.3)."""
    c = SubscriptionGroupConfig(group_name="g")
    assert (c.consume_enable, c.consume_from_min_enable, c.consume_broadcast_enable) == (
        True,
        True,
        True,
    )
    assert (c.retry_queue_nums, c.retry_max_times, c.broker_id) == (1, 16, 0)
    assert (c.which_broker_when_consume_slowly, c.notify_consumer_ids_changed_enable) == (1, True)


def test_subscription_group_config_json_shape():
    """Bean JSON has sorted camelCase keys exactly as subscriptionGroup.json (docs/reference.md §7.4)."""
    text = fastjson.dumps(SubscriptionGroupConfig(group_name="group1"))
    assert text == (
        '{"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,'
        '"consumeFromMinEnable":true,"groupName":"group1","notifyConsumerIdsChangedEnable":true,'
        '"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}'
    )
    back = SubscriptionGroupConfig.from_json_dict(fastjson.loads(text))
    assert back == SubscriptionGroupConfig(group_name="group1")


def test_subscription_group_config_json_omits_null_group_and_keeps_unknown_defaults():
    """groupName null is omitted (fastjson); absent keys read back as defaults."""
    assert "groupName" not in SubscriptionGroupConfig().to_json_dict()
    c = SubscriptionGroupConfig.from_json_dict({"groupName": "g", "retryMaxTimes": 3, "x": 1})
    assert (c.group_name, c.retry_max_times, c.retry_queue_nums) == ("g", 3, 1)


def test_configuration_keeps_the_values_read_at_registration(tmp_path):
    """``Configuration#registerConfig`` reads each object's values when it registers them:
    a field changed on the object afterwards is not in ``allConfigs`` (UPDATE_BROKER_CONFIG's
    merge sees the registered values), while ``getAllConfigsFormatString`` reads the objects
    again (``getAllConfigsInternal``)."""
    from mqlab.broker.broker_configuration import BrokerConfiguration, NettyClientConfig
    from mqlab.namesrv.configuration import NettyServerConfig
    from mqlab.store.config import MessageStoreConfig

    cfg = BrokerConfig()
    conf = BrokerConfiguration(
        cfg, NettyServerConfig(listen_port=10911), NettyClientConfig(),
        MessageStoreConfig(store_path_root_dir=str(tmp_path)),
    )  # fmt: skip
    cfg.broker_permission = 4
    conf.unmodelled["bitMapLengthConsumeQueueExt"] = "1"
    assert conf.all_configs.get("brokerPermission") == "6"
    assert conf.all_configs.get("bitMapLengthConsumeQueueExt") == "112"  # 16 consumers, 20 %
    assert conf.all_configs.get("storePathCommitLog") == str(tmp_path / "commitlog")
    assert "brokerPermission=4\n" in conf.get_all_configs_format_string()
