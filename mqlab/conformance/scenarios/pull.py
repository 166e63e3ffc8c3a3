"""Pull: every reachable GetMessageStatus, tag and SQL92 filters, subscription checks,
commit offsets carried by pulls, permissions."""

from __future__ import annotations

from dataclasses import replace

from mqlab.conformance.scenario import Scenario, Step, json_body
from mqlab.conformance.scenarios.common import (
    SETTLE_MS,
    broker_config,
    heartbeat,
    pull,
    query_offset,
    send_v2,
)

__all__ = ["SCENARIOS"]

T = "cf_pull"
G = "cf_pull_group"
S = "cf_pull_sql"


def _sends(topic: str, specs: list[tuple[int, str | None, dict[str, str]]], base: int):
    return [
        send_v2(
            f"send_{i}",
            topic,
            q,
            f"body-{i}".encode(),
            n=base + i,
            tags=tags,
            extra=extra,
            expect=0,
        )
        for i, (q, tags, extra) in enumerate(specs)
    ]


SCENARIOS = [
    Scenario(
        "pull",
        "get-message-status",
        [
            *_sends(T, [(0, "TagA", {}), (0, "TagB", {}), (0, "TagA", {}), (1, "TagC", {})], 100),
            pull("found_all", G, T, 0, 0, note="FOUND: 3 messages", expect=0, wait_ms=SETTLE_MS),
            pull("found_max_1", G, T, 0, 0, max_nums=1),
            pull("found_from_2", G, T, 0, 2),
            pull("at_max_offset", G, T, 0, 3, note="offset == maxOffset: OFFSET_OVERFLOW_ONE (19)"),
            pull("past_max_by_1", G, T, 0, 4, note="maxOffset + 1: OFFSET_OVERFLOW_BADLY (21)"),
            pull("overflow_badly", G, T, 0, 50, note="OFFSET_OVERFLOW_BADLY: nextBeginOffset 0"),
            pull("negative_offset", G, T, 0, -1, note="below minOffset: OFFSET_TOO_SMALL"),
            pull("empty_queue", G, T, 2, 0, note="NO_MESSAGE_IN_QUEUE at offset 0: 19"),
            pull("empty_queue_far", G, T, 2, 7, note="NO_MESSAGE_IN_QUEUE, offset not 0: 21"),
            pull("queue_id_illegal", G, T, 9, 0),
            pull("unknown_topic", G, "cf_pull_nosuch", 0, 0),
            pull("tag_a", G, T, 0, 0, sub="TagA", note="tag filter by hash code: 2 of 3"),
            pull("tag_a_or_c", G, T, 0, 0, sub="TagA || TagC"),
            pull("tag_none_matches", G, T, 0, 0, sub="TagZ", note="NO_MATCHED_MESSAGE"),
            pull("tag_b_from_2", G, T, 0, 2, sub="TagB"),
            pull("queue_1_tag_c", G, T, 1, 0, sub="TagC"),
            pull("max_nums_0", G, T, 0, 0, max_nums=0),
            pull("class_filter_flag", G, T, 0, 0, sys_flag=0x4 | 0x8),
        ],
        doc="FOUND, OFFSET_OVERFLOW_ONE/BADLY, OFFSET_TOO_SMALL, "
        "NO_MESSAGE_IN_QUEUE, NO_MATCHED_MESSAGE, with their codes and offsets.",
    ),
    Scenario(
        "pull",
        "sql92",
        [
            *_sends(
                S,
                [
                    (0, "TagA", {"a": "3"}),
                    (0, "TagB", {"a": "7"}),
                    (0, "TagA", {"a": "10", "b": "x"}),
                    (0, None, {}),
                ],
                200,
            ),
            pull("sql_a_gt_5", G, S, 0, 0, sub="a > 5", expression_type="SQL92", wait_ms=SETTLE_MS),
            pull("sql_tags", G, S, 0, 0, sub="TAGS = 'TagA'", expression_type="SQL92"),
            pull("sql_and", G, S, 0, 0, sub="a > 5 AND b = 'x'", expression_type="SQL92"),
            pull("sql_is_null", G, S, 0, 0, sub="a IS NULL", expression_type="SQL92"),
            pull("sql_between", G, S, 0, 0, sub="a BETWEEN 3 AND 7", expression_type="SQL92"),
            pull("sql_none", G, S, 0, 0, sub="a > 100", expression_type="SQL92"),
            pull("sql_parse_error", G, S, 0, 0, sub="a >>> 5", expression_type="SQL92"),
            pull("sql_star", G, S, 0, 0, sub="*", expression_type="SQL92"),
            pull("sql_string_compare", G, S, 0, 0, sub="b = 'x' OR a = 3", expression_type="SQL92"),
            pull("sql_in", G, S, 0, 0, sub="a IN ('3', '10')", expression_type="SQL92"),
            pull("unknown_expression_type", G, S, 0, 0, sub="a > 5", expression_type="XPATH"),
            broker_config("filter_off", enablePropertyFilter="false"),
            pull("sql_filter_off", G, S, 0, 0, sub="a > 5", expression_type="SQL92"),
            pull("tag_with_filter_off", G, S, 0, 0, sub="TagB"),
            broker_config("filter_on", enablePropertyFilter="true"),
            pull("sql_filter_on_again", G, S, 0, 0, sub="a > 5", expression_type="SQL92"),
        ],
        doc="SQL92 property filters with enablePropertyFilter on and off (changed at runtime).",
    ),
    Scenario(
        "pull",
        "subscriptions",
        [
            send_v2("send", "cf_pull_sub", 0, b"x", n=300, expect=0),
            pull(
                "no_heartbeat",
                "cf_pull_sub_g",
                "cf_pull_sub",
                0,
                0,
                sub=None,
                wait_ms=SETTLE_MS,
                note="no subscription flag and no heartbeat: SUBSCRIPTION_NOT_EXIST (24)",
            ),
            heartbeat("hb", "127.0.0.1@cf1", "cf_pull_sub_g", "cf_pull_sub", "*", sub_version=100),
            pull("with_heartbeat", "cf_pull_sub_g", "cf_pull_sub", 0, 0, sub=None, sub_version=100),
            pull(
                "older_sub_version",
                "cf_pull_sub_g",
                "cf_pull_sub",
                0,
                0,
                sub=None,
                sub_version=200,
                note="subVersion newer than the broker's: SUBSCRIPTION_NOT_LATEST (25)",
            ),
            pull(
                "newer_broker_version",
                "cf_pull_sub_g",
                "cf_pull_sub",
                0,
                0,
                sub=None,
                sub_version=50,
            ),
            pull("other_topic", "cf_pull_sub_g", "cf_send_basic_x", 0, 0, sub=None),
            heartbeat(
                "hb_sql",
                "127.0.0.1@cf2",
                "cf_pull_sub_sql",
                "cf_pull_sub",
                "a > 1",
                expression_type="SQL92",
                tags=[],
                codes=[],
            ),
            pull(
                "heartbeat_sql", "cf_pull_sub_sql", "cf_pull_sub", 0, 0, sub=None, sub_version=100
            ),
            broker_config("no_auto_group", autoCreateSubscriptionGroup="false"),
            pull(
                "group_not_exist",
                "cf_pull_sub_new",
                "cf_pull_sub",
                0,
                0,
                note="SUBSCRIPTION_GROUP_NOT_EXIST (26)",
            ),
            pull("known_group_ok", "cf_pull_sub_g", "cf_pull_sub", 0, 0),
            broker_config("auto_group", autoCreateSubscriptionGroup="true"),
            pull("group_created_now", "cf_pull_sub_new", "cf_pull_sub", 0, 0),
            Step(
                "unregister",
                "UNREGISTER_CLIENT",
                {"clientID": "127.0.0.1@cf1", "consumerGroup": "cf_pull_sub_g"},
            ),  # fmt: skip
            pull(
                "after_unregister", "cf_pull_sub_g", "cf_pull_sub", 0, 0, sub=None, sub_version=100
            ),
        ],
        doc="Subscriptions missing (24) or outdated (25), groups missing (26).",
    ),
    Scenario(
        "pull",
        "commit-offset-and-permissions",
        [
            *_sends("cf_pull_commit", [(0, "TagA", {})] * 5, 400),
            query_offset("before", "cf_pull_commit_g", "cf_pull_commit", 0, wait_ms=SETTLE_MS),
            pull("pull_commit_2", "cf_pull_commit_g", "cf_pull_commit", 0, 2, commit_offset=2),
            query_offset("after_2", "cf_pull_commit_g", "cf_pull_commit", 0),
            pull(
                "pull_commit_4",
                "cf_pull_commit_g",
                "cf_pull_commit",
                0,
                4,
                commit_offset=4,
                max_nums=1,
            ),
            query_offset("after_4", "cf_pull_commit_g", "cf_pull_commit", 0),
            pull(
                "commit_flag_zero",
                "cf_pull_commit_g",
                "cf_pull_commit",
                0,
                5,
                sys_flag=0x1 | 0x4,
                commit_offset=0,
            ),
            query_offset("after_flag_zero", "cf_pull_commit_g", "cf_pull_commit", 0),
            Step(
                "topic_write_only",
                "UPDATE_AND_CREATE_TOPIC",
                {
                    "topic": "cf_pull_wo",
                    "defaultTopic": "TBW102",
                    "readQueueNums": "2",
                    "writeQueueNums": "2",
                    "perm": "2",
                    "topicFilterType": "SINGLE_TAG",
                    "topicSysFlag": "0",
                    "order": "false",
                },
            ),  # fmt: skip
            pull("topic_not_readable", "cf_pull_commit_g", "cf_pull_wo", 0, 0),
            broker_config("broker_write_only", brokerPermission="2"),
            pull("broker_not_readable", "cf_pull_commit_g", "cf_pull_commit", 0, 0),
            broker_config("broker_read_write", brokerPermission="6"),
            pull("readable_again", "cf_pull_commit_g", "cf_pull_commit", 0, 0, max_nums=2),
        ],
        doc="Commit offsets carried by pulls (FLAG_COMMIT_OFFSET), topic and broker perms.",
    ),
]


def _group_config(name: str, group: str, **over: object) -> Step:
    """UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200): a SubscriptionGroupConfig body."""
    cfg = {
        "brokerId": 0, "consumeBroadcastEnable": True, "consumeEnable": True,
        "consumeFromMinEnable": True, "groupName": group,
        "notifyConsumerIdsChangedEnable": True, "retryMaxTimes": 16, "retryQueueNums": 1,
        "whichBrokerWhenConsumeSlowly": 1,
    }  # fmt: skip
    cfg.update(over)
    return Step(name, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", {}, json_body(cfg))


_BIG = bytes(range(256)) * 400  # 100 KiB

SCENARIOS += [
    Scenario(
        "pull",
        "transfer-limits-and-group-settings",
        [
            *[
                send_v2(f"small_{i}", "cf_pull_many", 0, f"s{i}".encode(), n=700 + i, expect=0)
                for i in range(40)
            ],
            *[send_v2(f"big_{i}", "cf_pull_big", 0, _BIG, n=750 + i, expect=0) for i in range(4)],
            pull(
                "count_limit_32",
                G,
                "cf_pull_many",
                0,
                0,
                max_nums=64,
                wait_ms=SETTLE_MS,
                note="maxTransferCountOnMessageInMemory: 32",
            ),  # fmt: skip
            pull("count_from_30", G, "cf_pull_many", 0, 30, max_nums=64),
            pull(
                "bytes_limit",
                G,
                "cf_pull_big",
                0,
                0,
                max_nums=32,
                note="maxTransferBytesOnMessageInMemory: 256 KiB",
            ),  # fmt: skip
            pull("tag_skip_then_limit", G, "cf_pull_many", 0, 0, sub="TagZ", max_nums=1),
            pull("no_expression_type", G, "cf_pull_many", 0, 38, expression_type=None),
            pull("tags_no_spaces", G, "cf_pull_many", 0, 38, sub="TagA||TagB"),
            _group_config("group_consume_off", "cf_pull_off_g", consumeEnable=False),
            pull("consume_disabled", "cf_pull_off_g", "cf_pull_many", 0, 0),
            _group_config("group_consume_on", "cf_pull_off_g"),
            pull("consume_enabled", "cf_pull_off_g", "cf_pull_many", 0, 39),
            _group_config("group_no_broadcast", "cf_pull_bc_g", consumeBroadcastEnable=False),
            heartbeat(
                "hb_broadcast",
                "127.0.0.1@cf3",
                "cf_pull_bc_g",
                "cf_pull_many",
                "*",
                message_model="BROADCASTING",
            ),  # fmt: skip
            pull(
                "broadcast_disabled",
                "cf_pull_bc_g",
                "cf_pull_many",
                0,
                39,
                sub=None,
                sub_version=100,
            ),  # fmt: skip
        ],
        doc="Transfer count and byte limits, filters that skip, group settings "
        "(consumeEnable, consumeBroadcastEnable).",
    ),
]

#: the broker's VIP channel (listenPort - 2): ``BrokerController#registerProcessor`` gives its
#: fast server every processor of the main one but PullMessageProcessor
SCENARIOS += [
    Scenario(
        "pull",
        "vip-channel",
        [
            replace(
                send_v2("vip_send", "cf_pull_vip", 0, b"on the VIP channel", n=960, expect=0),
                to="vip",
                note="SendMessageProcessor on the VIP channel",
            ),
            pull(
                "vip_pull",
                G,
                "cf_pull_vip",
                0,
                0,
                to="vip",
                wait_ms=SETTLE_MS,
                expect=3,
                note="no PullMessageProcessor on the VIP channel: AdminBrokerProcessor's "
                "REQUEST_CODE_NOT_SUPPORTED",
            ),
            pull(
                "main_pull",
                G,
                "cf_pull_vip",
                0,
                0,
                expect=0,
                note="the same pull on the main port: FOUND",
            ),
            replace(
                query_offset("vip_query_offset", G, "cf_pull_vip", 0),
                to="vip",
                note="ConsumerManageProcessor on the VIP channel",
            ),
            Step(
                "vip_topic_configs",
                "GET_ALL_TOPIC_CONFIG",
                {},
                to="vip",
                expect=0,
                note="AdminBrokerProcessor, the VIP channel's default: what a slave's "
                "SlaveSynchronize asks here",
            ),
        ],
        doc="The VIP channel (listenPort - 2): a send and an offset query answered, a pull "
        "refused, the same pull found on the main port.",
    ),
]
