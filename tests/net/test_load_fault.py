"""The load benchmark with a fault, at CI size (issue 12 part 4).

``mqlab.bench.load`` for 20 s: 8 C++ producer processes (``send_sync``, paced), 4 push
consumers in 2 groups (one filters ``TagA || TagB``), SIGKILL of the broker's process
group at 10 s and a restart on the same store. The full run is
``python -m mqlab.bench.load --seconds 60``.
"""

import pytest
from cpp_harness import CPP_CLIENT

from mqlab.bench.load import ALLOWED_CAUSES, LoadConfig, analyse, format_report, run_load

pytestmark = [pytest.mark.slow, CPP_CLIENT]


def test_load_with_a_broker_kill_loses_nothing_and_duplicates_only_where_allowed(tmp_path):
    cfg = LoadConfig(seconds=20, workdir=str(tmp_path / "run"))
    data = run_load(cfg)
    rep = analyse(data)
    print(format_report(cfg, rep))
    assert rep["lost"] == 0, rep["lost_keys"]
    assert rep["duplicates"]["unexplained"] == 0, rep["unexplained_examples"]
    assert set(rep["duplicates"]) == {*ALLOWED_CAUSES, "unexplained"}
    assert rep["filter_violations"] == {"BenchLoadAll": 0, "BenchLoadAB": 0}
    # Both halves carried traffic, and every client process shut down on request. One that
    # crashed or hung inside the C++ library's own shutdown() (upstream's teardown bugs,
    # apache/rocketmq-client-cpp#335) is printed above, not failed: it had stopped sending
    # and consuming, and every record it made is on disk and counted.
    lat = rep["send_latency_ms"]
    assert lat["before_kill"]["n"] > 0 and lat["after_restart"]["n"] > 0
    assert rep["acknowledged"] > 1000
    assert rep["unclean_stops"] == []
    assert rep["overflow_closes"] == 0  # no well-behaved client hit the write-buffer limit
    assert None not in rep["broker_rss_kib"].values()
