#!/usr/bin/env python3
"""When does the kernel retransmit a byte sent into a partition? Asks the real TCP stack.

The simulator's silent partition (``mqlab.runtime.sim.tcp_retransmission_at``) delivers what
was sent across it at TCP's first retransmission after the heal. This script measures those
retransmissions on this machine's kernel, over loopback:

1. a client and a server connect on 127.0.0.1 and exchange 20 one-byte pings (so the
   connection has a round-trip time, as a broker's connection has);
2. an nftables rule in a table of its own (``mqlab_tcp_probe``) drops every packet of that
   one port on input, both ways: a partition no reset crosses;
3. the client sends one byte; tcpdump, which sees loopback packets before the rule drops
   them, records each transmission of it;
4. after ``--cut`` seconds the table is deleted (the heal), and the script prints when the
   byte was sent again, relative to the first send, and when the server read it.

Needs root (CAP_NET_ADMIN), ``nft`` and ``tcpdump`` (Debian: ``apt-get install nftables
tcpdump``). Touches only the one port it opened, and deletes its table on every exit.
Not part of the test suite: CI machines may not grant CAP_NET_ADMIN.

``python3 scripts/tcp_retransmission_probe.py --cut 30`` on the project machine (Linux 6.18,
2026-12-02) printed retransmissions at +0.208, 0.416, 0.832, 1.664, 3.328, 6.688, 13.348,
26.656 and 54.560 s, and the read at +54.560 s: 200 ms (plus the kernel's few ms of round
trip and timer granularity), then each gap doubling.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

TABLE = "mqlab_tcp_probe"


def _nft(*args: str) -> None:
    subprocess.run(["nft", *args], check=True)


def probe(cut_s: float) -> tuple[list[float], float]:
    """Retransmission times and the read time, in seconds after the first send."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    cli = socket.create_connection(("127.0.0.1", port))
    cli.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    peer, _ = srv.accept()
    for _ in range(20):
        cli.sendall(b"p")
        peer.recv(1)
        peer.sendall(b"q")
        cli.recv(1)
    with tempfile.NamedTemporaryFile("w+") as capture:
        dump = subprocess.Popen(
            ["tcpdump", "-i", "lo", "-n", "-tt", "-l", f"tcp src port {cli.getsockname()[1]}"],
            stdout=capture, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(1.0)  # tcpdump is listening
        read_at: list[float] = []
        try:
            _nft("add", "table", "inet", TABLE)
            _nft("add", "chain", "inet", TABLE, "input",
                 "{ type filter hook input priority 0 ; }")  # fmt: skip
            for side in ("dport", "sport"):
                _nft("add", "rule", "inet", TABLE, "input", "tcp", side, str(port), "drop")
            t0 = time.time()
            cli.sendall(b"x")
            reader = threading.Thread(
                target=lambda: (peer.recv(1), read_at.append(time.time() - t0))
            )
            reader.start()
            time.sleep(cut_s)
        finally:
            subprocess.run(["nft", "delete", "table", "inet", TABLE], check=False)
        reader.join(timeout=300)
        time.sleep(0.5)
        dump.terminate()
        dump.wait()
        capture.seek(0)
        sends = [
            float(line.split()[0]) - t0
            for line in capture
            if "Flags [P.]" in line and "length 1" in line
        ]
    for s in (cli, peer, srv):
        s.close()
    return [t for t in sends if t >= -0.001], (read_at[0] if read_at else float("nan"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cut", type=float, default=30.0, help="seconds the partition lasts")
    args = ap.parse_args(argv)
    missing = [tool for tool in ("nft", "tcpdump") if shutil.which(tool) is None]
    if missing:
        print(f"needs {' and '.join(missing)} (Debian: apt-get install nftables tcpdump)",
              file=sys.stderr)  # fmt: skip
        return 2
    if os.geteuid() != 0:
        print("needs root (CAP_NET_ADMIN) for the nftables rule", file=sys.stderr)
        return 2
    sends, read = probe(args.cut)
    print(f"partition of {args.cut:g} s; the byte was sent at (s after the first send):")
    print("  " + ", ".join(f"{t:.3f}" for t in sends))
    print(f"the server read it at {read:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
