"""What no request may make mqlab do: run a command, or write a file outside its store.

RocketMQ's own history names the holes (issue 25, "What no one may do"):

* CVE-2023-33246: UPDATE_BROKER_CONFIG (25) may set ``filterServerNums`` and
  ``rocketmqHome``; 4.9.3's ``FilterServerManager#createFilterServer`` (every 30 s) then runs
  ``sh <rocketmqHome>/bin/startfsrv.sh ...`` through ``Runtime#exec``, once per missing filter
  server, so a home such as ``-c $@|sh . echo <command>;`` runs any command. The name server's
  UPDATE_NAMESRV_CONFIG (318) takes ``rocketmqHome`` too.
* CVE-2023-37582: UPDATE_NAMESRV_CONFIG may set ``configStorePath`` and ``kvConfigPath``;
  4.9.3's ``Configuration#update`` writes the whole config to the first at once, and
  ``KVConfigManager#persist`` writes the KV table (PUT_KV_CONFIG's content) to the second.

What 4.9.3 does with each was asked of the real broker and name server
(tests/conformance/test_security_vs_real.py): every request answers SUCCESS, the script runs,
the files appear where the request said. mqlab answers the same codes and shows the new
values in GET_BROKER_CONFIG / GET_NAMESRV_CONFIG, as 4.9.3 does, but starts no filter
server (``mqlab.broker.filter_server_manager``: no ``createFilterServer``) and writes no
config file from a request (``mqlab.namesrv.configuration``); its KV table stays in the
file the server started with, inside its store.

The guard (:func:`guard`): a ``sys.addaudithook`` hook that, while a test runs, refuses (raises
in) every process start (``subprocess.Popen``, ``os.system``, ``os.exec*``, ``os.spawn*``,
``os.posix_spawn``, ``os.fork``, ``pty.spawn``) and records every file opened for writing,
created, renamed or removed; plus ``os.system`` / ``subprocess.Popen`` / ``os.popen``
replaced by functions that fail the test. A test then checks that nothing ran and nothing
outside the store was touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mqlab.acl.signature import SessionCredentials, sign_request
from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.conformance.wire import call_sync
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.codes import RequestCode as R
from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.raw_client import RawClient
from mqlab.runtime.sim import SimDriver
from mqlab.serve import ServeConfig, ServerThread
from mqlab.store.config import MessageStoreConfig

# -- the guard -----------------------------------------------------------------------------

_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "os.fork", "os.forkpty", "pty.spawn", "os.startfile")  # fmt: skip
_FS_EVENTS = ("os.rename", "os.mkdir", "os.remove", "os.rmdir", "os.symlink", "os.link",
              "os.truncate", "shutil.move", "shutil.copyfile", "os.utime")  # fmt: skip
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_STATE: dict = {"on": False, "processes": [], "writes": []}


def _path(p) -> str | None:
    if isinstance(p, int):
        return None  # an open file descriptor: its open was seen
    try:
        return os.path.realpath(os.fsdecode(p))
    except TypeError:
        return None


def _audit(event: str, args: tuple) -> None:
    if not _STATE["on"]:
        return
    if event.startswith(_PROCESS_EVENTS):
        _STATE["processes"].append((event, repr(args)[:200]))
        raise RuntimeError(f"test_security: {event} refused: {args!r:.200}")
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None))[:3]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        if writes and (p := _path(path)) is not None:
            _STATE["writes"].append((event, p))
    elif event.startswith(_FS_EVENTS):
        for a in args[:2]:
            if isinstance(a, str | bytes | os.PathLike) and (p := _path(a)) is not None:
                _STATE["writes"].append((event, p))


def _install() -> None:
    """Add the hook once, at the first guarded test (it cannot be removed: it stays
    inactive outside a guarded test)."""
    if not _STATE.get("installed"):
        sys.addaudithook(_audit)
        _STATE["installed"] = True


class Guard:
    """What the guarded test did: processes refused, paths written."""

    def __init__(self, allowed: list[Path]) -> None:
        self.allowed = [os.path.realpath(a) for a in allowed]

    @property
    def processes(self) -> list:
        return list(_STATE["processes"])

    def outside(self) -> list[tuple[str, str]]:
        """Writes to paths outside the allowed roots."""
        return [(e, p) for e, p in _STATE["writes"]
                if not any(p == a or p.startswith(a + os.sep) for a in self.allowed)]  # fmt: skip

    def start(self) -> None:
        """From now on (the test's own files prepared)."""
        _STATE.update(processes=[], writes=[], on=True)

    def check(self) -> None:
        assert self.processes == [], f"a process was started: {self.processes}"
        assert self.outside() == [], f"written outside the store: {self.outside()}"


@pytest.fixture
def guard(monkeypatch, tmp_path):
    """Refuse process starts (audit hook and monkeypatch), record file writes; the store
    (``tmp_path/store``) is the one place writes may go."""

    def refuse(*a, **k):
        _STATE["processes"].append(("monkeypatch", repr(a)[:200]))
        raise AssertionError(f"a process was started: {a!r:.200}")

    _install()
    monkeypatch.setattr(os, "system", refuse)
    monkeypatch.setattr(os, "popen", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    try:
        yield Guard([tmp_path / "store"])
    finally:
        _STATE["on"] = False


def test_the_guard_sees_a_process_and_a_write_outside(guard, tmp_path):
    """The guard itself: os.system and subprocess refused and recorded, a write outside
    the store recorded, one inside not."""
    (tmp_path / "store").mkdir()
    guard.start()
    with pytest.raises(AssertionError):
        os.system("true")
    with pytest.raises(AssertionError):
        subprocess.run(["true"])
    with pytest.raises(RuntimeError, match="os.posix_spawn|os.fork|subprocess.Popen"):
        os.posix_spawn("/bin/true", ["true"], {})
    (tmp_path / "store" / "in").write_text("x")
    (tmp_path / "out").write_text("x")
    assert [e for e, _ in guard.processes] == ["monkeypatch", "monkeypatch", "os.posix_spawn"]
    assert guard.outside() == [("open", str((tmp_path / "out").resolve()))]
    _STATE["processes"].clear()
    _STATE["writes"].clear()


# -- what the attacks send -----------------------------------------------------------------


def _startfsrv(outside: Path) -> Path:
    """``<home>/bin/startfsrv.sh``, the script 4.9.3's filter-server start runs: it writes
    its arguments to ``<outside>/ran``. Returns the home."""
    home = outside / "home"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "startfsrv.sh"
    script.write_text(f'#!/bin/sh\necho "$@" > {outside}/ran\n')
    script.chmod(0o755)
    return home


def _broker_config_attack(outside: Path) -> list[bytes]:
    """Two UPDATE_BROKER_CONFIG bodies: a home whose script exists, then CVE-2023-33246's
    own form (``-c $@|sh . echo <command>;``: ``split(" ")`` then ``sh -c '$@|sh' . echo ...``)."""
    home = _startfsrv(outside)
    return [
        f"filterServerNums=1\nrocketmqHome={home}\n".encode(),
        f"filterServerNums=1\nrocketmqHome=-c $@|sh . echo touch {outside}/pwned;\n".encode(),
    ]


def _namesrv_config_attack(outside: Path) -> bytes:
    return (f"configStorePath={outside}/namesrv.properties\n"
            f"kvConfigPath={outside}/kvConfig.json\nrocketmqHome={outside}/home\n").encode()  # fmt: skip


#: the content CVE-2023-37582's proofs put in the KV table: a crontab line
KV_VALUE = "* * * * * root touch /tmp/mqlab-never"
ADMIN = SessionCredentials("mqlabAdmin", "admin-secret-1")
USER = SessionCredentials("mqlabUser", "user-secret-1")
ACL = f"""accounts:
- accessKey: {ADMIN.access_key}
  secretKey: {ADMIN.secret_key}
  admin: true
- accessKey: {USER.access_key}
  secretKey: {USER.secret_key}
  defaultTopicPerm: PUB
"""


def _config(body: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in body.splitlines() if "=" in line)


# -- CVE-2023-33246 ------------------------------------------------------------------------


class _Sim:
    """A name server and a broker on the simulation driver (virtual time)."""

    def __init__(self, tmp_path: Path, acl: bool) -> None:
        home = tmp_path / "store" / "home"
        (home / "conf").mkdir(parents=True)
        (home / "conf" / "plain_acl.yml").write_text(ACL)
        self.d = SimDriver(seed=1)
        self.d.add_node(NamesrvController())
        self.broker = BrokerController(
            BrokerConfig(acl_enable=acl),
            MessageStoreConfig(store_path_root_dir=str(tmp_path / "store" / "broker")),
            rocketmq_home_dir=str(home),
        )
        self.d.add_node(self.broker)
        self.client = RawClient("client", "127.0.0.1:0")
        self.d.add_node(self.client)
        self.d.run_until_idle()

    def call(self, code, body=None, cred=None, ext=None):
        cmd = RemotingCommand(code, ext_fields=dict(ext or {}), body=body)
        if cred is not None:
            sign_request(cmd, cred)
        c = self.client.send(self.broker.broker_addr, code, cmd.ext_fields, body)
        self.d.run_until_idle()
        return c


def test_cve_2023_33246_update_broker_config_starts_no_filter_server(guard, tmp_path):
    """ACL off: both bodies answer SUCCESS and GET_BROKER_CONFIG shows filterServerNums=1
    and the home, as 4.9.3 does; then 65 s of virtual time (4.9.3's createFilterServer runs
    at 5 s and every 30 s): no process, no file outside the store."""
    outside = tmp_path / "outside"
    bodies = _broker_config_attack(outside)
    sim = _Sim(tmp_path, acl=False)
    guard.start()
    for body in bodies:
        c = sim.call(R.UPDATE_BROKER_CONFIG, body)
        assert (c.code, c.remark) == (0, None)
    shown = _config(sim.call(R.GET_BROKER_CONFIG).response.body.decode())
    assert shown["filterServerNums"] == "1"
    assert shown["rocketmqHome"] == f"-c $@|sh . echo touch {outside}/pwned;"
    sim.d.advance(65_000)
    assert sorted(p.name for p in outside.iterdir()) == ["home"]  # no "ran", no "pwned"
    guard.check()


def test_cve_2023_33246_with_acl_on_only_the_admin_may_and_still_nothing_runs(guard, tmp_path):
    """ACL on: UPDATE_BROKER_CONFIG (25) is in Permission.ADMIN_CODE: unsigned refused (636),
    the user refused (553), the admin answered SUCCESS; 65 s later nothing has run."""
    outside = tmp_path / "outside"
    body = _broker_config_attack(outside)[1]
    sim = _Sim(tmp_path, acl=True)
    guard.start()
    exc = "org.apache.rocketmq.acl.common.AclException: "
    at = ", org.apache.rocketmq.acl.plain.PlainPermissionManager."
    assert (sim.call(R.UPDATE_BROKER_CONFIG, body).remark) == (
        f"{exc}No accessKey is configured{at}validate(PlainPermissionManager.java:636)"
    )
    assert (sim.call(R.UPDATE_BROKER_CONFIG, body, USER).remark) == (
        f"{exc}Need admin permission for request code=25, but accessKey=mqlabUser is not"
        f"{at}checkPerm(PlainPermissionManager.java:553)"
    )
    c = sim.call(R.UPDATE_BROKER_CONFIG, body, ADMIN)
    assert (c.code, c.remark) == (0, None)
    sim.d.advance(65_000)
    assert sorted(p.name for p in outside.iterdir()) == ["home"]
    guard.check()


@pytest.fixture
def server(tmp_path):
    cfg = ServeConfig(namesrv_port=0, broker_port=0, store=str(tmp_path / "store"),
                      trace_level="off")  # fmt: skip
    s = ServerThread(cfg)
    try:
        yield s
    finally:
        s.stop()


def test_cve_2023_33246_on_the_wire_broker_and_name_server(server, guard, tmp_path):
    """``serve`` on real sockets: UPDATE_BROKER_CONFIG with both bodies, and the name
    server's UPDATE_NAMESRV_CONFIG with a home: SUCCESS each, no process, no file outside."""
    outside = tmp_path / "outside"
    broker_addr = server.call(lambda s: s.broker().broker_addr)
    bodies = _broker_config_attack(outside)
    guard.start()
    for body in bodies:
        c = call_sync(broker_addr, RemotingCommand.create_request(R.UPDATE_BROKER_CONFIG, {}, body))
        assert (c.code, c.remark) == (0, None)
    c = call_sync(server.namesrv_addr, RemotingCommand.create_request(
        R.UPDATE_NAMESRV_CONFIG, {}, f"rocketmqHome={outside}/home\n".encode()))  # fmt: skip
    assert (c.code, c.remark) == (0, None)
    assert sorted(p.name for p in outside.iterdir()) == ["home"]
    guard.check()


# -- CVE-2023-37582 ------------------------------------------------------------------------


def test_cve_2023_37582_namesrv_config_paths_write_no_file(server, guard, tmp_path):
    """UPDATE_NAMESRV_CONFIG moves configStorePath and kvConfigPath out of the store:
    SUCCESS, and GET_NAMESRV_CONFIG shows them, as 4.9.3 does; PUT_KV_CONFIG with a crontab
    line: SUCCESS, readable again. 4.9.3 writes both files where the request said; mqlab
    writes neither, and its KV table goes on to the file it started with, in the store."""
    outside = tmp_path / "outside"
    outside.mkdir()
    ns = server.namesrv_addr
    attack = _namesrv_config_attack(outside)
    guard.start()

    def ask(code, ext=None, body=None):
        return call_sync(ns, RemotingCommand.create_request(code, ext or {}, body))

    c = ask(R.UPDATE_NAMESRV_CONFIG, body=attack)
    assert (c.code, c.remark) == (0, None)
    shown = _config(ask(R.GET_NAMESRV_CONFIG).body.decode())
    assert shown["kvConfigPath"] == f"{outside}/kvConfig.json"
    assert shown["configStorePath"] == f"{outside}/namesrv.properties"
    kv = {"namespace": "mqlab-cve", "key": "cron", "value": KV_VALUE}
    c = ask(R.PUT_KV_CONFIG, kv)
    assert (c.code, c.remark) == (0, None)
    got = ask(R.GET_KV_CONFIG, {"namespace": "mqlab-cve", "key": "cron"})
    assert (got.code, got.ext_fields["value"]) == (0, KV_VALUE)
    assert list(outside.iterdir()) == []
    kept = tmp_path / "store" / "namesrv" / "kvConfig.json"
    assert KV_VALUE in kept.read_text()
    guard.check()
    assert ("open", str(kept.resolve())) in _STATE["writes"] or any(
        p.startswith(str(kept.parent.resolve())) for _, p in _STATE["writes"]
    )  # the guard saw the write it allows


def test_a_store_path_set_by_request_moves_no_config_file(guard, tmp_path):
    """UPDATE_BROKER_CONFIG ``storePathRootDir=<outside>``, then a topic, a group and an
    offset, and 20 s of virtual time (the 5 s / 10 s persist ticks): 4.9.3 writes topics.json
    and the rest under ``<outside>/config`` (test_security_vs_real); mqlab keeps its files
    where the broker started."""
    outside = tmp_path / "outside"
    outside.mkdir()
    sim = _Sim(tmp_path, acl=False)
    guard.start()
    c = sim.call(R.UPDATE_BROKER_CONFIG, f"storePathRootDir={outside}\n".encode())
    assert (c.code, c.remark) == (0, None)
    assert _config(sim.call(R.GET_BROKER_CONFIG).response.body.decode())[
        "storePathRootDir"] == str(outside)  # fmt: skip
    topic = {"topic": "mqlab_cve_topic", "defaultTopic": "TBW102", "readQueueNums": "1",
             "writeQueueNums": "1", "perm": "6", "topicFilterType": "SINGLE_TAG"}  # fmt: skip
    assert sim.call(R.UPDATE_AND_CREATE_TOPIC, ext=topic).code == 0
    assert sim.call(R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
                    b'{"groupName":"mqlab_cve_group"}').code == 0  # fmt: skip
    offset = {"consumerGroup": "mqlab_cve_group", "topic": "mqlab_cve_topic", "queueId": "0",
              "commitOffset": "0"}  # fmt: skip
    assert sim.call(R.UPDATE_CONSUMER_OFFSET, ext=offset).code == 0
    sim.d.advance(20_000)
    assert list(outside.iterdir()) == []
    topics = tmp_path / "store" / "broker" / "config" / "topics.json"
    assert "mqlab_cve_topic" in topics.read_text()
    guard.check()
