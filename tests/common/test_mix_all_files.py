"""MixAll#string2File and ConfigManager#load: a kill during a write leaves a loadable file.

Every config file goes through ``mqlab.common.mix_all_files`` (topics.json,
subscriptionGroup.json, consumerOffset.json, consumerFilter.json, delayOffset.json,
kvConfig.json, a broadcasting consumer's offsets.json).
"""

from __future__ import annotations

import json
import os

import pytest

from mqlab.common import mix_all_files
from mqlab.common.mix_all_files import config_manager_load, file2string, string2file


def _loader():
    seen: list[dict] = []

    def decode(text: str) -> None:
        seen.append(json.loads(text))

    return seen, decode


def test_string2file_writes_tmp_keeps_bak_and_renames(tmp_path):
    """First write: no .bak; second: .bak holds the first content; no .tmp is left over."""
    path = tmp_path / "config" / "topics.json"
    string2file('{"v":1}', path)
    assert file2string(path) == '{"v":1}'
    assert sorted(os.listdir(path.parent)) == ["topics.json"]
    string2file('{"v":2}', path)
    assert file2string(path) == '{"v":2}'
    assert file2string(tmp_path / "config" / "topics.json.bak") == '{"v":1}'
    assert sorted(os.listdir(path.parent)) == ["topics.json", "topics.json.bak"]
    assert file2string(tmp_path / "nope.json") is None


def test_a_crash_between_the_tmp_write_and_the_rename_loads_the_previous_content(
    tmp_path, monkeypatch
):
    """The process dies after writing .tmp (and .bak) but before the rename: the main file
    still holds the previous content, and loading reads it."""
    path = tmp_path / "consumerOffset.json"
    string2file('{"v":1}', path)

    def die(src, dst):
        raise SystemExit("killed")  # SIGKILL: nothing after this line runs

    monkeypatch.setattr(mix_all_files.os, "replace", die)
    with pytest.raises(SystemExit):
        string2file('{"v":2}', path)
    monkeypatch.undo()
    assert file2string(path.with_name("consumerOffset.json.tmp")) == '{"v":2}'
    seen, decode = _loader()
    assert config_manager_load(path, decode) is True
    assert seen == [{"v": 1}]
    string2file('{"v":3}', path)  # the next persist replaces the stale .tmp
    assert file2string(path) == '{"v":3}'
    assert not path.with_name("consumerOffset.json.tmp").exists()


@pytest.mark.parametrize(
    ("main", "bak", "ok", "seen"),
    [
        ('{"v":2}', '{"v":1}', True, [{"v": 2}]),  # the main file
        ('{"v":', '{"v":1}', True, [{"v": 1}]),  # torn main file → .bak
        ("", '{"v":1}', True, [{"v": 1}]),  # empty main file → .bak
        (None, '{"v":1}', True, [{"v": 1}]),  # main file missing → .bak
        ('{"v":', "{", False, []),  # both unreadable → load fails
        ('{"v":', None, True, []),  # unreadable, no .bak → built-in tables
        (None, None, True, []),  # neither → built-in tables
    ],
)
def test_config_manager_load_falls_back_to_bak(tmp_path, main, bak, ok, seen):
    """ConfigManager#load / #loadBak (4.9.3): the main file, else .bak; False only when
    the main file failed and the .bak failed too."""
    path = tmp_path / "delayOffset.json"
    if main is not None:
        path.write_text(main, encoding="utf-8")
    if bak is not None:
        path.with_name("delayOffset.json.bak").write_text(bak, encoding="utf-8")
    got, decode = _loader()
    assert config_manager_load(path, decode) is ok
    assert got == seen
