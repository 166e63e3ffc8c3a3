"""What a DLedger node answers a DLedger client: METADATA (50000), GET (50002) and PULL (51003).

``DLedgerClient`` (DLedger 0.2.3) asks every peer METADATA at start and every 3 s to find the
leader, and GET for an entry; ``DLedgerServer#handleMetadata`` and ``#handleGet`` answer.
0.2.3 registers PULL and has no handler for it. Each expected body below is what a real
4.9.3 node answered the same request (three real nodes of ``RaftNode00``, n0 leading with two
entries, JDK 17; 2026-11-30), with the peers' addresses put in this group's. The mixed
group (``mqlab.conformance.dledger_mixed``) asks real and mqlab nodes the same, side by side.
"""

from __future__ import annotations

import json

import pytest

from mqlab.dledger.dledger_entry import DLedgerEntry
from mqlab.dledger.dledger_server import GET_NPE, NO_BODY_NPE, PULL_NPE
from mqlab.dledger.group import DLedgerGroup
from mqlab.dledger.protocol import (
    DLedgerRequestCode,
    GetEntriesResponse,
    MetadataRequest,
    MetadataResponse,
)
from mqlab.dledger.rpc_body import from_body, to_body
from mqlab.remoting.codes import ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Node

GROUP = "RaftNode00"
PEERS = '"peers":{"n0":"127.0.0.1:40911","n1":"127.0.0.1:40912","n2":"127.0.0.1:40913"}'


@pytest.fixture(scope="module")
def group() -> DLedgerGroup:
    """n0 leads (the preferred leader) and has appended two entries, committed everywhere."""
    g = DLedgerGroup(3, seed=1, group=GROUP, preferred_leader_ids="n0")
    g.run_until(lambda: g.leader() == "n0", 30_000)
    for body in (b"m0", b"m1"):
        g.append(body)
    g.run_until(lambda: all(g.server(i).store.committed_index == 1 for i in g.ids), 10_000)
    client = Node("client", "127.0.0.1:9000")
    g.driver.add_node(client)
    g.client = client  # type: ignore[attr-defined]
    return g


def ask(g: DLedgerGroup, node: str, code: int, body: bytes | None) -> RemotingCommand:
    """One request from a client node on the driver, as ``DLedgerClientRpcNettyService``
    sends it (the request as the body); the answer frame."""
    answers: list[RemotingCommand] = []
    addr = g.server(node).address
    request = RemotingCommand.create_request(code, body=body)
    g.client.ctx.invoke_async(addr, request, 3000, lambda r, e: answers.append(r))  # type: ignore[attr-defined]
    g.advance(50)
    assert len(answers) == 1 and answers[0] is not None
    return answers[0]


def body(**fields: object) -> bytes:
    return json.dumps(fields, separators=(",", ":")).encode()


@pytest.mark.parametrize("node", ["n0", "n1"])
def test_metadata_names_the_peers_and_the_leader_on_every_node(group, node) -> None:
    """A real leader and a real follower both answered code 200 with this body: no
    ``remoteId`` (a new response, not the request's base info), ``term`` -1."""
    r = ask(group, node, DLedgerRequestCode.METADATA, body(group=GROUP, remoteId=node))
    assert (r.code, r.remark) == (200, None)
    assert r.body == (b'{"code":200,"group":"RaftNode00","leaderId":"n0",' + PEERS.encode()
                      + b',"term":-1}')  # fmt: skip


@pytest.mark.parametrize(
    ("request_body", "answer"),
    [
        (body(group=GROUP, remoteId="nX"),
         b'{"code":401,"group":"RaftNode00","leaderId":"n0","remoteId":"nX","term":-1}'),
        (body(group="G", remoteId="n0"),
         b'{"code":400,"group":"G","leaderId":"n0","remoteId":"n0","term":-1}'),
        (b"{}", b'{"code":401,"leaderId":"n0","term":-1}'),
    ],
    ids=["another-member", "another-group", "empty-object"],
)  # fmt: skip
def test_metadata_for_another_node_or_group_is_refused_with_the_requests_base_info(
    group, request_body, answer
) -> None:
    """UNKNOWN_MEMBER (401) before UNKNOWN_GROUP (400); the request's base info, this node's
    leader."""
    r = ask(group, "n0", DLedgerRequestCode.METADATA, request_body)
    assert (r.code, r.body) == (200, answer)


@pytest.mark.parametrize("index", [0, 1])
def test_get_on_the_leader_gives_one_entry_with_its_stored_fields(group, index) -> None:
    """One entry whatever ``maxSize`` says, with the keys and defaults the real leader's had
    (its entries' bodies were the broker's messages, 166 bytes each: size 166, pos 0 and
    166; here each entry is 48 bytes of header and a 2-byte body)."""
    r = ask(group, "n0", DLedgerRequestCode.GET,
            body(group=GROUP, remoteId="n0", beginIndex=index, maxSize=5))  # fmt: skip
    assert (r.code, r.remark) == (200, None)
    payload = f"m{index}".encode()
    entry = DLedgerEntry(magic=1, size=48 + len(payload), index=index, term=group.server(
        "n0").member_state.curr_term, pos=index * 50, body=payload)  # fmt: skip
    assert r.body == to_body(GetEntriesResponse(group=GROUP, entries=(entry,)))
    assert json.loads(r.body) == {
        "code": 200, "group": "RaftNode00", "term": -1,
        "entries": [{"body": "bTA=" if index == 0 else "bTE=", "bodyCrc": 0, "chainCrc": 0,
                     "channel": 0, "index": index, "magic": 1, "pos": index * 50, "size": 50,
                     "term": entry.term}],
    }  # fmt: skip
    assert list(json.loads(r.body)) == ["code", "entries", "group", "term"]


@pytest.mark.parametrize(
    ("node", "index", "answer"),
    [
        ("n0", 99, b'{"code":410,"entries":[],"group":"RaftNode00","leaderId":"n0",'
                   b'"remoteId":"n0","term":-1}'),
        ("n0", -1, b'{"code":410,"entries":[],"group":"RaftNode00","leaderId":"n0",'
                   b'"remoteId":"n0","term":-1}'),
        ("n1", 0, b'{"code":404,"entries":[],"group":"RaftNode00","leaderId":"n0",'
                  b'"remoteId":"n1","term":-1}'),
    ],
    ids=["past-the-end", "negative", "on-a-follower"],
)  # fmt: skip
def test_get_outside_the_log_or_on_a_follower_is_refused(group, node, index, answer) -> None:
    """INDEX_OUT_OF_RANGE (410) or NOT_LEADER (404), with an empty ``entries``: the error
    response is a new ``GetEntriesResponse`` with the request's base info."""
    r = ask(group, node, DLedgerRequestCode.GET, body(group=GROUP, remoteId=node, beginIndex=index))
    assert (r.code, r.body) == (200, answer)


def test_get_without_an_index_and_pull_are_answered_system_error_as_4_9_3_remoting_does(
    group,
) -> None:
    """Both throw a NullPointerException in 0.2.3; 4.9.3's remoting answers SYSTEM_ERROR (1)
    with the exception and its top frame, no body, as the real leader did."""
    r = ask(group, "n0", DLedgerRequestCode.GET, body(group=GROUP, remoteId="n0"))
    assert (r.code, r.remark, r.body) == (ResponseCode.SYSTEM_ERROR, GET_NPE, None)
    assert r.remark == (
        'java.lang.NullPointerException: Cannot invoke "java.lang.Long.longValue()" because '
        '"index" is null, io.openmessaging.storage.dledger.store.file.DLedgerMmapFileStore'
        ".indexCheck(DLedgerMmapFileStore.java:554)"
    )
    r = ask(group, "n0", DLedgerRequestCode.PULL, body(group=GROUP, remoteId="n0"))
    assert (r.code, r.remark, r.body) == (ResponseCode.SYSTEM_ERROR, PULL_NPE, None)
    assert r.remark.endswith(
        '"future" is null, io.openmessaging.storage.dledger.DLedgerRpcNettyService'
        ".processRequest(DLedgerRpcNettyService.java:348)"
    )
    r = ask(group, "n0", 50003, body(group=GROUP, remoteId="n0"))
    assert (r.code, r.remark) == (ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                                  " request type 50003 not supported")  # fmt: skip


@pytest.mark.parametrize("code", [DLedgerRequestCode.METADATA, DLedgerRequestCode.VOTE])
def test_a_frame_without_a_body_is_system_error_as_fastjson_s_npe(group, code) -> None:
    """0.2.3 hands the null body to ``JSON.parseObject`` for every code it registers; the
    real leader answered METADATA so."""
    r = ask(group, "n0", code, None)
    assert (r.code, r.remark, r.body) == (ResponseCode.SYSTEM_ERROR, NO_BODY_NPE, None)
    assert r.remark == ('java.lang.NullPointerException: Cannot read the array length because '
                        '"bytes" is null, com.alibaba.fastjson.JSON.parseObject(JSON.java:405)')  # fmt: skip
    assert group.leader() == "n0"


def test_a_body_that_is_not_a_request_is_system_error_and_the_node_serves_on(group) -> None:
    r = ask(group, "n0", DLedgerRequestCode.GET, b"[1]")
    assert (r.code, r.remark) == (1, "GetEntriesRequest: body is not a JSON object")
    r = ask(group, "n0", DLedgerRequestCode.GET,
            body(group=GROUP, remoteId="n0", beginIndex="x"))  # fmt: skip
    assert r.code == 1 and r.remark.startswith("GetEntriesRequest: bad body")
    assert ask(group, "n0", DLedgerRequestCode.METADATA,
               body(group=GROUP, remoteId="n0")).code == 200  # fmt: skip


def test_the_peers_are_written_in_hash_map_order() -> None:
    """fastjson sorts a bean's fields but writes a map as it iterates: MemberState's
    ``HashMap`` of the peers, whatever order ``dLegerPeers`` gave them in."""
    peers = {"b": "h:2", "a": "h:1", "aa": "h:3"}  # hash codes 98, 97, 3104
    text = to_body(MetadataResponse(group="g", leader_id="a", peers=peers))
    assert text == (b'{"code":200,"group":"g","leaderId":"a",'
                    b'"peers":{"aa":"h:3","a":"h:1","b":"h:2"},"term":-1}')  # fmt: skip
    assert from_body(MetadataResponse, text).peers == {"aa": "h:3", "a": "h:1", "b": "h:2"}
    assert from_body(MetadataRequest, b'{"group":"g","remoteId":"a"}').remote_id == "a"


def test_leadership_transfers_a_node_refuses_answer_as_a_real_node_did(group) -> None:
    """LEADERSHIP_TRANSFER as an operator might get it wrong, each refused, the leader
    unchanged. A real 4.9.3 group (n0 leading in term 1, 2026-11-30) and ``serve
    --dledger-brokers 3`` answered these same bodies; here in this group's term."""
    term = group.server("n0").member_state.curr_term

    def transfer(node: str, **fields: object) -> bytes:
        r = ask(group, node, DLedgerRequestCode.LEADERSHIP_TRANSFER,
                body(group=GROUP, remoteId=node, **fields))  # fmt: skip
        assert r.code == 200
        return r.body

    # to itself: the leader refuses a transferee that is the leader (LEADER_TRANSFERRING)
    assert transfer("n0", transferId="n0", transfereeId="n0", term=term) == (
        f'{{"code":506,"term":{term}}}'.encode())  # fmt: skip
    # to a node outside the group: UNKNOWN_MEMBER with the request's base info
    assert transfer("n0", transferId="n0", transfereeId="nX", term=term) == (
        f'{{"code":401,"group":"RaftNode00","leaderId":"n0","remoteId":"n0","term":{term}}}'
        .encode())  # fmt: skip
    # a term not the leader's: INCONSISTENT_TERM, the request's term echoed
    assert transfer("n0", transferId="n0", transfereeId="n1", term=99) == (
        b'{"code":407,"group":"RaftNode00","leaderId":"n0","remoteId":"n0","term":99}'
    )
    # to a follower that is neither the transferring leader nor the transferee, or with no ids
    assert transfer("n1", transferId="n0", transfereeId="n2", term=term) == (
        f'{{"code":411,"term":{term}}}'.encode())  # fmt: skip
    assert transfer("n0", term=term) == f'{{"code":411,"term":{term}}}'.encode()
    group.advance(100)
    assert group.leader() == "n0"
