"""Fixtures for the HA replication tests (the harness lives in ha_pair.py)."""

from __future__ import annotations

import pytest
from ha_pair import HAPair


@pytest.fixture
def pair(tmp_path):
    """``pair(**kw)`` → an ``HAPair`` under ``tmp_path``."""

    def factory(**kw) -> HAPair:
        return HAPair(tmp_path, **kw)

    return factory
