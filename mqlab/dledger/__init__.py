"""DLedger 0.2.3 (``io.openmessaging.storage:dledger``, the Raft library RocketMQ 4.9.3's store
depends on) as a sans-IO core run by mqlab's drivers.

One module per mechanism, each naming the DLedger 0.2.3 class and method it mirrors:

- ``dledger_config``: ``DLedgerConfig`` with 0.2.3's defaults and property names;
- ``protocol``: the request and response bodies (``VoteRequest`` ... ``PushEntryResponse``),
  ``DLedgerRequestCode`` and ``DLedgerResponseCode``;
- ``dledger_entry`` and ``dledger_entry_coder``: an entry and its bytes;
- ``dledger_mmap_file_store``: the log (data and index bytes, ledger end, committed index);
- ``member_state``: role, term, vote, and the ``currterm`` file;
- ``dledger_leader_elector``: elections and heartbeats;
- ``quorum``: the committed index a set of water marks gives;
- ``dledger_entry_pusher``: the leader's dispatchers, the quorum ack, the follower's handler;
- ``dledger_server``: one node on a driver; ``group``: a group of them on the simulation driver.

The step numbers are those of mechanisms.md "DLedger election" and "DLedger replication".
"""
