"""A blocking RemotingCommand client over plain TCP, for the conformance harness.

Not a RocketMQ class: the smallest ``NettyRemotingClient`` that can talk to both the
real 4.9.3 broker and ``mqlab serve`` — one socket per address, JSON headers (the Java
client's default ``serializeTypeCurrentRPC``), ``opaque`` numbers matched to answers by a
reader thread, so several requests may be outstanding at once (a parked pull while a
send goes out on the same connection, as ``MQClientAPIImpl`` does).
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from concurrent.futures import Future

from mqlab.remoting.command import RemotingCommand, split_frames

__all__ = ["RawTcpClient", "Answer"]


class Answer:
    """One response and how long it took on the real clock (ms)."""

    __slots__ = ("command", "elapsed_ms", "error")

    def __init__(
        self, command: RemotingCommand | None, elapsed_ms: float, error: str | None = None
    ) -> None:
        self.command = command
        self.elapsed_ms = elapsed_ms
        self.error = error


class _Connection:
    def __init__(self, addr: str, timeout_s: float) -> None:
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout_s)
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._local: str | None = None
        _ = self.local_addr
        self.pending: dict[int, Future] = {}
        #: PUSH_REPLY_MESSAGE_TO_CLIENT requests received, as ``push_record`` shows them
        self.pushes: list[dict] = []
        self.lock = threading.Lock()
        self.closed = False
        self.reader = threading.Thread(target=self._read_loop, daemon=True, name=f"wire {addr}")
        self.reader.start()

    @property
    def local_addr(self) -> str:
        """This end's ``ip:port`` (kept once known: it names the client after a close too)."""
        if self._local is None:
            h, p = self.sock.getsockname()[:2]
            self._local = f"{h}:{p}"
        return self._local

    def _read_loop(self) -> None:
        buf = bytearray()
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                for payload in split_frames(buf):
                    cmd = RemotingCommand.decode_payload(payload)
                    if not cmd.is_response:
                        # a server-initiated request: oneway ones (NOTIFY_CONSUMER_IDS_CHANGED
                        # ...) are dropped; the rest the harness answers as a client would
                        if not cmd.is_oneway:
                            self._answer(cmd)
                        continue
                    fut = self.pending.pop(cmd.opaque, None)
                    if fut is not None:
                        fut.set_result((cmd, time.monotonic()))
        except OSError:
            pass
        finally:
            self.closed = True
            for fut in list(self.pending.values()):
                if not fut.done():
                    fut.set_exception(ConnectionError("connection closed"))
            self.pending.clear()

    def _answer(self, request: RemotingCommand) -> None:
        response = answer_server_request(request, self.pushes)
        response.opaque = request.opaque
        response.mark_response_type()
        with self.lock:
            self.sock.sendall(response.encode())

    def send(self, cmd: RemotingCommand) -> Future:
        fut: Future = Future()
        self.pending[cmd.opaque] = fut
        with self.lock:
            self.sock.sendall(cmd.encode())
        return fut

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


#: A PUSH_REPLY_MESSAGE_TO_CLIENT whose CORRELATION_ID is this gets SYSTEM_ERROR (the
#: broker's "push reply message to <id>fail." path).
REFUSE_REPLY = "cf-refuse"


def push_record(request: RemotingCommand) -> dict:
    """A received PUSH_REPLY_MESSAGE_TO_CLIENT as the harness shows it: every extField and
    the body, the two times (storeTimestamp, the PUSH_REPLY_TIME property: each broker's
    clock) replaced by whether they are set and PUSH_REPLY_TIME is within 10 s after the
    store (1 s failed now and then on a loaded 2-core CI machine: both brokers answer in
    milliseconds when idle)."""
    from mqlab.common.message_decoder import string_to_message_properties

    ext = dict(request.ext_fields or {})
    props = string_to_message_properties(ext.get("properties"))
    store, push = ext.get("storeTimestamp", ""), props.get("PUSH_REPLY_TIME", "")
    close = store.isdigit() and push.isdigit() and 0 <= int(push) - int(store) <= 10_000
    ext["storeTimestamp"] = "<set>" if store.isdigit() else store
    if push:
        ext["properties"] = ext["properties"].replace(push, "<set>")
    ext["pushReplyTimeWithin10sOfStoreTimestamp"] = str(close).lower()
    body = (request.body or b"").decode("utf-8", "replace")
    return {"extFields": dict(sorted(ext.items())), "body": body}


def answer_server_request(
    request: RemotingCommand, pushes: list[dict] | None = None
) -> RemotingCommand:
    """What the harness answers when a broker asks its connection something, once a
    HEART_BEAT registered it as a client (``Broker2Client#callClient``).

    The answer shows what the broker sent, so the two brokers' forwarding compares as
    any answer does: GET_CONSUMER_RUNNING_INFO (307), CONSUME_MESSAGE_DIRECTLY (309) and
    any other code get SUCCESS with a JSON body echoing the request (code, extFields, and
    the forwarded stored message's fields, or the body's length). GET_CONSUMER_STATUS_FROM_
    CLIENT (221) gets a ``GetConsumerStatusBody`` with one queue (offset 7) of the asked
    topic, which the broker collects. PUSH_REPLY_MESSAGE_TO_CLIENT (326) gets SUCCESS, or
    SYSTEM_ERROR for the correlation id :data:`REFUSE_REPLY`; each push is kept in
    ``pushes`` (the connection's), and every echo lists them (``pushesReceived``), so the
    pushes themselves compare too.
    """
    from mqlab.common.message_decoder import (
        MessageDecodeError,
        decodes,
        string_to_message_properties,
    )
    from mqlab.remoting.codes import RequestCode
    from mqlab.remoting.fastjson import dumps

    code = request.code
    ext = request.ext_fields or {}
    if code == RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT:
        props = string_to_message_properties(ext.get("properties"))
        if pushes is not None:
            pushes.append(push_record(request))
        if props.get("CORRELATION_ID") == REFUSE_REPLY:
            return RemotingCommand.create_response(1, "refused by the harness", ext_fields={})
        return RemotingCommand.create_response(0, None, ext_fields={})
    if code == RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT:
        from mqlab.common.message import MessageQueue

        mq = MessageQueue(ext.get("topic", ""), "harness", 0)
        body = {"consumerTable": {}, "messageQueueTable": {mq: 7}}
        return RemotingCommand.create_response(0, None, ext_fields={}, body=dumps(body).encode())
    echo: dict = {"code": code, "extFields": dict(sorted(ext.items()))}
    if request.body:
        try:
            msgs = decodes(request.body)
        except (MessageDecodeError, ValueError):
            msgs = []
        if msgs:
            m = msgs[0]
            echo["message"] = {
                "topic": m.topic, "queueId": m.queue_id, "queueOffset": m.queue_offset,
                "flag": m.flag, "sysFlag": m.sys_flag, "reconsumeTimes": m.reconsume_times,
                "body": m.body.decode("utf-8", "replace"), "bornHost": m.born_host,
                "storeHost": m.store_host, "properties": sorted(m.properties.items()),
            }  # fmt: skip
        else:
            echo["bodyLength"] = len(request.body)
    if pushes:
        echo["pushesReceived"] = list(pushes)
    return RemotingCommand.create_response(0, None, ext_fields={}, body=dumps(echo).encode())


class RawTcpClient:
    """Send raw requests to any address; answers come back as :class:`Answer`."""

    _opaques = itertools.count(1)

    def __init__(self, *, connect_timeout_s: float = 5.0) -> None:
        self.connect_timeout_s = connect_timeout_s
        self._conns: dict[str, _Connection] = {}
        #: connections closed by :meth:`close_connection` (their local addresses still name
        #: this client in what the server stored, e.g. a message's bornHost)
        self.closed_conns: list[_Connection] = []
        self._lock = threading.Lock()

    def connection(self, addr: str) -> _Connection:
        with self._lock:
            c = self._conns.get(addr)
            if c is None or c.closed:
                c = self._conns[addr] = _Connection(addr, self.connect_timeout_s)
            return c

    def local_addr(self, addr: str) -> str:
        return self.connection(addr).local_addr

    def close_connection(self, addr: str) -> None:
        """Close the connection to ``addr`` (if any): the next request there connects afresh,
        as a client does once its channel to a killed server is gone."""
        with self._lock:
            c = self._conns.pop(addr, None)
        if c is not None:
            c.close()
            self.closed_conns.append(c)

    def start(
        self,
        addr: str,
        code: int,
        ext_fields: dict[str, str] | None = None,
        body: bytes | None = None,
        *,
        timeout_s: float = 30.0,
        oneway: bool = False,
        version: int | None = None,
        rpc_hook=None,
    ) -> Future:
        """Send one request; the future resolves to an :class:`Answer`. ``rpc_hook`` (an
        ``RPCHook``, e.g. ``AclClientRPCHook``) sees the request just before it is written,
        as ``NettyRemotingClient`` runs its hooks."""
        cmd = RemotingCommand.create_request(code, ext_fields, body)
        if version is not None:
            cmd.version = version
        cmd.opaque = next(self._opaques)
        if rpc_hook is not None:
            rpc_hook.do_before_request(addr, cmd)
        out: Future = Future()
        t0 = time.monotonic()
        conn = self.connection(addr)
        if oneway:
            cmd.mark_oneway_rpc()
            with conn.lock:
                conn.sock.sendall(cmd.encode())
            out.set_result(Answer(None, 0.0))
            return out
        inner = conn.send(cmd)

        def wait() -> None:
            try:
                resp, t1 = inner.result(timeout=timeout_s)
                out.set_result(Answer(resp, (t1 - t0) * 1000))
            except Exception as e:  # noqa: BLE001 - reported as the answer
                conn.pending.pop(cmd.opaque, None)
                out.set_result(Answer(None, (time.monotonic() - t0) * 1000, repr(e)))

        threading.Thread(target=wait, daemon=True).start()
        return out

    def call(self, addr: str, code: int, ext_fields=None, body=None, *, timeout_s=30.0) -> Answer:
        return self.start(addr, code, ext_fields, body, timeout_s=timeout_s).result()

    def close(self) -> None:
        with self._lock:
            for c in self._conns.values():
                c.close()
            self._conns.clear()
