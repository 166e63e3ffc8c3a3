"""A notebook watching a live server: in-process inspectors and a followed trace file.

Issue 6 "Trace events stream from the live broker; a notebook can attach".
"""

import pytest
from cpp_harness import GoodClient

from mqlab.lab.attach import attach, serve
from mqlab.remoting.codes import RequestCode

SEND_V2 = {"a": "PG", "b": "LiveTopic", "c": "TBW102", "d": "4", "e": "1", "f": "0",
           "g": "0", "h": "0", "i": "TAGS\x01TagA\x02WAIT\x01true"}  # fmt: skip


def test_serve_in_process_gives_lab_inspectors_on_live_nodes(tmp_path):
    """serve(): a raw SEND_MESSAGE_V2 over TCP shows in topics(), queues(), commit_log(),
    events() and the timers (ConsumerOffsetManager.persist every 5 s)."""
    with serve(namesrv_port=0, broker_port=0, store=str(tmp_path / "s")) as live:
        broker = live._server.call(lambda s: s.broker().broker_addr)
        resp = GoodClient(broker).call(RequestCode.SEND_MESSAGE_V2, SEND_V2)
        assert (resp.code, resp.ext("queueId"), resp.ext("queueOffset")) == (0, "1", "0")
        topics = live.topics()
        assert topics.loc[topics.topic == "LiveTopic", "read_queue_nums"].tolist() == [4]
        q = live.queues("LiveTopic")
        assert q.loc[q.queue_id == 1, "max_offset"].tolist() == [1]
        assert len(live.commit_log()) == 1
        ev = live.events(component="DefaultMessageStore.putMessage")
        assert ev.step.tolist() == ["9"]
        timers = live.timers()
        assert "ConsumerOffsetManager.persist" in set(timers.name)
        # every service timer is due within 10 s, but the transaction check
        # (transactionCheckInterval) and BrokerStatsManager's 10 min and 1 h samplings
        check = timers.name == "TransactionalMessageCheckService.onWaitEnd"
        assert check.sum() == 1 and 50_000 < timers.in_ms[check].iloc[0] <= 60_000
        long = timers.name.isin(["StatsItemSet.samplingInMinutes", "StatsItemSet.samplingInHour"])
        assert (timers[~long & ~check].in_ms <= 10_000).all()
        first, second = sorted(timers[long].in_ms)  # 600 s and 3600 s after the start
        assert 540_000 < first <= 600_000 and 3_540_000 < second <= 3_600_000
        assert live.namesrv_addr.startswith("127.0.0.1:")
        # figures take anything with .trace.events, as they take a Lab
        assert [e.seq for e in live.trace.events] == sorted(e.seq for e in live.trace.events)


def test_attach_follows_a_trace_file_as_the_server_writes_it(tmp_path):
    """attach(FILE): events appear as `serve --trace FILE` writes them; state inspectors
    need the nodes and say so."""
    trace = tmp_path / "t.jsonl"
    with serve(namesrv_port=0, broker_port=0, store=str(tmp_path / "s"), trace=str(trace)) as live:
        watcher = attach(trace)
        live._server.call(lambda s: s._sink.flush())  # the server flushes every 200 ms
        assert watcher.namesrv_addr == live.namesrv_addr  # from the name server's start event
        n = len(watcher.events())
        broker = live._server.call(lambda s: s.broker().broker_addr)
        GoodClient(broker).call(RequestCode.SEND_MESSAGE_V2, SEND_V2)
        live._server.call(lambda s: s._sink.flush())
        puts = watcher.events(component="DefaultMessageStore.putMessage")
        assert len(watcher.events()) > n and puts.step.tolist() == ["9"]
        with pytest.raises(ValueError, match="state inspectors need the nodes"):
            watcher.topics()
