"""``serve --loop``: the standard asyncio loop (the default, which every other test runs on),
uvloop when installed, ``auto``; bad choices are errors naming the choice."""

import sys

import pytest

from mqlab.bench.real import _probe_send
from mqlab.runtime.net import LOOPS, loop_name, new_event_loop
from mqlab.serve import ServeConfig, ServerThread, build_parser, main


def test_asyncio_is_the_default_loop_everywhere():
    """ServeConfig, the serve CLI and new_event_loop all default to the standard loop."""
    assert LOOPS == ("asyncio", "uvloop", "auto")
    assert ServeConfig().loop == "asyncio"
    assert build_parser().parse_args([]).loop == "asyncio"
    loop = new_event_loop()
    try:
        assert loop_name(loop) == "asyncio"
    finally:
        loop.close()


def test_unknown_loop_is_a_value_error_naming_the_choices():
    """A loop name outside LOOPS is refused by new_event_loop and ServeConfig."""
    with pytest.raises(ValueError, match="asyncio, uvloop, auto; got 'trio'"):
        new_event_loop("trio")
    with pytest.raises(ValueError, match="loop must be one of asyncio, uvloop, auto, got 'x'"):
        ServeConfig(loop="x")


def test_without_uvloop_auto_falls_back_and_uvloop_is_refused(monkeypatch, tmp_path, capsys):
    """uvloop not installed: ``auto`` gives the asyncio loop; ``uvloop`` is a ValueError saying
    how to install it, and ``serve --loop uvloop`` exits 1 with that message, serving nothing."""
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop -> ImportError
    loop = new_event_loop("auto")
    try:
        assert loop_name(loop) == "asyncio"
    finally:
        loop.close()
    with pytest.raises(
        ValueError, match=r"needs the uvloop package \(pip install 'mqlab\[uvloop\]'\)"
    ):
        new_event_loop("uvloop")
    rc = main(["--loop", "uvloop", "--namesrv-port", "0", "--broker-port", "0",
               "--store", str(tmp_path / "s")])  # fmt: skip
    assert rc == 1
    assert "loop 'uvloop' needs the uvloop package" in capsys.readouterr().err


def test_serve_on_uvloop_answers_sends(tmp_path):
    """With uvloop installed, a server on it stores sends as the asyncio one does: SUCCESS and
    consecutive queue offsets on queue 0 (skipped where uvloop is not installed)."""
    pytest.importorskip("uvloop")
    cfg = ServeConfig(
        namesrv_port=0, broker_port=0, store=str(tmp_path / "s"), trace_level="off", loop="uvloop"
    )
    server = ServerThread(cfg)
    try:
        assert server.call(lambda s: loop_name(s.driver.loop)) == "uvloop"
        addr = server.call(lambda s: s.broker().broker_addr)
        codes = [_probe_send(addr, i, timeout_s=10.0) for i in range(3)]
        offset = server.call(
            lambda s: s.broker().message_store.get_max_offset_in_queue("BenchProbe", 0)
        )
    finally:
        server.stop()
    assert (codes, offset) == ([0, 0, 0], 3)
