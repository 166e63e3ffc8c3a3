"""The Java client through a DLedger leader kill (``mqlab.interop.dledger_failover``), on
mqlab's ``serve --dledger-brokers 3`` and on a real 4.9.3 DLedger broker group: 32 sends, the
leader killed after 16, then a batch of 4 to the new master, every one SEND_OK (tried again
after a failure) and every message consumed; then
DLedger's own ``DLedgerClient`` finds the new leader and reads the first entry.

One group at a time: each test starts its own and stops it.
"""

from __future__ import annotations

import os

import pytest

from mqlab.interop.dledger_failover import (
    AFTER,
    BATCH,
    BEFORE,
    MqlabDLedgerBrokers,
    RealDLedgerBrokers,
    check,
    check_client,
    run_dledger_client,
    run_dledger_failover,
    summary,
)
from mqlab.interop.java_client import java_missing

pytestmark = [pytest.mark.interop, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _java():
    why = java_missing()
    if why and os.environ.get("MQLAB_REQUIRE_CONFORMANCE", "").strip().lower() in (
        "1",
        "true",
        "yes",
    ):
        pytest.fail(f"MQLAB_REQUIRE_CONFORMANCE=1 but the Java client cannot run: {why}")
    if why:
        pytest.skip(f"the Java client cannot run: {why}")


@pytest.mark.parametrize("opener", [MqlabDLedgerBrokers, RealDLedgerBrokers], ids=["mqlab", "real"])
def test_every_acknowledged_message_is_consumed_through_a_leader_kill(opener, tmp_path):
    group = opener(tmp_path)
    try:
        r = run_dledger_failover(group, tmp_path / "java")
        client = run_dledger_client(group, tmp_path / "java")
    finally:
        group.close()
    print(summary(group.kind, r))
    print(f"{group.kind}: DLedgerClient {client}")
    # DLedger's own client finds the new leader by METADATA and reads the first message
    assert check_client(client) == []
    assert client["leader"] not in r["killed"]
    assert client["get0"]["entries"][0]["bodyLength"] == client["get0"]["entries"][0]["size"] - 48
    assert check(r) == []
    assert len(r["acked"]) == BEFORE + AFTER + BATCH
    assert sorted(set(r["consumed"]) & set(r["acked"])) == sorted(r["acked"])
    # the master after the kill is another node's broker
    assert r["newMaster"] not in r["killedAddrs"]
