"""``python -m mqlab bench real``: the Java client's load on the real 4.9.3 broker and on mqlab.

One run, side by side: for each target (the real broker first, then ``mqlab serve``; one at
a time, so they do not compete for the cores) ``org.mqlab.interop.JavaBench`` sends 100-byte
messages synchronously from 1 and from 4 producer threads and a push consumer takes them
end to end. Printed: msg/s for sending and end to end, the p50/p99 of the send call and of
send-to-consume, each broker's CPU per message handled (the real broker's JVM from
``/proc``, every thread, its 1 ms polling services and JIT included; mqlab's event-loop
thread), consumed/sent, the load average around each run, and mqlab's figures as a ratio
of the real broker's, then which goals each mqlab row missed (``goal_lines``).
``--rounds N`` runs every target N times in turn, each round on freshly started brokers,
and reports each figure's median: the real broker's 16-thread msg/s was 5,235-8,235 in
runs of the same week here. ``--profile FILE`` runs mqlab's loop thread under cProfile
and prints its top costs in µs per message.

Measured on 2 cores shared with other jobs (load average 12-22; compare within one run)::

    run (UTC)      threads   msg/s real / mqlab  ratio   e2e p50 ms real / mqlab  ratio
    12:27 before      1          953 / 1184      1.24x        1.49 / 0.94         0.63x
                      4         3963 / 3127      0.79x        1.86 / 1.68         0.90x
    12:33 before      1         1133 / 1195      1.05x        1.47 / 1.55         1.05x
                      4         3240 / 2523      0.78x        1.91 / 2.22         1.16x
    12:51 after       1          933 / 1374      1.47x        1.90 / 1.00         0.53x
                      4         2801 / 1723      0.62x        2.26 / 2.62         1.16x
    12:52 after       1          800 / 1239      1.55x        2.34 / 0.79         0.34x
                      4         3098 / 3120      1.01x        2.59 / 1.92         0.74x

The goals (1 producer: >= 0.25x the real broker's msg/s, p50 <= 3x) hold in every run.
CPU per message: mqlab's loop 225-280 µs with 1 producer, 109-184 µs with 4; the real
JVM 940-990 and 280-320 µs (mostly its idle polling threads at these rates). mqlab's p99
is its weak side: a loaded machine preempts the one loop thread (lag of a 10 ms timer p99
33 ms, max 93 ms at load 18; GC pauses under 4 ms), and every client waits meanwhile.

Where mqlab's loop time goes (cProfile, 26 002 messages, 287 µs/msg with the profiler):
``socket.send`` 27 % (76 µs/msg, 1.8 sends a message: loopback TCP and waking the Java
reader, in the kernel), pulls (``PullMessageProcessor._process`` with ``get_message``)
18 %, sends (``SendMessageProcessor.send_message`` with the put) 16 %, decoding requests
(JSON header, ext fields) 9 %, encoding responses 6 %, the rest asyncio and framing: no
single Python hot spot left.

End-to-end latency: a parked pull is answered within one loop pass of the put (p50 0.5
ms with 4 producers, since 0 ms timers run right after the current event), but most
messages reach the consumer by its next fresh pull, so e2e follows the client's turnaround
(answer → next pull, p50 1.3 ms). When the broker is slowed (profiler on, CPU-starved) the
consumer can fall behind; its pulls then carry batches, it hands each message to its
consume pool, and its turnaround grew with the batch (2.2 ms for 1 message, 16 ms for
16+), which keeps it behind: e2e p50 23-31 ms against a send p50 of 1.1 ms in 2 of 7
profiled 1-producer runs. That is the likely cause of a 4-producer e2e p50 of 624 ms seen
once at load ~17; it did not recur in 5 side-by-side runs nor in ~15 mqlab-only runs
(loop thread at nice 19, all on one core, 16 and 32 producers: 6 745 msg/s, e2e p50 6.7 ms).

**Broker groups** (``--group sync``, ``--group async``): the same load on a master with one
slave, each side's: ``mqlab serve --slaves 1 --broker-role SYNC_MASTER`` (master and slave
on the one event-loop thread) and the real 4.9.3 master with a real slave in its JVM
(``RealCluster.start_slave``). Before measuring, the bench waits for the slave
(:func:`wait_for_slave`): a SYNC_MASTER answers SLAVE_NOT_AVAILABLE (11) while no slave is
connected and FLUSH_SLAVE_TIMEOUT (12) while none has reported past the message
(``CommitLog#handleHA``), so it probes with a synchronous send until one answers SEND_OK, then
waits until the slave's commit log holds the probe (GET_BROKER_RUNTIME_INFO
``commitLogMaxOffset``); if that never happens it says so and measures nothing. Every
measured and warm-up send must come back SEND_OK (``JavaBench``'s ``sendStatus``): the
table's last column, and the exit status (1 otherwise). CPU per message then covers the
slave too (same JVM; same loop thread).

Measured 2026-11-29 03:35-03:40 UTC, two runs of ``--group sync --messages 2000`` one after
the other (load average 17-19 on 2 cores; every send SEND_OK, every message consumed)::

    threads   msg/s real / mqlab   ratio   send p50 ms real / mqlab  ratio   send p99 ms  ratio
       1         234 / 282         1.21x         2.70 / 2.18        0.81x   26.7 / 25.1  0.94x
       4         880 / 483         0.55x         3.62 / 4.64        1.28x   15.0 / 55.9  3.72x
       1         238 / 261         1.10x         2.66 / 2.21        0.83x   21.2 / 24.8  1.17x
       4        1078 / 544         0.50x         2.93 / 4.59        1.57x   13.1 / 51.0  3.88x

Each slave was ready after 9-10 s (the real one: 17 SLAVE_NOT_AVAILABLE, 1 FLUSH_SLAVE_TIMEOUT,
then SEND_OK; mqlab's: 22-23, 1, then SEND_OK): the slave's first report waits one
``haSendHeartbeatInterval`` (5 s) after it connects, and the probe caught in between waits
``syncFlushTimeout`` (5 s) for it. With one producer mqlab keeps up; with four it reaches
about half the real group's msg/s and 3.7-3.9x its send p99. The one loop thread runs the
slave as well as the master: with 4 producers its CPU per message rose from 427 µs (one
master, ``--messages 2000`` at 03:41, same load: 818 msg/s, 1.05x the real broker) to
735-766 µs, and the loop is CPU-bound on a loaded machine, where the real JVM spreads master
and slave over both cores. Under cProfile (``--group sync --targets mqlab --threads 4
--messages 2000 --profile``) ``socket.send`` is again the top cost, 21 %, now 2.8 calls a
message instead of 1.8 (the HA push and the slave's report, in the kernel), then
commit-log flushes and reput (now on two stores); no Python hot spot of its own.

**A DLedger group** (``--group dledger``): three brokers of ``broker-a`` on
``DLedgerCommitLog`` on each side, ``preferredLeaderId=n0`` on both (``DLedgerTarget``): the
real one in four JVMs (name server and nodes, full JIT, 512 MiB each), mqlab's ``serve
--dledger-brokers 3`` on one loop thread. The bench waits until the name server lists ``n0``
at brokerId 0 and the followers at 2 and 3 and a probe send is SEND_OK, then measures the
leader through the Java client's route; a SEND_OK waits for a majority (the leader and one
follower). Measured 2026-11-29 15:21-15:24 UTC, one run of ``--group dledger --messages 2000``
(load average 5.3 at the start, 10.9 at the end, on 2 cores shared with four other jobs;
every send SEND_OK, every message consumed)::

    threads   msg/s real / mqlab   ratio   send p50 ms real / mqlab  ratio   send p99 ms  ratio
       1          70 / 220         3.13x        12.03 / 3.52        0.29x   51.6 / 18.6  0.36x
       4         270 / 227         0.84x        12.83 / 13.57       1.06x   45.7 / 60.6  1.33x

The real group's send p50 stays near 12 ms with 1 producer as with 4 (each of its threads waits
for the quorum ack), so it scales with producers; mqlab's one loop thread runs all three nodes
and the name server and is CPU-bound at 4 producers (2.7 ms of loop CPU a message, against 5.9
ms for the real group's four JVMs together, their idle polling included).

**Batched writes and uvloop** (2026-11-29, ``--threads 1,4 --profile``, one run each, load
3-9 on 2 cores, mqlab under cProfile in both). Before: ``socket.send`` 15 % of the loop's
busy time at 1.81 calls a message. With the frames of a pass joined per connection (the Java
client carries its sends and its pulls on one connection) 0.97 calls a message; ``--targets
uvloop`` in the same run: 1 thread 318 msg/s (1.11x the real broker; mqlab on asyncio 248,
0.87x), 4 threads 581 (0.51x; asyncio 616, 0.54x), loop CPU 8-23 % below asyncio's. That
first batching waited a loop pass and held a send's answer behind the pull it woke (send p50
1.64x the real broker's, against 1.28x before); the driver now writes when the read or timer
callback ends (``NetConnection.write``), which the Java-shaped probe of that work measured
at 0.51 sends a message with 4 senders and 20 % less loop CPU, not yet in a JVM run.

**16 threads: where the loop's time goes** (2026-11-29 18:11 UTC, ``--targets mqlab
--threads 16 --messages 2000 --profile``, load 1.5-3.1). The loop thread: 564 µs of CPU a
message with the profiler, 27.8 s busy and 31.5 s idle by its wall clock. Top own times:
``socket.send`` 11.8 % at 0.12 calls a message (one Java connection carries the 16
producers and the consumer: ~10 requests a read, one write a read), 750 µs of wall clock a
call, which is the kernel waking the Java reader and the loop losing its core, not CPU;
then ``send_message`` 3.5 %, the SEND_MESSAGE_V2 header decode 2.7 %, the json module's
encode 2.7 % and decode 2.4 % + 2.1 %, ``mmap.flush`` 2.3 % (133 msyncs of 4.8 ms: the put
that runs the 500 ms ASYNC_FLUSH pass waits for it, see ``CommitLog.flush_real_time_service``),
and no other function above 2 %. py-spy on the loop thread at load 16-19 (``--messages
3000``): 40 % of its running samples in ``transport.write``, 7 % in epoll, 4 % in msync,
the rest spread thinly. Writing each answer as soon as it is ready, instead of when the read
ends, cost 10 % more loop CPU a message (median 308 against 281 µs, three alternating runs
each, load 12-19) for no visible send p50 gain (9.38 against 9.59 ms); not kept.

**DLedger group, two costs removed** (``--group dledger --targets mqlab --threads 4
--messages 500``). Under cProfile the loop's top costs were ``socket.send`` 10.1 % (2.36
calls a message: the leader's pushes to two followers, their answers and the client's
answer go on different connections), then ``rpc_body``'s name conversion and dataclass
walk (``_camel`` 2.6 % own, 102 calls a message; ``_plain`` and ``_build`` 14 % with their
callees) and ``DLedgerCommitLog.file_holding``, which copied the whole data file for every
pull (2.2 ms a call after 2,800 messages, growing with the log). Now the field names are
built once per class and a pull copies only the messages it takes. Side by side, two
alternating runs each (18:57-19:00 UTC, load 11-18): loop CPU 3,047 / 3,446 -> 2,836 /
2,592 µs a message, 89 / 107 -> 99 / 163 msg/s, every send SEND_OK, every message consumed.

**The reput right after the read, and msync off the loop** (2026-11-29 21:27-21:54 UTC,
``--targets mqlab --threads 16 --messages 2000``, runs alternating before/after at load 5-10;
medians). A put asks for the reput with a 0 ms timer. The driver ran it by ``call_soon``:
after the loop pass's other callbacks (often the consumer connection's read, whose pulls then
found nothing dispatched and parked), and the answers of the pulls it woke went out in a later
write. Now such a timer fires when the read that armed it ends, right after the read's own
answers are written, and the woken pulls' answers are written at once (``NetDriver._end_batch``;
4.9.3's reput thread polls every 1 ms, ``ReputMessageService#run``). 7 pairs: send p50 5.33 ->
4.51 ms, e2e p50 10.08 -> 7.46 ms, e2e p99 63 -> 37 ms, loop CPU 248 -> 221 µs a message.
Second, the 500 ms ASYNC_FLUSH pass and the consume-queue pass hand their files to a
``FileSyncer`` thread (``os.fdatasync``, which releases the GIL; ``mmap.flush`` holds it), as
4.9.3's flush services force from their own threads: under cProfile the loop's msyncs went
from 149 calls (0.54 s) to 1 (the index file's); 4 pairs: send p99 26.8 -> 18.0 ms (lower in
all 4), e2e p99 63.7 -> 39.2 ms, send p50 4.87 -> 4.47 ms, loop CPU 231 -> 212 µs a message.
Two runs of the same code gave medians 5 % apart at that load, so smaller differences are
noise. The top costs under cProfile after both: ``socket.send`` 11.4 % (0.11 calls a
message), ``send_message`` 3.5 %, the SEND_MESSAGE_V2 header decode 2.9 %, JSON encode 2.7 %
and decode 2.5 % + 1.9 %, the rest under 2.3 % each.

**A fast path the Java client never took** (2026-11-30). Every SEND_MESSAGE_V2 header the Java
client wrote was read by the ``json`` module, not orjson: ``fastjson.loads_c`` leaves a text with
a run of 19 digits to ``loads`` (it could be an integer past 64 bits), and the client's
``UNIQ_KEY`` (``FD0000000000000000000000000000026AAF…``) holds a run of 30 zeros inside a string.
Counted in a ``--threads 4 --messages 500`` run: 2,801 of 2,801 send headers, 0 after the guard
learned where a number can start. With the frozen headers built through their slots
(``mqlab.common.frozen_init``), the Java send frame's ``decode_payload`` went from 7.8-8.2 to
6.2-6.5 µs and its V2 header decode from 5.0-5.2 to 4.1-4.4 µs (timeit, best of 7, the trees
alternating). Lesson: a profile shows a slow path only as cost; count which branch runs.
With the inline reading of the usual header numbers too, four alternating runs of each tree
(``--targets mqlab --threads 4,16``, load 1-3; medians): 4 threads 3,509 -> 3,865 msg/s and
195 -> 175 µs of loop CPU a message; 16 threads 8,009 -> 7,945 msg/s and 102.5 -> 101.6 µs,
no change the machine's noise (6,981-8,848 for one tree) would show.

**16 threads: a share of the cores, not CPU a message** (2026-11-30 18:20-18:34 UTC, quiet
machine, load 1-4). py-spy on the loop thread (``--targets mqlab --threads 16``, ``--idle``):
9.6 % of its samples in ``epoll`` and 3.1 % in ``transport.write``; the rest is Python work
spread thinly (``send_message`` 4.7 % own, ``loads_c`` 3.3 %, framing 3.3 %,
``encode_stored_message`` 3.3 %, no function above 5 %). The loop is runnable ~90 % of the
time yet gets ~0.76 of a core: the JavaBench JVM (about 180 µs of CPU a message against either
broker, from ``/proc``: 9.58 s for the real broker's 51,200 messages, 9.20 s for mqlab's) runs
~30 threads, and the kernel shares the two cores among runnable threads of one session
thread by thread, so one loop thread gets less than the real broker's many. Three rounds
each, medians: as measured for the goals, real 7,501 msg/s against mqlab 6,611 (0.88x, send
p50 1.45x, mqlab's CPU a message 0.79x); with ``--client-session`` (the client in a session of
its own, so with autogroup scheduling client and broker share the cores as two groups, as when
started from two terminals), mqlab 1.22-1.23x the real broker's msg/s at 16 threads and 1.31x
at 4, send p50 1.00-1.14x; the real broker then loses its second core to the client and its
e2e p99 rises to 177-320 ms. The goals stay measured without the option.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mqlab.interop.targets import MqlabTarget, Target, open_target

__all__ = [
    "GROUPS",
    "BenchError",
    "DLedgerTarget",
    "SlaveReady",
    "main",
    "median_result",
    "goal_lines",
    "report_lines",
    "run_java_bench",
    "send_ok_problems",
    "wait_for_slave",
]

FLAGS = ["-Xms256m", "-Xmx512m", "-XX:+UseSerialGC"]

#: ``--group``: the master's brokerRole and its number of slaves (``dledger``: a DLedger group
#: of three brokers, whose roles its election decides).
GROUPS: dict[str, tuple[str | None, int]] = {
    "single": (None, 0),
    "async": ("ASYNC_MASTER", 1),
    "sync": ("SYNC_MASTER", 1),
    "dledger": (None, 0),
}
#: the real DLedger nodes' JVM options for a benchmark: full JIT (the tests' stop at C1), a
#: fixed heap; three nodes and the name server share the machine
DLEDGER_BENCH_JVM = ["-XX:TieredStopAtLevel=4", "-Xms512m", "-Xmx512m"]

#: ``--targets``, in the order they run: the real broker, mqlab on asyncio, mqlab on uvloop
TARGETS = ("real", "mqlab", "uvloop")

#: the probe's topic (auto-created from TBW102), apart from the measured ``BenchT<n>``
PROBE_TOPIC = "BenchProbe"
#: what a master answers while its slave is not (yet) in step (``CommitLog#handleHA``)
RETRY_CODES = {11: "SLAVE_NOT_AVAILABLE", 12: "FLUSH_SLAVE_TIMEOUT"}


class DLedgerTarget:
    """``--group dledger``: a DLedger group of ``broker-a`` (nodes ``n0``..``n2``) as a bench
    target: the real one (:class:`~mqlab.conformance.dledger_rows.RealDLedgerSide`, four
    JVMs) or ``mqlab serve --dledger-brokers 3`` (``MqlabDLedgerSide``), both with
    ``preferredLeaderId=n0``. :meth:`wait_ready` blocks until ``n0`` is the master and every
    node registered, and a probe send to it is SEND_OK."""

    def __init__(self, kind: str, workdir: Path, loop: str = "asyncio") -> None:
        from mqlab.conformance.dledger_rows import MqlabDLedgerSide, RealDLedgerSide

        self.kind = kind
        workdir.mkdir(parents=True, exist_ok=True)
        self.side: Any = (
            RealDLedgerSide(workdir, jvm_options=DLEDGER_BENCH_JVM)
            if kind == "real"
            else MqlabDLedgerSide(workdir, loop=loop)
        )
        self.side.start()
        self.namesrv_addr = self.side.namesrv_addr
        self.broker_addr = self.side.broker_addr
        self.slave_addr = ""

    def wait_ready(self, timeout_s: float = 90.0) -> str:
        """n0 leading with every node listed, then probe sends until one is SEND_OK; a line
        that says what it took."""
        start = time.monotonic()
        self.side.lead("n0")
        answers: list[str] = []
        while True:
            code = _probe_send(self.broker_addr, len(answers), timeout_s=15.0)
            answers.append("SEND_OK" if code == 0 else f"code {code}")
            if code == 0:
                break
            if time.monotonic() - start > timeout_s:
                raise BenchError(f"the DLedger leader at {self.broker_addr} never answered "
                                 f"SEND_OK within {timeout_s:g} s ({_summary(answers)})")  # fmt: skip
            time.sleep(0.2)
        table = self.side.table()
        return (f"{self.kind:6} DLedger group ready after {time.monotonic() - start:.1f} s: "
                f"brokerIds {sorted(table)}, probe sends {_summary(answers)}")  # fmt: skip

    def run_on_loop(self, fn: Any) -> Any:
        return self.side.run_on_loop(fn)

    def cpu_seconds(self) -> float:
        """The real group's JVMs (name server and three nodes), or mqlab's loop thread."""
        return self.side.cpu_seconds()

    def close(self) -> None:
        self.side.stop()


def open_dledger(kind: str, workdir: Path, loop: str = "asyncio") -> DLedgerTarget:
    """A started :class:`DLedgerTarget` (``kind`` real or mqlab)."""
    return DLedgerTarget(kind, workdir, loop)


class BenchError(RuntimeError):
    """The bench cannot measure: a slave never got in step, a probe was refused."""


@dataclass(frozen=True, slots=True)
class SlaveReady:
    """What :func:`wait_for_slave` saw: the probe sends' answers (code names, in order),
    the seconds it took, and the commit-log max offset both brokers reached."""

    answers: tuple[str, ...]
    seconds: float
    master_max_offset: int
    slave_max_offset: int

    def line(self, kind: str) -> str:
        waited = _summary(list(self.answers))
        return (
            f"{kind:6} slave ready after {self.seconds:.1f} s: probe sends {waited}; "
            f"slave commitLogMaxOffset {self.slave_max_offset} >= master's {self.master_max_offset}"
        )


def _probe_send(broker_addr: str, i: int, timeout_s: float) -> int:
    """One synchronous SEND_MESSAGE_V2 of a 10-byte probe to queue 0; the answer's code."""
    from mqlab.conformance.wire import send_v2

    return send_v2(
        broker_addr, PROBE_TOPIC, f"probe{i:05d}".encode(), group="bench_probe_pg",
        timeout=timeout_s,
    ).code  # fmt: skip


def _max_offset(broker_addr: str) -> int:
    from mqlab.conformance.replication import runtime_info

    return int(runtime_info(broker_addr)["commitLogMaxOffset"])


def wait_for_slave(
    broker_addr: str, slave_addr: str, *, timeout_s: float = 90.0, pause_s: float = 0.2
) -> SlaveReady:
    """Block until the master at ``broker_addr`` acknowledges a send SEND_OK and the slave
    at ``slave_addr`` holds it.

    1. probe: a synchronous send to the master; SLAVE_NOT_AVAILABLE / FLUSH_SLAVE_TIMEOUT
       (a SYNC_MASTER whose slave has not connected / reported) mean "again after
       ``pause_s``", any other code but SUCCESS is an error;
    2. the master's commit-log max offset after the SEND_OK; then until the slave's
       reaches it (an ASYNC_MASTER answers SEND_OK without its slave: step 2 is its wait).

    Raises:
        BenchError: not in step within ``timeout_s`` (the answers so far in the message), or a
            probe was refused with another code.
    """
    start = time.monotonic()
    deadline = start + timeout_s
    answers: list[str] = []
    while True:
        code = _probe_send(broker_addr, len(answers), timeout_s=15.0)
        answers.append("SEND_OK" if code == 0 else RETRY_CODES.get(code, f"code {code}"))
        if code == 0:
            break
        if code not in RETRY_CODES:
            raise BenchError(f"the master at {broker_addr} refused the probe send: code {code}")
        if time.monotonic() > deadline:
            raise BenchError(
                f"the master at {broker_addr} never answered SEND_OK within {timeout_s:g} s "
                f"({len(answers)} probe sends: {_summary(answers)}): its slave at {slave_addr} "
                "is not connected and reporting; nothing measured"
            )
        time.sleep(pause_s)
    master = _max_offset(broker_addr)
    while (slave := _max_offset(slave_addr)) < master:
        if time.monotonic() > deadline:
            raise BenchError(
                f"the slave at {slave_addr} stayed at commitLogMaxOffset {slave} < the master's "
                f"{master} for {timeout_s:g} s: it is not replicating; nothing measured"
            )
        time.sleep(pause_s)
    return SlaveReady(tuple(answers), time.monotonic() - start, master, slave)


def _summary(answers: list[str]) -> str:
    counts: dict[str, int] = {}
    for a in answers:
        counts[a] = counts.get(a, 0) + 1
    return ", ".join(f"{k} x{v}" for k, v in counts.items())


def send_ok_problems(r: dict, expected: int) -> list[str]:
    """What is wrong with one JavaBench result's acknowledgements: every one of the
    ``expected`` measured sends and every warm-up send must be SEND_OK."""
    problems = []
    for key, want in (("sendStatus", expected), ("warmupSendStatus", r.get("warmup"))):
        statuses = r.get(key)
        if statuses is None:
            problems.append(f"no {key} in the result (JavaBench too old?)")
            continue
        others = {k: v for k, v in sorted(statuses.items()) if k != "SEND_OK"}
        ok = statuses.get("SEND_OK", 0)
        if others or (want is not None and ok != want):
            what = "measured" if key == "sendStatus" else "warm-up"
            rest = "".join(f", {k} {v}" for k, v in others.items())
            problems.append(f"{what} sends: SEND_OK {ok} of {want}{rest}")
    return problems


def run_java_bench(
    namesrv_addr: str, topic: str, threads: int, per_thread: int, workdir: Path, *,
    own_session: bool = False,
) -> dict:  # fmt: skip
    """One ``JavaBench`` JVM; its result line. ``own_session``: start it in a session of
    its own (``--client-session``)."""
    from mqlab.conformance.real_cluster import JAVA_DIR, _java, runner_classpath

    cmd = [
        _java(), *FLAGS, f"-Duser.home={workdir}", f"-Drocketmq.client.logRoot={workdir}/logs",
        f"-Dlogback.configurationFile={JAVA_DIR / 'conf' / 'logback_tools.xml'}",
        "-cp", runner_classpath(), "org.mqlab.interop.JavaBench",
        namesrv_addr, topic, str(threads), str(per_thread),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env,
                          check=False, start_new_session=own_session)  # fmt: skip
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"JavaBench failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def _measured_run(
    target: Target, n: int, per_thread: int, workdir: Path, own_session: bool = False
) -> dict:
    """One JavaBench run, with the server's CPU per message and the load around it."""
    load0 = os.getloadavg()[0]
    cpu0 = target.cpu_seconds()
    r = run_java_bench(target.namesrv_addr, f"BenchT{n}", n, per_thread, workdir,
                       own_session=own_session)  # fmt: skip
    cpu = target.cpu_seconds() - cpu0
    # every message the server saw: warm-ups, the topic-creating one, the measured ones
    handled = r.get("warmup", 200 * n) + 1 + r["sent"]
    r["cpuUsPerMsg"] = round(cpu * 1e6 / handled, 1)
    r["load1"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
    return r


def _start_profile(target: Any) -> cProfile.Profile:
    prof = cProfile.Profile()  # the default clock: cheap; the CPU clock costs a syscall a call
    target.run_on_loop(prof.enable)
    return prof


def _report_profile(prof: cProfile.Profile, path: str, messages: int, cpu_s: float) -> None:
    """The top functions by own time, as a share of the loop's busy time and in µs/message.

    cProfile's clock is the wall clock: on a loaded machine it also counts the time the
    thread waited for a core, spread over the functions roughly as the CPU was. So the
    shares come from the profile and the µs from the loop thread's CPU clock (``cpu_s``,
    measured in the same runs, the profiler's own overhead included). "cum" includes the
    callees; for the loop's own frames (``_run_once``, ``select``) it includes the idle wait.
    """
    prof.dump_stats(path)
    stats = pstats.Stats(path).stats  # type: ignore[attr-defined]
    idle = sum(v[2] for k, v in stats.items() if k[2] in _IDLE)
    busy = sum(v[2] for v in stats.values()) - idle
    us = cpu_s * 1e6 / messages
    print(f"\nmqlab's event-loop thread under cProfile: {cpu_s:.2f} s CPU for {messages} "
          f"messages = {us:.0f} µs/msg (profiler included); {busy:.2f} s busy and {idle:.2f} s "
          "idle in epoll by its wall clock. Top functions by own time:")  # fmt: skip
    rows = sorted(((k, v) for k, v in stats.items() if k[2] not in _IDLE), key=lambda kv: -kv[1][2])
    print(f"  {'share':>6} {'µs/msg':>7} {'cum µs':>7} {'calls/msg':>9}  function")
    for (file, line, func), (_cc, nc, tt, ct, _callers) in rows[:15]:
        where = func if file == "~" else f"{Path(file).name}:{line}({func})"
        print(f"  {tt / busy:>6.1%} {tt / busy * us:>7.1f} {ct / busy * us:>7.1f} "
              f"{nc / messages:>9.2f}  {where}")  # fmt: skip
    print(f"  (pstats file: {path}; `python -m pstats {path}` to browse)")


#: What the event loop's thread does when it waits for input.
_IDLE = ("<method 'poll' of 'select.epoll' objects>", "<method 'select' of 'select.epoll' objects>")


COLS = ("sendMsgPerSec", "e2eMsgPerSec", "sendP50Ms", "sendP99Ms", "e2eP50Ms", "e2eP99Ms",
        "cpuUsPerMsg")  # fmt: skip


def report_lines(
    results: dict[tuple[str, int], dict], threads: list[int], kinds: list[str], expected: int
) -> list[str]:
    """The table: one row per thread count and broker, mqlab's as a ratio of the real
    broker's when both ran, and each row's consumed/sent and SEND_OK count of the measured
    sends (``expected`` per thread)."""
    lines = [f"{'threads':>7} {'broker':>6} " + " ".join(f"{c:>13}" for c in COLS)
             + "  consumed/sent  SEND_OK"]  # fmt: skip
    for n in threads:
        for kind in kinds:
            r = results[(kind, n)]
            ok = r.get("sendStatus", {}).get("SEND_OK", 0)
            cs = f"{r['consumed']}/{r['sent']}"
            lines.append(f"{n:>7} {kind:>6} " + " ".join(f"{r[c]:>13}" for c in COLS)
                         + f"  {cs:>13}  {ok}/{expected * n}")  # fmt: skip
            if kind != "real" and "real" in kinds:  # this mqlab row over the real broker's
                real = results[("real", n)]
                ratios = [r[c] / real[c] if real[c] else float("nan") for c in COLS]
                lines.append(f"{n:>7} {'ratio':>6} " + " ".join(f"{x:>12.2f}x" for x in ratios))
    return lines


#: The goals a mqlab row is held to, as a ratio of the real broker's figure in the same run:
#: (column, its name in the verdict, True: at least 1.0x; False: at most 1.0x).
GOALS = (("sendMsgPerSec", "msg/s", True), ("sendP50Ms", "send p50", False),
         ("e2eP99Ms", "e2e p99", False), ("cpuUsPerMsg", "CPU/msg", False))  # fmt: skip


def goal_lines(
    results: dict[tuple[str, int], dict], threads: list[int], kinds: list[str]
) -> list[str]:
    """Whether each mqlab row meets the goals against the real broker's row of the same
    thread count (``GOALS``): throughput at least the real broker's; send p50, e2e p99
    and CPU per message at most its. Empty unless the real broker ran."""
    if "real" not in kinds:
        return []
    lines = ["goals, against the real broker in this run: msg/s >= 1.0x; send p50, e2e p99 "
             "and CPU/msg <= 1.0x"]  # fmt: skip
    for kind in kinds:
        if kind == "real":
            continue
        met = []
        for n in threads:
            r, real = results.get((kind, n)), results.get(("real", n))
            if r is None or real is None:
                continue
            missed = []
            for col, name, at_least in GOALS:
                ratio = r[col] / real[col] if real[col] else float("nan")
                if not (ratio >= 1.0 if at_least else ratio <= 1.0):
                    shown = f"{ratio:.2f}"
                    missed.append(f"{name} {f'{ratio:.3f}' if shown == '1.00' else shown}x")
            if missed:
                lines.append(f"{kind:>6} {n:>3} thread(s): missed: {', '.join(missed)}")
            else:
                met.append(n)
                lines.append(f"{kind:>6} {n:>3} thread(s): met")
        lines.append(f"{kind:>6}: every goal met at {', '.join(map(str, met)) or 'none'} "
                     f"of {', '.join(map(str, threads))} thread(s)")  # fmt: skip
    return lines


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m mqlab bench real", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--messages", type=int, default=5000, help="messages per producer thread")
    ap.add_argument("--threads", default="1,4", help="producer thread counts (default 1,4)")
    ap.add_argument(
        "--targets", default="real,mqlab",
        help="which brokers, run in this order: real, mqlab (on the asyncio loop), uvloop "
        "(mqlab on uvloop, the uvloop extra) (default real,mqlab)",
    )  # fmt: skip
    ap.add_argument(
        "--group", choices=sorted(GROUPS), default="single",
        help="single: one master (default); sync / async: a SYNC_MASTER / ASYNC_MASTER with one "
        "slave on each side, the bench waiting for the slave before it measures; dledger: a "
        "DLedger group of three brokers on each side (the real one: four JVMs; mqlab: serve "
        "--dledger-brokers 3), the bench waiting for n0 to lead",
    )  # fmt: skip
    ap.add_argument(
        "--slave-timeout", type=float, default=90.0, metavar="S",
        help="seconds to wait for the slave to get in step, or for the DLedger group to take "
        "sends (default 90)",
    )  # fmt: skip
    ap.add_argument(
        "--rounds", type=int, default=1, metavar="N",
        help="run every target N times, in turn (real, mqlab, uvloop, real, ...), each round "
        "on freshly started brokers; the table gives each figure's median over the rounds "
        "(the real broker's msg/s varies by a third from run to run here) (default 1)",
    )  # fmt: skip
    ap.add_argument(
        "--client-session", action="store_true",
        help="start the Java client in a session of its own (setsid). Where the kernel groups "
        "by session (/proc/sys/kernel/sched_autogroup_enabled = 1), the client's threads and "
        "the broker's then share the cores as two groups rather than thread by thread, as a "
        "client and a broker started from two terminals would. An aid to reading the 16-thread "
        "figures; the goals are measured without it",
    )  # fmt: skip
    ap.add_argument(
        "--profile", metavar="FILE",
        help="run mqlab's event-loop thread under cProfile and write the pstats to FILE "
        "(FILE.uvloop for the uvloop target); prints the top costs as shares and in µs per "
        "message (mqlab's figures then include the profiler's overhead)",
    )  # fmt: skip
    return ap


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, checked: thread counts and messages positive, targets known."""
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        args.threads = [int(x) for x in args.threads.split(",")]
    except ValueError:
        ap.error(f"--threads: comma-separated integers, got {args.threads!r}")
    if any(n < 1 for n in args.threads):
        ap.error(f"--threads: each count must be >= 1, got {args.threads}")
    if args.messages < 1:
        ap.error(f"--messages must be >= 1, got {args.messages}")
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    if args.rounds > 1 and args.profile:
        ap.error("--profile takes one round: leave --rounds out")
    names = [k for k in args.targets.split(",") if k]
    unknown = sorted(set(names) - set(TARGETS))
    if unknown or not names:
        ap.error(f"--targets: some of {', '.join(TARGETS)}, got {args.targets!r}")
    args.kinds = [k for k in TARGETS if k in names]
    args.broker_role, args.slaves = GROUPS[args.group]
    args.dledger = args.group == "dledger"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    threads, kinds = args.threads, args.kinds
    root = Path(tempfile.mkdtemp(prefix="mqlab-bench-real-"))
    rounds: dict[tuple[str, int], list[dict]] = {}
    try:
        for i in range(args.rounds):
            if args.rounds > 1:
                print(f"round {i + 1} of {args.rounds}", flush=True)
            code = _one_round(args, root / f"round{i + 1}", rounds)
            if code:
                return code
    finally:  # the stores and the client logs
        shutil.rmtree(root, ignore_errors=True)
    results = {key: median_result(runs) for key, runs in rounds.items()}
    load = os.getloadavg()
    group = "one master" if not args.slaves else f"{args.broker_role} with 1 slave"
    if args.dledger:
        group = "a DLedger group of 3 brokers (n0 leading)"
    each = f"; each figure the median of {args.rounds} rounds" if args.rounds > 1 else ""
    if args.client_session:
        each += "; the client in a session of its own (--client-session: not the goals' setting)"
    print(f"\nJava client, 100-byte sync sends, {args.messages} per thread, {group}; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores; cpuUsPerMsg: "
          f"the broker process's CPU (mqlab: its event-loop thread) per message handled{each}")  # fmt: skip
    for line in report_lines(results, threads, kinds, args.messages):
        print(line)
    for line in goal_lines(results, threads, kinds):
        print(line)
    bad = [
        f"{kind} {n} thread(s): {p}"
        for (kind, n), runs in rounds.items()
        for r in runs
        for p in send_ok_problems(r, args.messages * n)
    ]
    for line in bad:
        print(f"NOT ALL SEND_OK: {line}")
    return 1 if bad else 0


def median_result(runs: list[dict]) -> dict:
    """One run's figures, or, over several rounds, each column's median (``COLS``); the
    counts (sent, consumed, send statuses) are the first round's."""
    if len(runs) == 1:
        return runs[0]
    out = dict(runs[0])
    for col in COLS:
        out[col] = round(statistics.median(r[col] for r in runs), 2)
    return out


def _one_round(args: argparse.Namespace, root: Path, rounds: dict) -> int:
    """Every target in turn, every thread count on each; the results appended to ``rounds``."""
    threads, kinds = args.threads, args.kinds
    results: dict[tuple[str, int], dict] = {}
    ready: dict[str, SlaveReady] = {}
    for kind in kinds:
        loop = "uvloop" if kind == "uvloop" else "asyncio"
        target: Any
        if args.dledger:
            target = open_dledger("real" if kind == "real" else "mqlab", root / kind, loop)
        else:
            target = open_target(
                "real" if kind == "real" else "mqlab", root / kind, benchmark=True,
                broker_role=args.broker_role, slaves=args.slaves, loop=loop,
            )  # fmt: skip
        prof = None
        try:
            if args.dledger:
                try:
                    print(target.wait_ready(args.slave_timeout), flush=True)
                except BenchError as e:
                    print(f"{kind}: {e}", flush=True)
                    return 2
            if args.slaves:
                try:
                    ready[kind] = wait_for_slave(
                        target.broker_addr, target.slave_addr, timeout_s=args.slave_timeout
                    )
                except BenchError as e:
                    print(f"{kind}: {e}", flush=True)
                    return 2
                print(ready[kind].line(kind), flush=True)
            if args.profile and (isinstance(target, MqlabTarget) or kind != "real"):
                prof = _start_profile(target)
            for n in threads:
                r = _measured_run(target, n, args.messages, root / kind, args.client_session)
                results[(kind, n)] = r
                rounds.setdefault((kind, n), []).append(r)
                print(f"{kind:6} {n} thread(s): {json.dumps(r)}", flush=True)
            if prof is not None:
                target.run_on_loop(prof.disable)
                runs = [r for (k, _), r in results.items() if k == kind]
                handled = sum(r["warmup"] + 1 + r["sent"] for r in runs)
                cpu_s = sum(r["cpuUsPerMsg"] * (r["warmup"] + 1 + r["sent"]) for r in runs) / 1e6
                path = args.profile if kind == "mqlab" else f"{args.profile}.{kind}"
                print(f"\n{kind}:", end="")
                _report_profile(prof, path, handled, cpu_s)
        finally:
            target.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
