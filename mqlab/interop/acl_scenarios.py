"""Interop scenarios with ACL on: real clients that sign, against ``broker-acl`` of each target.

Each target's ``broker-acl`` (``Target.acl()``, :mod:`mqlab.interop.acl_broker`) reads our
accounts (:mod:`mqlab.conformance.scenarios.acl_accounts`): the admin ``mqlabAdmin``, the user
``mqlabUser`` (PUB|SUB on ``acl_t_pubsub``, SUB only on ``acl_t_sub``; default perms PUB for
topics, SUB for groups) and ``mqlabWhite`` (white-listed for 127.0.0.1).

- ``java/acl-clients``: the 4.9.3 Java client's producer, push consumer and lite-pull consumer
  built with an ``AclClientRPCHook`` (``AclScenarios#clients`` in conformance/java);
- ``go/acl-clients``: the Go client's producer and push consumer with ``primitive.Credentials``
  (``producer.WithCredentials``, ``consumer.WithCredentials``);
- ``mqadmin/acl-*``: the five ACL commands of ``MQAdminStartup#initCommand``
  (``UpdateAccessConfigSubCommand`` and its kin), signing as 4.9.3's tools do, with the
  ``accessKey`` / ``secretKey`` of ``$ROCKETMQ_HOME/conf/tools.yml``
  (``AclUtils#getAclRPCHook``), and one without that file, unsigned. All run in the target's
  batch mqadmin JVM (``MqAdminSession``).

Every check is the real 4.9.3 broker's answer (:mod:`mqlab.conformance.acl_answers`). The three
commands that write the ACL file poison the broker (4.9.3 loses its accounts at the watcher's
next reload, apache/rocketmq#3887): each marks it (``AclBroker.file_written``) and the next
scenario gets a fresh one; the first broker serves the clients, the reads and the first write,
so a target starts three. They run last (``acl=True``): ``broker-acl``'s ``TBW102`` must not
draw other scenarios' auto-created topics.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from mqlab.conformance.acl_answers import GO_CLIENTS, JAVA_CLIENTS, NO_ACCESS_KEY
from mqlab.conformance.scenarios.acl_accounts import ADMIN, USER
from mqlab.interop.acl_broker import create_topics, read_plain_acl
from mqlab.interop.go_client import run_go_client
from mqlab.interop.java_client import run_java_scenario
from mqlab.interop.scenarios import expect, scenario
from mqlab.interop.targets import Target

__all__ = ["MQADMIN", "MQADMIN_CHECKS", "TOPICS", "run_acl_command"]

#: the topics the clients use, created on broker-acl alone (1 queue each)
TOPICS = ("acl_t_pubsub", "acl_t_sub")


def _topics(acl) -> None:
    codes = create_topics(acl.addr, TOPICS, acl.namesrv_addr)
    expect(codes == [0, 0], f"the admin creates {TOPICS} on broker-acl: codes {codes}")


# --------------------------------------------------------------------------- clients


@scenario(
    "java",
    "AclClientRPCHook: signed producer, push and lite-pull consumers; refused sends as thrown",
    acl=True,
)
def java_acl_clients(t: Target, work: Path) -> dict:
    acl = t.acl()
    _topics(acl)
    r = run_java_scenario("acl-clients", acl.namesrv_addr, "acl-", work)
    expect(r == JAVA_CLIENTS, f"as the real 4.9.3 broker answered the Java client: {r}")
    return r


def _go_sends(results: list[dict]) -> list[dict]:
    return [{k: r.get(k) for k in ("i", "status", "broker", "queueId", "error")} for r in results]


@scenario("go", "primitive.Credentials: signed producer and push consumer; refused sends", acl=True)
def go_acl_clients(t: Target, work: Path) -> dict:
    acl = t.acl()
    _topics(acl)
    ns, user = acl.namesrv_addr, ["-ak", USER.access_key, "-sk", USER.secret_key]

    def produce(topic: str, count: int, *keys: str) -> list[dict]:
        return run_go_client(["produce", "-n", ns, "-topic", topic, "-group", "acl_go_pg",
                              "-count", str(count), "-tags", "TagGo", *keys])  # fmt: skip

    sent = produce("acl_t_pubsub", 4, *user)
    expect([s.get("status") for s in sent] == [0] * 4, f"4 signed sends SEND_OK: {sent}")
    no_pub = produce("acl_t_sub", 1, *user)
    wrong = produce("acl_t_pubsub", 1, "-ak", USER.access_key, "-sk", "not-the-secret")
    refused = {"noPub": no_pub[0].get("error"), "wrongSecret": wrong[0].get("error")}
    expect(refused == GO_CLIENTS, f"the broker's refusals, as the real one answered: {refused}")
    # a group the user's perms do not list: its default perm (SUB) lets it consume; the
    # expression keeps to this scenario's messages (java/acl-clients sends TagA to the topic)
    got = run_go_client(
        ["consume", "-n", ns, "-topic", "acl_t_pubsub", "-group", "acl_go_cg", "-expr", "TagGo",
         "-expect", "4", "-timeout", "60s", *user],
        home=work,
    )  # fmt: skip
    delivered = sorted(
        (m["body"], m["tags"], m["reconsumeTimes"]) for m in got if m["event"] == "consume"
    )
    expect([d[0] for d in delivered] == [f"go-{i}" for i in range(4)], f"got {delivered}")
    return {"sends": _go_sends(sent), "refused": refused, "delivered": [list(d) for d in delivered]}


# --------------------------------------------------------------------------- mqadmin


def _check_version(out: list[str], addr: str, before: dict, after: dict, home: Path) -> None:
    path = str(Path(home) / "conf" / "plain_acl.yml")
    row = out[0].split() if out else []
    expect(row[:5] == ["DefaultCluster", "broker-acl", addr, path, "0"], f"the row: {out}")
    when = " ".join(row[5:])
    expect(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", when) is not None, f"a time: {when}")
    expect(out[1:] == ["get broker's plain access config version success."], f"{out}")
    expect(after == before, "the file unchanged")


def _check_get(out: list[str], addr: str, before: dict, after: dict, home: Path) -> None:
    expect(out[:1] == ["globalWhiteRemoteAddresses: [10.10.103.*, 192.168.0.{1,2}]"], f"{out}")
    expect(out[2:3] == ["accounts:"], f"{out}")
    expect([x.strip() for x in out[3:12]] == [
        "accessKey         : mqlabAdmin", "secretKey         : admin-secret-1",
        "whiteRemoteAddress:", "admin             : true", "defaultTopicPerm  :",
        "defaultGroupPerm  :", "topicPerms        :", "groupPerms        :", "",
    ], f"the admin's account first, 8 lines: {out[3:12]}")  # fmt: skip
    perms = "  topicPerms        : [acl_t_deny=DENY, acl_t_pub=PUB, acl_t_sub=SUB, acl_t_pubsub=PUB|SUB]"
    expect(perms in out, f"the user's topic perms as a list: {out}")
    expect(after == before, "the file unchanged")


def _check_update(out: list[str], addr: str, before: dict, after: dict, home: Path) -> None:
    expect(out[:1] == [f"create or update plain access config to {addr} success."], f"{out}")
    expect(len(out) == 2 and re.fullmatch(r"org\.apache\.rocketmq\.common\.PlainAccessConfig@"
                                          r"[0-9a-f]+", out[1]) is not None, f"{out}")  # fmt: skip
    expect(after["accounts"][:-1] == before["accounts"], "the accounts before kept, in order")
    added = after["accounts"][-1]
    expect(added == {"accessKey": "mqlabTool1", "secretKey": "tool-secret-1", "admin": False,
                     "defaultTopicPerm": "DENY", "topicPerms": ["acl_t_pub=PUB", "acl_t_sub=SUB"]},
           f"the account appended: {added}")  # fmt: skip
    expect(after["dataVersion"][0]["counter"] == 1, f"dataVersion: {after['dataVersion']}")


def _check_delete(out: list[str], addr: str, before: dict, after: dict, home: Path) -> None:
    expect(out == [f"delete plain access config account from {addr} success.",
                   "account's accesskey is:mqlabWhite"], f"{out}")  # fmt: skip
    keys = [a["accessKey"] for a in after["accounts"]]
    expect(keys == ["mqlabAdmin", "mqlabUser"], f"the account removed from the file: {keys}")


def _check_white(out: list[str], addr: str, before: dict, after: dict, home: Path) -> None:
    expect(out == [f"update global white remote addresses to {addr} success."], f"{out}")
    white = after["globalWhiteRemoteAddresses"]
    expect(white == ["10.10.103.*", "172.16.0.1"], f"the addresses replaced: {white}")
    expect(after["accounts"] == before["accounts"], "the accounts unchanged")


#: (credentials for conf/tools.yml, arguments after -b ADDR) per mqadmin ACL command
MQADMIN = {
    "clusterAclConfigVersion": (ADMIN, []),
    "getAccessConfigSubCommand": (ADMIN, []),
    "updateAclConfig": (ADMIN, ["-a", "mqlabTool1", "-s", "tool-secret-1", "-t",
                                "acl_t_pub=PUB,acl_t_sub=SUB", "-i", "DENY", "-m", "false"]),
    "deleteAccessConfig": (ADMIN, ["-a", "mqlabWhite"]),
    "updateGlobalWhiteAddr": (ADMIN, ["-g", "10.10.103.*,172.16.0.1"]),
}  # fmt: skip

#: what each command prints (stdout, by line) and leaves in the file, as on the real broker:
#: ``check(out, addr, before, after, home)`` raises ScenarioFailed naming what differs
MQADMIN_CHECKS: dict[str, Callable[[list[str], str, dict, dict, Path], None]] = {
    "clusterAclConfigVersion": _check_version,
    "getAccessConfigSubCommand": _check_get,
    "updateAclConfig": _check_update,
    "deleteAccessConfig": _check_delete,
    "updateGlobalWhiteAddr": _check_white,
}

#: run(args, credentials) -> the finished mqadmin command
Runner = Callable[[list[str], object], subprocess.CompletedProcess]


def run_acl_command(
    command: str, addr: str, home: Path, run: Runner
) -> tuple[list[str], dict, dict]:
    """``mqadmin <command> -b addr ...`` (:data:`MQADMIN`) by ``run``, checked
    (:data:`MQADMIN_CHECKS`); its stdout lines and the ACL file before and after."""
    credentials, args = MQADMIN[command]
    before = read_plain_acl(home)
    proc = run([command, "-b", addr, *args], credentials)
    after = read_plain_acl(home)
    expect(proc.returncode == 0, f"mqadmin {command} exited {proc.returncode}: {proc.stderr}")
    out = proc.stdout.strip().splitlines()
    MQADMIN_CHECKS[command](out, addr, before, after, home)
    return out, before, after


def _session_runner(acl) -> Runner:
    from mqlab.conformance.real_cluster import mqadmin_session

    session = mqadmin_session(acl.namesrv_addr)
    return lambda args, credentials: session.run(args, timeout_s=90, credentials=credentials)


def _normalize(text: str) -> list[str]:
    # imported here: importing mqadmin_scenarios registers its scenarios, and the matrix's
    # run order is the order the modules register in (this one's go last in any case)
    from mqlab.interop.mqadmin_scenarios import normalize

    return normalize(text)


def _acl_command(t: Target, command: str, *, writes: bool = False) -> tuple[list[str], dict]:
    acl = t.acl()
    try:
        out, _before, after = run_acl_command(command, acl.addr, acl.home, _session_runner(acl))
    finally:
        if writes:
            acl.file_written()
    return [re.sub(r"PlainAccessConfig@[0-9a-f]+", "PlainAccessConfig@<hash>", x)
            for x in _normalize("\n".join(out))], after  # fmt: skip


@scenario("mqadmin", "clusterAclConfigVersion -b, no conf/tools.yml: sent unsigned", acl=True)
def mqadmin_acl_unsigned(t: Target, work: Path) -> dict:
    acl = t.acl()
    proc = _session_runner(acl)(["clusterAclConfigVersion", "-b", acl.addr], None)
    expect((proc.returncode, proc.stdout.strip()) == (0, ""), f"exit 0, nothing on stdout: {proc}")
    expect(f"CODE: 1  DESC: {NO_ACCESS_KEY}" in proc.stderr, f"refused: {proc.stderr[-1500:]}")
    return {"stderr": [x for x in _normalize(proc.stderr) if not x.startswith("WARNING:")]}


@scenario("mqadmin", "clusterAclConfigVersion -b by the admin: the file's version", acl=True)
def mqadmin_acl_cluster_config_version(t: Target, work: Path) -> dict:
    return {"clusterAclConfigVersion": _acl_command(t, "clusterAclConfigVersion")[0]}


@scenario("mqadmin", "getAccessConfigSubCommand -b by the admin: every account", acl=True)
def mqadmin_acl_get_access_config(t: Target, work: Path) -> dict:
    return {"getAccessConfigSubCommand": _acl_command(t, "getAccessConfigSubCommand")[0]}


@scenario("mqadmin", "updateAclConfig -b by the admin: an account appended to the file", acl=True)
def mqadmin_acl_update_config(t: Target, work: Path) -> dict:
    out, after = _acl_command(t, "updateAclConfig", writes=True)
    return {"updateAclConfig": out, "added": after["accounts"][-1],
            "dataVersionCounter": after["dataVersion"][0]["counter"]}  # fmt: skip


@scenario("mqadmin", "deleteAccessConfig -b by the admin: an account gone from the file", acl=True)
def mqadmin_acl_delete_access_config(t: Target, work: Path) -> dict:
    out, after = _acl_command(t, "deleteAccessConfig", writes=True)
    return {"deleteAccessConfig": out, "accounts": [a["accessKey"] for a in after["accounts"]]}


@scenario("mqadmin", "updateGlobalWhiteAddr -b by the admin: the addresses replaced", acl=True)
def mqadmin_acl_update_global_white_addr(t: Target, work: Path) -> dict:
    out, after = _acl_command(t, "updateGlobalWhiteAddr", writes=True)
    return {"updateGlobalWhiteAddr": out, "global": after["globalWhiteRemoteAddresses"]}
