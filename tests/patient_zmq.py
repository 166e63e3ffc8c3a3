"""A pytest plugin: kernel clients in the test process never trust one zmq poll for long.

Mirrors no RocketMQ class: it guards the notebook tiers (nbclient in
``tests/lab/test_worked_answers.py``, nbmake in the notebooks group).

Lesson 09's Run All waited ~570 s at ``L.explorer(spark, SEED)`` in two of session 11's dry
runs, and again here at its first try on 2026-11-29 (731 s instead of ~90 s). The kernel was
idle (py-spy: every kernel thread in ``select``) and answered a kernel_info_request on a new
connection at once, while nbclient sat in ``shell_channel.get_msg(timeout=600)``. pyzmq's
asyncio ``poll`` waits for the socket's edge-triggered ``ZMQ_FD``; when that edge is lost, a
message already in the socket is seen only by the ``poll(0)`` pyzmq does when the timeout
fires, so the cell "finished" 600 s late (nbmake's 180 s) and the test still passed.
ipykernel 7 had the same edge loss on its side of the socket (ipython/ipykernel#1554).

Here ``jupyter_client``'s ``AsyncZMQSocketChannel.get_msg`` polls at most ``POLL_S`` at a
time, so such a message is read within ``POLL_S``. ``FOUND_LATE`` records each message found
only at a poll's own timeout, and the terminal summary says how many, so a stall shows.
"""

from __future__ import annotations

from queue import Empty
from time import monotonic
from typing import Any

from jupyter_client.channels import AsyncZMQSocketChannel

#: The longest single poll, in seconds.
POLL_S = 5.0
#: (message type, seconds the poll waited) of each message found only at a poll's timeout.
FOUND_LATE: list[tuple[str, float]] = []


async def patient_get_msg(self: AsyncZMQSocketChannel, timeout: float | None = None) -> dict:
    """``AsyncZMQSocketChannel.get_msg``, its wait cut into polls of at most ``POLL_S``."""
    assert self.socket is not None
    deadline = None if timeout is None else monotonic() + timeout
    while True:
        left = POLL_S if deadline is None else max(0.0, deadline - monotonic())
        chunk = min(POLL_S, left)
        start = monotonic()
        if await self.socket.poll(int(chunk * 1000)):
            msg = await self._recv()
            waited = monotonic() - start
            if chunk > 0 and waited >= chunk:
                FOUND_LATE.append((msg.get("msg_type", "?"), round(waited, 1)))
            return msg
        if deadline is not None and monotonic() >= deadline:
            raise Empty


AsyncZMQSocketChannel.get_msg = patient_get_msg  # type: ignore[method-assign]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FOUND_LATE:
        terminalreporter.write_line(
            f"patient_zmq: {len(FOUND_LATE)} kernel message(s) found only at a poll's "
            f"timeout (an edge pyzmq did not announce): {FOUND_LATE}"
        )
