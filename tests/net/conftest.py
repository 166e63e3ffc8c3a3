"""Fixtures for the network tests: a live server per test, client processes cleaned up."""

import pytest
from cpp_harness import PushConsumerProc, start_server


@pytest.fixture
def live(tmp_path):
    """``live(**ServeConfig fields)`` starts a server; all are stopped after the test, and
    the test fails if a node handler raised (``NetDriver.errors``)."""
    servers = []

    def make(**kw):
        s = start_server(tmp_path, **kw)
        servers.append(s)
        return s

    yield make
    errors = []
    for s in servers:
        s.stop()
        errors += s.server.driver.errors
    assert errors == [], errors


@pytest.fixture
def consumers(tmp_path):
    """``consumers(name, **params)`` starts a push consumer process; all are killed after."""
    procs = []

    def make(name, **params):
        p = PushConsumerProc(tmp_path, name, **params)
        procs.append(p)
        return p

    yield make
    for p in procs:
        p.kill()
