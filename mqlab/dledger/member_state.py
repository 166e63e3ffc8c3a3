"""A node's role, term and vote, and the ``currterm`` file that keeps them.

Mirrors ``MemberState`` (DLedger 0.2.3). It owns: ``role`` (a node starts as CANDIDATE),
``curr_term`` (0), ``curr_vote_for`` (None), ``leader_id``, ``ledger_end_index`` and
``ledger_end_term`` (-1 until the store says otherwise), ``known_max_term_in_group`` (-1),
the peers, ``peers_live_table``, and, for leadership transfer, ``transferee`` and
``term_to_take_leadership`` (-1).

The term and the vote are persisted in ``<storeBaseDir>/dledger-<selfId>/currterm``
(``persistTerm``) whenever the vote is set or the term grows, and read back when a node
starts (``loadTerm``). The file is a ``Properties`` text written by
``IOUtils#properties2String``: one ``key=value`` line per key in the order a
``java.util.Properties`` iterates them. On Java 17 that is ``voteLeader`` then ``currTerm``
(checked with jshell: ``voteLeader=n1\\ncurrTerm=3\\n``); an empty vote is written as
``voteLeader=``. ``IOUtils#string2File`` first copies the old content to ``currterm.bak``.
Here the file lives in the node's ``disk`` (a dict from path to text that survives a kill),
so a restarted node keeps its term and vote, as Raft requires.

What it must not know: time, the network, the log's bytes.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from enum import Enum

from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.exception import check
from mqlab.dledger.protocol import DLedgerResponseCode

__all__ = ["MemberState", "Role", "TERM_PERSIST_FILE", "term_file_text", "parse_term_file"]

TERM_PERSIST_FILE = "currterm"
TERM_PERSIST_KEY_TERM = "currTerm"
TERM_PERSIST_KEY_VOTE_FOR = "voteLeader"


class Role(Enum):
    """Mirrors ``MemberState.Role`` (DLedger 0.2.3)."""

    UNKNOWN = "UNKNOWN"
    CANDIDATE = "CANDIDATE"
    LEADER = "LEADER"
    FOLLOWER = "FOLLOWER"


def term_file_text(curr_term: int, curr_vote_for: str | None) -> str:
    """The ``currterm`` file's text, in the key order Java 17's ``Properties`` gives."""
    return (
        f"{TERM_PERSIST_KEY_VOTE_FOR}={curr_vote_for or ''}\n{TERM_PERSIST_KEY_TERM}={curr_term}\n"
    )


def parse_term_file(text: str) -> tuple[int | None, str | None]:
    """``(currTerm, voteLeader)`` from a ``currterm`` text (``MemberState#loadTerm``).

    A missing key gives None; an empty vote is None.

    Raises:
        ValueError: a ``currTerm`` that is not an integer.
    """
    props: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, _, value = line.partition("=")
        props[key.strip()] = value.strip()
    term = None
    if TERM_PERSIST_KEY_TERM in props:
        try:
            term = int(props[TERM_PERSIST_KEY_TERM])
        except ValueError:
            raise ValueError(f"currterm: currTerm={props[TERM_PERSIST_KEY_TERM]!r}") from None
    vote = props.get(TERM_PERSIST_KEY_VOTE_FOR) or None
    return term, vote


class MemberState:
    """Mirrors ``MemberState`` (DLedger 0.2.3). See the module essay."""

    def __init__(self, config: DLedgerConfig, disk: MutableMapping[str, str] | None = None) -> None:
        self.dledger_config = config
        self.group = config.group
        self.self_id = config.self_id
        self.peers = config.peers
        self.peer_map: dict[str, str] = config.peer_map()
        self.role = Role.CANDIDATE
        self.leader_id: str | None = None
        self.curr_term = 0
        self.curr_vote_for: str | None = None
        self.ledger_end_index = -1
        self.ledger_end_term = -1
        self.known_max_term_in_group = -1
        self.peers_live_table: dict[str, bool] = {}
        self.transferee: str | None = None
        self.term_to_take_leadership = -1
        self.disk: MutableMapping[str, str] = {} if disk is None else disk
        self.load_term()

    # -- the currterm file ------------------------------------------------------------------
    @property
    def term_file_path(self) -> str:
        return f"{self.dledger_config.get_default_path()}/{TERM_PERSIST_FILE}"

    def load_term(self) -> None:
        """``MemberState#loadTerm``: read term and vote back from ``currterm``."""
        text = self.disk.get(self.term_file_path)
        if text is None:
            return
        term, vote = parse_term_file(text)
        if term is not None:
            self.curr_term = term
        self.curr_vote_for = vote

    def persist_term(self) -> None:
        """``MemberState#persistTerm`` through ``IOUtils#string2File`` (old text to ``.bak``)."""
        path = self.term_file_path
        old = self.disk.get(path)
        if old is not None:
            self.disk[path + ".bak"] = old
        self.disk[path] = term_file_text(self.curr_term, self.curr_vote_for)

    # -- term and vote ------------------------------------------------------------------------
    def set_curr_vote_for(self, vote_for: str | None) -> None:
        """``MemberState#setCurrVoteFor``: set and persist."""
        self.curr_vote_for = vote_for
        self.persist_term()

    def next_term(self) -> int:
        """``MemberState#nextTerm``: a candidate's next term: the largest term it has heard of,
        or one more than its own; the vote is cleared and both are persisted."""
        check(self.role == Role.CANDIDATE, DLedgerResponseCode.ILLEGAL_MEMBER_STATE,
              f"{self.role.name} != CANDIDATE")  # fmt: skip
        if self.known_max_term_in_group > self.curr_term:
            self.curr_term = self.known_max_term_in_group
        else:
            self.curr_term += 1
        self.curr_vote_for = None
        self.persist_term()
        return self.curr_term

    # -- roles --------------------------------------------------------------------------------
    def change_to_leader(self, term: int) -> None:
        """``MemberState#changeToLeader``."""
        check(self.curr_term == term, DLedgerResponseCode.ILLEGAL_MEMBER_STATE,
              f"{self.curr_term} != {term}")  # fmt: skip
        self.role = Role.LEADER
        self.leader_id = self.self_id
        self.peers_live_table.clear()

    def change_to_follower(self, term: int, leader_id: str) -> None:
        """``MemberState#changeToFollower``."""
        check(self.curr_term == term, DLedgerResponseCode.ILLEGAL_MEMBER_STATE,
              f"{self.curr_term} != {term}")  # fmt: skip
        self.role = Role.FOLLOWER
        self.leader_id = leader_id
        self.transferee = None

    def change_to_candidate(self, term: int) -> None:
        """``MemberState#changeToCandidate``: the term itself moves only in ``next_term``."""
        check(term >= self.curr_term, DLedgerResponseCode.ILLEGAL_MEMBER_STATE,
              f"should {term} >= {self.curr_term}")  # fmt: skip
        if term > self.known_max_term_in_group:
            self.known_max_term_in_group = term
        self.role = Role.CANDIDATE
        self.leader_id = None
        self.transferee = None

    # -- queries ------------------------------------------------------------------------------
    def is_leader(self) -> bool:
        return self.role == Role.LEADER

    def is_follower(self) -> bool:
        return self.role == Role.FOLLOWER

    def is_candidate(self) -> bool:
        return self.role == Role.CANDIDATE

    def peer_size(self) -> int:
        return len(self.peer_map)

    def is_quorum(self, num: int) -> bool:
        """``MemberState#isQuorum``: ``num >= peerSize / 2 + 1``."""
        return num >= self.peer_size() // 2 + 1

    def is_peer_member(self, peer_id: str | None) -> bool:
        return peer_id is not None and peer_id in self.peer_map

    def get_peer_addr(self, peer_id: str) -> str | None:
        return self.peer_map.get(peer_id)

    def get_self_addr(self) -> str:
        return self.peer_map[self.self_id]

    def update_ledger_index_and_term(self, index: int, term: int) -> None:
        """``MemberState#updateLedgerIndexAndTerm``: the store reports its end."""
        self.ledger_end_index = index
        self.ledger_end_term = term
