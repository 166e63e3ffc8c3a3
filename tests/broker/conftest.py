"""Fixtures for broker tests; the cluster builder lives in broker_cluster.py."""

import pytest
from broker_cluster import Cluster


@pytest.fixture
def cluster(tmp_path):
    def make(**kw):
        return Cluster(tmp_path, **kw)

    return make
