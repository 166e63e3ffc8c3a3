"""The inspector's replication figure: master and slave commit logs side by side with the
replicated offset and push2SlaveMaxOffset marked (issue 24, item 4; mechanisms.md "HA
replication"), checked by the figure check's six rules.

Numbers (seed 1): ``send_many`` stores 169 bytes per message; a slave has the first two
(338 bytes) at t=11 002.
"""

from __future__ import annotations

import pytest

from mqlab import Lab
from mqlab.lab import figures as F
from mqlab.lab.figure_check import check_figure


def traces(fig) -> dict[str, tuple[list, list, list]]:
    return {t.name: (list(t.y), list(t.base), list(t.x)) for t in fig.data}


@pytest.fixture
def behind(tmp_path, replicate):
    """Two slaves with 338 bytes; the link to broker-a-s2 cut; the master at 845 bytes."""
    with Lab(seed=1, slaves=2, store_dir=tmp_path) as lab:
        lab.send_many("TopicTest", 2)
        replicate(lab, lab.broker("broker-a"), lab.broker("broker-a-s1"))
        lab.advance(1)
        lab.cut_link("broker-a", "broker-a-s2")
        lab.send_many("TopicTest", 3)
        lab.advance(3)
        yield lab


def test_frame_segments_per_node(behind):
    """The master's five entries: two on every slave, three on the master only; each slave
    holds the first two with the master's bytes."""
    df = F.commit_logs_side_by_side_frame(behind.commit_logs("broker-a"))
    got = [(r.node, r.start, r.end, r.state) for r in df.itertuples()]
    assert got == [
        ("broker-a", 0, 169, "on every slave"),
        ("broker-a-s1", 0, 169, "same bytes as the master"),
        ("broker-a-s2", 0, 169, "same bytes as the master"),
        ("broker-a", 169, 338, "on every slave"),
        ("broker-a-s1", 169, 338, "same bytes as the master"),
        ("broker-a-s2", 169, 338, "same bytes as the master"),
        ("broker-a", 338, 507, "on the master only"),
        ("broker-a", 507, 676, "on the master only"),
        ("broker-a", 676, 845, "on the master only"),
    ]
    assert df.attrs["lanes"] == [
        "broker-a (master, 845 B)", "broker-a-s1 (slave, 338 B)", "broker-a-s2 (slave, 338 B)",
    ]  # fmt: skip
    assert (df.attrs["replicated_offset"], df.attrs["push2_slave_max_offset"]) == (338, 338)


def test_figure_bars_marks_and_the_check(behind):
    """One bar trace per state, a bar per entry on its node's lane; one black dashed line at
    338 (replicated offset = push2SlaveMaxOffset); all six figure rules pass."""
    fig = F.commit_logs_side_by_side(behind, "broker-a")
    assert check_figure(fig) == []
    m, s1, s2 = (
        "broker-a (master, 845 B)",
        "broker-a-s1 (slave, 338 B)",
        "broker-a-s2 (slave, 338 B)",
    )
    assert traces(fig) == {
        "on every slave": ([m, m], [0, 169], [169, 169]),
        "on the master only": ([m, m, m], [338, 507, 676], [169, 169, 169]),
        "same bytes as the master": ([s1, s2, s1, s2], [0, 0, 169, 169], [169] * 4),
    }
    assert [t.marker.color for t in fig.data] == ["#2ca02c", "#ff7f0e", "#1f77b4"]
    [line] = fig.layout.shapes
    assert (line.x0, line.x1, line.line.dash) == (338, 338, "dash")
    assert [a.text for a in fig.layout.annotations] == [
        "replicated offset = push2SlaveMaxOffset 338 (black, dashed)"
    ]
    assert fig.layout.title.text == (
        "Commit logs of broker-a and its slaves<br><sup>master 845 B, replicated offset 338, "
        "push2SlaveMaxOffset 338</sup>"
    )
    assert list(fig.layout.xaxis.range) == [0, 888]  # 845 * 1.05, rounded up
    assert list(fig.layout.yaxis.categoryarray) == [s2, s1, m]


def test_a_made_up_report_splits_the_two_marks(behind):
    """push2SlaveMaxOffset is what the master believes: when a report puts it past what the
    slaves hold (apache/rocketmq#3015), two lines: dashed at 338, dotted at 600."""
    ha = behind.broker("broker-a").message_store.ha_service
    ha.push2_slave_max_offset = 600
    fig = F.commit_logs_side_by_side(behind.commit_logs("broker-a"))
    assert check_figure(fig) == []
    assert [(s.x0, s.line.dash) for s in fig.layout.shapes] == [(338, "dash"), (600, "dot")]
    assert [a.text for a in fig.layout.annotations] == [
        "replicated offset 338 (black, dashed)", "push2SlaveMaxOffset 600 (black, dotted)",
    ]  # fmt: skip


def test_slave_ahead_of_a_master_that_came_back_empty(tmp_path, replicate):
    """The master's machine lost (its store gone: an empty master lane, the slave's 507 bytes
    beyond its end), then restarted empty with one new message: the slave holds other bytes
    at 0..168 and 338 bytes beyond the master's end."""
    with Lab(seed=1, slaves=1, store_dir=tmp_path) as lab:
        lab.send_many("TopicTest", 3)
        replicate(lab, lab.broker("broker-a"), lab.broker("broker-a-s1"))
        lab.lose("broker-a")
        df = F.commit_logs_side_by_side_frame(lab.commit_logs("broker-a"))
        assert [(r.node, r.start, r.end, r.state) for r in df.itertuples()] == [
            ("broker-a-s1", 0, 507, "beyond the master's end")
        ]
        assert df.attrs["stores_gone"] == ["broker-a"]
        assert df.attrs["lanes"] == ["broker-a (master, store gone)", "broker-a-s1 (slave, 507 B)"]
        assert check_figure(F.commit_logs_side_by_side(lab)) == []
        lab.restart_broker("broker-a")
        lab.run_until_idle()
        lab.send_many("TopicTest", 1)
        lab.advance(20_000)
        df = F.commit_logs_side_by_side_frame(lab.commit_logs("broker-a"))
        assert [(r.node, r.start, r.end, r.state) for r in df.itertuples()] == [
            ("broker-a", 0, 169, "on the master only"),
            ("broker-a-s1", 0, 169, "other bytes than the master"),
            ("broker-a-s1", 169, 507, "beyond the master's end"),
        ]
        fig = F.commit_logs_side_by_side(lab)
        assert check_figure(fig) == []
        assert traces(fig)["other bytes than the master"][0] == ["broker-a-s1 (slave, 507 B)"]


def test_no_slaves_no_messages_and_bad_input(tmp_path):
    """A lone master with nothing stored: an empty figure that says so, no marks; a source
    that is neither a Lab nor the commit_logs frame is a TypeError."""
    with Lab(seed=1, store_dir=tmp_path) as lab:
        fig = F.commit_logs_side_by_side(lab)
        assert check_figure(fig) == []
        assert [a.text for a in fig.layout.annotations] == [
            "no messages in broker-a's commit log or its slaves' yet"
        ]
        assert fig.layout.shapes == ()
        lab.send_many("TopicTest", 1)
        fig = F.commit_logs_side_by_side(lab)
        assert traces(fig) == {"on the master only": (["broker-a (master, 169 B)"], [0], [169])}
        assert fig.layout.shapes == ()
        with pytest.raises(TypeError, match="source must be a Lab or lab.commit_logs"):
            F.commit_logs_side_by_side(42)
        with pytest.raises(TypeError, match="the frame lab.commit_logs"):
            F.commit_logs_side_by_side_frame(lab.topics())


def test_replication_view_in_the_inspector(behind):
    """The inspector's "replication" table: each node's end, bytes behind its master, and the
    master's push2SlaveMaxOffset."""
    from mqlab.lab.panel_views import inspector_html, replication_view

    df = replication_view(behind)
    assert df.values.tolist() == [
        ["broker-a", "master", 845, 0, 338],
        ["broker-a-s1", "slave", 338, 507, ""],
        ["broker-a-s2", "slave", 338, 507, ""],
    ]
    html = inspector_html(behind, "TopicTest", "CG", ["replication"])
    assert "replication (commit-log ends)" in html and "<td>broker-a-s2</td>" in html
    with Lab(seed=1) as lone:
        assert replication_view(lone).empty
