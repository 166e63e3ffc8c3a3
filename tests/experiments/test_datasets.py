"""The recorded sweeps under datasets/: present, versioned, and still what the code produces."""

import pandas.testing as pdt
import pyarrow.parquet as pq
import pytest

from mqlab.experiments import datasets
from mqlab.experiments.parquet import read_events, read_manifest, read_metrics
from mqlab.experiments.schema import METRICS_SCHEMA_VERSION
from mqlab.experiments.sweep import load_sweep


@pytest.mark.parametrize("name", sorted(datasets.DATASETS))
def test_shipped_dataset_matches_its_spec(name):
    """Each dataset has one metrics row per run of its spec, the spec's command and mqlab
    version in sweep.json, schema version 1 in the files, and events of seed 0 of each point."""
    path = datasets.dataset_path(name)
    sweep = load_sweep(datasets.spec_path(name))
    m = read_metrics(path)
    assert list(m["run_id"]) == [c.run_id for c in sweep.configs()]
    man = read_manifest(path)
    assert man["command"].startswith(f"python -m mqlab experiment run datasets/specs/{name}.yaml")
    assert man["mqlab_version"] and man["metrics_schema_version"] == METRICS_SCHEMA_VERSION
    part = next((path / "metrics").rglob("*.parquet"))
    assert pq.read_schema(part).metadata[b"mqlab.metrics_schema_version"] == b"1"
    e = read_events(path)
    assert sorted(e["run_id"].unique()) == sorted(
        c.run_id for c in sweep.configs() if c.keep_events
    )
    assert (m["lost"] == 0).all() and (m["lost_allowed_by"] == "").all()


def test_datasets_stay_small():
    """All shipped Parquet together stays under 5 MB (a few MB, as the issue asks)."""
    total = sum(p.stat().st_size for p in datasets.datasets_dir().rglob("*.parquet"))
    assert total < 5_000_000


def test_unknown_dataset_is_named():
    """A typo lists the known datasets."""
    with pytest.raises(ValueError, match="unknown dataset 'polling'; known: "):
        datasets.dataset_path("polling")


@pytest.mark.slow
def test_regenerating_a_dataset_gives_the_shipped_rows(tmp_path):
    """Re-running the first seed of flow_control_thresholds (4 runs) reproduces its shipped
    metrics rows (all but trace_events, which counts every trace event the code emits)."""
    out = datasets.regenerate("flow_control_thresholds", tmp_path / "regen", seeds=1)
    fresh = read_metrics(out)
    shipped = read_metrics(datasets.dataset_path("flow_control_thresholds"))
    shipped = shipped[shipped["run_id"].isin(fresh["run_id"])].reset_index(drop=True)
    pdt.assert_frame_equal(fresh.drop(columns="trace_events"), shipped.drop(columns="trace_events"))
    assert read_manifest(out)["command"].endswith("--seeds 1")
