"""tests/kernel_ipc.py: a kernel this process starts listens on Unix sockets under the
plugin's directory, not on tcp ports, and answers there."""

from __future__ import annotations

import json
import os

from jupyter_client.manager import start_new_kernel

from tests import kernel_ipc


def test_a_kernel_started_here_is_reached_over_ipc() -> None:
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        info = km.get_connection_info()
        assert (info["transport"], os.path.dirname(info["ip"])) == ("ipc", kernel_ipc._dir)
        sockets = [f"{info['ip']}-{info[k]}" for k in ("shell_port", "iopub_port", "stdin_port",
                                                       "control_port", "hb_port")]  # fmt: skip
        assert all(os.path.exists(s) for s in sockets), sockets
        code = "from ipykernel import get_connection_info as g; import json; print(g())"
        reply = kc.execute_interactive(code, timeout=60, output_hook=_collect)
        assert reply["content"]["status"] == "ok"
        seen = json.loads(_OUT[-1])
        assert (seen["transport"], seen["ip"]) == ("ipc", info["ip"])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert not any(os.path.exists(s) for s in sockets)  # cleaned up with the kernel


_OUT: list[str] = []


def _collect(msg: dict) -> None:
    if msg["msg_type"] == "stream":
        _OUT.append(msg["content"]["text"])
