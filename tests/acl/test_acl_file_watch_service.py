"""mqlab.acl.acl_file_watch_service: AclFileWatchService#run's turn, by modification time."""

from __future__ import annotations

import os

from mqlab.acl.acl_file_watch_service import WATCH_INTERVAL, AclFileWatchService, last_modified


def make(tmp_path):
    events = []
    conf = tmp_path / "conf"
    (conf / "acl").mkdir(parents=True)
    default = conf / "plain_acl.yml"
    default.write_text("accounts: []\n")
    os.utime(default, ns=(1_000_000_000_000, 1_000_000_000_000))
    w = AclFileWatchService(
        str(conf / "acl"), str(default),
        on_file_changed=lambda p: events.append(("changed", p)),
        on_file_num_changed=lambda p: events.append(("num", p)),
    )  # fmt: skip
    return w, events, conf, default


def test_interval():
    """WATCH_INTERVAL is 4.9.3's 5000 ms (not FileWatchService's 500)."""
    assert WATCH_INTERVAL == 5000


def test_nothing_changed_nothing_reloaded(tmp_path):
    """Same files, same times: no listener called."""
    w, events, _, _ = make(tmp_path)
    assert w.run_once() == [] and events == []


def test_a_new_modification_time_reloads_that_file(tmp_path):
    """A new time with the same bytes reloads (as 4.9.3: a touch is a change); new bytes
    with the same millisecond reload too (mqlab's digest, for virtual time); then nothing."""
    w, events, _, default = make(tmp_path)
    os.utime(default, ns=(1_000_000_000_000, 1_000_001_000_000))
    assert w.run_once() == [("file", str(default))]
    assert last_modified(str(default)) == 1_000_001
    default.write_text("accounts: [] # edited\n")
    os.utime(default, ns=(1_000_000_000_000, 1_000_001_000_000))
    assert w.run_once() == [("file", str(default))]
    assert w.run_once() == []
    assert events == [("changed", str(default))] * 2


def test_a_file_added_or_removed_reloads_everything(tmp_path):
    """A new .yml under conf/acl (or one gone) calls onFileNumChanged, not onFileChanged."""
    w, events, conf, _ = make(tmp_path)
    extra = conf / "acl" / "team.yaml"
    extra.write_text("accounts: []\n")
    (conf / "acl" / "tools.yml").write_text("accessKey: x\n")  # left out by the watcher
    assert w.run_once() == [("all", str(conf / "acl"))]
    assert w.acl_files_num == 2
    extra.unlink()
    assert w.run_once() == [("all", str(conf / "acl"))]
    assert events == [("num", str(conf / "acl"))] * 2
