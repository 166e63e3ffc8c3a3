"""The trace recorder: levels, selection, pandas and Parquet export (docs/design.md §3)."""

import json

import pyarrow.parquet as pq

from mqlab.trace import COLUMNS, TRACE_SCHEMA_VERSION, TraceLevel, TraceRecorder
from mqlab.trace.recorder import NodeTracer


def make(level=TraceLevel.STEPS):
    rec = TraceRecorder("run-7", level)
    t = [0]
    tr = NodeTracer(rec, "broker-a", lambda: t[0])
    return rec, tr, t


def test_off_records_nothing_and_says_so():
    """Level OFF: enabled is False and emit keeps nothing."""
    rec, tr, _ = make(TraceLevel.OFF)
    assert not tr.enabled
    tr.emit("PullMessageProcessor.processRequest", "5", code="SYSTEM_ERROR")
    assert len(rec) == 0


def test_events_carry_time_node_and_sequence():
    """Events are numbered run-wide and stamped with the driver's clock and the node."""
    rec, tr, t = make()
    tr.emit("A", "1", x=1)
    t[0] = 15000
    tr.emit("B.run", "check", "timer", parked=2)
    assert [(e.run_id, e.t_ms, e.seq, e.node, e.component, e.step, e.kind) for e in rec] == [
        ("run-7", 0, 0, "broker-a", "A", "1", "step"),
        ("run-7", 15000, 1, "broker-a", "B.run", "check", "timer"),
    ]
    assert rec.select(component="B") == [rec.events[1]]
    assert rec.since(1) == [rec.events[1]]
    assert rec.events[1].describe() == "t=15000 broker-a B.run step check: parked=2"


def test_pandas_and_parquet_round_trip(tmp_path):
    """to_pandas has the schema's columns; Parquet keeps rows and the schema version."""
    rec, tr, _ = make()
    for i in range(3):
        tr.emit("PullMessageProcessor.processRequest", str(i + 1), text=f"step {i + 1}", n=i)
    df = rec.to_pandas()
    assert tuple(df.columns) == COLUMNS
    assert list(df["step"]) == ["1", "2", "3"]
    assert json.loads(df["fields"][2]) == {"n": 2, "text": "step 3"}
    path = tmp_path / "t.parquet"
    rec.to_parquet(path, extra_columns={"seed": 7})
    table = pq.read_table(path)
    assert (
        table.schema.metadata[b"mqlab.trace_schema_version"] == str(TRACE_SCHEMA_VERSION).encode()
    )
    back = table.to_pandas()
    assert list(back["seq"]) == [0, 1, 2] and list(back["seed"]) == [7, 7, 7]
    assert list(back["component"].astype(str)) == ["PullMessageProcessor.processRequest"] * 3
