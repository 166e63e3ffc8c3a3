"""A mixed DLedger group: one mqlab node and two real 4.9.3 DLedger nodes, one Raft log.

Not a RocketMQ class: the harness that checks mqlab's DLedger (``mqlab.dledger``) and its
DLedger broker (``DLedgerCommitLog``, ``DLedgerRoleChangeHandler``) against 4.9.3's by making
them one group. ``RealDLedgerGroup(external={"n2": ...})`` runs a name server and the real
nodes ``n0`` and ``n1``; the mqlab node ``n2`` is a ``DLedgerServer`` and a
``BrokerController`` with ``enableDLegerCommitLog=true`` on the network driver in this
process, registered with the real name server. Every node's ``dLegerPeers`` names the other
two at their own addresses, so VOTE, HEART_BEAT, PUSH and LEADERSHIP_TRANSFER go between
mqlab and Java unrelayed.

:func:`check_mixed_group` runs, each step waiting until the name server lists the expected
node as brokerId 0 (the leader's broker, once it has applied its log) and ``n2`` follows it:

1. the group elects a leader (the mqlab node starts once the real JVMs are up; either side
   may win the first election) and every node follows it (:func:`_wait_formed`);
   :data:`MESSAGES` sends to its broker (SEND_MESSAGE_V2), each SEND_OK; if ``n2`` won, it
   first hands over to ``n0`` (as in step 3);
2. a LEADERSHIP_TRANSFER to the real leader, as ``DLedgerClient#leadershipTransfer`` sends
   it, hands the leadership to ``n2``: mqlab leads, the sends go to its broker;
3. a LEADERSHIP_TRANSFER to ``n2`` hands it to ``n0``: mqlab as the transferring leader;
4. ``n0``'s JVM is killed (SIGKILL): ``n1`` and ``n2`` elect one of them; the sends go there;
5. ``n0`` restarts on its store and catches up from the leader;
6. the mqlab node leads (a LEADERSHIP_TRANSFER from ``n1`` first if ``n1`` won step 4) and is
   cut off from both real nodes by a silent partition (``FrameCapture.block(silent=True)``,
   both ways: the connections stay open and their bytes wait, as in the senders' kernels,
   for TCP's first retransmission after the heal). A send to its broker is
   appended and answered SYSTEM_ERROR "broker busy" after ``maxWaitAckTimeMs``; ``n0`` and
   ``n1`` elect one of them, and the mqlab node steps down. At the heal the real leader
   COMPAREs and TRUNCATEs the mqlab node's log back to the last committed entry
   (:attr:`MixedResult.cut_off`), and the sends go to the real leader.

So the leaders are ``[real, n2, n0, n1 or n2, (n2,) n0 or n1]`` (4 or 5 changes) or, when
``n2`` won first, ``[n2, n0, n2, n0, n1 or n2, (n2,) n0 or n1]`` (5 or 6 changes).

Every DLedger frame between the nodes passes a ``FrameCapture`` relay (the group's
``capture=True``; the mqlab node's peers name its links too): each frame the mqlab node sent
must have the shape of one a real node sent in the same role (:func:`frame_problems`: the
header text but for its opaque, the body's keys and its entry's keys).

While ``n2`` leads (step 2) and again while ``n0`` leads (step 3), every node is asked what
a DLedger client asks (:data:`CLIENT_REQUESTS`: METADATA, GET, PULL, APPEND;
:func:`client_answers`),
and each answer must equal every other of its role (:func:`client_problems`): the mqlab
leader's against the real leader's, the mqlab follower's against a real follower's.

Then the logs are compared as stored: the first ``E`` entries (``E`` = the mqlab node's
committed index + 1) are the bytes ``[0, end of entry E-1)`` of each real node's first data
file (``<store>/dledger-<selfId>/data/00000000000000000000``, mapped shared by the JVM, so a
read sees every write) and ``E * 32`` bytes of its first index file, against the mqlab node's
``DLedgerMmapFileStore`` (``files()``: the same names and layout); and each real node's
``checkpoint`` file (``committedIndex=..``, ``endIndex=..``) against the mqlab store's, so
every node has committed the same ``E`` entries. The summary line is
:func:`summary_line`: ``dledger: mixed group, E entries committed, identical on every node,
L leader changes`` (``L``: how often the leader changed between the steps).
"""

from __future__ import annotations

import base64
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqlab.conformance.dledger_capture import CapturedFrame, frame_record
from mqlab.conformance.dledger_group import RealDLedgerGroup
from mqlab.conformance.real_cluster import RealClusterError
from mqlab.conformance.wire import call_sync, send_v2, wait_until
from mqlab.dledger.dledger_mmap_file_store import INDEX_UNIT_SIZE, offset2file_name
from mqlab.dledger.protocol import (
    DLedgerRequestCode,
    DLedgerResponseCode,
    LeadershipTransferRequest,
    LeadershipTransferResponse,
)
from mqlab.dledger.rpc_body import from_body, to_body
from mqlab.remoting.command import RemotingCommand

__all__ = ["CLIENT_REQUESTS", "ClientAnswer", "MESSAGES", "MQLAB_ID", "MixedResult",
           "MqlabMember", "check_mixed_group", "client_answers", "client_problems", "follows",
           "summary_line", "timeline"]  # fmt: skip

MQLAB_ID = "n2"
#: sends per step (each one entry)
MESSAGES = 3
#: How long a hand-over waits for the transferee to follow the leader: ten
#: ``heartBeatTimeIntervalMs`` (2000 ms by default, which the groups keep).
FOLLOW_WAIT_S = 20.0
TOPIC = "MixedTopic"
QUEUES = 4
PRODUCER = "mixed_producer"


@dataclass(frozen=True)
class ClientAnswer:
    """One answer to a DLedger client's request (:func:`client_answers`): the node asked, in
    what role, the request's label, the frame's code and remark, and its body as JSON with
    the ids that depend on the moment written as roles (:func:`_as_roles`)."""

    node: str
    role: str
    request: str
    code: int
    remark: str | None
    body: Any


@dataclass
class MixedResult:
    """What :func:`check_mixed_group` saw."""

    #: the leader after each step, by self id, and its term
    leaders: list[str] = field(default_factory=list)
    leader_terms: list[int] = field(default_factory=list)
    #: entries committed (the mqlab node's committed index + 1), and the bytes they take
    entries: int = 0
    data_bytes: int = 0
    #: bodies acknowledged SEND_OK, in order
    acked: list[bytes] = field(default_factory=list)
    #: each node's (index, term) of every compared entry, by self id
    terms: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: the mqlab node's votes: given (term, candidate, result), and its rounds (term, results)
    votes_given: list[tuple[int, str, str]] = field(default_factory=list)
    vote_rounds: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    #: every DLedger frame between the nodes (``frame_record``), through the relay
    frames: list[dict[str, Any]] = field(default_factory=list)
    #: what a DLedger client was answered (:func:`client_answers`) while the mqlab node led
    #: and while a real node led, by the leader's self id
    client: dict[str, list[ClientAnswer]] = field(default_factory=dict)
    #: step 6, the mqlab leader cut off: the answer to the send it took
    #: (``(code, remark)``), its role and term once a real node led, the real leader's
    #: TRUNCATE (``(index, the answer's code, the answer's endIndex)``), and the mqlab
    #: node's last index before and after the heal
    cut_off: dict[str, Any] = field(default_factory=dict)
    #: differences found (empty: identical)
    problems: list[str] = field(default_factory=list)

    @property
    def leader_changes(self) -> int:
        return sum(1 for a, b in itertools.pairwise(self.leaders) if a != b)


def _shape(r: dict[str, Any], answered: dict[tuple[str, str, int], dict[str, Any]]) -> tuple:
    """What must be alike in two frames of one kind: the header text (its opaque aside), the
    body's keys and its entry's keys; by (request or response, the request's code, the
    PUSH type)."""
    req = r if r["kind"] == "request" else answered.get((r["dst"], r["src"], r["opaque"]), {})
    body = r["body"] if isinstance(r["body"], dict) else {}
    entry = body.get("entry")
    return (
        r["kind"], req.get("code"), (req.get("body") or {}).get("type"),
        re.sub(r'"opaque":-?\d+', '"opaque":0', r["header"]),
        tuple(sorted(body)), tuple(sorted(entry)) if isinstance(entry, dict) else None,
    )  # fmt: skip


def frame_problems(
    records: list[dict[str, Any]], reference: list[dict[str, Any]] | None = None
) -> tuple[set[tuple], list[str], set[tuple]]:
    """Each frame the mqlab node sent against the frames the real nodes sent in this run and
    in ``reference`` (more real frames, e.g. recorded ones): the shapes (:func:`_shape`) it
    sent; a problem for each shape of a kind (request or response, code, PUSH type) the real
    nodes sent in other shapes only; and the kinds no real frame shows (not compared)."""

    def shapes(recs: list[dict[str, Any]], mqlab: bool) -> set[tuple]:
        # a response pairs with the last request before it of its (sender, receiver,
        # opaque): a restarted JVM counts its opaques from the start again (step 5's n0)
        asked: dict[tuple[str, str, int], dict[str, Any]] = {}
        out = set()
        for r in recs:
            if r["kind"] == "request":
                asked[(r["src"], r["dst"], r["opaque"])] = r
            if (r["src"] == MQLAB_ID) == mqlab:
                out.add(_shape(r, asked))
        return out

    real = shapes(records, False) | shapes(reference or [], False)
    ours = shapes(records, True)
    real_kinds = {s[:3] for s in real}
    problems = [
        f"{MQLAB_ID} sent a frame unlike any real node's: {s}"
        for s in sorted(ours - real, key=repr)
        if s[:3] in real_kinds
    ]
    return ours, problems, {s[:3] for s in ours} - real_kinds


def summary_line(result: MixedResult) -> str:
    """The conformance run's line for the mixed group."""
    if result.problems:
        return (f"dledger: mixed group, {result.entries} entries committed, DIFFERENT "
                f"({len(result.problems)} problems), {result.leader_changes} leader changes")  # fmt: skip
    return (f"dledger: mixed group, {result.entries} entries committed, identical on every "
            f"node, {result.leader_changes} leader changes")  # fmt: skip


class MqlabMember:
    """The mqlab node of a mixed group: a ``DLedgerServer`` and its broker on a ``NetDriver``
    in a ``LoopThread``. Every look at them runs on the loop (:meth:`call`)."""

    def __init__(self, workdir: Path, *, group: str, cluster: str, self_id: str = MQLAB_ID):
        from mqlab.runtime.net import LoopThread, bind_broker_socket, bind_socket

        self.workdir = Path(workdir)
        self.group = group
        self.cluster = cluster
        self.self_id = self_id
        self._dsock = bind_socket("127.0.0.1", 0)
        self._bsock = bind_broker_socket("127.0.0.1", 0)
        self.dledger_addr = f"127.0.0.1:{self._dsock.getsockname()[1]}"
        self.broker_addr = f"127.0.0.1:{self._bsock.getsockname()[1]}"
        self.loop = LoopThread(f"mqlab-{self_id}")
        self.server: Any = None
        self.broker: Any = None
        self.driver: Any = None

    def start(self, peers: str, namesrv_addr: str) -> None:
        """Start the DLedger node, then its broker (``DLedgerCommitLog`` on that node)."""
        from mqlab.broker.broker_controller import BrokerController
        from mqlab.broker.config import BrokerConfig
        from mqlab.dledger.dledger_config import DLedgerConfig
        from mqlab.dledger.dledger_server import DLedgerServer
        from mqlab.runtime.net import NetDriver
        from mqlab.store.config import MessageStoreConfig

        async def start() -> None:
            self.driver = NetDriver(run_id=f"mixed-{self.self_id}")
            self.server = DLedgerServer(
                DLedgerConfig(group=self.group, self_id=self.self_id, peers=peers)
            )
            bc = BrokerConfig(
                broker_name=self.group, broker_cluster_name=self.cluster,
                listen_port=self._bsock.getsockname()[1], name_server_addr=namesrv_addr,
            )  # fmt: skip
            sc = MessageStoreConfig(
                store_path_root_dir=str(self.workdir / "store"), enable_d_leger_commit_log=True,
                d_leger_group=self.group, d_leger_peers=peers, d_leger_self_id=self.self_id,
            )  # fmt: skip
            self.broker = BrokerController(bc, sc, name=f"broker-{self.self_id}",
                                           dledger_server=self.server)  # fmt: skip
            await self.driver.add_node(self.server, sock=self._dsock)
            await self.driver.add_node(self.broker, sock=self._bsock)

        self.loop.submit(start())

    def call(self, fn: Callable[[], Any]) -> Any:
        return self.loop.call(fn)

    def state(self) -> dict[str, Any]:
        from mqlab.dledger.net_group import node_state

        return self.call(lambda: node_state(self.server))

    def stored(self) -> tuple[dict[str, bytes], int, int]:
        """(the store's files as 0.2.3 names them, committed index, committed end position)."""

        def read() -> tuple[dict[str, bytes], int, int]:
            st = self.server.store
            end = 0
            if st.committed_index >= 0:
                pos, size = st.get_entry_pos_and_size(st.committed_index)
                end = pos + size
            return st.files(), st.committed_index, end

        return self.call(read)

    def votes(self) -> tuple[list[tuple[int, str, str]], list[tuple[int, dict[str, str]]]]:
        """From the node's trace: the votes it gave, ``(term, candidate, result)``
        (``handleVote``, mechanisms.md "DLedger election" step 3), and its own rounds,
        ``(term, results by peer)`` (step 4)."""

        def read() -> tuple[list, list]:
            given, rounds = [], []
            for e in self.driver.recorder.events:
                if e.component != "DLedgerLeaderElector" or e.node != self.self_id:
                    continue
                f = e.fields
                if e.step == "3" and f["candidate"] != self.self_id:
                    given.append((f["term"], f["candidate"], f["result"]))
                elif e.step == "4":
                    rounds.append((f["term"], dict(f["results"])))
            return given, rounds

        return self.call(read)

    def errors(self) -> list[str]:
        return [] if self.driver is None else list(self.driver.errors)

    def stop(self) -> None:
        try:
            if self.driver is not None:
                self.loop.submit(self.driver.close())
        finally:
            self.loop.close()
            self._dsock.close()
            self._bsock.close()


def _leader(group: RealDLedgerGroup, member: MqlabMember) -> str | None:
    """The node listed at brokerId 0, if the mqlab node follows it too (or is it)."""
    addr = group.broker_addrs().get(0)
    if addr is None:
        return None
    who = MQLAB_ID if addr == member.broker_addr else group.node_at(addr)
    st = member.state()
    if who is None or st["leader_id"] != who or not st["running"]:
        return None
    if who == MQLAB_ID and st["role"] != "LEADER":
        return None
    return who


def _wait_leader(
    group: RealDLedgerGroup, member: MqlabMember, want: Callable[[str], bool], what: str
) -> str:
    seen: list[str] = []
    last: list[Any] = []

    def ok() -> bool:
        who = _leader(group, member)
        last[:] = [group.broker_addrs(), member.state()]
        if who is None or not want(who):
            return False
        seen.append(who)
        return True

    try:
        wait_until(ok, 90, what, error=RealClusterError, pause_s=0.2)
    except RealClusterError as e:
        raise RealClusterError(
            f"{e}; last brokerAddrs {last[0] if last else None}, {MQLAB_ID} "
            f"({member.broker_addr}) {last[1] if last else None}"
        ) from None
    return seen[-1]


def _wait_formed(group: RealDLedgerGroup, member: MqlabMember) -> str:
    """Block until a leader is listed (:func:`_leader`) and every other node has answered its
    heartbeat of its term SUCCESS (:func:`follows`); the leader's self id.

    Sending before that can shut a node out for good, in 0.2.3 as in mqlab: a node that
    missed the election's last round may have moved on to the next term as a candidate
    (``maintainAsCandidate``: ``WAIT_TO_VOTE_NEXT``, then ``nextTerm``) and missed the
    heartbeat that would have made it follow. Once the leader has appended, that node's
    VOTEs are refused on its shorter log before their term is looked at
    (``handleVote``: REJECT_EXPIRED_LEDGER_TERM), so nobody steps down for its term; its
    EXPIRED_TERM answers to the leader's heartbeats do not count while the others make a
    quorum (``sendHeartbeats``). It stays a candidate without a leader, and refuses a
    LEADERSHIP_TRANSFER with INCONSISTENT_LEADER. That is the likeliest reading of what CI
    saw at session 20's stop (``n0`` answered 409 with ``leaderId`` null for 44 s, its term
    unknown): ``tests/dledger/test_dledger_group.py`` builds that state in simulation and
    gets the same answer. A failure now prints each real node's frames. Before the first
    append a VOTE of the next term makes the others step down, and the group elects again:
    this waits for that too."""
    assert group.capture is not None
    capture = group.capture
    seen: list[str] = []

    def formed() -> bool:
        who = _leader(group, member)
        if who is None:
            return False
        term, frames = member.state()["term"], capture.frames()
        if not all(follows(frames, i, who, term) for i in group.ids if i != who):
            return False
        seen.append(who)
        return True

    try:
        wait_until(formed, 90, "every node following one leader", error=RealClusterError,
                   pause_s=0.2)  # fmt: skip
    except RealClusterError as e:
        frames = capture.frames()
        shown = "\n".join(f"{i}'s frames:\n{timeline(frames, i)}" for i in group.real_ids)
        raise RealClusterError(f"{e}; {MQLAB_ID} {member.state()}\n{shown}") from None
    return seen[-1]


def _create_topic(addr: str) -> None:
    from mqlab.remoting.codes import RequestCode
    from mqlab.remoting.headers import CreateTopicRequestHeader

    header = CreateTopicRequestHeader(
        topic=TOPIC, default_topic="TBW102", read_queue_nums=QUEUES, write_queue_nums=QUEUES,
        perm=6, topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=False,
    )  # fmt: skip
    resp = call_sync(
        addr,
        RemotingCommand.create_request(
            RequestCode.UPDATE_AND_CREATE_TOPIC, header.to_ext_fields()
        ),  # fmt: skip
    )
    if resp.code != 0:
        raise RealClusterError(f"UPDATE_AND_CREATE_TOPIC on {addr}: {resp.code} {resp.remark}")


def _sends(addr: str, step: int, result: MixedResult, out: Callable[[str], None]) -> None:
    """:data:`MESSAGES` SEND_OKs to ``addr``; a new master may refuse its first sends (a
    refused send may still be appended, so it may be in the log: the comparison does not
    care what the entries hold)."""
    for i in range(MESSAGES):
        tries = [0]

        def ok(i: int = i, tries: list[int] = tries) -> bool:
            body = b"step %d message %d try %d" % (step, i, tries[0])
            tries[0] += 1
            try:
                resp = send_v2(
                    addr, TOPIC, body, group=PRODUCER, queue_id=len(result.acked) % QUEUES
                )
            except (OSError, TimeoutError):
                return False
            if resp.code == 0:
                result.acked.append(body)
                return True
            out(f"dledger: step {step}: send to {addr} answered {resp.code} {resp.remark}")
            return False

        wait_until(ok, 60, f"a SEND_OK from {addr}", error=RealClusterError, pause_s=0.2)


#: the DLedger client's requests :func:`client_answers` sends each node (label, code, the
#: body's fields beside group and remoteId, None for a frame without a body):
#: ``DLedgerClient#updateMetadata`` and ``#get`` as ``DLedgerClientRpcNettyService`` sends
#: them, a GET past the log and one without its index, a PULL, which 0.2.3 registers
#: without a handler, a METADATA frame with no body, and two APPENDs of bodies too short
#: to be a message
CLIENT_REQUESTS: tuple[tuple[str, int, dict[str, Any] | None], ...] = (
    ("METADATA", DLedgerRequestCode.METADATA, {}),
    ("GET 0", DLedgerRequestCode.GET, {"beginIndex": 0, "maxSize": 0}),
    ("GET 1", DLedgerRequestCode.GET, {"beginIndex": 1, "maxSize": 0}),
    ("GET past the log", DLedgerRequestCode.GET, {"beginIndex": 1_000_000, "maxSize": 0}),
    ("GET without beginIndex", DLedgerRequestCode.GET, {"maxSize": 0}),
    ("PULL", DLedgerRequestCode.PULL, {"beginIndex": 0}),
    ("METADATA without a body", DLedgerRequestCode.METADATA, None),
    # too short for a message: the broker's append hook throws, nothing is stored
    ("APPEND 13 bytes", DLedgerRequestCode.APPEND, {"body": base64.b64encode(b"z" * 13).decode()}),
    ("APPEND 30 bytes", DLedgerRequestCode.APPEND, {"body": base64.b64encode(b"z" * 30).decode()}),
)


def _as_roles(body: bytes | None, node: str, leader: str) -> Any:
    """A DLedger answer's JSON body with ``leaderId`` and ``remoteId`` written as roles
    (``<leader>``, ``<self>``) and ``peers`` as its ids (each node lists its peers at its
    own addresses: in this group the relay's links)."""
    if body is None:
        return None
    data = json.loads(body)
    for key, who, role in (("leaderId", leader, "<leader>"), ("remoteId", node, "<self>")):
        if data.get(key) == who:
            data[key] = role
    if isinstance(data.get("peers"), dict):
        data["peers"] = sorted(data["peers"])
    return data


def client_answers(addr_of: dict[str, str], group: str, leader: str) -> list[ClientAnswer]:
    """Ask every node (``addr_of``: self id -> DLedger address) each of
    :data:`CLIENT_REQUESTS` as a DLedger client would, once every node names ``leader`` in
    its METADATA answer; the answers."""

    def ask(node: str, code: int, fields: dict[str, Any] | None) -> RemotingCommand:
        body = None
        if fields is not None:
            body = json.dumps({"code": 200, "group": group, "remoteId": node, "term": -1,
                               **fields}, sort_keys=True, separators=(",", ":")).encode()  # fmt: skip
        return call_sync(addr_of[node], RemotingCommand.create_request(code, body=body))

    def all_follow() -> bool:
        for node in addr_of:
            r = ask(node, DLedgerRequestCode.METADATA, {})
            if r.body is None or json.loads(r.body).get("leaderId") != leader:
                return False
        return True

    wait_until(all_follow, FOLLOW_WAIT_S, f"every node's METADATA naming {leader}",
               error=RealClusterError, pause_s=0.2)  # fmt: skip
    out = []
    for node in addr_of:
        for label, code, fields in CLIENT_REQUESTS:
            r = ask(node, code, fields)
            out.append(ClientAnswer(
                node, "leader" if node == leader else "follower", label, r.code, r.remark,
                _as_roles(r.body, node, leader),
            ))  # fmt: skip
    return out


def client_problems(client: dict[str, list[ClientAnswer]]) -> list[str]:
    """Where a node's answer differs from another's in the same role: across the moments
    (the mqlab node leading, a real node leading) and across the nodes of one moment."""
    by: dict[tuple[str, str], dict[str, ClientAnswer]] = {}
    for leader, answers in client.items():
        for a in answers:
            by.setdefault((a.role, a.request), {})[f"{a.node} (while {leader} led)"] = a
    problems = []
    for (role, request), seen in sorted(by.items()):
        shown = {k: (a.code, a.remark, a.body) for k, a in seen.items()}
        if len(set(map(repr, shown.values()))) > 1:
            problems.append(f"client {request} to a {role}: the answers differ: {shown}")
    return problems


def transfer_leadership(
    addr: str, group: str, leader: str, transferee: str, term: int
) -> LeadershipTransferResponse:
    """LEADERSHIP_TRANSFER as ``DLedgerClient#leadershipTransfer`` sends it to the leader."""
    req = RemotingCommand.create_request(
        DLedgerRequestCode.LEADERSHIP_TRANSFER,
        body=to_body(LeadershipTransferRequest(
            group=group, remote_id=leader, term=term, transfer_id=leader,
            transferee_id=transferee,
        )),
    )  # fmt: skip
    resp = call_sync(addr, req, timeout=20)
    return from_body(LeadershipTransferResponse, resp.body)


def follows(frames: list[CapturedFrame], node: str, leader: str, term: int) -> bool:
    """Whether ``node``'s answer to the last HEART_BEAT ``leader`` sent it in ``term`` that it
    has answered was SUCCESS (``DLedgerLeaderElector#handleHeartBeat``: ``node`` then holds
    ``leader`` as its leader in that term)."""
    beats: set[int] = set()
    answer = False
    for r in map(frame_record, frames):
        body = r["body"] if isinstance(r["body"], dict) else {}
        if r["src"] == leader and r["dst"] == node and r["kind"] == "request":
            if r["code"] == DLedgerRequestCode.HEART_BEAT and body.get("term") == term:
                beats.add(r["opaque"])
            else:  # the opaque is another request's now (a restarted leader counts anew)
                beats.discard(r["opaque"])
        elif r["src"] == node and r["dst"] == leader and r["kind"] == "response":
            if r["opaque"] in beats:
                answer = (
                    body.get("code", DLedgerResponseCode.SUCCESS) == DLedgerResponseCode.SUCCESS
                )
    return answer


def caught_up(records: list[dict[str, Any]], leader: str, to: str, term: int) -> bool:
    """Whether ``to`` has answered SUCCESS to the APPEND of the highest entry index ``leader``
    pushed to any follower in ``term`` (``records`` as :func:`frame_record` gives them).

    0.2.3's leader sends TAKE_LEADERSHIP at once (``DLedgerLeaderElector#
    handleLeadershipTransfer`` only refuses a transferee more than
    ``maxLeadershipTransferWaitIndex`` entries behind), and the transferee stands at once
    (``handleTakeLeadership``): one whose log is behind gets REJECT_SMALL_LEDGER_END_INDEX
    from both real nodes and stays out. An operator waits for it to catch up first; so does
    :func:`check_mixed_group`. No APPEND in ``term`` yet: True (nothing to wait for)."""
    top = None
    asked: dict[int, int] = {}  # opaque of the leader's APPEND to ``to`` -> its entry index
    acked = -1
    for r in records:
        body = r["body"] if isinstance(r["body"], dict) else {}
        if r["src"] == leader and r["kind"] == "request":
            is_append = (
                r["code"] == DLedgerRequestCode.PUSH
                and body.get("type") == "APPEND"
                and body.get("term") == term
            )
            if r["dst"] == to:
                asked.pop(r["opaque"], None)  # a reused opaque is this request's now
            if is_append:
                index = body["entry"]["index"]
                top = index if top is None else max(top, index)
                if r["dst"] == to:
                    asked[r["opaque"]] = index
        elif (r["src"], r["dst"], r["kind"]) == (to, leader, "response") and r["opaque"] in asked:
            index = asked.pop(r["opaque"])
            if body.get("code", DLedgerResponseCode.SUCCESS) == DLedgerResponseCode.SUCCESS:
                acked = max(acked, index)
    return top is None or acked >= top


def timeline(frames: list[CapturedFrame], node: str, last: int = 40) -> str:
    """The last ``last`` VOTE, HEART_BEAT and LEADERSHIP_TRANSFER frames ``node`` sent or
    received, a line each (ms since the capture began, who to whom, the request's code, term,
    leaderId; an answer's code, term, leaderId and voteResult): what a failed hand-over says."""
    kinds = (DLedgerRequestCode.VOTE, DLedgerRequestCode.HEART_BEAT,
             DLedgerRequestCode.LEADERSHIP_TRANSFER)  # fmt: skip
    asked: dict[tuple[str, str, int], int] = {}
    lines = []
    for r in map(frame_record, frames):
        body = r["body"] if isinstance(r["body"], dict) else {}
        src, dst = r["src"], r["dst"]
        if r["kind"] == "response":
            code = asked.get((dst, src, r["opaque"]))
            what = (f"answer to {code}: code {body.get('code')} term {body.get('term')} "
                    f"leader {body.get('leaderId')} {body.get('voteResult') or ''}")  # fmt: skip
        else:
            code = asked[(src, dst, r["opaque"])] = r["code"]
            what = f"{code}: term {body.get('term')} leader {body.get('leaderId')}"
        if node in (src, dst) and code in kinds:
            lines.append(f"{r['t_ms']:>8} ms {src}->{dst} {what.rstrip()}")
    return "\n".join(lines[-last:])


def _real_file(group: RealDLedgerGroup, self_id: str, name: str, length: int | None) -> bytes:
    """The first ``length`` bytes (None: all) of a real node's DLedger file ``name``."""
    with open(group.dledger_dir(self_id) / name, "rb") as f:
        return f.read() if length is None else f.read(length)


def _entries(index: bytes, count: int) -> list[tuple[int, int]]:
    """(index, term) of each 32-byte index record: magic 4, pos 8, size 4, index 8, term 8."""
    out = []
    for k in range(count):
        rec = index[k * INDEX_UNIT_SIZE : (k + 1) * INDEX_UNIT_SIZE]
        out.append((int.from_bytes(rec[16:24], "big", signed=True),
                    int.from_bytes(rec[24:32], "big", signed=True)))  # fmt: skip
    return out


def compare(group: RealDLedgerGroup, member: MqlabMember, result: MixedResult) -> list[str]:
    """The committed range of every node against the mqlab node's, and each ``checkpoint``
    file (``committedIndex``, ``endIndex``; a real node writes it every 3 s,
    ``checkPointInterval``) against the mqlab store's; the problems."""
    files, committed, end = member.stored()
    data_name, index_name = f"data/{offset2file_name(0)}", f"index/{offset2file_name(0)}"
    data, index = files.get(data_name, b""), files.get(index_name, b"")
    count = committed + 1
    result.entries, result.data_bytes = count, end
    problems = []
    result.terms = {MQLAB_ID: _entries(index, count)}
    for i in group.real_ids:
        rdata = _real_file(group, i, data_name, end)
        rindex = _real_file(group, i, index_name, count * INDEX_UNIT_SIZE)
        result.terms[i] = _entries(rindex, count)
        if rdata != data[:end]:
            pairs = enumerate(zip(rdata, data, strict=False))
            at = next((k for k, (a, b) in pairs if a != b), min(len(rdata), end))
            problems.append(f"{i}: data differs from {MQLAB_ID}'s at byte {at} of {end}")
        if rindex != index[: count * INDEX_UNIT_SIZE]:
            problems.append(f"{i}: index records differ from {MQLAB_ID}'s in the first {count}")
        checkpoint = _real_file(group, i, "checkpoint", None)
        if checkpoint != files["checkpoint"]:
            problems.append(f"{i}: checkpoint {checkpoint!r}, {MQLAB_ID}'s {files['checkpoint']!r}")
    return problems


#: step 6's send to the cut-off mqlab leader
CUT_OFF_BODY = b"step 6 sent to the cut-off leader"


def _cut_off(
    group: RealDLedgerGroup,
    member: MqlabMember,
    result: MixedResult,
    addr_of: dict[str, str],
    out: Callable[[str], None],
) -> None:
    """Step 6 (the module essay): the mqlab leader cut off from the real nodes silently, one
    send to it, a real leader elected, the heal, the real leader's TRUNCATE of the mqlab
    node's log; then :data:`MESSAGES` sends to the real leader."""
    assert group.capture is not None
    capture, peers = group.capture, list(group.real_ids)
    cut: dict[str, Any] = {"term": member.state()["term"]}
    for p in peers:
        capture.block(MQLAB_ID, p, silent=True)
        capture.block(p, MQLAB_ID, silent=True)
    start = len(capture.frames())
    try:
        resp = send_v2(member.broker_addr, TOPIC, CUT_OFF_BODY, group=PRODUCER,
                       queue_id=len(result.acked) % QUEUES, timeout=30)  # fmt: skip
        cut["answer"] = (resp.code, resp.remark)
        st = member.state()
        cut["end_before_heal"], cut["committed_before_heal"] = (
            st["ledger_end_index"], st["committed_index"],
        )  # fmt: skip
        real = {group.nodes[p].broker_addr: p for p in peers}
        wait_until(lambda: group.broker_addrs().get(0) in real, 90,
                   "a real node listed as brokerId 0", error=RealClusterError,
                   pause_s=0.2)  # fmt: skip
        st = member.state()
        cut["role_before_heal"], cut["term_before_heal"] = st["role"], st["term"]
    finally:
        for p in peers:
            capture.unblock(MQLAB_ID, p)
            capture.unblock(p, MQLAB_ID)
    new = _wait_leader(group, member, lambda w: w in peers, f"{MQLAB_ID} following n0 or n1")
    result.leaders.append(new)
    result.leader_terms.append(member.state()["term"])

    def truncated() -> tuple[int, int, int] | None:
        rs = [frame_record(f) for f in capture.frames()[start:]]
        answers = {(r["src"], r["dst"], r["opaque"]): r for r in rs if r["kind"] == "response"}
        for r in rs:
            body = r["body"] if isinstance(r["body"], dict) else {}
            if (r["src"], r["dst"], r["kind"]) != (new, MQLAB_ID, "request"):
                continue
            a = answers.get((MQLAB_ID, new, r["opaque"]))
            if r["code"] == DLedgerRequestCode.PUSH and body.get("type") == "TRUNCATE" and a:
                return body["entry"]["index"], a["body"]["code"], a["body"]["endIndex"]
        return None

    found: list[tuple[int, int, int]] = []
    wait_until(lambda: bool(found.append(truncated()) or found[-1]), 60,
               f"{new}'s TRUNCATE of {MQLAB_ID}'s log and its answer", error=RealClusterError,
               pause_s=0.2)  # fmt: skip
    cut["truncate"] = found[-1]
    cut["end_after_heal"] = member.state()["ledger_end_index"]
    result.cut_off = cut
    out(f"dledger: step 6: {MQLAB_ID} cut off in term {cut['term']}: a send to it answered "
        f"{cut['answer'][0]} {cut['answer'][1]}; {new} leads; at the heal {new} truncated "
        f"{MQLAB_ID}'s log from {cut['end_before_heal']} to index {cut['truncate'][0]}")  # fmt: skip
    _sends(addr_of[new], len(result.leaders), result, out)


#: a hand-over's answers that an operator meets with asking again. NETWORK_ERROR: the
#: transferee's election outlasted the leader's 3000 ms wait. TAKE_LEADERSHIP_FAILED: it
#: lost its election (``DLedgerLeaderElector$TakeLeadershipTask#check``: a follower in
#: the term it stood for), as on a loaded machine when its VOTE of term T+1 makes the other
#: two stand in T+1 as well (``handleVote``: a newer term turns the voter CANDIDATE) and one
#: of them wins. EXPIRED_TERM: a later term began before it won.
HAND_OVER_RETRIED = frozenset({
    DLedgerResponseCode.NETWORK_ERROR, DLedgerResponseCode.TAKE_LEADERSHIP_FAILED,
    DLedgerResponseCode.EXPIRED_TERM,
})  # fmt: skip


def check_mixed_group(workdir: Path, out: Callable[[str], None] = print) -> MixedResult:
    """Steps 1-6 of the module essay, then the comparison; the result."""
    workdir = Path(workdir)
    result = MixedResult()
    group: RealDLedgerGroup | None = None
    member = MqlabMember(workdir / MQLAB_ID, group="RaftNode00", cluster="RaftCluster")
    try:
        group = RealDLedgerGroup(workdir / "real", external={MQLAB_ID: member.dledger_addr},
                                 broker_name=member.group, cluster=member.cluster,
                                 capture=True)  # fmt: skip
        group.start()
        member.start(group.peers_of(MQLAB_ID), group.namesrv_addr)
        addr_of = {i: group.nodes[i].broker_addr for i in group.real_ids}
        addr_of[MQLAB_ID] = member.broker_addr
        dledger_addr = {i: group.dledger_addr(i) for i in group.ids}

        def hand_over(to: str) -> None:
            """LEADERSHIP_TRANSFER from the leader to ``to``; its SEND_OKs. ``to`` takes the
            leadership only from the leader it follows (``DLedgerServer#
            handleLeadershipTransfer`` answers INCONSISTENT_LEADER otherwise), so first wait,
            as an operator would, until ``to`` has answered the leader's heartbeat of its term
            (:func:`follows`, through the relay) and holds the leader's last entry
            (:func:`caught_up`: 0.2.3 lets a transferee that is behind stand, and lose); then
            ask. The leader waits 3000 ms for
            ``to``'s answer, which ``to`` gives once it has won its election
            (``DLedgerLeaderElector#handleTakeLeadership``); on a loaded machine that can take
            longer, and the leader answers NETWORK_ERROR while the election goes on; or ``to``
            loses that election (:data:`HAND_OVER_RETRIED`). Then wait for ``to`` to lead, and
            ask whoever leads again if it does not (three times at most). A failure
            says what ``to`` sent and received lately (:func:`timeline`)."""
            assert group is not None and group.capture is not None
            capture = group.capture
            for attempt in (1, 2, 3):
                leader = (
                    result.leaders[-1] if attempt == 1
                    else _wait_leader(group, member, lambda w: True, "a leader")
                )  # fmt: skip
                if leader == to:
                    break
                term = member.state()["term"]
                resp = None
                if leader is not None:
                    try:
                        wait_until(lambda lt=(leader, term): follows(capture.frames(), to, *lt),
                                   FOLLOW_WAIT_S, f"{to} following {leader} in term {term}",
                                   error=RealClusterError, pause_s=0.2)  # fmt: skip
                        wait_until(lambda lt=(leader, term): caught_up(
                            [frame_record(f) for f in capture.frames()], lt[0], to, lt[1]),
                            FOLLOW_WAIT_S, f"{to} holding {leader}'s last entry of term {term}",
                            error=RealClusterError, pause_s=0.2)  # fmt: skip
                    except RealClusterError as e:
                        raise RealClusterError(
                            f"{e}; {to}'s frames:\n{timeline(capture.frames(), to)}"
                        ) from None
                    resp = transfer_leadership(dledger_addr[leader], member.group, leader, to,
                                               term)  # fmt: skip
                if resp is not None and resp.code == DLedgerResponseCode.SUCCESS:
                    break
                if (resp is not None and resp.code not in HAND_OVER_RETRIED) or attempt == 3:
                    raise RealClusterError(
                        f"LEADERSHIP_TRANSFER {leader} -> {to}: {resp}; {to}'s frames:\n"
                        f"{timeline(capture.frames(), to)}"
                    )
                try:
                    wait_until(lambda: _leader(group, member) == to, 30, f"{to} leading",
                               error=RealClusterError, pause_s=0.2)  # fmt: skip
                    break
                except RealClusterError:
                    continue
            result.leaders.append(_wait_leader(group, member, lambda w: w == to, f"{to} leading"))
            result.leader_terms.append(member.state()["term"])
            _sends(addr_of[to], len(result.leaders), result, out)

        # 1. whoever the first election made leader, once every node follows it
        result.leaders.append(_wait_formed(group, member))
        result.leader_terms.append(member.state()["term"])
        for a in addr_of.values():
            _create_topic(a)
        _sends(addr_of[result.leaders[-1]], 1, result, out)
        # 2./3. a real leader hands over to the mqlab node, and back to n0
        if result.leaders[-1] == MQLAB_ID:
            hand_over("n0")
        hand_over(MQLAB_ID)
        result.client[MQLAB_ID] = client_answers(dledger_addr, member.group, MQLAB_ID)
        hand_over("n0")
        result.client["n0"] = client_answers(dledger_addr, member.group, "n0")
        # 4. n0 killed: n1 and n2 elect one of them
        group.kill("n0")
        result.leaders.append(
            _wait_leader(group, member, lambda w: w != "n0", "a leader other than n0")
        )
        result.leader_terms.append(member.state()["term"])
        _sends(addr_of[result.leaders[-1]], len(result.leaders), result, out)
        # 5. n0 back, caught up
        group.restart("n0")
        problems: list[str] = []

        def same() -> bool:
            problems[:] = compare(group, member, result)
            return not problems and result.entries > 0

        try:
            wait_until(same, 60, "every node's committed range identical")
        except TimeoutError:
            result.problems = list(problems)
        # 6. the mqlab leader cut off by a silent partition, its entry truncated at the heal
        if not result.problems:
            if result.leaders[-1] != MQLAB_ID:
                hand_over(MQLAB_ID)
            _cut_off(group, member, result, addr_of, out)
            try:
                wait_until(same, 60, "every node's committed range identical after the heal")
            except TimeoutError:
                result.problems = list(problems)
        result.votes_given, result.vote_rounds = member.votes()
        assert group.capture is not None
        result.frames = [frame_record(f) for f in group.capture.frames()]
        result.problems += frame_problems(result.frames)[1]
        result.problems += client_problems(result.client)
        result.problems += [f"relay: {e}" for e in group.capture.errors]
        errors = member.errors()
        if errors:
            result.problems += [f"{MQLAB_ID}: handler error {e}" for e in errors]
    finally:
        member.stop()
        if group is not None:
            group.stop()
    return result
