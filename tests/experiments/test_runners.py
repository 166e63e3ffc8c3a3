"""Local runners, Parquet output and the experiment CLI (mqlab.experiments.runners, .parquet, .cli)."""

import json

import pandas.testing as pdt
import pyarrow.parquet as pq
import pytest

from mqlab.__main__ import main as mqlab_main
from mqlab.experiments.parquet import read_events, read_manifest, read_metrics
from mqlab.experiments.runners import run_process_pool, run_sequential
from mqlab.experiments.sweep import load_sweep

SPEC = {
    "sweep": "tiny",
    "scenario": {"name": "tiny", "duration_ms": 2000, "drain_ms": 1000, "warmup_ms": 1000,
                 "producers": [{"rate_per_s": 10, "arrival": "poisson"}],
                 "consumers": [{"count": 2, "failure_rate": 0.2}],
                 "delay_levels": "1s 1s 1s 1s"},
    "grid": {"pull_batch_size": {"path": "consumers.0.pull_batch_size", "values": [1, 32]}},
    "seeds": 2,
    "events": 1,
}  # fmt: skip


@pytest.fixture(scope="module")
def sequential():
    return run_sequential(load_sweep(SPEC), progress=False)


def test_sequential_result_shape(sequential):
    """4 runs → 4 metrics rows in (point, seed) order; events only for seed 0 of each point."""
    m, e = sequential.metrics, sequential.events
    assert list(m["run_id"]) == ["tiny-p000-s0", "tiny-p000-s1", "tiny-p001-s0", "tiny-p001-s1"]
    assert list(m.columns[:6]) == ["run_id", "sweep", "point", "seed", "params", "pull_batch_size"]
    assert sorted(e["run_id"].unique()) == ["tiny-p000-s0", "tiny-p001-s0"]
    assert (e.groupby("run_id")["seq"].max() + 1).tolist() == m.loc[[0, 2], "trace_events"].tolist()
    assert json.loads(m["params"][2]) == {"pull_batch_size": 32}


def test_process_pool_gives_identical_rows(sequential):
    """The process pool (spawn) returns the sequential runner's rows exactly."""
    pool = run_process_pool(load_sweep(SPEC), max_workers=2, progress=False)
    pdt.assert_frame_equal(pool.metrics, sequential.metrics)
    pdt.assert_frame_equal(pool.events, sequential.events)


def test_write_partitioned_parquet_and_read_back(sequential, tmp_path):
    """metrics/ and events/ are partitioned by point; files carry the schema versions."""
    out = sequential.write(tmp_path / "out", command="python -m mqlab experiment run x")
    assert sorted(p.name for p in (out / "metrics").iterdir()) == ["point=p000", "point=p001"]
    meta = pq.read_schema(out / "metrics" / "point=p000" / "part-0.parquet").metadata
    assert (
        meta[b"mqlab.metrics_schema_version"] == b"1"
        and meta[b"mqlab.trace_schema_version"] == b"1"
    )
    pdt.assert_frame_equal(read_metrics(out), sequential.metrics)
    pdt.assert_frame_equal(read_events(out), sequential.events)
    man = read_manifest(out)
    assert man["command"] == "python -m mqlab experiment run x" and man["runs"] == 4
    assert man["points"] == [{"point": "p000", "pull_batch_size": 1},
                             {"point": "p001", "pull_batch_size": 32}]  # fmt: skip


def test_cli_runs_a_spec_and_records_the_command(sequential, tmp_path, capsys):
    """python -m mqlab experiment run SPEC --out DIR writes the same rows and the command."""
    spec = tmp_path / "tiny.json"
    spec.write_text(json.dumps(SPEC))
    out = tmp_path / "cli"
    argv = ["run", str(spec), "--out", str(out), "--no-progress"]
    assert mqlab_main(["experiment", *argv]) == 0
    assert "4 run(s) of tiny" in capsys.readouterr().out
    pdt.assert_frame_equal(read_metrics(out), sequential.metrics)
    assert read_manifest(out)["command"] == "python -m mqlab experiment " + " ".join(argv)


def test_cli_reports_bad_specs(tmp_path, capsys):
    """A spec with an unknown key exits 2 with the reason."""
    spec = tmp_path / "bad.yaml"
    spec.write_text("name: x\ndurration_ms: 5\n")
    assert mqlab_main(["experiment", "run", str(spec), "--out", str(tmp_path / "o")]) == 2
    assert "unknown key(s) ['durration_ms']" in capsys.readouterr().err
