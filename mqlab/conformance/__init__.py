"""Conformance: the real RocketMQ 4.9.3 broker as the oracle, request by request.

``python -m mqlab conformance [--report PATH] [--only GROUP] [-v]`` starts the real
name server and broker (``real_cluster``, built from the Maven Central jars) and
``mqlab serve``, each on its own free loopback ports with the same broker properties
(``sides.BROKER_PROPERTIES``: property filter on, delay levels of 1..18 s, small files,
relaxed disk guards), replays the scenarios to both as raw RemotingCommands (JSON
headers, as the Java client sends them) and compares every answer:

* ``code``, ``remark`` and every ``extFields`` entry, exactly;
* JSON bodies parsed (fastjson's unquoted integer keys and ``HashMap`` key order do
  not matter; list order does);
* pull bodies decoded into stored messages and compared field by field;
* stored bytes (``StoredCheck``): the commit-log entries of some topics field by field
  in the 4.9.3 layout (properties as the raw string, so their order counts) and their
  consume-queue units (offset, size, tags hash code);
* for long-polling steps (``timing=True``), the elapsed time on the real clock within
  ±300 ms.

Each row is ``identical``, ``explained: <rule>`` or ``UNEXPLAINED`` (both answers shown);
the last line is ``conformance: N requests, I identical, E explained, U unexplained``
(stored-bytes checks count as rows too); the exit code is 1 when U > 0, and then the real
JVM's last ERROR log lines follow the rows (``real broker log: …``), since its work directory
goes when the run ends. The report page
is written to ``docs/conformance.md``. ``--against mqlab`` replaces the real side by a
second ``mqlab serve``: a self-check of the harness that needs no Java.

Modules: ``real_cluster`` builds and runs the real cluster (from Maven Central) and
``mqadmin``; ``wire`` sends one hand-made request (asyncio); ``raw_tcp`` is the harness's
threaded client (several requests in flight per connection, arrival times measured);
``sides``, ``scenario``, ``scenarios/``, ``engine``, ``compare``, ``stored``, ``report``,
``coverage`` and ``cli`` are the harness. ``dledger_group`` runs a real 4.9.3 DLedger group
(a name server and three nodes, one JVM each), ``dledger_capture`` relays and records the frames
its nodes send each other, and ``dledger_record`` writes them as fixtures (docs/dledger.md);
``dledger_rows`` asks a real DLedger group and ``serve --dledger-brokers 3`` the same requests
around a leader kill, row by row, after the mixed group (``dledger_mixed``).

Normalization rules (``compare.RULES``; only a named rule may mask a field, and only
when the two values are equal once that rule's one reason is taken away):

=================== ======================================= ===============================
rule                fields                                  why
=================== ======================================= ===============================
broker-address      remarks, ext fields, JSON strings,      each broker listens on its own
                    storeHost of stored messages            free port (brokerIP1:listenPort)
namesrv-address     remarks, JSON strings                   each name server's own port
client-address      bornHost, remarks naming the client     the harness's ephemeral ports
offset-msg-id       msgId / offsetMsgId                     hex(storeHost, commit-log
                                                            offset): same offset required
store-timestamp     storeTimestamp, GET_EARLIEST_MSG_       each broker's clock; both set
                    STORETIME timestamp, dataVersion        and within 120 s
broker-born-        bornTimestamp of a message the broker     born on the broker's clock
timestamp           writes itself (OFFSET_MOVED_EVENT)      (both within 120 s)
schedule-deliver-   tags code of SCHEDULE_TOPIC_XXXX        delivery time = store time +
time                consume-queue units                     delay, each broker's clock
jdk-exception-text  remark of a SYSTEM_ERROR for a header    Java's NumberFormatException
                    number that does not parse              text and JDK-internal frame
file-preallocation  the pre-created next commit-log file    Java's AllocateMappedFileService
                                                            makes it ahead; mqlab on demand
missing-header-     the whole answer to a request that      4.9.3 only logs a missing
field               lacks a @CFNotNull header field         @CFNotNull field, then NPEs;
                                                            mqlab refuses up front
cpp-boolean-1       the whole answer to a send with a       Java reads "1" as false (the
                    boolean header field "1"                C++ client's batches); mqlab
                                                            as true
listen-port         listenPort / haListenPort of config     each side's own free port
                    bodies
store-path          store / KV / config paths of config     each side's own temp directory
                    bodies
available-          thread counts 4.9.3 derives from the    mqlab fixes the host at 4 CPUs
processors          CPU count (GET_BROKER_CONFIG)
runtime-            GET_BROKER_RUNTIME_INFO's clocks,       each broker measures its own
measurement         latencies, TPS, queues, flush, disk     run; mqlab samples nothing
=================== ======================================= ===============================

The rules for values that agree only by chance (``engine.CHANCE_RULES``: store-timestamp,
schedule-deliver-time, broker-born-timestamp, runtime-measurement, available-processors,
sampled-tps, consume-time-span, filter-data-born-time) count a field as explained whenever both answers carry it, equal or not, so the report
page (tracked in git) changes only when behaviour does; the run's duration and timed
steps' elapsed times go to ``artifacts/conformance-run.md``.

Coverage (``coverage``): after the summary the harness prints ``codes: T dispatched by
4.9.3, C covered by conformance rows, X left out on purpose`` (every request code the
4.9.3 broker and name server dispatch, those some row sends, those left out on purpose);
``python -m mqlab conformance --codes`` prints the table without starting anything.

How to add a scenario
---------------------

1. Pick the group (mechanism) module in ``mqlab/conformance/scenarios/`` or add one
   (then list it in ``scenarios/__init__.py``: ``GROUPS`` gives the report line, ``ALL``
   the order).
2. Write a ``Scenario(group, name, steps, doc)``; each step is a ``Step(name, code,
   header, body, to="broker"|"namesrv", wait_ms=..., background=..., after=...,
   timing=...)``. The builders in ``scenarios/common.py`` (``send_v2``, ``pull``,
   ``heartbeat``, ``route``, ``broker_config``, ...) fill in the Java client's header
   names and defaults. Refer to an earlier answer of the same side with
   ``${step.field}`` (an ext field, ``code`` or ``remark``) and to the clock with
   ``${now}`` / ``${now-5000}``.
3. Use topic and group names of your own (``cf_<scenario>_...``): scenarios must not
   depend on each other, so ``--only`` works. Leave a broker setting you change at
   runtime (``broker_config``) as you found it.
4. A step that makes the broker write later on its own (a DELAY property, a send-back
   to %RETRY%) must be followed, within the scenario, by a wait until that write is
   done (``scenarios.common.delivered_after(level)``): else the re-put lands among the
   next scenario's sends at a moment that differs by side and every later commit-log
   offset differs. Longer delays go in a scenario listed in ``scenarios.LAST``.
5. A parked pull: ``pull(..., suspend_ms=..., background=True)`` then a send, then a
   step with ``after=("the_pull",)``; put ``timing=True`` on the pull.
6. Run ``python -m mqlab conformance --against mqlab --only <group>`` (no Java), then
   without ``--against``. A difference is fixed in mqlab (with a unit test that fails
   before the fix) or becomes a new rule in ``compare.RULES`` with its reason, and a
   line in the README's "What the model leaves out".
7. A scenario that sends a request code no row sent before covers it: take the code out
   of ``KNOWN_GAPS`` in ``tests/conformance/test_coverage.py`` (the ratchet: that set
   may only shrink). A code left out on purpose goes in ``coverage.LEFT_OUT`` with its
   reason, and the same reason in the README.
"""
