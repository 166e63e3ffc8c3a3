"""Fixtures for the store tests (helpers live in store_helpers.py)."""

from __future__ import annotations

from typing import Any

import pytest
from store_helpers import STORE_HOST

from mqlab.store import DefaultMessageStore, MessageStoreConfig


@pytest.fixture
def new_store(tmp_path):
    """``new_store(**config)`` → a loaded store under ``tmp_path/store``; shut down after."""
    stores: list[DefaultMessageStore] = []

    def factory(
        tracer: Any = None, arriving_listener: Any = None, **config: Any
    ) -> DefaultMessageStore:
        config.setdefault("store_path_root_dir", str(tmp_path / "store"))
        store = DefaultMessageStore(
            MessageStoreConfig(**config),
            store_host=STORE_HOST,
            tracer=tracer,
            arriving_listener=arriving_listener,
        )
        assert store.load()
        stores.append(store)
        return store

    yield factory
    for s in stores:
        s.shutdown()
