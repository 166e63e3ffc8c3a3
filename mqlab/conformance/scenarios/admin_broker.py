"""AdminBrokerProcessor's remaining admin codes, asked of both brokers: subscription groups
(201, 207), system topics (305), the store's housekeeping (306, 316), offsets across groups
(303, 308, 314), raw consume-queue units (321), the ACL codes with ACL off (50-54) and
filter-server registration (301).

These are what ``mqadmin getConsumerConfig``, ``deleteSubGroup``, ``exportMetadata``,
``cleanExpiredCQ``, ``cleanUnusedTopic``, ``queryCq`` and ``cloneGroupOffset`` send
(AdminBrokerProcessor#processRequest, broker/processor, RocketMQ 4.9.3).
"""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, Step, json_body
from mqlab.conformance.scenarios.common import (
    SETTLE_MS,
    heartbeat,
    query_offset,
    send_v2,
    update_offset,
)

__all__ = ["SCENARIOS", "LAST_SCENARIOS"]

T = "cf_ab"


def _create(name: str, topic: str, queues: int = 4) -> Step:
    return Step(name, "UPDATE_AND_CREATE_TOPIC", {
        "topic": topic, "defaultTopic": "TBW102", "readQueueNums": str(queues),
        "writeQueueNums": str(queues), "perm": "6", "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": "0", "order": "false",
    }, expect=0)  # fmt: skip


def _group(name: str, group: str) -> Step:
    cfg = {
        "brokerId": 0, "consumeBroadcastEnable": True, "consumeEnable": True,
        "consumeFromMinEnable": True, "groupName": group,
        "notifyConsumerIdsChangedEnable": True, "retryMaxTimes": 16, "retryQueueNums": 1,
        "whichBrokerWhenConsumeSlowly": 1,
    }  # fmt: skip
    return Step(name, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", {}, json_body(cfg), expect=0)


def _delete_group(name: str, group: str | None, remove_offset: str | None = None,
                  note: str = "") -> Step:  # fmt: skip
    return Step(name, "DELETE_SUBSCRIPTIONGROUP",
                {"groupName": group, "removeOffset": remove_offset}, note=note)  # fmt: skip


def _cq(name: str, topic: str, queue_id: int, index: int, count: int,
        group: str | None = None, note: str = "", wait_ms: int = 0) -> Step:  # fmt: skip
    return Step(name, "QUERY_CONSUME_QUEUE", {
        "topic": topic, "queueId": str(queue_id), "index": str(index), "count": str(count),
        "consumerGroup": group,
    }, note=note, wait_ms=wait_ms)  # fmt: skip


def _clone(name: str, src: str, dest: str, topic: str | None, offline: str,
           note: str = "") -> Step:  # fmt: skip
    return Step(name, "CLONE_GROUP_OFFSET", {
        "srcGroup": src, "destGroup": dest, "topic": topic, "offline": offline,
    }, note=note)  # fmt: skip


G = f"{T}_grp"
SCENARIOS = [
    Scenario(
        "admin-broker",
        "subscription-groups",
        [
            Step(
                "all_groups",
                "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
                {},
                note="the seven groups SubscriptionGroupManager#init creates",
            ),
            _group("create", G),
            Step("all_groups_created", "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", {}),
            _create("topic", T),
            send_v2("send_1", T, 0, b"ab-1", n=1, expect=0),
            send_v2("send_2", T, 0, b"ab-2", n=2, expect=0),
            update_offset("commit_q0", G, T, 0, 2),
            update_offset("commit_q1", G, T, 1, 0),
            _delete_group("delete_keep_offsets", G, note="no removeOffset: offsets stay"),
            query_offset("offset_kept", G, T, 0, wait_ms=SETTLE_MS),
            Step("all_groups_deleted", "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", {}),
            _group("create_again", G),
            _delete_group("delete_remove_offsets", G, "true", note="removeOffset=true"),
            query_offset("offset_removed", G, T, 0, note="gone on every queue of the group"),
            query_offset("offset_removed_q1", G, T, 1),
            _delete_group(
                "delete_unknown",
                f"{T}_nosuch",
                "true",
                note="an unknown group: SUCCESS all the same",
            ),
            _delete_group("delete_no_group", None, note="no groupName"),
            Step("all_groups_end", "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", {}),
        ],
        doc="GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) and DELETE_SUBSCRIPTIONGROUP (207) with "
        "and without removeOffset: mqadmin getConsumerConfig and deleteSubGroup.",
    ),
    Scenario(
        "admin-broker",
        "system-topics",
        [
            Step(
                "system_topics",
                "GET_SYSTEM_TOPIC_LIST_FROM_BROKER",
                {},
                note="TopicValidator's static set plus the broker's own, HashSet order",
            )
        ],
        doc="GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305), which mqadmin exportMetadata asks "
        "with GET_ALL_TOPIC_CONFIG (21) and GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201).",
    ),
    Scenario(
        "admin-broker",
        "consume-time-span",
        [
            _create("topic", f"{T}_ts", 2),
            send_v2("send_1", f"{T}_ts", 0, b"ts-1", n=11, expect=0),
            send_v2("send_2", f"{T}_ts", 0, b"ts-2", n=12, expect=0),
            update_offset("commit_q0", f"{G}_ts", f"{T}_ts", 0, 1),
            update_offset("commit_q1", f"{G}_ts", f"{T}_ts", 1, 0),
            Step(
                "span_behind",
                "QUERY_CONSUME_TIME_SPAN",
                {"topic": f"{T}_ts", "group": f"{G}_ts"},
                wait_ms=SETTLE_MS,
                note="q0 one behind: delayTime = now - store time (clock: not compared)",
            ),
            update_offset("commit_q0_all", f"{G}_ts", f"{T}_ts", 0, 2),
            Step(
                "span",
                "QUERY_CONSUME_TIME_SPAN",
                {"topic": f"{T}_ts", "group": f"{G}_ts"},
                note="caught up: delayTime 0; an empty queue's times are -1",
            ),
            Step(
                "span_unknown_topic",
                "QUERY_CONSUME_TIME_SPAN",
                {"topic": f"{T}_nosuch", "group": f"{G}_ts"},
            ),
            Step("span_no_group", "QUERY_CONSUME_TIME_SPAN", {"topic": f"{T}_ts"}),
        ],
        doc="QUERY_CONSUME_TIME_SPAN (303): store times of first, last and last consumed "
        "message per queue; TOPIC_NOT_EXIST for an unknown topic.",
    ),
    Scenario(
        "admin-broker",
        "store-housekeeping",
        [
            Step(
                "max_offset_ghost",
                "GET_MAX_OFFSET",
                {"topic": f"{T}_ghost", "queueId": "0"},
                note="the lookup creates an (empty) consume queue for an unknown topic",
            ),
            _cq("cq_ghost", f"{T}_ghost", 0, 0, 1, note="it exists now: no units"),
            Step(
                "clean_expired",
                "CLEAN_EXPIRED_CONSUMEQUEUE",
                {},
                note="nothing below the commit log's first offset: nothing destroyed",
            ),
            _cq("cq_ghost_after_expired", f"{T}_ghost", 0, 0, 1),
            Step(
                "clean_unused",
                "CLEAN_UNUSED_TOPIC",
                {},
                note="destroys the queues of every topic without config",
            ),
            _cq("cq_ghost_after_unused", f"{T}_ghost", 0, 0, 1, note="gone"),
        ],
        doc="CLEAN_EXPIRED_CONSUMEQUEUE (306) and CLEAN_UNUSED_TOPIC (316): mqadmin "
        "cleanExpiredCQ and cleanUnusedTopic.",
    ),
    Scenario(
        "admin-broker",
        "correction-offset",
        [
            _create("topic", f"{T}_co", 2),
            send_v2("send_1", f"{T}_co", 0, b"co-1", n=21, expect=0),
            send_v2("send_2", f"{T}_co", 0, b"co-2", n=22, expect=0),
            send_v2("send_3", f"{T}_co", 0, b"co-3", n=23, expect=0),
            update_offset("commit_a", f"{G}_coa", f"{T}_co", 0, 3),
            update_offset("commit_b", f"{G}_cob", f"{T}_co", 0, 1),
            update_offset("commit_b_q1", f"{G}_cob", f"{T}_co", 1, 0),
            Step(
                "correction",
                "QUERY_CORRECTION_OFFSET",
                {"topic": f"{T}_co", "compareGroup": f"{G}_coa"},
                wait_ms=SETTLE_MS,
                note="the lowest offset of all groups per queue",
            ),
            Step(
                "correction_filtered",
                "QUERY_CORRECTION_OFFSET",
                {"topic": f"{T}_co", "compareGroup": f"{G}_coa", "filterGroups": f"{G}_cob"},
                note="4.9.3 removes the filter group's offsets from its table",
            ),
            query_offset(
                "filtered_group_offset",
                f"{G}_cob",
                f"{T}_co",
                0,
                note="the filtered group's offset is gone",
            ),
            Step(
                "correction_unknown_topic",
                "QUERY_CORRECTION_OFFSET",
                {"topic": f"{T}_nosuch", "compareGroup": f"{G}_coa"},
            ),
            Step("correction_no_compare_group", "QUERY_CORRECTION_OFFSET", {"topic": f"{T}_co"}),
        ],
        doc="QUERY_CORRECTION_OFFSET (308): ConsumerOffsetManager#queryMinOffsetInAllGroup.",
    ),
    Scenario(
        "admin-broker",
        "clone-offset",
        [
            _create("topic", f"{T}_cl", 2),
            _create("topic_other", f"{T}_cl2", 1),
            update_offset("commit_src", f"{G}_src", f"{T}_cl", 0, 5),
            update_offset("commit_src_q1", f"{G}_src", f"{T}_cl", 1, 7),
            _clone(
                "clone",
                f"{G}_src",
                f"{G}_dst",
                f"{T}_cl",
                "false",
                note="no consumer online: cloned",
            ),
            query_offset("dst_q0", f"{G}_dst", f"{T}_cl", 0),
            query_offset("dst_q1", f"{G}_dst", f"{T}_cl", 1),
            _clone(
                "clone_no_topic",
                f"{G}_src",
                f"{G}_dst2",
                None,
                "false",
                note="no topic: 4.9.3 clones with the header's null topic: nothing",
            ),
            query_offset("dst2_q0", f"{G}_dst2", f"{T}_cl", 0),
            _clone("clone_unknown_topic", f"{G}_src", f"{G}_dst3", f"{T}_nosuch", "false"),
            heartbeat("online", "cf-ab-client@1", f"{G}_src", f"{T}_cl2"),
            _clone(
                "clone_unsubscribed",
                f"{G}_src",
                f"{G}_dst4",
                f"{T}_cl",
                "false",
                note="the online group subscribes to another topic: skipped",
            ),
            query_offset("dst4_q0", f"{G}_dst4", f"{T}_cl", 0),
            _clone(
                "clone_offline",
                f"{G}_src",
                f"{G}_dst5",
                f"{T}_cl",
                "true",
                note="offline=true: no subscription check",
            ),
            query_offset("dst5_q1", f"{G}_dst5", f"{T}_cl", 1),
            _clone("clone_no_dest", f"{G}_src", None, f"{T}_cl", "true"),
        ],
        doc="CLONE_GROUP_OFFSET (314): mqadmin cloneGroupOffset.",
    ),
    Scenario(
        "admin-broker",
        "query-consume-queue",
        [
            _create("topic", f"{T}_cq", 2),
            send_v2("send_1", f"{T}_cq", 0, b"cq-1", n=31, tags="TagA", expect=0),
            send_v2("send_2", f"{T}_cq", 0, b"cq-22", n=32, tags="TagB", expect=0),
            send_v2("send_3", f"{T}_cq", 0, b"cq-333", n=33, tags=None, expect=0),
            _cq(
                "all",
                f"{T}_cq",
                0,
                0,
                10,
                wait_ms=SETTLE_MS,
                note="three units: offset, size, tags code",
            ),
            _cq("one", f"{T}_cq", 0, 1, 1, note="count 1 from index 1"),
            _cq("count_0", f"{T}_cq", 0, 0, 0, note="count 0: an empty list"),
            _cq("past_end", f"{T}_cq", 0, 3, 5, note="no unit 3: SUCCESS with a remark only"),
            _cq("negative_index", f"{T}_cq", 0, -1, 5),
            _cq(
                "queue_never_used",
                f"{T}_cq",
                1,
                0,
                5,
                note="queue 1 was never written nor looked up: not exist",
            ),
            _cq("unknown_topic", f"{T}_nosuch", 0, 0, 5),
            _cq("group_offline", f"{T}_cq", 0, 0, 2, f"{G}_cq", note="not online"),
            heartbeat("online", "cf-ab-client@2", f"{G}_cq", f"{T}_cq", "TagA || TagB"),
            _cq(
                "group_online",
                f"{T}_cq",
                0,
                0,
                2,
                f"{G}_cq",
                note="its subscription; filterData 'null' for tags",
            ),
            heartbeat(
                "online_sql",
                "cf-ab-client@3",
                f"{G}_cq_sql92",
                f"{T}_cq",
                "a > 5",
                expression_type="SQL92",
                tags=[],
            ),  # fmt: skip
            _cq(
                "group_sql92",
                f"{T}_cq",
                0,
                0,
                1,
                f"{G}_cq_sql92",
                note="filterData: the ConsumerFilterData, bloom filter bits included",
            ),  # fmt: skip
        ],
        doc="QUERY_CONSUME_QUEUE (321): mqadmin queryCq.",
    ),
    Scenario(
        "admin-broker",
        "acl-off",
        [
            Step(
                "update_acl",
                "UPDATE_AND_CREATE_ACL_CONFIG",
                {"accessKey": "cfak", "secretKey": "12345678", "admin": "false"},
                note="no AccessValidator: a NullPointerException, caught",
            ),
            Step("update_acl_empty", "UPDATE_AND_CREATE_ACL_CONFIG", {}),
            Step("delete_acl", "DELETE_ACL_CONFIG", {"accessKey": "cfak"}),
            Step(
                "acl_info",
                "GET_BROKER_CLUSTER_ACL_INFO",
                {},
                timeout_s=2,
                note="no answer: the method returns null",
            ),
            Step("white_addrs", "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG", {"globalWhiteAddrs": "10.*"}),
            Step(
                "acl_config",
                "GET_BROKER_CLUSTER_ACL_CONFIG",
                {},
                timeout_s=2,
                note="no answer either",
            ),
        ],
        doc="The ACL codes (50-54) on a broker with aclEnable=false (the default).",
    ),
]

#: Run after every other scenario: a registered filter server is named in the broker's
#: registrations (and its route data) until the harness's connection closes.
LAST_SCENARIOS = [
    Scenario(
        "admin-broker",
        "filter-server",
        [
            Step(
                "register",
                "REGISTER_FILTER_SERVER",
                {"filterServerAddr": "127.0.0.1:10099"},
                note="answers the broker's id and name",
            ),
            Step("renew", "REGISTER_FILTER_SERVER", {"filterServerAddr": "127.0.0.1:10099"}),
            Step("register_no_addr", "REGISTER_FILTER_SERVER", {}),
        ],
        doc="REGISTER_FILTER_SERVER (301): FilterServerManager#registerFilterServer.",
    ),
]
