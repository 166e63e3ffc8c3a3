"""Who may send: a broker with ``aclEnable=true`` on each side, asked by signed and unsigned
requests.

Each side runs, for this group only, a broker of its own with ACL on (``broker-acl``) that
reads our accounts (:mod:`mqlab.conformance.scenarios.acl_accounts`) from
``<home>/conf/plain_acl.yml``: the real one in the real cluster's JVM
(``RealCluster.start_broker``), mqlab's as ``ServeConfig(properties={"aclEnable": "true"},
rocketmq_home=home)``. Steps ``to="acl"`` go to it. A step with ``credentials`` is signed
as ``AclClientRPCHook`` signs (``Step.credentials``); one without is sent as written.

What the broker checks, in ``PlainPermissionManager#validate``'s order: the global white
addresses, an access key at all, a known access key, the account's white address (which
skips the signature AND the perms), the signature, then ``checkPerm``: admin-only codes, then
each resource ``PlainAccessValidator#parse`` names for the code (a topic; a group as its
``%RETRY%`` topic) against the account's perms or its default perm. A refusal is an
``AclException`` thrown from the server's RPC hook, before any processor runs.

The file step (:class:`~mqlab.conformance.scenario.SideAction`) rewrites the file on disk;
4.9.3's ``AclFileWatchService`` looks at its modification time every 5 s.
"""

from __future__ import annotations

from dataclasses import replace

from mqlab.acl.signature import SessionCredentials
from mqlab.conformance.scenario import Scenario, SideAction, Step, json_body
from mqlab.conformance.scenarios import acl_refusals
from mqlab.conformance.scenarios.acl_accounts import (
    ACCOUNTS,
    ADMIN,
    USER,
    WHITE,
    plain_acl,
)
from mqlab.conformance.scenarios.common import SETTLE_MS, pull, send_v2

__all__ = ["SCENARIOS", "TOPICS", "RELOAD_WAIT_MS", "edited_acl"]

#: one topic per perm the user has, and one it has no line for (its default perm, PUB)
TOPICS = ("acl_t_deny", "acl_t_pub", "acl_t_sub", "acl_t_pubsub", "acl_t_other")
#: one group per perm the user has, and one it has no line for (its default perm, SUB)
GROUPS = ("acl_g_deny", "acl_g_pub", "acl_g_sub", "acl_g_pubsub", "acl_g_other")
#: ``AclFileWatchService`` looks every 5 s (``WATCH_INTERVAL``), so a write applies within 5 s
#: (measured on the real broker: 4.45 s after an edit made 4.55 s after its start); 2 s margin
RELOAD_WAIT_MS = 7_000
#: an account the admin creates with UPDATE_AND_CREATE_ACL_CONFIG (50)
CREATED = SessionCredentials("mqlabCreated", "created-secret-1")
#: an account added to the file by hand (the reload scenario)
ADDED = SessionCredentials("mqlabAdded", "added-secret-1")


def edited_acl() -> str:
    """The file as edited by hand: our accounts, the user may now publish to ``acl_t_deny``,
    and a new account ``mqlabAdded`` (defaultTopicPerm DENY, ``acl_t_pub=PUB``)."""
    accounts = [dict(a) for a in ACCOUNTS]
    user = next(a for a in accounts if a["accessKey"] == USER.access_key)
    user["topicPerms"] = ["acl_t_deny=PUB" if p == "acl_t_deny=DENY" else p
                          for p in user["topicPerms"]]  # fmt: skip
    accounts.append({
        "accessKey": ADDED.access_key, "secretKey": ADDED.secret_key, "whiteRemoteAddress": "",
        "admin": False, "defaultTopicPerm": "DENY", "defaultGroupPerm": "SUB",
        "topicPerms": ["acl_t_pub=PUB"],
    })  # fmt: skip
    return plain_acl(accounts)


def _create_topic(name: str, topic: str) -> Step:
    header = {
        "topic": topic, "defaultTopic": "TBW102", "readQueueNums": "1", "writeQueueNums": "1",
        "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
    }  # fmt: skip
    return Step(name, "UPDATE_AND_CREATE_TOPIC", header, to="acl", credentials=ADMIN, expect=0)


def _send(name: str, topic: str, credentials=None, *, n: int, note: str = "",
          expect: int | None = None, **header: str) -> Step:  # fmt: skip
    step = send_v2(name, topic, 0, f"acl-{n}".encode(), n=700 + n, group="acl_pg",
                   note=note, expect=expect, **header)  # fmt: skip
    return replace(step, to="acl", credentials=credentials)


def _pull(name: str, group: str, topic: str, credentials=USER, note: str = "") -> Step:
    return replace(pull(name, group, topic, 0, 0, note=note), to="acl", credentials=credentials)


def _heartbeat(name: str, group: str, topic: str, credentials=USER, note: str = "") -> Step:
    body = {
        "clientID": "127.0.0.1@acl",
        "consumerDataSet": [{
            "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "consumeType": "CONSUME_PASSIVELY",
            "groupName": group, "messageModel": "CLUSTERING",
            "subscriptionDataSet": [{
                "classFilterMode": False, "codeSet": [], "expressionType": "TAG",
                "subString": "*", "subVersion": 100, "tagsSet": [], "topic": topic,
            }],
            "unitMode": False,
        }],
        "producerDataSet": [],
    }  # fmt: skip
    return Step(name, "HEART_BEAT", {}, json_body(body), to="acl", credentials=credentials,
                note=note)  # fmt: skip


def _offset(name: str, group: str, topic: str, credentials=USER, note: str = "") -> Step:
    header = {"consumerGroup": group, "topic": topic, "queueId": "0", "commitOffset": "0"}
    return Step(name, "UPDATE_CONSUMER_OFFSET", header, to="acl", credentials=credentials,
                note=note)  # fmt: skip


_WRONG = SessionCredentials(USER.access_key, "not-the-secret")
_UNKNOWN = SessionCredentials("mqlabNobody", "nobody-secret-1")

_SETUP = [_create_topic(f"create_{t}", t) for t in TOPICS]

_WHO = [
    _send("unsigned", "acl_t_pubsub", n=1, note="no AccessKey at all"),
    _send("wrong_secret", "acl_t_pubsub", _WRONG, n=2, note="signed with another secret"),
    _send("unknown_key", "acl_t_pubsub", _UNKNOWN, n=3, note="an access key no account has"),
    _send("signed", "acl_t_pubsub", USER, n=4, expect=0, note="the user, PUB|SUB"),
    _send(
        "white_unsigned",
        "acl_t_deny",
        n=5,
        AccessKey=WHITE.access_key,
        note="account white-listed for 127.0.0.1: no signature, and no perm check",
    ),
    _send(
        "white_bad_signature",
        "acl_t_deny",
        n=6,
        AccessKey=WHITE.access_key,
        Signature="bm90IGEgc2lnbmF0dXJl",
        note="a white-listed account's signature is not checked",
    ),  # fmt: skip
    replace(
        _send("tampered", "acl_t_pubsub", USER, n=7),
        header={
            **_send("t", "acl_t_pubsub", n=7).header,
            "Signature": "AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        },
        note="a header Signature is replaced by the hook's",
    ),
    Step(
        "no_header_signed",
        "GET_BROKER_RUNTIME_INFO",
        {},
        to="acl",
        credentials=USER,
        note="no custom header: AccessKey alone is signed",
        body_kind="json",
    ),  # fmt: skip
    Step(
        "no_header_unsigned",
        "GET_ALL_TOPIC_CONFIG",
        {},
        to="acl",
        note="no ext fields at all: PlainAccessValidator#parse returns early",
    ),  # fmt: skip
    Step(
        "route_unsigned",
        "GET_ROUTEINFO_BY_TOPIC",
        {"topic": "acl_no_such_topic"},
        to="namesrv",
        note="the name server has no ACL in 4.9.3: an answer, not a refusal",
    ),  # fmt: skip
]

_TOPIC_PERMS = [
    _send(f"send_{t}", t, USER, n=10 + i, note=f"SEND_MESSAGE_V2 needs PUB on {t}")
    for i, t in enumerate(TOPICS)
] + [
    # the first pull waits for the reput (ReputMessageService) of the sends just answered,
    # as every first read after sends does (stats/pull raced it once in CI, stop 39)
    replace(
        _pull(f"pull_{t}", "acl_g_pubsub", t, note=f"PULL_MESSAGE needs SUB on {t}"),
        wait_ms=SETTLE_MS if i == 0 else 0,
    )
    for i, t in enumerate(TOPICS)
]  # fmt: skip

_GROUP_PERMS = [
    _pull(f"pull_group_{g}", g, "acl_t_pubsub", note=f"PULL_MESSAGE needs SUB on %RETRY%{g}")
    for g in GROUPS
] + [
    _heartbeat(
        "heartbeat_ok", "acl_g_sub", "acl_t_sub", note="HEART_BEAT body: group and topic SUB"
    ),  # fmt: skip
    _heartbeat("heartbeat_group_pub", "acl_g_pub", "acl_t_sub"),
    _heartbeat("heartbeat_topic_pub", "acl_g_sub", "acl_t_pub"),
    _pull(
        "pull_both_denied",
        "acl_g_deny",
        "acl_t_deny",
        note="topic and group both refused: which one the remark names",
    ),  # fmt: skip
    _pull("pull_both_pub", "acl_g_pub", "acl_t_pub", note="both PUB only"),
    _heartbeat("heartbeat_both_pub", "acl_g_pub", "acl_t_pub", note="both PUB only"),
    _offset("offset_ok", "acl_g_pubsub", "acl_t_sub"),
    _offset("offset_both_deny", "acl_g_deny", "acl_t_deny", note="both DENY"),
    _offset("offset_group_deny", "acl_g_deny", "acl_t_sub"),
    Step(
        "consumers_group_deny",
        "GET_CONSUMER_LIST_BY_GROUP",
        {"consumerGroup": "acl_g_deny"},
        to="acl",
        credentials=USER,
    ),  # fmt: skip
]

_ADMIN_ONLY = [
    replace(
        _create_topic("create_by_user", "acl_t_user"),
        credentials=USER,
        expect=None,
        note="UPDATE_AND_CREATE_TOPIC (17) is admin-only",
    ),  # fmt: skip
    Step(
        "group_by_user",
        "DELETE_SUBSCRIPTIONGROUP",
        {"groupName": "acl_g_pub"},
        to="acl",
        credentials=USER,
        note="DELETE_SUBSCRIPTIONGROUP (207) is admin-only",
    ),  # fmt: skip
    Step(
        "config_by_user",
        "UPDATE_BROKER_CONFIG",
        {},
        "brokerPermission=6\n",
        to="acl",
        credentials=USER,
        note="UPDATE_BROKER_CONFIG (25) is admin-only",
    ),  # fmt: skip
    Step(
        "delete_topic_by_white",
        "DELETE_TOPIC_IN_BROKER",
        {"topic": "acl_t_other", "AccessKey": WHITE.access_key},
        to="acl",
        note="a white-listed account skips checkPerm, admin-only codes too",
    ),  # fmt: skip
    Step(
        "acl_info_by_user",
        "GET_BROKER_CLUSTER_ACL_INFO",
        {},
        to="acl",
        credentials=USER,
        note="52 is not in Permission.ADMIN_CODE",
    ),  # fmt: skip
]

_ACL_CODES = [
    Step(
        "acl_config",
        "GET_BROKER_CLUSTER_ACL_CONFIG",
        {},
        to="acl",
        credentials=ADMIN,
        note="54: the accounts and global white addresses",
        body_kind="json",
    ),  # fmt: skip
    Step(
        "acl_info",
        "GET_BROKER_CLUSTER_ACL_INFO",
        {},
        to="acl",
        credentials=ADMIN,
        note="52: the version and the broker",
    ),  # fmt: skip
    Step(
        "acl_create",
        "UPDATE_AND_CREATE_ACL_CONFIG",
        {
            "accessKey": CREATED.access_key,
            "secretKey": CREATED.secret_key,
            "whiteRemoteAddress": "",
            "admin": "false",
            "defaultTopicPerm": "DENY",
            "defaultGroupPerm": "SUB",
            "topicPerms": "acl_t_pub=PUB,acl_t_sub=SUB",
            "groupPerms": "acl_g_sub=SUB",
        },
        to="acl",
        credentials=ADMIN,
        note="50: a new account, written to the file",
    ),  # fmt: skip
    _send("created_sends", "acl_t_pub", CREATED, n=30, note="the new account at once"),
    _send("created_denied", "acl_t_pubsub", CREATED, n=31, note="its defaultTopicPerm DENY"),
    Step(
        "acl_create_short",
        "UPDATE_AND_CREATE_ACL_CONFIG",
        {"accessKey": "short", "secretKey": "short-secret", "admin": "false"},
        to="acl",
        credentials=ADMIN,
        note="an access key of 6 characters or fewer",
    ),  # fmt: skip
    Step(
        "acl_create_by_user",
        "UPDATE_AND_CREATE_ACL_CONFIG",
        {"accessKey": "mqlabByUser", "secretKey": "byuser-secret-1", "admin": "true"},
        to="acl",
        credentials=USER,
        note="50 by a non-admin: not an ADMIN_CODE",
    ),  # fmt: skip
    Step(
        "acl_delete",
        "DELETE_ACL_CONFIG",
        {"accessKey": CREATED.access_key},
        to="acl",
        credentials=ADMIN,
        note="51",
    ),  # fmt: skip
    _send("deleted_sends", "acl_t_pub", CREATED, n=32, note="the deleted account"),
    Step(
        "acl_delete_unknown",
        "DELETE_ACL_CONFIG",
        {"accessKey": "mqlabNobody"},
        to="acl",
        credentials=ADMIN,
        note="51 for no such account",
    ),  # fmt: skip
    Step(
        "acl_white",
        "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG",
        {"globalWhiteAddrs": "10.10.103.*,172.16.0.1"},
        to="acl",
        credentials=ADMIN,
        note="53: rewrites globalWhiteRemoteAddresses",
    ),  # fmt: skip
    Step(
        "acl_config_after",
        "GET_BROKER_CLUSTER_ACL_CONFIG",
        {},
        to="acl",
        credentials=ADMIN,
        note="54 after 50, 51 and 53",
        body_kind="json",
    ),  # fmt: skip
]

_RELOAD = [
    # 50, 51 and 53 above wrote the file: at AclFileWatchService's next look (within 5 s)
    # PlainPermissionManager#load(String) keeps only access keys it did not know, so every
    # account known before answers a NullPointerException from now on
    replace(
        _send(
            "settled_user",
            "acl_t_pubsub",
            USER,
            n=40,
            note="the reload after 50/51/53: a known account has no resource left",
        ),
        wait_ms=RELOAD_WAIT_MS,
    ),  # fmt: skip
    _send("settled_admin", "acl_t_pubsub", ADMIN, n=41, note="the admin too"),
    _send(
        "settled_white",
        "acl_t_pubsub",
        n=42,
        AccessKey=WHITE.access_key,
        note="and a white-listed one (its white address is on the lost resource)",
    ),
    _send("settled_unknown", "acl_t_pubsub", _UNKNOWN, n=43, note="an unknown key: as before"),
    _send("settled_unsigned", "acl_t_pubsub", n=44, note="unsigned: as before"),
    _send("before_edit", "acl_t_pub", ADDED, n=45, note="not in the file yet"),
    SideAction(
        "edit",
        "write_acl_file",
        (edited_acl(),),
        note="plain_acl.yml rewritten by hand: mqlabAdded added, acl_t_deny=PUB",
    ),
    replace(
        _send(
            "added_sends",
            "acl_t_pub",
            ADDED,
            n=46,
            expect=0,
            note="a key new to the broker: loaded at the watcher's next look",
        ),
        wait_ms=RELOAD_WAIT_MS,
    ),  # fmt: skip
    _send("added_denied", "acl_t_deny", ADDED, n=47, note="its defaultTopicPerm DENY"),
    _send(
        "user_after_edit",
        "acl_t_deny",
        USER,
        n=48,
        note="acl_t_deny=PUB, but a key the broker knew is not reloaded",
    ),  # fmt: skip
    Step(
        "white_split",
        "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG",
        {"globalWhiteAddrs": "10.10.103.*,192.168.0.{1,2}"},
        to="acl",
        credentials=ADDED,
        note="53 by a non-admin; the value is split at every comma",
    ),  # fmt: skip
    Step(
        "acl_config_split",
        "GET_BROKER_CLUSTER_ACL_CONFIG",
        {},
        to="acl",
        credentials=ADDED,
        note="54: the split addresses, and the accounts as the file has them",
        body_kind="json",
    ),
]

SCENARIOS = [
    Scenario(
        "acl",
        "acl-who",
        [*_SETUP, *_WHO],
        doc="Unsigned, wrong secret, unknown key, signed, white-listed, no header.",
    ),
    Scenario(
        "acl",
        "acl-topic-perms",
        _TOPIC_PERMS,
        doc="DENY, PUB, SUB, PUB|SUB and the default perm per topic, for sends and pulls.",
    ),
    Scenario(
        "acl",
        "acl-group-perms",
        _GROUP_PERMS,
        doc="Per group (as %RETRY% topics): pulls, heartbeats, offsets, consumer lists.",
    ),
    # every broker code refused three ways, nothing changed (before the scenarios below
    # delete a topic and write the file)
    *acl_refusals.SCENARIOS,
    Scenario(
        "acl",
        "acl-admin-only",
        _ADMIN_ONLY,
        doc="Permission.ADMIN_CODE by a non-admin, and by a white-listed account.",
    ),
    Scenario(
        "acl",
        "acl-admin-codes",
        _ACL_CODES,
        doc="Codes 50-54 by the admin: accounts and white addresses changed in the file.",
    ),
    Scenario(
        "acl",
        "acl-reload",
        _RELOAD,
        doc="plain_acl.yml changed (by 50/51/53, then by hand): 4.9.3 reloads it within "
        "5 s, and loses every account it already knew.",
    ),
]
