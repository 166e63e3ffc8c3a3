"""Sweeps: grids × seeds unrolled into run configurations (mqlab.experiments.sweep, .schema)."""

import json

import pytest

from mqlab.experiments.schema import check_param_column, param_type, param_value
from mqlab.experiments.sweep import RunConfig, Sweep, load_sweep

SPEC = {
    "sweep": "s",
    "scenario": {"name": "base", "producers": [{"rate_per_s": 1}]},
    "grid": {
        "strategy": {"path": "consumers.0.strategy", "values": ["AVG", "CONSISTENT_HASH"]},
        "broker.long_polling_enable": [True, False],
    },
    "seeds": {"start": 10, "count": 3},
    "events": 1,
}


def test_configs_are_points_times_seeds_in_order():
    """2 × 2 points × 3 seeds = 12 runs; point p000.. in product order, seeds inside each."""
    sw = load_sweep(SPEC)
    cfgs = sw.configs()
    assert len(cfgs) == 12
    assert [c.run_id for c in cfgs[:4]] == ["s-p000-s10", "s-p000-s11", "s-p000-s12", "s-p001-s10"]
    assert dict(cfgs[3].params) == {"strategy": "AVG", "long_polling_enable": False}
    sc = cfgs[3].build_scenario()
    assert (sc.seed, sc.consumers[0].strategy, sc.broker) == (
        10,
        "AVG",
        {"long_polling_enable": False},
    )
    assert [c.keep_events for c in cfgs[:3]] == [True, False, False]


def test_param_types_follow_the_values():
    """bool → bool, ints → int64, ints and floats → float64, anything else → string."""
    assert load_sweep(SPEC).param_types == {"strategy": "string", "long_polling_enable": "bool"}
    assert param_type([1, 2]) == "int64" and param_type([1, 2.5]) == "float64"
    assert param_type([True, 1]) == "string" and param_value([1, 2], "string") == "[1, 2]"
    assert param_value(3, "float64") == 3.0


def test_run_config_json_round_trip():
    """A RunConfig survives JSON (what Spark tasks receive)."""
    c = load_sweep(SPEC).configs()[5]
    assert RunConfig.from_json(c.to_json()) == c
    assert json.loads(c.to_json())["run_id"] == "s-p001-s12"


def test_plain_scenario_spec_is_a_one_run_sweep(tmp_path):
    """A spec without 'scenario' is a scenario: one run with its own seed."""
    p = tmp_path / "one.json"
    p.write_text(json.dumps({"name": "solo", "seed": 4}))
    cfgs = load_sweep(p).configs()
    assert [(c.run_id, c.seed, c.point) for c in cfgs] == [("solo-p000-s4", 4, "p000")]


def test_scenario_path_is_relative_to_the_spec(tmp_path):
    """scenario: other.yaml is read next to the sweep file."""
    (tmp_path / "base.yaml").write_text("name: fromfile\nduration_ms: 1000\n")
    (tmp_path / "sweep.yaml").write_text("scenario: base.yaml\nseeds: 2\n")
    sw = load_sweep(tmp_path / "sweep.yaml")
    assert sw.name == "fromfile" and sw.scenario.duration_ms == 1000 and sw.seeds == (0, 1)


def test_bad_grids_fail_before_running():
    """A path that does not apply, a clashing column or repeated seeds raise ValueError."""
    with pytest.raises(ValueError, match="no key 'nope'"):
        load_sweep({**SPEC, "grid": {"nope.x": [1]}})
    with pytest.raises(ValueError, match="clashes with a metrics column"):
        check_param_column("lost")
    with pytest.raises(ValueError, match="must not repeat"):
        load_sweep({**SPEC, "seeds": [1, 1]})
    with pytest.raises(ValueError, match="events must be"):
        Sweep(load_sweep(SPEC).scenario, events="some")


def test_limit_seeds_keeps_the_first_ones():
    """limit_seeds(1) keeps seed 10 of {10, 11, 12} at every point."""
    assert [c.run_id for c in load_sweep(SPEC).limit_seeds(1).configs()] == [
        "s-p000-s10", "s-p001-s10", "s-p002-s10", "s-p003-s10"]  # fmt: skip
