"""``wire.broker_addr_table``: the route the harness reads from a name server, and the
1 SYSTEM_ERROR a real 4.9.3 name server can answer while a broker registers
(``RouteInfoManager#getAllClusterInfo`` serializes ``brokerAddrTable`` without its lock).
In CI that answer, with no body, made the DLedger mixed-group fixture fail with
``'NoneType' object has no attribute 'decode'``."""

from __future__ import annotations

import pytest

from mqlab.conformance import wire
from mqlab.remoting.command import RemotingCommand

TABLE = (
    b'{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911",'
    b'2:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster"}},'
    b'"clusterAddrTable":{"DefaultCluster":["broker-a"]}}'
)
CME = "java.util.ConcurrentModificationException"


def _answers(monkeypatch: pytest.MonkeyPatch, *answers: RemotingCommand) -> list[int]:
    asked: list[int] = []
    queue = list(answers)

    def fake_call_sync(addr: str, cmd: RemotingCommand, timeout: float = 10.0) -> RemotingCommand:
        asked.append(cmd.code)
        return queue.pop(0)

    monkeypatch.setattr(wire, "call_sync", fake_call_sync)
    return asked


def test_the_table_is_read_by_broker_id(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _answers(monkeypatch, RemotingCommand.create_response(0, None, None, TABLE))
    assert wire.broker_addr_table("ns:9876", "broker-a") == {
        0: "127.0.0.1:10911",
        2: "127.0.0.1:10921",
    }
    assert asked == [106]


def test_an_unknown_broker_name_is_an_empty_table(monkeypatch: pytest.MonkeyPatch) -> None:
    _answers(monkeypatch, RemotingCommand.create_response(0, None, None, TABLE))
    assert wire.broker_addr_table("ns:9876", "broker-z") == {}


def test_a_system_error_without_a_body_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _answers(
        monkeypatch,
        RemotingCommand.create_response(1, CME, None, None),
        RemotingCommand.create_response(0, None, None, TABLE),
    )
    assert wire.broker_addr_table("ns:9876", "broker-a", pause_s=0) == {
        0: "127.0.0.1:10911",
        2: "127.0.0.1:10921",
    }
    assert asked == [106, 106]


def test_an_error_every_time_names_the_code_and_remark(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _answers(monkeypatch, *[RemotingCommand.create_response(1, CME, None, None)] * 3)
    with pytest.raises(wire.NameServerError) as err:
        wire.broker_addr_table("ns:9876", "broker-a", tries=3, pause_s=0)
    assert str(err.value) == (
        f"GET_BROKER_CLUSTER_INFO to ns:9876 answered code 1 ({CME!r}) 3 times"
    )
    assert asked == [106, 106, 106]
