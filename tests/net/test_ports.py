"""Ports for a broker and its HA service (listenPort + 1), as serve and the tests pick them."""

from __future__ import annotations

import pytest

from mqlab.bench.load import free_ports
from mqlab.runtime.net import bind_broker_socket, bind_socket


def _bindable(port: int) -> bool:
    try:
        bind_socket("127.0.0.1", port).close()
    except OSError:
        return False
    return True


def test_bind_broker_socket_with_port_0_leaves_the_ha_port_free():
    """Port 0: the broker's port p is bound and p + 1 (haListenPort) is free to bind."""
    for _ in range(20):
        sock = bind_broker_socket("127.0.0.1", 0)
        try:
            assert _bindable(sock.getsockname()[1] + 1)
        finally:
            sock.close()


def test_bind_broker_socket_takes_a_given_port_as_it_is():
    """A given port is bound as given; a taken one raises OSError, as Java's bind fails."""
    port = free_ports(1)[0]
    sock = bind_broker_socket("127.0.0.1", port)
    try:
        assert sock.getsockname()[1] == port
        with pytest.raises(OSError):
            bind_broker_socket("127.0.0.1", port)
    finally:
        sock.close()


def test_free_ports_have_their_next_ports_free_and_apart():
    """free_ports(n): n distinct ports, none the next of another, each next port bindable."""
    ports = free_ports(4)
    assert len(set(ports)) == 4
    assert not {p + 1 for p in ports} & set(ports)
    assert all(_bindable(p + 1) for p in ports)
