"""Send path: SEND_MESSAGE / _V2 / BATCH, msgCheck, topic auto-creation, %RETRY%, limits."""

from __future__ import annotations

import zlib

from mqlab.conformance.scenario import Scenario, Step, batch, props
from mqlab.conformance.scenarios.common import (
    SETTLE_MS,
    broker_config,
    delivered_after,
    route,
    send_batch,
    send_v1,
    send_v2,
    uniq,
)

__all__ = ["SCENARIOS"]

T = "cf_send_basic"

SCENARIOS = [
    Scenario(
        "send",
        "send-three-codes",
        [
            send_v1(
                "v1_autocreate",
                T,
                0,
                b"first",
                n=1,
                keys="k1",
                note="SEND_MESSAGE (long header names) to a new topic: created from TBW102",
            ),
            route("route_4", T, wait_ms=400, note="4 queues requested: read/write 4, perm 6"),
            send_v2("v2_q1", T, 1, b"second", n=2, expect=0),
            send_v2("v2_q3_no_tags", T, 3, b"third", n=3, tags=None),
            send_v2("v2_q0_again", T, 0, b"fourth", n=4, keys="a b c"),
            send_batch(
                "batch_q2",
                T,
                2,
                batch(
                    (T, b"b1", {"UNIQ_KEY": uniq(11), "TAGS": "TagB"}),
                    (T, b"b2", {"UNIQ_KEY": uniq(12), "KEYS": "kb2"}),
                    (T, b"b3", {"UNIQ_KEY": uniq(13)}),
                ),
                note="three messages in one batch: offsetMsgId lists three ids",
            ),
            send_v2("v2_q4_illegal", T, 4, n=5, note="queueId 4 >= max(read, write) = 4"),
            send_v2("v2_q99_illegal", T, 99, n=6),
            send_v1("v1_q4_illegal", T, 4, n=7),
            send_v2(
                "v2_big_queue_nums",
                "cf_send_16q",
                0,
                n=8,
                queue_nums=16,
                note="defaultTopicQueueNums 16 is capped by TBW102's 8 queues",
            ),
            route("route_8", "cf_send_16q", wait_ms=400),
            send_v2("v2_one_queue", "cf_send_1q", 0, n=9, queue_nums=1),
            route("route_1", "cf_send_1q", wait_ms=400),
            send_v2("v2_1q_q1", "cf_send_1q", 1, n=10),
            send_v2(
                "v2_sysflag_unitmode",
                "cf_send_unit",
                0,
                n=14,
                k="true",
                note="unitMode: the auto-created topic gets topicSysFlag unit",
            ),
            route("route_unit", "cf_send_unit", wait_ms=400),
            Step(
                "topic_configs",
                "GET_ALL_TOPIC_CONFIG",
                {},
                note="every topic the broker holds: queues, perm, sys flag, data version",
            ),  # fmt: skip
        ],
        doc="The three send codes, auto-creation from TBW102 and the queue-id range.",
    ),
    Scenario(
        "send",
        "msg-check",
        [
            send_v2("blank_topic", "", n=20),
            send_v2("illegal_chars", "bad topic!", n=21),
            send_v2("topic_128", "t" * 128, n=22),
            send_v2("topic_127", "t" * 127, n=23, note="127 characters is the longest allowed"),
            send_v2("schedule_topic", "SCHEDULE_TOPIC_XXXX", n=24),
            send_v2("trans_half", "RMQ_SYS_TRANS_HALF_TOPIC", n=25),
            send_v2("trans_op_half", "RMQ_SYS_TRANS_OP_HALF_TOPIC", n=26),
            send_v2("trans_check_max", "TRANS_CHECK_MAX_TIME_TOPIC", n=27),
            send_v2("self_test", "SELF_TEST_TOPIC", n=28),
            send_v2("offset_moved", "OFFSET_MOVED_EVENT", n=29),
            send_v2("tbw102", "TBW102", n=30),
            send_v2("benchmark", "BenchmarkTest", n=31),
            send_v2("cluster_topic", "DefaultCluster", n=32),
            send_v2("broker_topic", "broker-a", n=33),
            send_v2(
                "no_default_topic",
                "cf_send_nodefault",
                n=34,
                default_topic="NoSuchDefault",
                note="the default topic does not exist: TOPIC_NOT_EXIST",
            ),
            send_v2("dlq_send", "%DLQ%cf_group_x", n=35),
            send_v2(
                "props_too_long",
                "cf_send_limits",
                0,
                n=36,
                extra={"big": "x" * 32800},
                note="properties over 32767 bytes",
            ),
            send_v2(
                "props_at_limit",
                "cf_send_limits",
                0,
                n=37,
                raw_props=props(UNIQ_KEY=uniq(37), WAIT="true", big="y" * (32767 - 60)),
            ),
            send_v2(
                "body_too_big",
                "cf_send_limits",
                0,
                b"z" * (4 * 1024 * 1024 + 1),
                n=38,
                note="body over maxMessageSize (4 MiB)",
            ),
            send_v2("empty_body", "cf_send_limits", 0, b"", n=39),
            send_v2("wait_false", "cf_send_limits", 1, n=40, extra={"WAIT": "false"}),
            send_v2(
                "delay_3",
                "cf_send_limits",
                2,
                n=41,
                extra={"DELAY": "3"},
                note="delay level 3: stored in SCHEDULE_TOPIC_XXXX queue 2",
            ),
            send_v2("bad_sysflag_compressed", "cf_send_limits", 3, b"not-zlib", n=43, f="1"),
            Step(
                "delay_3_delivered",
                "GET_MAX_OFFSET",
                {"topic": "cf_send_limits", "queueId": "2"},
                wait_ms=delivered_after(3),
                note="the level-3 message is back in its topic (queue 2, offset 0)",
            ),
        ],
        doc="Every msgCheck failure, system topics, size limits, WAIT and delay levels.",
    ),
    Scenario(
        "send",
        "retry-topic",
        [
            send_v2(
                "retry_autocreate",
                "%RETRY%cf_group_r",
                0,
                n=50,
                note="a %RETRY% topic is created from TBW102 like any other",
            ),
            route("route_retry", "%RETRY%cf_group_r", wait_ms=400),
            send_v2("retry_q1", "%RETRY%cf_group_r", 1, n=51),
            send_v2("retry_reconsume_1", "%RETRY%cf_group_r", 0, n=52, j="1", l="3"),
            send_v2(
                "retry_to_dlq",
                "%RETRY%cf_group_r",
                0,
                n=53,
                j="3",
                l="3",
                note="reconsumeTimes >= maxReconsumeTimes: to %DLQ%",
            ),
            send_v2(
                "retry_default_max",
                "%RETRY%cf_group_r",
                0,
                n=54,
                j="16",
                note="no maxReconsumeTimes: the group's retryMaxTimes 16",
            ),
            route("route_dlq", "%DLQ%cf_group_r", wait_ms=400),
        ],
        doc="%RETRY% creation, its queue-id range, and the DLQ switch on reconsumeTimes.",
    ),
    Scenario(
        "send",
        "auto-create-off",
        [
            broker_config("auto_off", autoCreateTopicEnable="false"),
            send_v2("new_topic_refused", "cf_send_noauto", 0, n=60),
            send_v1("new_topic_refused_v1", "cf_send_noauto", 0, n=61),
            send_v2(
                "retry_still_created",
                "%RETRY%cf_group_noauto",
                0,
                n=62,
                note="createTopicInSendMessageBackMethod: 1 queue, perm 6",
            ),
            route("route_retry_noauto", "%RETRY%cf_group_noauto", wait_ms=400),
            send_v2("retry_q1_refused", "%RETRY%cf_group_noauto", 1, n=63),
            send_v2("existing_ok", T, 0, n=64),
            broker_config("auto_on", autoCreateTopicEnable="true"),
            send_v2(
                "new_topic_still_refused",
                "cf_send_noauto",
                0,
                n=65,
                expect=17,
                note="TBW102 lost PERM_INHERIT for good: while autoCreateTopicEnable was "
                "off, createTopicInSendMessageMethod set its perm to 6",
            ),  # fmt: skip
            Step(
                "topic_configs_after", "GET_ALL_TOPIC_CONFIG", {}, note="TBW102 now has perm 6"
            ),  # fmt: skip
        ],
        doc="autoCreateTopicEnable off at runtime (UPDATE_BROKER_CONFIG), then on again. "
        "It leaves TBW102 without PERM_INHERIT (as 4.9.3 does), so it runs among the LAST.",
    ),
    Scenario(
        "send",
        "no-write-permission",
        [
            broker_config("read_only", brokerPermission="4"),
            send_v2("refused_v2", T, 0, n=70),
            send_v1("refused_v1", T, 0, n=71),
            send_batch("refused_batch", T, 0, batch((T, b"x", {"UNIQ_KEY": uniq(72)}))),
            route("route_read_only", T, wait_ms=400),
            broker_config("read_write", brokerPermission="6"),
            send_v2("accepted_again", T, 0, n=73),
        ],
        doc="A broker whose brokerPermission is read-only refuses sends.",
    ),
    Scenario(
        "send",
        "topic-permissions-and-flags",
        [
            Step(
                "create_read_only",
                "UPDATE_AND_CREATE_TOPIC",
                {
                    "topic": "cf_send_ro",
                    "defaultTopic": "TBW102",
                    "readQueueNums": "2",
                    "writeQueueNums": "2",
                    "perm": "4",
                    "topicFilterType": "SINGLE_TAG",
                    "topicSysFlag": "0",
                    "order": "false",
                },
            ),  # fmt: skip
            send_v2("topic_not_writable", "cf_send_ro", 0, n=80),
            Step(
                "create_3r_2w",
                "UPDATE_AND_CREATE_TOPIC",
                {
                    "topic": "cf_send_3r2w",
                    "defaultTopic": "TBW102",
                    "readQueueNums": "3",
                    "writeQueueNums": "2",
                    "perm": "6",
                    "topicFilterType": "SINGLE_TAG",
                    "topicSysFlag": "0",
                    "order": "false",
                },
            ),  # fmt: skip
            send_v2(
                "q2_of_3r2w",
                "cf_send_3r2w",
                2,
                n=81,
                note="queueId below max(read, write) = 3 is accepted",
            ),
            send_v2("q3_of_3r2w", "cf_send_3r2w", 3, n=82),
            send_v2(
                "prepared_transaction",
                "cf_send_tx",
                0,
                n=83,
                f="4",
                extra={"TRAN_MSG": "true", "PGROUP": "cf_producer"},
                note="a half message goes to RMQ_SYS_TRANS_HALF_TOPIC",
            ),
            send_v2("commit_type_sysflag", "cf_send_tx", 0, n=84, f="8"),
            send_v2("multi_tag_sysflag", "cf_send_tx", 1, n=85, f="2"),
            send_v2("create_flags_topic", "cf_send_flags", 0, n=86, expect=0),
            send_v2("no_properties_header", "cf_send_flags", 1, n=0, i=None),
            send_v1("v1_no_properties", "cf_send_flags", 1, n=0, properties=None),
            send_v2("lmq_topic", "%LMQ%cf_lmq", 0, n=0, note="LMQ off (enableLmq false)"),
            send_v2(
                "compressed_real_zlib",
                "cf_send_flags",
                2,
                zlib.compress(b"z" * 500),
                n=0,
                f="1",
                note="sysFlag COMPRESSED with a real zlib body",
            ),  # fmt: skip
            send_v2("missing_topic_header", "cf_send_flags", 0, n=87, b=None),
            send_v2("missing_queue_id_header", "cf_send_flags", 0, n=88, e=None),
            send_v2("bad_queue_id_header", "cf_send_flags", 0, n=89, e="x"),
            send_v1("v1_missing_born", "cf_send_flags", 0, n=90, bornTimestamp=None),
            send_batch(
                "batch_over_max_size",
                "cf_send_flags",
                0,
                batch(
                    ("cf_send_flags", b"q" * (4 * 1024 * 1024 - 100), {"UNIQ_KEY": uniq(91)}),
                    ("cf_send_flags", b"r" * 200, {"UNIQ_KEY": uniq(92)}),
                ),
            ),
            send_batch(
                "batch_with_delay",
                "cf_send_flags",
                0,
                batch(
                    ("cf_send_flags", b"d", {"UNIQ_KEY": uniq(93), "DELAY": "2"}),
                ),
                note="a batch may not carry a delay level",
            ),
            send_batch(
                "batch_to_retry",
                "%RETRY%cf_group_b",
                0,
                batch(
                    ("%RETRY%cf_group_b", b"d", {"UNIQ_KEY": uniq(94)}),
                ),
            ),
            send_batch("batch_empty_body", "cf_send_flags", 0, b""),
        ],
        doc="Topic perms and queue counts set by an admin, transaction sys flags, header "
        "fields missing or unparsable, batch limits.",
    ),
    Scenario(
        "send",
        "cpp-boolean-1",
        [
            Step(
                "create_cpp_topic",
                "UPDATE_AND_CREATE_TOPIC",
                {
                    "topic": "cf_send_cpp",
                    "defaultTopic": "TBW102",
                    "readQueueNums": "4",
                    "writeQueueNums": "4",
                    "perm": "6",
                    "topicFilterType": "SINGLE_TAG",
                    "topicSysFlag": "0",
                    "order": "false",
                },  # fmt: skip
                expect=0,
            ),
            send_v1(
                "cpp_batch_1",
                "cf_send_cpp",
                0,
                batch(
                    ("cf_send_cpp", b"c1", {"UNIQ_KEY": uniq(95)}),
                    ("cf_send_cpp", b"c2", {"UNIQ_KEY": uniq(96)}),
                ),
                n=97,
                tags=None,
                batch="1",
                unitMode="0",
                wait_ms=SETTLE_MS,
                note='the C++ client\'s send_batch: SEND_MESSAGE with batch "1"',
            ),
        ],
        doc='The C++ client writes booleans as "1"/"0"; Java reads "1" as false. It changes '
        "every later commit-log offset, so it runs LAST.",
    ),
    Scenario(
        "send",
        "delay-and-retry-edges",
        [
            send_v2("delay_0", "cf_send_edges", 0, n=120, extra={"DELAY": "0"}, expect=0),
            send_v2("delay_negative", "cf_send_edges", 0, n=121, extra={"DELAY": "-1"}),
            send_v2("delay_not_number", "cf_send_edges", 0, n=122, extra={"DELAY": "abc"}),
            send_v2("empty_tags", "cf_send_edges", 1, n=124, tags=""),
            send_v2("reconsume_on_normal_topic", "cf_send_edges", 2, n=125, j="5", l="3"),
            send_v2("long_keys", "cf_send_edges", 2, n=126, keys=" ".join(["k"] * 2000)),
            broker_config("no_auto_group", autoCreateSubscriptionGroup="false"),
            send_v2(
                "retry_unknown_group",
                "%RETRY%cf_send_nogroup",
                0,
                n=127,
                note="handleRetryAndDLQ: SUBSCRIPTION_GROUP_NOT_EXIST",
            ),  # fmt: skip
            send_v1("retry_unknown_group_v1", "%RETRY%cf_send_nogroup", 0, n=128),
            broker_config("auto_group", autoCreateSubscriptionGroup="true"),
            send_v2("retry_group_created", "%RETRY%cf_send_nogroup", 0, n=129),
        ],
        doc="Delay levels at and past the edges, reconsume times on a normal topic, a "
        "%RETRY% send for a group that does not exist.",
    ),
    Scenario(
        "send",
        "delay-level-cap",
        [
            send_v2("delay_18", "cf_send_cap", 0, n=130, extra={"DELAY": "18"}, expect=0),
            send_v2(
                "delay_99",
                "cf_send_cap",
                1,
                n=131,
                extra={"DELAY": "99"},
                expect=0,
                note="a level over 18 is capped at maxDelayLevel",
            ),  # fmt: skip
            Step(
                "schedule_queue_17",
                "GET_MAX_OFFSET",
                {"topic": "SCHEDULE_TOPIC_XXXX", "queueId": "17"},
                wait_ms=SETTLE_MS,
            ),  # fmt: skip
        ],
        doc="Delay level 18 and one capped to it: delivered 18 s later, after every other "
        "scenario, so it runs among the LAST.",
    ),
]
