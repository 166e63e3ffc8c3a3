"""The conformance tier's fixtures: one real RocketMQ 4.9.3 cluster per test module.

Mirrors no RocketMQ class. The tier needs ``java`` >= 17 with ``javac`` and ``mvn``: without
them every test here is skipped with the reason, and with ``MQLAB_REQUIRE_CONFORMANCE=1`` (CI)
it fails instead, so a missing tool can never pass silently.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mqlab.conformance.real_cluster import (
    RealCluster,
    RealClusterError,
    build_runner,
    require_java_tools,
)


@pytest.fixture(scope="session")
def java_runner() -> Path:
    """The built runner's classpath file (``conformance/java``, built once per pom/sources)."""
    require_java_tools()
    try:
        return build_runner()
    except RealClusterError as e:
        pytest.fail(f"building conformance/java failed: {e}")


@pytest.fixture(scope="module")
def real_cluster_properties() -> dict[str, str]:
    """Broker properties for this module's real cluster; a module overrides this fixture
    (e.g. ``{"autoCreateTopicEnable": "false"}``)."""
    return {}


@pytest.fixture(scope="module")
def real_cluster(
    java_runner: Path,
    real_cluster_properties: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealCluster]:
    """A running real 4.9.3 name server + broker-a for this module, stopped afterwards."""
    cluster = RealCluster(tmp_path_factory.mktemp("real-cluster"), real_cluster_properties)
    try:
        cluster.start()
    except RealClusterError as e:
        pytest.fail(str(e))
    try:
        yield cluster
    finally:
        cluster.stop()
