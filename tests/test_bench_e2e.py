"""The end-to-end benchmark script runs the real flow and its codec-ceiling loop does the work.

Mirrors no RocketMQ class: guards ``python -m mqlab.bench.e2e`` (issue 3's benchmark). No
timing is asserted (speed is reported by the script, never tested); what is asserted is that
every message arrives and that the ceiling loop encodes and decodes what it claims to.
"""

from __future__ import annotations

import pytest

from mqlab.bench.e2e import (
    bench_e2e,
    codec_ceiling,
    codec_stages,
    frame_stages,
    main,
    send_frames,
)


@pytest.mark.parametrize("batch", [1, 32])
def test_bench_e2e_delivers_every_message(batch: int) -> None:
    r = bench_e2e(96, batch=batch)
    assert (r["messages"], r["delivered"]) == (96, 96)
    assert r["events"] > 96  # at least one scheduler event per message handed to a listener


def test_bench_e2e_with_tracing_delivers_the_same() -> None:
    assert bench_e2e(64, batch=32, trace=True)["delivered"] == 64


def test_codec_ceiling_round_trips_every_message_in_order() -> None:
    r = codec_ceiling(40)
    # 8 queues round robin: message i is queue i % 8 at offset i // 8, decoded back from bytes
    assert r["consumed"] == [i >> 3 for i in range(40)]
    assert r["messages"] == 40 and r["us_per_msg"] > 0


def test_codec_stages_names_every_stage() -> None:
    assert list(codec_stages(5)) == [
        "Message()", "properties -> text", "text -> properties", "MessageExtBrokerInner()",
        "encode_stored_message", "consume queue unit", "decode_stored_message",
    ]  # fmt: skip


def test_send_frames_round_trips_the_request_and_the_response() -> None:
    """The frames stage does a send's wire work: the broker reads back the request header
    the producer wrote, and the producer the response's extFields as strings."""
    header, answer = send_frames(bytes(100))
    assert (header.producer_group, header.topic, header.queue_id) == (
        "BenchProducer",
        "BenchTopic",
        3,
    )
    assert header.born_timestamp == 1_700_000_000_000 and header.batch is False
    assert header.properties.startswith("TAGS\x01TagA\x02WAIT\x01true\x02UNIQ_KEY\x01")
    assert answer == {
        "msgId": "7F00000100002A9F0000000000000A28", "queueId": "3", "queueOffset": "12345",
        "transactionId": "7F00000100002A9F0000000000000001",
    }  # fmt: skip


def test_frame_stages_names_both_figures() -> None:
    st = frame_stages(5)
    assert list(st) == ["send frames", "codec ceiling"] and min(st.values()) > 0


def test_main_prints_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--messages", "64", "--batch", "32", "--ceiling", "200"]) == 0
    out = capsys.readouterr().out
    assert "delivered 64 in" in out
    assert "codec ceiling (per-message work only" in out
    assert "decode_stored_message" in out
    assert "not in the ceiling: a send's two frames" in out


def test_main_profile_writes_pstats_and_prints_the_top_costs(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--profile: one more run under cProfile; the pstats file holds the broker's send path
    (one SEND_MESSAGE_V2 header decoded per message) and the top costs are printed."""
    import pstats

    path = tmp_path / "e2e.pstats"
    assert main(["--messages", "64", "--ceiling", "0", "--profile", str(path)]) == 0
    out = capsys.readouterr().out
    assert "cProfile of the sends and the delivery" in out and "calls/msg" in out
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    decodes = [v[1] for k, v in stats.items() if k[2] == "decode_send_message_header_v2"]
    assert decodes == [64]


def test_main_refuses_a_negative_ceiling(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--ceiling", "-1"])
    assert e.value.code == 2
    assert "--ceiling must be >= 0, got -1" in capsys.readouterr().err
