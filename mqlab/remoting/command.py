"""RemotingCommand: one frame of the RocketMQ 4.x remoting protocol.

Mirrors ``RemotingCommand``, ``RocketMQSerializable`` and ``NettyDecoder`` /
``NettyEncoder`` (remoting/protocol and remoting/netty, RocketMQ 4.9.3); docs/reference.md §1.

Frame layout (all big-endian)::

    int32  length          = 4 + headerLength + bodyLength (excludes itself)
    byte   serialize type  0 = JSON, 1 = ROCKETMQ (binary)
    int24  headerLength
    bytes  header          JSON object, or the ROCKETMQ binary header
    bytes  body            the rest

This module owns the bytes of a frame and nothing else: no sockets, no clocks, no
knowledge of what a request code means. Malformed bytes raise
``RemotingCommandException``; the network driver turns that into "close this
connection" in exactly one place (docs/design.md §6.10). The simulation transport carries the
same encoded frames, so simulation and wire share this codec.

JSON header keys are written sorted, with ``null`` fields left out, as fastjson does.
The official C++ client (``rocketmq`` on PyPI) appends a ``\\n`` to its header and sends
``remark: ""``; both decode here (docs/cpp-client.md §1).
"""

from __future__ import annotations

import json
import re
import struct
from typing import Any

from mqlab.remoting import fastjson

__all__ = [
    "RemotingCommand",
    "RemotingCommandException",
    "SerializeType",
    "LanguageCode",
    "RPC_TYPE",
    "RPC_ONEWAY",
    "MAX_FRAME_LENGTH",
    "CURRENT_VERSION",
    "split_frames",
]

#: ``RemotingCommand.RPC_TYPE``: flag bit 0 set means "this is a response".
RPC_TYPE = 0x1
#: ``RemotingCommand.RPC_ONEWAY``: flag bit 1 set means "do not answer".
RPC_ONEWAY = 0x2
#: ``com.rocketmq.remoting.frameMaxLength`` default (16 MiB).
MAX_FRAME_LENGTH = 16_777_216
#: ``MQVersion.Version.V4_9_3.ordinal()``: the ``version`` a 4.9.3 broker writes.
CURRENT_VERSION = 399


class RemotingCommandException(Exception):
    """Malformed frame bytes (bad length, header not JSON, unknown serialize type...)."""


class SerializeType:
    JSON = 0
    ROCKETMQ = 1
    NAMES = {0: "JSON", 1: "ROCKETMQ"}


class LanguageCode:
    """``LanguageCode`` names and their ROCKETMQ-binary numbers (docs/reference.md §1.2)."""

    BY_NAME = {
        "JAVA": 0, "CPP": 1, "DOTNET": 2, "PYTHON": 3, "DELPHI": 4, "ERLANG": 5,
        "RUBY": 6, "OTHER": 7, "HTTP": 8, "GO": 9, "PHP": 10, "OMS": 11,
    }  # fmt: skip
    BY_CODE = {v: k for k, v in BY_NAME.items()}


_INT = struct.Struct(">i")
_SHORT = struct.Struct(">h")
#: json.dumps output that fastjson would write differently (see ``encode_header``): the
#: lower-case hex escapes of U+000B, U+000E, U+000F and U+001A..U+001F (fastjson writes
#: them upper-case), and raw U+007F..U+009F, U+2028, U+2029 (two patterns, see there).
_FASTJSON_ESCAPES = re.compile(r"\\u00(?:0b|0e|0f|1[a-f])")
_C1_CONTROLS = re.compile(r"[\x7f-\x9f\u2028\u2029]")  # and the separators fastjson escapes
# NOTE: performance: json.dumps / json.loads with options build a new JSONEncoder /
# JSONDecoder on every call (~1 µs each); these are built once with the same options.
_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_JSON_DECODER = json.JSONDecoder(strict=False)
_PREFIX = struct.Struct(">iI")
_UINT = struct.Struct(">I")
_BIN_FIXED = struct.Struct(">hbhii")  # code, language, version, opaque, flag


class RemotingCommand:
    """A request or response frame.

    Mirrors ``RemotingCommand`` (remoting/protocol, RocketMQ 4.9.3).

    ``ext_fields`` is RocketMQ's ``extFields``: a ``dict[str, str]`` holding the custom
    header's fields (camelCase names, string values). Typed views live in
    ``mqlab.remoting.headers``.

    ``empty_ext_fields`` (default True): a response without ext fields still writes
    ``"extFields":{}``, which the C++ client needs. False leaves the key out, as 4.9.3's
    fastjson does for a null map: DLedger's responses (docs/dledger.md §2) are sent so.
    """

    __slots__ = (
        "code", "language", "version", "opaque", "flag", "remark", "ext_fields", "body",
        "serialize_type", "empty_ext_fields",
    )  # fmt: skip

    def __init__(
        self,
        code: int,
        *,
        ext_fields: dict[str, str] | None = None,
        body: bytes | None = None,
        remark: str | None = None,
        opaque: int = 0,
        flag: int = 0,
        language: str = "JAVA",
        version: int = CURRENT_VERSION,
        serialize_type: int = SerializeType.JSON,
        empty_ext_fields: bool = True,
    ) -> None:
        self.code = int(code)
        self.language = language
        self.version = version
        self.opaque = opaque
        self.flag = flag
        self.remark = remark
        self.ext_fields = ext_fields
        self.body = body
        self.serialize_type = serialize_type
        self.empty_ext_fields = empty_ext_fields

    # -- constructors (RemotingCommand#createRequestCommand / #createResponseCommand) ---------
    @classmethod
    def create_request(
        cls, code: int, ext_fields: dict[str, str] | None = None, body: bytes | None = None
    ) -> RemotingCommand:
        return cls(code, ext_fields=ext_fields, body=body)

    @classmethod
    def create_response(
        cls,
        code: int,
        remark: str | None = None,
        ext_fields: dict[str, str] | None = None,
        body: bytes | None = None,
        *,
        empty_ext_fields: bool = True,
    ) -> RemotingCommand:
        return cls(
            code, ext_fields=ext_fields, body=body, remark=remark, flag=RPC_TYPE,
            empty_ext_fields=empty_ext_fields,
        )  # fmt: skip

    # -- flags ---------------------------------------------------------------------------
    @property
    def is_response(self) -> bool:
        return bool(self.flag & RPC_TYPE)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & RPC_ONEWAY)

    def mark_response_type(self) -> None:
        self.flag |= RPC_TYPE

    def mark_oneway_rpc(self) -> None:
        self.flag |= RPC_ONEWAY

    def ext(self, name: str, default: str | None = None) -> str | None:
        """One extFields value, or ``default``."""
        f = self.ext_fields
        if f is None:
            return default
        return f.get(name, default)

    # -- encoding --------------------------------------------------------------------------
    def header_dict(self) -> dict[str, Any]:
        """The JSON header as fastjson writes it: keys sorted, nulls left out."""
        d: dict[str, Any] = {"code": self.code}
        ext = self.ext_fields
        if ext is not None:
            # extFields values are strings on the wire (numbers read as 0 by the C++ client);
            # fastjson leaves null map values out.
            d["extFields"] = {
                k: v if type(v) is str else _ext_str(v) for k, v in ext.items() if v is not None
            }
        elif self.flag & RPC_TYPE and self.empty_ext_fields:
            # Every reply carries an extFields object: the C++ client segfaults on a SUCCESS
            # to SEND_MESSAGE / QUERY_CONSUMER_OFFSET / GET_MAX_OFFSET without one
            # (docs/cpp-client.md §1 "Response header rules"); a Java client reads {} as empty.
            d["extFields"] = {}
        d["flag"] = self.flag
        d["language"] = self.language
        d["opaque"] = self.opaque
        if self.remark is not None:
            d["remark"] = self.remark
        d["serializeTypeCurrentRPC"] = SerializeType.NAMES.get(self.serialize_type, "JSON")
        d["version"] = self.version
        return d

    def encode_header(self) -> bytes:
        if self.serialize_type == SerializeType.ROCKETMQ:
            return self._encode_binary_header()
        d = self.header_dict()
        if (
            type(self.language) is str
            and (self.remark is None or type(self.remark) is str)
            and type(self.opaque) is int
            and type(self.flag) is int
            and type(self.version) is int
        ):
            # NOTE: performance: every value is a str or an int (extFields values are made
            # strings by header_dict): orjson writes the same bytes ~10x faster (dumps_c)
            out = fastjson.dumps_c(d)
            if out is not None:
                return out
        text = _JSON_ENCODER.encode(d)
        # NOTE: performance: _NOT_FASTJSON's two halves searched apart, the second only
        # when the text has U+007F or non-ASCII: ~0.3 µs instead of ~2.7 µs per header.
        if _FASTJSON_ESCAPES.search(text) is not None or (
            ("\x7f" in text or not text.isascii()) and _C1_CONTROLS.search(text) is not None
        ):
            # Rare: a string holds U+000B, U+001A..U+001F or U+007F..U+009F, which fastjson
            # escapes differently from json.dumps; write it exactly as fastjson would.
            text = fastjson.dumps(d)
        return text.encode()

    def encode(self) -> bytes:
        """The whole frame, length prefix included (``NettyEncoder``)."""
        header = self.encode_header()
        body = self.body or b""
        hlen = len(header)
        if hlen > 0xFFFFFF:
            raise RemotingCommandException(f"header too long: {hlen} bytes")
        return (
            _PREFIX.pack(4 + hlen + len(body), (self.serialize_type << 24) | hlen) + header + body
        )

    def _encode_binary_header(self) -> bytes:
        remark = self.remark.encode() if self.remark else b""
        parts = [
            _BIN_FIXED.pack(
                self.code, LanguageCode.BY_NAME.get(self.language, 0), self.version,
                self.opaque, self.flag,
            ),
            _INT.pack(len(remark)),
            remark,
        ]  # fmt: skip
        ext = bytearray()
        for k, v in (self.ext_fields or {}).items():
            if v is None:  # RocketMQSerializable#mapSerialize skips null values
                continue
            kb, vb = k.encode(), _ext_str(v).encode()
            ext += _SHORT.pack(len(kb)) + kb + _INT.pack(len(vb)) + vb
        parts.append(_INT.pack(len(ext)))
        parts.append(bytes(ext))
        return b"".join(parts)

    # -- decoding --------------------------------------------------------------------------
    @classmethod
    def decode(cls, frame: bytes | bytearray | memoryview) -> RemotingCommand:
        """Decode one frame *including* its 4-byte length prefix.

        Raises:
            RemotingCommandException: the length does not match, the header length is
                out of range, the serialize type is unknown, or the header does not parse.
        """
        frame = memoryview(frame)
        if len(frame) < 8:
            raise RemotingCommandException(f"frame too short: {len(frame)} bytes")
        (length,) = _INT.unpack_from(frame, 0)
        if length != len(frame) - 4:
            raise RemotingCommandException(
                f"length field {length} does not match frame size {len(frame) - 4}"
            )
        return cls.decode_payload(frame[4:])

    @classmethod
    def decode_payload(cls, payload: bytes | bytearray | memoryview) -> RemotingCommand:
        """Decode a frame whose length prefix was already stripped (``NettyDecoder``)."""
        payload = memoryview(payload)
        if len(payload) < 4:
            raise RemotingCommandException("frame has no header-length word")
        (word,) = _UINT.unpack_from(payload, 0)
        stype = (word >> 24) & 0xFF
        hlen = word & 0xFFFFFF
        if hlen > len(payload) - 4:
            raise RemotingCommandException(
                f"header length {hlen} exceeds frame payload {len(payload) - 4}"
            )
        header = bytes(payload[4 : 4 + hlen])
        body = bytes(payload[4 + hlen :]) or None
        if stype == SerializeType.JSON:
            cmd = cls._from_json_header(header)
        elif stype == SerializeType.ROCKETMQ:
            cmd = cls._from_binary_header(header)
        else:
            raise RemotingCommandException(f"unknown serialize type {stype}")
        cmd.body = body
        cmd.serialize_type = stype
        return cmd

    @classmethod
    def _from_json_header(cls, header: bytes) -> RemotingCommand:
        d = fastjson.loads_c(header)  # NOTE: performance: orjson where it reads the same
        if d is None:
            d = cls._read_json_header(header)
        if not isinstance(d, dict):
            raise RemotingCommandException("header JSON is not an object")
        return cls._from_header_dict(d)

    @staticmethod
    def _read_json_header(header: bytes) -> Any:
        try:
            text = header.decode("utf-8")
            try:
                # fastjson.loads's own first step (standard JSON, raw control characters
                # allowed) with the decoder built once, trying first the usual header
                # that fills the text exactly; anything else goes to fastjson.loads.
                d, end = _JSON_DECODER.raw_decode(text)
                if end != len(text):
                    d = _JSON_DECODER.decode(text)
            except (json.JSONDecodeError, RecursionError):
                d = fastjson.loads(text)
        except (UnicodeDecodeError, ValueError) as e:
            raise RemotingCommandException(f"header is not JSON: {e}") from None
        return d

    @classmethod
    def _from_header_dict(cls, d: dict[str, Any]) -> RemotingCommand:
        try:
            code = int(d.get("code", 0))  # fastjson leaves Java's `int code` at 0
            ext = d.get("extFields")
            if ext is not None:
                if not isinstance(ext, dict):
                    raise RemotingCommandException("extFields is not an object")
                # a JSON null value reads as an absent field, as in Java's HashMap.get
                ext = {
                    k if type(k) is str else str(k): v if type(v) is str else _ext_str(v)
                    for k, v in ext.items()
                    if v is not None
                }  # NOTE: performance: str keys and values (the usual) skip the calls
            remark = d.get("remark")
            return cls(
                code,
                ext_fields=ext,
                remark=None if remark is None else str(remark),
                opaque=int(d.get("opaque", 0)),
                flag=int(d.get("flag", 0)),
                language=str(d.get("language", "JAVA")),
                version=int(d.get("version", 0)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise RemotingCommandException(f"bad header field: {e!r}") from None

    @classmethod
    def _from_binary_header(cls, h: bytes) -> RemotingCommand:
        """Mirrors ``RocketMQSerializable#rocketMQProtocolDecode``; docs/reference.md §1.5.

        As in Java a remark or extFields length <= 0 means "absent", and a length past
        the header, a negative key/value length or a short read is an error.
        """
        try:
            code, lang, version, opaque, flag = _BIN_FIXED.unpack_from(h, 0)
            pos = _BIN_FIXED.size
            (rlen,) = _INT.unpack_from(h, pos)
            pos += 4
            remark = None
            if rlen > 0:
                if pos + rlen > len(h):
                    raise RemotingCommandException(
                        f"remark length {rlen} exceeds header length {len(h)}"
                    )
                remark = h[pos : pos + rlen].decode()
                pos += rlen
            (elen,) = _INT.unpack_from(h, pos)
            pos += 4
            ext: dict[str, str] | None = None
            if elen > 0:
                end = pos + elen
                if end > len(h):
                    raise RemotingCommandException(
                        f"extFields length {elen} exceeds header length {len(h)}"
                    )
                ext = {}
                while pos < end:
                    (kl,) = _SHORT.unpack_from(h, pos)
                    pos += 2
                    if kl < 0 or pos + kl + 4 > end:
                        raise RemotingCommandException(f"bad extFields key length {kl}")
                    k = h[pos : pos + kl].decode()
                    pos += kl
                    (vl,) = _INT.unpack_from(h, pos)
                    pos += 4
                    if vl < 0 or pos + vl > end:
                        raise RemotingCommandException(f"bad extFields value length {vl}")
                    ext[k] = h[pos : pos + vl].decode()
                    pos += vl
        except (struct.error, UnicodeDecodeError) as e:
            raise RemotingCommandException(f"bad ROCKETMQ header: {e}") from None
        return cls(
            code,
            ext_fields=ext,
            remark=remark,
            opaque=opaque,
            flag=flag,
            language=LanguageCode.BY_CODE.get(lang, "OTHER"),
            version=version,
            serialize_type=SerializeType.ROCKETMQ,
        )

    # -- display -----------------------------------------------------------------------------
    def __repr__(self) -> str:
        kind = "response" if self.is_response else ("oneway" if self.is_oneway else "request")
        body = f", body={len(self.body)}B" if self.body else ""
        remark = f", remark={self.remark!r}" if self.remark else ""
        return (
            f"RemotingCommand({kind} code={self.code}, opaque={self.opaque}, "
            f"ext={self.ext_fields}{remark}{body})"
        )


def _ext_str(v: Any) -> str:
    """extFields values are strings; Java writes them with ``String.valueOf``."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        return fastjson.java_double_to_string(v)
    if isinstance(v, dict | list):
        return fastjson.dumps(v)  # fastjson hands a nested value to a String field as its text
    return str(v)


def split_frames(buf: bytearray, max_frame: int = MAX_FRAME_LENGTH) -> list[bytes]:
    """Cut complete frames (without their length prefix) off the front of ``buf``.

    ``LengthFieldBasedFrameDecoder`` in one function: consumes what it returns and
    leaves a partial frame in ``buf``.

    Raises:
        RemotingCommandException: a length field is below 4 (no room for the
            header-length word) or the whole frame, ``length + 4`` as Netty counts it,
            is over ``max_frame`` (``TooLongFrameException``).
    """
    out: list[bytes] = []
    pos = 0
    n = len(buf)
    while n - pos >= 4:
        (length,) = _INT.unpack_from(buf, pos)
        if length < 4 or length + 4 > max_frame:
            raise RemotingCommandException(f"bad frame length {length} (max {max_frame})")
        if n - pos - 4 < length:
            break
        out.append(bytes(buf[pos + 4 : pos + 4 + length]))
        pos += 4 + length
    if pos:
        del buf[:pos]
    return out
