"""Watch a live ``mqlab serve`` from a notebook: its trace, and (in-process) its state.

Not a RocketMQ class: the notebook side of issue 6 ("a notebook can attach and show the
same inspectors and timeline as in simulation"). Two ways in:

* ``serve(**ServeConfig fields)`` starts the name server and brokers *in the notebook's
  process*, on an event-loop thread (``mqlab.serve.ServerThread``); real clients connect
  to the printed addresses, and every inspector of the Lab (``topics()``, ``queues()``,
  ``consume_queue()``, ``commit_log()``, ``commit_logs()``, ``held_pulls()``,
  ``consumer_offsets()``, ``timers()``) reads the live nodes, on their own thread, between two network events;
* ``attach(path)`` follows the JSON-lines trace that ``python -m mqlab serve --trace
  FILE`` appends to: ``events()`` and ``trace`` grow as the server works. The state
  inspectors need the nodes, so they are for ``serve`` only.

``LiveLab.trace`` is a ``TraceRecorder`` snapshot, so the Lab's figures
(``mqlab.lab.figures``) accept a ``LiveLab`` as their source. ``t_ms`` is wall-clock epoch
ms on the live server (``mqlab.runtime.net``). This module owns no protocol logic and never
touches a socket: ``ServerThread`` does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from mqlab.lab import inspect as _inspect
from mqlab.serve import ServeConfig, ServerThread
from mqlab.trace.events import COLUMNS, TraceEvent
from mqlab.trace.recorder import TraceRecorder

__all__ = ["LiveLab", "attach", "serve"]


def _event_from_row(row: dict[str, Any]) -> TraceEvent:
    fields = row.get("fields") or "{}"
    return TraceEvent(
        str(row["run_id"]), int(row["t_ms"]), int(row["seq"]), str(row["node"]),
        str(row["component"]), str(row["step"]), str(row["kind"]),
        json.loads(fields) if isinstance(fields, str) else dict(fields),
    )  # fmt: skip


class LiveLab:
    """A live server seen from a notebook. Build it with ``serve(...)`` or ``attach(path)``."""

    def __init__(self, *, server: ServerThread | None = None, trace_path: Path | None = None):
        if (server is None) == (trace_path is None):
            raise ValueError("LiveLab needs exactly one of server= or trace_path=")
        self._server = server
        self._path = trace_path
        self._pos = 0
        self._partial = b""
        self._events: list[TraceEvent] = []

    # -- what it is attached to --------------------------------------------------------------
    @property
    def namesrv_addr(self) -> str:
        """The name server address to give real clients (``set_namesrv_addr``)."""
        if self._server is not None:
            return self._server.namesrv_addr
        for e in self._read():
            if e.node == "namesrv" and e.step == "start" and "address" in e.fields:
                return str(e.fields["address"])
        raise ValueError(f"no name server start event in {self._path} yet")

    def _read(self) -> list[TraceEvent]:
        if self._server is not None:
            return self._server.call(lambda srv: list(srv.driver.recorder.events))
        assert self._path is not None
        if not self._path.exists():
            return self._events
        with self._path.open("rb") as f:
            f.seek(self._pos)
            data = f.read()
        self._pos += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()  # a line the server is still writing
        self._events += [_event_from_row(json.loads(ln)) for ln in lines if ln.strip()]
        return self._events

    @property
    def trace(self) -> TraceRecorder:
        """A snapshot of the events so far (for ``mqlab.lab.figures``)."""
        evs = self._read()
        rec = TraceRecorder(evs[0].run_id if evs else "live")
        rec.events = list(evs)
        return rec

    def events(self, **select: Any) -> pd.DataFrame:
        """The trace so far as a frame; ``select`` as ``TraceRecorder.select``."""
        evs = self.trace.select(**select) if select else self._read()
        df = pd.DataFrame([e.to_row() for e in evs], columns=list(COLUMNS))
        df["text"] = [e.fields.get("text", "") for e in evs]
        return df

    # -- state inspectors (in-process server only) ---------------------------------------------
    def _on_nodes(self, fn) -> Any:
        if self._server is None:
            raise ValueError(
                "attached to a trace file: state inspectors need the nodes; start the server "
                "in this process with mqlab.lab.attach.serve(...) to inspect it"
            )
        return self._server.call(fn)

    def topics(self, *, include_system: bool = False) -> pd.DataFrame:
        return self._on_nodes(lambda s: _inspect.topics(s.brokers, include_system=include_system))

    def queues(self, topic: str | None = None) -> pd.DataFrame:
        return self._on_nodes(lambda s: _inspect.queues(s.brokers, topic))

    def consume_queue(self, topic: str, queue_id: int, broker: str = "broker-a") -> pd.DataFrame:
        return self._on_nodes(lambda s: _inspect.consume_queue(s.broker(broker), topic, queue_id))

    def commit_log(self, broker: str = "broker-a", *, raw: bool = False, limit: int | None = None):
        return self._on_nodes(lambda s: _inspect.commit_log(s.broker(broker), raw=raw, limit=limit))

    def commit_logs(self, name: str = "broker-a") -> pd.DataFrame:
        """The commit logs of broker name ``name``'s master and slaves side by side (a
        ``serve(slaves=N)`` group), as ``Lab.commit_logs``; ``figures.commit_logs_side_by_side``
        draws it.

        Raises:
            ValueError: no node of that broker name with brokerId 0 runs here.
        """

        def side_by_side(s) -> pd.DataFrame:
            group = sorted((b for b in s.brokers if b.broker_config.broker_name == name),
                           key=lambda b: b.broker_config.broker_id)  # fmt: skip
            if not group or group[0].broker_config.broker_id != 0:
                raise ValueError(f"no broker name {name!r} with a master here; brokers: "
                                 f"{sorted(s.broker_addrs)}")  # fmt: skip
            return _inspect.commit_logs_side_by_side(group)

        return self._on_nodes(side_by_side)

    def held_pulls(self) -> pd.DataFrame:
        return self._on_nodes(lambda s: _inspect.held_pulls(s.brokers))

    def consumer_offsets(self) -> pd.DataFrame:
        return self._on_nodes(lambda s: _inspect.consumer_offsets(s.brokers))

    def timers(self) -> pd.DataFrame:
        """Every node's pending timers, soonest first (``in_ms`` from now)."""

        def rows(s) -> pd.DataFrame:
            now = s.driver.now_ms
            data = [
                {"due_ms": t.due_ms, "in_ms": t.due_ms - now, "node": t.node, "name": t.name,
                 "key": t.key, "periodic": t.periodic, "daemon": t.daemon}
                for t in s.driver.pending_timers()
            ]  # fmt: skip
            cols = ["due_ms", "in_ms", "node", "name", "key", "periodic", "daemon"]
            return pd.DataFrame(data, columns=cols)

        return self._on_nodes(rows)

    def close(self) -> None:
        """Stop an in-process server gracefully (persist, flush); nothing for a file."""
        if self._server is not None:
            self._server.stop()

    def __enter__(self) -> LiveLab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self._path if self._server is None else self._server.namesrv_addr
        return f"LiveLab({where})"


def serve(**config: Any) -> LiveLab:
    """Start ``mqlab serve`` in this process (``ServeConfig`` fields as keywords)."""
    return LiveLab(server=ServerThread(ServeConfig(**config)))


def attach(trace_file: str | Path) -> LiveLab:
    """Follow the JSON-lines trace of a ``python -m mqlab serve --trace FILE`` process."""
    return LiveLab(trace_path=Path(trace_file))
