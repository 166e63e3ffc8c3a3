"""The sweep benchmark (mqlab.bench.sweep) without Spark: its sweep, the pool mode and the figures."""

import pytest

from mqlab.bench.sweep import bench_sweep, main, run_bench


def test_bench_sweep_shape_and_events():
    """runs/2 seeds × persist_first false/true; --events picks whose traces are kept."""
    sweep = bench_sweep(10)
    configs = sweep.configs()
    assert len(configs) == 10
    assert sorted({c.point for c in configs}) == ["p000", "p001"]
    assert [c.keep_events for c in configs].count(True) == 2  # seed 0 of each point
    assert all(c.keep_events for c in bench_sweep(10, "all").configs())
    assert not any(c.keep_events for c in bench_sweep(10, "none").configs())


def test_sequential_and_pool_figures():
    """Sequential twice and the 2-process pool: wall and CPU seconds, the speed-ups derived from
    them, and metrics equal to the sequential runner's (run_bench asserts it)."""
    figures = run_bench(4, modes=("sequential", "pool"), progress=False)
    assert figures["runs"] == 4 and figures["identical_metrics"] is True
    pool = figures["pool ×2 processes"]
    seq_wall = (figures["sequential"]["wall_s"] + figures["sequential_again"]["wall_s"]) / 2
    assert pool["wall_s"] > 0 and pool["speedup"] == round(seq_wall / pool["wall_s"], 2)
    seq_cpu = (figures["sequential"]["cpu_s"] + figures["sequential_again"]["cpu_s"]) / 2
    assert pool["cpu_bound_speedup"] == round(figures["cpus"] * seq_cpu / pool["cpu_s"], 2)
    assert not any(k.startswith(("local", "standalone", "connect")) for k in figures)


def test_unknown_mode_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--modes", "sequential,yarn"])
    assert e.value.code == 2
    assert (
        "unknown mode(s) ['yarn']; known: sequential, pool, local, standalone, connect"
        in capsys.readouterr().err
    )
