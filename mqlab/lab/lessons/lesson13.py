"""Lesson 13 — who may send: 4.9.3's plain ACL, a signature, an accounts table, a refusal.

The notebook's logic: a SEND_MESSAGE_V2 request signed step by step as ``AclClientRPCHook``
signs it (``mqlab.acl.signature``, pinned to what rocketmq-acl-4.9.3.jar's hook prints: see
``tests/acl/test_acl_client_rpc_hook.py``); a lab whose broker runs with ``aclEnable=true`` and
reads ``<home>/conf/plain_acl.yml`` (``Lab(broker={"acl_enable": True}, rocketmq_home=…)``);
sends by signed producers (``rpc_hook=AclClientRPCHook(…)``) and the step of
``PlainPermissionManager#validate`` that admitted or refused each; a refused send as trace rows;
the file edited in place and reloaded by the 5 s watcher, with 4.9.3's apache/rocketmq#3887;
and a panel to edit the table and send as any account. Mirrors ``AclClientRPCHook``,
``PlainAccessValidator``, ``PlainPermissionManager`` and ``AclFileWatchService``
(rocketmq-all-4.9.3) through the Lab; the numbered steps are in mechanisms.md "Plain ACL".
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd
import yaml

from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook
from mqlab.acl.acl_file_watch_service import WATCH_INTERVAL
from mqlab.acl.signature import (
    ACCESS_KEY,
    SessionCredentials,
    cal_signature,
    combine_request_content,
)
from mqlab.common.message import Message
from mqlab.common.topic_validator import is_topic_or_group_illegal
from mqlab.lab.check import Misconception, exercise, wrong_answer
from mqlab.lab.lab import Lab
from mqlab.lab.widgets import ControlPanel, PanelInputError, _guarded
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import SendMessageRequestHeader, send_message_header_v2_to_ext_fields

__all__ = [
    "ACCOUNTS",
    "ADMIN",
    "ALICE",
    "JAVA_CREDENTIALS",
    "JAVA_SIGNATURE",
    "MALLORY",
    "SessionCredentials",
    "TOPIC",
    "AclPanel",
    "acl_lab",
    "acl_panel",
    "add_acl_file",
    "content",
    "grant",
    "reload_walk",
    "saved_at",
    "refused_send",
    "send_as",
    "send_request",
    "sign_with_hook",
    "signature_steps",
    "watcher_rows",
    "TOPICS_13_2",
    "who_may_send",
    "params_13_1",
    "params_13_2",
    "params_13_3",
]

TOPIC = "TopicTest"
#: The account of tests/acl/test_acl_client_rpc_hook.py, and what Java's hook printed for
#: ``send_request()`` signed with it (rocketmq-acl-4.9.3.jar, ``HookPin.java``).
JAVA_CREDENTIALS = SessionCredentials("mqlabUser", "user-secret-1")
JAVA_SIGNATURE = "dyQjZo51Rt67e7ufRpDgooRN1SA="

ALICE = SessionCredentials("alice-app", "alice-secret")
ADMIN = SessionCredentials("admin-ops", "admin-secret")
MALLORY = SessionCredentials("mallory-app", "mallory-secret")

#: The lesson's accounts: alice may publish to TopicTest and subscribe to Orders, nothing else
#: by default; admin-ops is an admin that may do everything.
ACCOUNTS = """\
accounts:
- accessKey: alice-app
  secretKey: alice-secret
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - TopicTest=PUB
  - Orders=SUB
- accessKey: admin-ops
  secretKey: admin-secret
  admin: true
  defaultTopicPerm: PUB|SUB
  defaultGroupPerm: PUB|SUB
"""


# -- 1. a signature, step by step ---------------------------------------------------------------
def send_request(body: bytes = b"hello") -> RemotingCommand:
    """A SEND_MESSAGE_V2 request as mqlab's producer builds it: the header of
    tests/acl/test_acl_client_rpc_hook.py (producer group PG, topic TopicA, queue 1, born at
    1 700 000 000 000 ms, keys k1), body ``body``; not signed yet."""
    header = SendMessageRequestHeader(
        producer_group="PG", topic="TopicA", default_topic="TBW102", default_topic_queue_nums=4,
        queue_id=1, sys_flag=0, born_timestamp=1_700_000_000_000, flag=0,
        properties="KEYS\x01k1\x02WAIT\x01true\x02", reconsume_times=0, unit_mode=False,
        batch=False,
    )  # fmt: skip
    ext = send_message_header_v2_to_ext_fields(header)
    return RemotingCommand.create_request(RequestCode.SEND_MESSAGE_V2, ext, body)


def _fields(request: RemotingCommand, credentials: SessionCredentials) -> dict[str, str]:
    return {**(request.ext_fields or {}), ACCESS_KEY: credentials.access_key}


def content(request: RemotingCommand, credentials: SessionCredentials) -> bytes:
    """Steps 1-3: the bytes the signature covers (``AclUtils#combineRequestContent``)."""
    return combine_request_content(_fields(request, credentials), request.body)


def signature_steps(request: RemotingCommand, credentials: SessionCredentials) -> pd.DataFrame:
    """The five steps of ``AclClientRPCHook#doBeforeRequest`` on ``request``, one row each:
    step, what, value (mqlab.acl.signature's docstring numbers them)."""
    fields = _fields(request, credentials)
    keys = sorted(fields)
    data = content(request, credentials)
    mac = hmac.new(credentials.secret_key.encode(), data, hashlib.sha1).digest()
    signature = base64.b64encode(mac).decode()
    rows = [
        ("1", "the header's fields and AccessKey", f"{len(fields)} fields: "
         + ", ".join(f"{k}={v!r}" for k, v in fields.items())),
        ("2", "sorted by key", " ".join(keys)),
        ("3", "the values in that order, then the body", f"{len(data)} bytes: {data!r}"),
        ("4", "HmacSHA1 with the secret key, then Base64", f"{mac.hex()} → {signature}"),
        ("5", "added to the request's ext fields", f"Signature={signature}, "
         f"AccessKey={credentials.access_key}"),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["step", "what", "value"])


def sign_with_hook(request: RemotingCommand, credentials: SessionCredentials) -> RemotingCommand:
    """``request`` signed by ``AclClientRPCHook``, as the broker reads it (through the codec)."""
    AclClientRPCHook(credentials).do_before_request("127.0.0.1:10911", request)
    return RemotingCommand.decode(request.encode())


# -- 2. a broker with ACL on ----------------------------------------------------------------------
def acl_lab(seed: int, accounts: str = ACCOUNTS, **kwargs: Any) -> tuple[Lab, Path]:
    """A lab whose broker runs with ``aclEnable=true`` and reads ``accounts`` from
    ``<home>/conf/plain_acl.yml``, ``home`` a fresh temporary directory (removed when the lab
    is garbage-collected). Returns both."""
    home = Path(tempfile.mkdtemp(prefix="mqlab-acl-"))
    (home / "conf").mkdir()
    (home / "conf" / "plain_acl.yml").write_text(accounts)
    lab = Lab(seed=seed, broker={"acl_enable": True}, rocketmq_home=home, **kwargs)
    weakref.finalize(lab, shutil.rmtree, home, ignore_errors=True)
    return lab, home


def _producer(lab: Lab, credentials: SessionCredentials | None) -> Any:
    if credentials is None:
        return lab._producer()  # the lab's own producer: no hook, nothing signed
    names: dict[tuple[str, str], str] = lab.__dict__.setdefault("_acl_producers", {})
    key = (credentials.access_key, credentials.secret_key)
    if key not in names:  # one client node per key pair: one instance, one hook
        taken = sum(k[0] == key[0] for k in names)
        names[key] = credentials.access_key + (f"-{taken + 1}" if taken else "")
    node = names[key]
    if node not in lab.producers:
        lab.producer(f"PG_{credentials.access_key.replace('-', '_')}", name=node,
                     rpc_hook=AclClientRPCHook(credentials))  # fmt: skip
    return lab.producers[node]


def send_as(lab: Lab, credentials: SessionCredentials | None, topic: str = TOPIC,
            body: bytes = b"hello") -> dict[str, Any]:  # fmt: skip
    """One send to ``topic`` by a producer signing with ``credentials`` (None: unsigned), run
    to its answer. Returns the outcome (SEND_OK or REFUSED), the step of
    ``PlainPermissionManager#validate`` that decided its first try, why it refused, and
    how many tries the producer made (it retries a SYSTEM_ERROR twice)."""
    producer = _producer(lab, credentials)
    mark = len(lab.trace)
    t0 = lab.now
    fut = producer.send(Message(topic, body))
    lab.run_until_idle()
    evs = lab.trace.events[mark:]
    parses = [i for i, e in enumerate(evs) if e.component == "PlainAccessValidator.parse"
              and e.fields.get("request") == "SEND_MESSAGE_V2"]  # fmt: skip
    step, remark = None, None
    if parses:
        for e in evs[parses[0] + 1 :]:
            if e.component == "PlainPermissionManager.validate" and e.fields.get("outcome") in (
                "admit", "refuse"):  # fmt: skip
                step = e.step
                if e.fields["outcome"] == "refuse":
                    remark = e.fields.get("text")
                break
            if e.component == "PlainAccessValidator.doBeforeRequest":
                remark = e.fields.get("text")
                break
    ok = fut.done and fut.result is not None
    return {
        "t_ms": t0,
        "access_key": credentials.access_key if credentials else None,
        "topic": topic,
        "outcome": ok and fut.result.send_status.name or "REFUSED",
        "step": step,
        "why": None if ok else remark,
        "tries": len(parses),
    }


def who_may_send(seed: int) -> pd.DataFrame:
    """Seven sends on a fresh ``acl_lab``: alice to TopicTest (PUB), to Orders (SUB only) and
    to Payments (unlisted, default DENY); alice with a wrong secret; an unknown key; the lab's
    unsigned producer; admin-ops to Payments. One row each (``send_as``)."""
    with acl_lab(seed)[0] as lab:
        tries = [
            ("alice", ALICE, TOPIC), ("alice", ALICE, "Orders"), ("alice", ALICE, "Payments"),
            ("alice, wrong secret", SessionCredentials(ALICE.access_key, "guessed-secret"),
             TOPIC),
            ("unknown key", MALLORY, TOPIC), ("unsigned", None, TOPIC),
            ("admin", ADMIN, "Payments"),
        ]  # fmt: skip
        rows = [{"who": who, **send_as(lab, c, t)} for who, c, t in tries]
    return pd.DataFrame(rows).drop(columns=["access_key"])


# -- 3. a refused send ------------------------------------------------------------------------------
def refused_send(seed: int, topic: str = "Orders") -> tuple[Lab, pd.DataFrame, int]:
    """alice sends to ``topic`` on a fresh ``acl_lab`` after one send to TopicTest (so the
    route is known), frames traced. Returns the lab, the broker's ACL trace rows of the refused send's first
    try (t_ms, component, step, text) and the send's start."""
    lab, _home = acl_lab(seed, trace_level="frames")  # the timeline draws each frame
    send_as(lab, ALICE, TOPIC)
    start = lab.now
    send_as(lab, ALICE, topic)
    ev = lab.events()
    acl = ev["component"].str.startswith(
        ("PlainAccessValidator", "PlainPermissionManager.validate")
    )
    rows = ev[(ev["t_ms"] >= start) & acl & (ev["node"] == "broker-a")]
    first = rows[rows["component"] == "PlainAccessValidator.parse"]["t_ms"].min()
    rows = rows[rows["t_ms"] == first]  # the first try; the producer's two retries repeat it
    return lab, rows[["t_ms", "component", "step", "text"]].reset_index(drop=True), start


# -- 4. the table edited, and reloaded ----------------------------------------------------------
def grant(home: str | Path, access_key: str, topic_perm: str) -> str:
    """Add ``topic_perm`` (``Topic=PUB``) to the ``topicPerms`` of ``access_key`` in
    ``<home>/conf/plain_acl.yml``, in place, as an operator edits it. Returns the new text."""
    path = Path(home) / "conf" / "plain_acl.yml"
    data = yaml.safe_load(path.read_text())
    account = next((a for a in data.get("accounts") or [] if a.get("accessKey") == access_key),
                   None)  # fmt: skip
    if account is None:
        raise ValueError(f"{path} lists no account {access_key!r}")
    account.setdefault("topicPerms", []).append(topic_perm)
    text = yaml.safe_dump(data, sort_keys=False)
    path.write_text(text)
    return text


def add_acl_file(home: str | Path, name: str = "extra.yml") -> Path:
    """A new file ``<home>/conf/acl/<name>`` with no accounts: the number of ACL files
    changes, and the watcher's next turn reloads every file (``PlainPermissionManager#load()``)."""
    path = Path(home) / "conf" / "acl" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("accounts: []\n")
    return path


def watcher_rows(lab: Lab, since_ms: int = 0) -> pd.DataFrame:
    """The watcher's reloads and what each left in memory, since ``since_ms``."""
    ev = lab.events()
    ev = ev[(ev["t_ms"] >= since_ms) & ev["component"].isin(
        ["AclFileWatchService.run", "PlainPermissionManager.load"])]  # fmt: skip
    return ev[["t_ms", "component", "step", "text"]].reset_index(drop=True)


def reload_walk(seed: int, topic: str = "Payments") -> pd.DataFrame:
    """alice is refused on ``topic``; the file is edited in place to grant it
    (``grant``); she sends at once, then after the watcher's turn, then after a file is added
    under conf/acl and the next turn. One row per send (``send_as``) with what came before it."""
    lab, home = acl_lab(seed)
    rows = [{"when": "before the edit", **send_as(lab, ALICE, topic)}]
    edited = lab.now
    grant(home, ALICE.access_key, f"{topic}=PUB")
    rows.append({"when": "just after the edit", **send_as(lab, ALICE, topic)})
    lab.advance(WATCH_INTERVAL - lab.now % WATCH_INTERVAL)
    rows.append({"when": "after the watcher's turn", **send_as(lab, ALICE, topic)})
    add_acl_file(home)
    lab.advance(WATCH_INTERVAL - lab.now % WATCH_INTERVAL)
    rows.append({"when": "after a file was added", **send_as(lab, ALICE, topic)})
    out = pd.DataFrame(rows).drop(columns=["access_key"])
    out.attrs["edited_ms"] = edited
    out.attrs["watcher"] = watcher_rows(lab, since_ms=1)
    lab.close()
    return out


# -- the panel -------------------------------------------------------------------------------------
class AclPanel(ControlPanel):
    """The control panel's time row and its log, on an ACL lab, plus the broker's
    ``plain_acl.yml`` in a text box (*save file* writes it; the watcher reloads it on its next
    turn, every 5 s of virtual time), *add conf/acl file* (the number of files changes: the
    next turn reloads everything), and a send row (*send as*: one message to *to topic*,
    signed with *access key* and *secret key*; both empty: unsigned). Above the log: the
    accounts the broker holds in memory, and when the watcher looks next."""

    def __init__(self, lab: Lab, home: str | Path) -> None:
        self.home = Path(home)
        self.acl_view = widgets.HTML()
        super().__init__(lab, sections=["time", "log"])
        self.buttons["long_poll_timeout"].layout.display = "none"  # nothing pulls here
        self.inputs["file"] = widgets.Textarea(
            value=(self.home / "conf" / "plain_acl.yml").read_text(),
            description="plain_acl.yml", rows=9,
            layout=widgets.Layout(width="98%"),
            style={"description_width": "90px"},
        )  # fmt: skip
        text = {"access_key": ("access key", ALICE.access_key, "250px"),
                "secret_key": ("secret key", ALICE.secret_key, "250px"),
                "send_topic": ("to topic", "Payments", "250px")}  # fmt: skip
        for key, (label, value, width) in text.items():
            self.inputs[key] = widgets.Text(value=value, description=label,
                                            layout=widgets.Layout(width=width),
                                            style={"description_width": "80px"})  # fmt: skip
        for key, label, fn in (("save_file", "save file", self.save_file),
                               ("add_file", "add conf/acl file", self.add_file),
                               ("send_as", "send as", self.send_as)):  # fmt: skip
            b = widgets.Button(description=label,
                               layout=widgets.Layout(width="auto", flex="0 0 auto"))  # fmt: skip
            b.on_click(lambda _b, fn=fn: fn())
            self.buttons[key] = b
        wrap = widgets.Layout(flex_flow="row wrap", align_items="center")
        file_row = widgets.HBox([self.buttons["save_file"], self.buttons["add_file"]], layout=wrap)
        send_row = widgets.HBox([self.inputs["access_key"], self.inputs["secret_key"],
                                 self.inputs["send_topic"], self.buttons["send_as"]],
                                layout=wrap)  # fmt: skip
        self.widget.children = (self.inputs["file"], file_row, send_row, self.acl_view,
                                *self.widget.children)  # fmt: skip
        self.refresh()

    def _redraw(self) -> None:
        super()._redraw()
        if hasattr(self, "acl_view"):
            self.acl_view.value = self.acl_html()

    def acl_html(self) -> str:
        """The accounts in the broker's memory, by access key, and the watcher's next turn."""
        engine = self.lab.broker("broker-a").access_validator.acl_plug_engine
        nxt = (self.lab.now // WATCH_INTERVAL + 1) * WATCH_INTERVAL
        parts = []
        for key, path in sorted(engine.access_key_table.items()):
            owned = engine.acl_plain_access_resource_map.get(path, {}).get(key)
            if owned is None:
                parts.append(f"{key}: <b>no account in memory</b> (apache/rocketmq#3887)")
                continue
            perms = ", ".join(f"{r}={_perm(p)}" for r, p in (owned.resource_perm_map or {}).items())
            parts.append(f"{key}{' (admin)' if owned.admin else ''}: topics {perms or '-'}, "
                         f"default topic {_perm(owned.default_topic_perm)}")  # fmt: skip
        head = f"<b>t={self.lab.now} ms</b> · the watcher looks next at {nxt} ms · in memory: "
        body = "; ".join(html.escape(p).replace("&lt;b&gt;", "<b>").replace("&lt;/b&gt;", "</b>")
                         for p in parts) or "no account"  # fmt: skip
        return f'<div style="font-size:11px;line-height:1.4">{head}{body}</div>'

    @_guarded
    def save_file(self) -> None:
        """Write the text box to ``<home>/conf/plain_acl.yml`` (YAML only)."""
        text = self.inputs["file"].value
        try:
            yaml.safe_load(text)
        except yaml.YAMLError as e:
            where = getattr(e, "problem_mark", None)
            at = f" (line {where.line + 1})" if where is not None else ""
            raise PanelInputError(f"plain_acl.yml must be YAML{at}; not saved") from None

        def run() -> list[str]:
            (self.home / "conf" / "plain_acl.yml").write_text(text)
            nxt = (self.lab.now // WATCH_INTERVAL + 1) * WATCH_INTERVAL
            return [f"conf/plain_acl.yml saved; the watcher looks at {nxt} ms"]

        self._do("save file", run)

    @_guarded
    def add_file(self) -> None:
        """``add_acl_file``: a new file with no accounts under conf/acl (extra-N.yml)."""

        def run() -> list[str]:
            n = len(list((self.home / "conf" / "acl").glob("*.yml"))) + 1 if (
                self.home / "conf" / "acl").exists() else 1  # fmt: skip
            path = add_acl_file(self.home, f"extra-{n}.yml")
            return [f"conf/acl/{path.name} added: the next turn reloads every file"]

        self._do("add conf/acl file", run)

    @_guarded
    def send_as(self) -> None:
        """One message to *to topic*, signed with *access key* / *secret key*."""
        ak = self.inputs["access_key"].value.strip()
        sk = self.inputs["secret_key"].value.strip()
        topic = self.inputs["send_topic"].value.strip()
        if bool(ak) != bool(sk):
            raise PanelInputError("access key and secret key must both be set (or both empty "
                                  "for an unsigned send)")  # fmt: skip
        # TopicValidator#isTopicOrGroupIllegal: ASCII letters only (str.isalnum took "ü", and
        # the client's Validators#checkTopic then refused the send before any request)
        if not topic or is_topic_or_group_illegal(topic) or len(topic) > 127:
            raise PanelInputError(f"to topic must be a topic name (a-z A-Z 0-9 _ - % |), "
                                  f"got {topic!r}")  # fmt: skip
        credentials = SessionCredentials(ak, sk) if ak else None

        def run() -> list[str]:
            r = send_as(self.lab, credentials, topic)
            who = ak or "unsigned"
            if r["outcome"] != "REFUSED":
                return [f"{who} → {topic}: {r['outcome']} (validate step {r['step']} admitted it)"]
            return [f"{who} → {topic}: refused at validate step {r['step']} after {r['tries']} "
                    f"tries: {r['why']}"]  # fmt: skip

        self._do(f"send as {ak or 'unsigned'} to {topic}", run)


def _perm(p: int | None) -> str:
    from mqlab.acl.permission import perm_name

    return perm_name(p) if p is not None else "-"


def acl_panel(lab: Lab, home: str | Path) -> AclPanel:
    """An ``AclPanel`` on an ``acl_lab``; leave it as a cell's last expression."""
    return AclPanel(lab, home)


# -- exercises ----------------------------------------------------------------------------------
def params_13_1(seed: int) -> bytes:
    """Exercise 13.1's body: the same request, another body."""
    return f"order-{seed % 97}".encode()


def _sig(data: bytes) -> str:
    return cal_signature(data, JAVA_CREDENTIALS.secret_key)


def _header_only(seed: int) -> str:
    return _sig(content(send_request(None), JAVA_CREDENTIALS))  # type: ignore[arg-type]


def _unsorted(seed: int) -> str:
    req = send_request(params_13_1(seed))
    fields = _fields(req, JAVA_CREDENTIALS)
    return _sig("".join(fields.values()).encode() + params_13_1(seed))


def _hex(seed: int) -> str:
    data = content(send_request(params_13_1(seed)), JAVA_CREDENTIALS)
    return hmac.new(JAVA_CREDENTIALS.secret_key.encode(), data, hashlib.sha1).hexdigest()


MISCONCEPTIONS_13_1 = (
    wrong_answer(
        "signing the header only",
        "the body is part of what is signed: AclUtils#combineRequestContent appends its bytes "
        "after the sorted values, so another body gives another signature",
        lambda want, seed: _header_only(seed),
    ),
    wrong_answer(
        "signing the fields in the order they were added",
        "the hook puts the fields in a TreeMap: sorted by key, AccessKey (capital A) first, "
        "then a, b, c …",
        lambda want, seed: _unsorted(seed),
    ),
    wrong_answer(
        "giving the digest in hex",
        "AclSigner#calSignature encodes the 20 HmacSHA1 bytes in Base64 (28 characters ending "
        "in =), not hex",
        lambda want, seed: _hex(seed),
    ),
)


@exercise("13.1", "L.send_request(L.params_13_1(SEED)) is the section-1 request with another "
          "body. Signed with L.JAVA_CREDENTIALS, what is its Signature (a string)?",
          hint="steps 1-4: the ext fields plus AccessKey, sorted by key, their values "
               "concatenated, then the body's bytes; HmacSHA1 with the secret key, Base64. "
               "L.content(request, credentials) gives the bytes",
          misconceptions=MISCONCEPTIONS_13_1)  # fmt: skip
def _ex_13_1(seed: int) -> str:
    return _sig(content(send_request(params_13_1(seed)), JAVA_CREDENTIALS))


#: Exercise 13.2's topics, in the order asked.
TOPICS_13_2 = ("Orders", "Invoices", "Audit", "Metrics", "Payments")


def params_13_2(seed: int) -> str:
    """Exercise 13.2's accounts file: bob-app's default topic perm and listed perms."""
    default = ("DENY", "PUB", "SUB", "PUB|SUB")[seed % 4]
    listed = ("Orders=PUB", "Invoices=SUB", "Audit=DENY", "Metrics=PUB|SUB")
    return ("accounts:\n- accessKey: bob-app\n  secretKey: bob-secret\n"
            f"  defaultTopicPerm: {default}\n  defaultGroupPerm: SUB\n  topicPerms:\n"
            + "".join(f"  - {p}\n" for p in listed))  # fmt: skip


_PUB = {"PUB", "PUB|SUB"}


def _perms_13_2(seed: int) -> tuple[str, dict[str, str]]:
    data = yaml.safe_load(params_13_2(seed))["accounts"][0]
    return data["defaultTopicPerm"], dict(p.split("=") for p in data["topicPerms"])


def _sub_sends(seed: int) -> list[str]:
    default, listed = _perms_13_2(seed)
    return [t for t in TOPICS_13_2
            if listed.get(t, default) in _PUB | {"SUB"}]  # fmt: skip


def _listed_falls_back(seed: int) -> list[str]:
    default, listed = _perms_13_2(seed)
    return [t for t in TOPICS_13_2 if listed.get(t) in _PUB or default in _PUB]


def _default_only(seed: int) -> list[str]:
    default, _ = _perms_13_2(seed)
    return list(TOPICS_13_2) if default in _PUB else []


MISCONCEPTIONS_13_2 = (
    wrong_answer(
        "believing SUB lets an account send",
        "a send needs PUB on the topic (PlainAccessValidator#parse); SUB is for pulls, "
        "and Permission#checkPermission wants every bit that is needed",
        lambda want, seed: _sub_sends(seed),
    ),
    Misconception(
        "believing a listed perm falls back to the default",
        "a topic listed in topicPerms is decided by its listed perm alone (checkPerm, L583): "
        "Audit=DENY refuses even when defaultTopicPerm is PUB",
        lambda answer, want, seed: (
            answer != want and sorted(answer) == sorted(_listed_falls_back(seed))
        ),
    ),
    Misconception(
        "believing the default perm applies to every topic",
        "defaultTopicPerm applies only to topics the account does not list (checkPerm, L578)",
        lambda answer, want, seed: answer != want and sorted(answer) == sorted(_default_only(seed)),
    ),
)


@exercise("13.2", "bob-app's account is L.params_13_2(SEED) (print it). Which of "
          "L.TOPICS_13_2 may bob-app send to? Answer a list of topic names in that order.",
          hint="a send needs PUB on its topic; a listed topic is decided by its listed perm, an "
               "unlisted one by defaultTopicPerm; PUB|SUB includes PUB, DENY and SUB do not. "
               "L.acl_lab(SEED, L.params_13_2(SEED)) and L.send_as try it",
          misconceptions=MISCONCEPTIONS_13_2)  # fmt: skip
def _ex_13_2(seed: int) -> list[str]:
    bob = SessionCredentials("bob-app", "bob-secret")
    lab, _ = acl_lab(seed, params_13_2(seed))
    with lab:
        return [t for t in TOPICS_13_2 if send_as(lab, bob, t)["outcome"] == "SEND_OK"]


def params_13_3(seed: int) -> int:
    """Exercise 13.3: the virtual ms at which plain_acl.yml is saved."""
    return (1_200, 2_600, 7_300, 9_100, 12_400)[seed % 5]


def saved_at(seed: int, at_ms: int) -> int:
    """The file saved (alice granted Payments=PUB) at ``at_ms`` on a fresh ``acl_lab``:
    the virtual ms from the save to the watcher's reload of it."""
    lab, home = acl_lab(seed)
    with lab:
        lab.advance(at_ms - lab.now)
        grant(home, ALICE.access_key, "Payments=PUB")
        mark = len(lab.trace)
        while not any(e.component == "AclFileWatchService.run" for e in lab.trace.events[mark:]):
            lab.advance_to_next_timer()
        reload = next(
            e for e in lab.trace.events[mark:] if e.component == "AclFileWatchService.run"
        )
        return reload.t_ms - at_ms


MISCONCEPTIONS_13_3 = (
    wrong_answer(
        "believing the broker reads the file on every request",
        "the broker reads plain_acl.yml at start and when AclFileWatchService, looking every "
        "5 s, finds it changed: until then it checks against the table it holds",
        lambda want, seed: 0,
    ),
    wrong_answer(
        "believing the 5 s start at the save",
        "the watcher's turns are every 5 s from the broker's start, whatever the file does: "
        "the save waits for the next turn, less than 5 s",
        lambda want, seed: WATCH_INTERVAL,
    ),
)


@exercise("13.3", "On a fresh L.acl_lab(SEED), plain_acl.yml is saved at L.params_13_3(SEED) ms "
          "(virtual time). How many ms later does the broker reload it?",
          hint="AclFileWatchService runs every 5000 ms on the broker's clock, from its start at "
               "0 ms; the save is seen at the first turn after it. L.saved_at(SEED, t) runs it",
          misconceptions=MISCONCEPTIONS_13_3)  # fmt: skip
def _ex_13_3(seed: int) -> int:
    return saved_at(seed, params_13_3(seed))
