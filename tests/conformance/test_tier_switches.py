"""The conformance tier's skip and require switches, without Java: a missing tool skips the tier
with its reason, and MQLAB_REQUIRE_CONFORMANCE=1 turns that into a failure.

Mirrors no RocketMQ class: checks mqlab/conformance/real_cluster.py#require_java_tools.
"""

from __future__ import annotations

import pytest

from mqlab.conformance import real_cluster

REASON = "no 'mvn' on PATH: the conformance tier builds conformance/java with Maven"


@pytest.fixture
def no_maven(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(real_cluster, "java_tools_missing", lambda: REASON)


def test_missing_tool_skips_with_the_reason(
    no_maven: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MQLAB_REQUIRE_CONFORMANCE", raising=False)
    with pytest.raises(pytest.skip.Exception, match=f"conformance tier skipped: {REASON}"):
        real_cluster.require_java_tools()


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_missing_tool_fails_with_mqlab_require_conformance(
    no_maven: None, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("MQLAB_REQUIRE_CONFORMANCE", value)
    with pytest.raises(pytest.fail.Exception) as info:
        real_cluster.require_java_tools("interop")
    assert str(info.value) == (
        f"MQLAB_REQUIRE_CONFORMANCE=1 but the interop tier cannot run: {REASON}"
    )


def test_require_switch_off_values(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("", "0", "no"):
        monkeypatch.setenv("MQLAB_REQUIRE_CONFORMANCE", value)
        assert real_cluster.conformance_required() is False


def test_free_port_block_is_bindable_on_loopback() -> None:
    """free_port(4) returns the first of four consecutive ports, each free on 127.0.0.1."""
    base = real_cluster.free_port(4)
    assert 1024 < base <= 65535 - 3
    assert all(real_cluster._bindable(p) for p in range(base, base + 4))
