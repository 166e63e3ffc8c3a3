"""``fast_frozen_init``: the rewritten ``__init__`` builds the object the dataclass's would."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import FrozenInstanceError, InitVar, dataclass, field

import pytest

import mqlab.client.consumer.default_mq_push_consumer_consume  # noqa: F401 — ConsumedRecord
import mqlab.client.mq_client_instance  # noqa: F401 — FindBrokerResult
import mqlab.remoting.bodies  # noqa: F401 — every body class
import mqlab.remoting.headers  # noqa: F401 — every wire header
import mqlab.runtime.task  # noqa: F401 — Rpc, Sleep
from mqlab.common.frozen_init import REWRITTEN, fast_frozen_init


def _sample_args(cls: type) -> dict:
    """A value for every init field, unlike its default (so a mixed-up field shows)."""
    out = {}
    for i, f in enumerate(dataclasses.fields(cls)):
        if not f.init:
            continue
        kind = str(f.type)
        if "bool" in kind:
            out[f.name] = True
        elif "str" in kind:
            out[f.name] = f"v{i}"
        elif "float" in kind:
            out[f.name] = i + 0.5
        else:
            out[f.name] = 1000 + i
    return out


def _by_original(cls: type, kwargs: dict):
    obj = object.__new__(cls)
    REWRITTEN[cls](obj, **kwargs)
    return obj


def _state(obj) -> dict:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def test_every_wire_header_and_body_is_rewritten():
    headers = [c for c in vars(mqlab.remoting.headers).values()
               if isinstance(c, type) and hasattr(c, "_SPEC") and dataclasses.is_dataclass(c)
               and c.__dataclass_params__.frozen]  # fmt: skip
    assert len(headers) >= 30
    assert [c.__name__ for c in headers if c not in REWRITTEN] == []
    bodies = [c for c in vars(mqlab.remoting.bodies).values()
              if isinstance(c, type) and issubclass(c, mqlab.remoting.bodies._JsonBody)
              and dataclasses.is_dataclass(c)]  # fmt: skip
    assert len(bodies) >= 10
    assert [c.__name__ for c in bodies if c not in REWRITTEN] == []


@pytest.mark.parametrize("cls", sorted(REWRITTEN, key=lambda c: c.__qualname__),
                         ids=lambda c: c.__qualname__)  # fmt: skip
def test_same_object_both_ways(cls):
    """The defaults (required fields only), then every field given: the same field values, the same signature."""
    kw = _sample_args(cls)
    required = {
        f.name: kw[f.name]
        for f in dataclasses.fields(cls)
        if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    assert _state(cls(**required)) == _state(_by_original(cls, required))
    assert _state(cls(**kw)) == _state(_by_original(cls, kw))
    assert cls(**kw) == _by_original(cls, kw)
    assert inspect.signature(cls.__init__) == inspect.signature(REWRITTEN[cls])
    obj = cls(**kw)
    for f in dataclasses.fields(cls)[:1]:  # a header without fields has nothing to set
        with pytest.raises(FrozenInstanceError):
            setattr(obj, f.name, None)


def test_factories_positional_post_init_and_init_false():
    seen = []

    @fast_frozen_init
    @dataclass(frozen=True, slots=True)
    class C:
        a: int
        b: list = field(default_factory=list)
        c: int = field(default=7, init=False)
        d: str = field(default="x", kw_only=True)

        def __post_init__(self):
            seen.append((self.a, self.c))

    assert C in REWRITTEN
    x, y = C(1), C(1)
    assert (x.a, x.b, x.c, x.d) == (1, [], 7, "x")
    assert x.b is not y.b  # a fresh list each time, as default_factory gives
    assert C(2, [3], d="z") == C(2, [3], d="z")
    assert seen == [(1, 7), (1, 7), (2, 7), (2, 7)]
    with pytest.raises(TypeError):
        C(1, [], "positional d")  # d stays keyword-only
    with pytest.raises(TypeError):
        C()  # a stays required


def test_left_alone_when_unsafe():
    @fast_frozen_init
    @dataclass(frozen=True)  # no slots
    class NoSlots:
        a: int = 0

    @fast_frozen_init
    @dataclass(slots=True)  # not frozen: its __init__ already sets plainly
    class NotFrozen:
        a: int = 0

    @fast_frozen_init
    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int = 0
        scale: InitVar[int] = 1

    for cls in (NoSlots, NotFrozen, WithInitVar):
        assert cls not in REWRITTEN, cls
