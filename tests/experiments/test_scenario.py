"""Scenarios as data and their timelines (mqlab.experiments.scenario, .schedule)."""

import pytest

from mqlab.experiments.scenario import FaultSpec, Scenario, load_scenario
from mqlab.experiments.schedule import fault_time, send_times, timeline


def test_defaults_round_trip_through_dict_and_json():
    """to_dict → from_dict gives an equal scenario; JSON has sorted keys."""
    s = Scenario(name="x", seed=7, broker={"long_polling_enable": False})
    assert Scenario.from_dict(s.to_dict()) == s
    assert s.to_json().startswith('{"broker":{"long_polling_enable":false},"brokers":1,')


def test_unknown_keys_are_named():
    """A typo in a nested spec is reported with its path and the known keys."""
    with pytest.raises(ValueError, match=r"consumers\[0\]: unknown key\(s\) \['stratgy'\]"):
        Scenario.from_dict({"consumers": [{"stratgy": "AVG"}]})


def test_strategy_must_be_a_known_name_without_arguments():
    """Strategies come from STRATEGIES_BY_NAME; CONFIG needs arguments a scenario lacks."""
    with pytest.raises(ValueError, match="strategy must be one of"):
        Scenario.from_dict({"consumers": [{"strategy": "RANDOM"}]})
    with pytest.raises(ValueError, match="needs constructor arguments"):
        Scenario.from_dict({"consumers": [{"strategy": "CONFIG"}]})


def test_faults_are_checked():
    """Unknown actions, missing targets and joins of a missing consumer spec fail early."""
    with pytest.raises(ValueError, match="fault action must be one of"):
        FaultSpec(at_ms=1, action="explode")
    with pytest.raises(ValueError, match="needs a target"):
        FaultSpec(at_ms=1, action="kill_consumer")
    with pytest.raises(ValueError, match=r"consumers\[2\] does not exist"):
        Scenario.from_dict({"faults": [{"at_ms": 1, "action": "join", "consumer": 2}]})


def test_topics_must_exist_for_producers_and_consumers():
    """A producer of an undeclared topic is refused."""
    with pytest.raises(ValueError, match="producer topic 'Other' is not in topics"):
        Scenario.from_dict({"producers": [{"topic": "Other"}]})


def test_with_params_overrides_dotted_paths():
    """Dotted paths reach lists and dicts; a new settings key is added."""
    s = Scenario().with_params({
        "seed": 3, "consumers.0.strategy": "CONSISTENT_HASH",
        "broker.long_polling_enable": False, "consumers.0.settings.pull_interval": 10,
    })  # fmt: skip
    assert (s.seed, s.consumers[0].strategy) == (3, "CONSISTENT_HASH")
    assert s.broker == {"long_polling_enable": False}
    assert s.consumers[0].settings == {"pull_interval": 10}
    with pytest.raises(ValueError, match="no list index '5'"):
        Scenario().with_params({"consumers.5.count": 1})


def test_load_scenario_from_yaml(tmp_path):
    """A YAML file loads into the dataclasses (bursts, tags, faults)."""
    p = tmp_path / "s.yaml"
    p.write_text(
        "name: y\nproducers: [{rate_per_s: 2, tags: [A, B], bursts: [{at_ms: 500, count: 3}]}]\n"
        "faults: [{at_ms: 1000, action: leave, target: consumer-1}]\n"
    )
    s = load_scenario(p)
    assert s.producers[0].tags == ("A", "B") and s.producers[0].bursts[0].count == 3
    assert s.faults[0].target == "consumer-1"


def test_uniform_send_times_and_bursts():
    """10 msg/s for 1 s: every 100 ms from 0; a burst of 3 at 250 ms is merged in order."""
    s = Scenario.from_dict({"duration_ms": 1000, "producers": [
        {"rate_per_s": 10, "bursts": [{"at_ms": 250, "count": 3}]}]})  # fmt: skip
    assert send_times(s.producers[0], 0, 0, 1000) == [
        0, 100, 200, 250, 250, 250, 300, 400, 500, 600, 700, 800, 900]  # fmt: skip


def test_poisson_arrivals_depend_on_the_seed_only():
    """Poisson send times are the same for one seed and differ for another."""
    s = Scenario.from_dict({"producers": [{"rate_per_s": 50, "arrival": "poisson"}]})
    a = send_times(s.producers[0], 0, 1, 10_000)
    assert a == send_times(s.producers[0], 0, 1, 10_000)
    assert a != send_times(s.producers[0], 0, 2, 10_000)
    assert 400 <= len(a) <= 600 and a == sorted(a)


def test_fault_jitter_is_seeded_and_bounded():
    """at_ms + a seeded 0..jitter_ms delay; jitter 0 keeps at_ms."""
    f = FaultSpec(at_ms=1000, action="leave", target="consumer-1", jitter_ms=500)
    times = {fault_time(f, 0, seed) for seed in range(20)}
    assert all(1000 <= t <= 1500 for t in times) and len(times) > 5
    assert fault_time(f, 0, 3) == fault_time(f, 0, 3)
    assert fault_time(FaultSpec(at_ms=9, action="leave", target="c"), 0, 3) == 9


def test_timeline_orders_faults_before_starts_before_sends():
    """At one ms: faults, then delayed consumer starts, then sends."""
    s = Scenario.from_dict({
        "duration_ms": 300, "drain_ms": 0,
        "producers": [{"rate_per_s": 10}],
        "consumers": [{"count": 1}, {"count": 2, "start_ms": 100}],
        "faults": [{"at_ms": 100, "action": "leave", "target": "consumer-1"}],
    })  # fmt: skip
    kinds = [(a.t_ms, a.kind) for a in timeline(s)]
    assert kinds == [(0, "send"), (100, "fault"), (100, "start"), (100, "start"), (100, "send"),
                     (200, "send")]  # fmt: skip
