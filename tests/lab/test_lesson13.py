"""Lesson 13 (who may send): the walk as lessons/13_who_may_send.md tells it, with the numbers
its prose states, and the exercises' answers and misconception hints.

The signature the lesson shows as "what Java gives" is the one rocketmq-acl-4.9.3.jar's
``AclClientRPCHook`` printed (tests/acl/test_acl_client_rpc_hook.py, ``JAVA_SEND``); the test
below proves mqlab's hook gives the same bytes for the lesson's request.

Mirrors ``AclClientRPCHook``, ``PlainAccessValidator``, ``PlainPermissionManager`` and
``AclFileWatchService`` (rocketmq-all-4.9.3) through the lesson's helpers.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from walks import open_panel

from mqlab.lab import figures
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson13 as L
from tests.acl.test_acl_client_rpc_hook import JAVA_SEND

SEEDS = [1, 12345]
NPE = (
    'NullPointerException: Cannot invoke "org.apache.rocketmq.acl.plain.PlainAccessResource.'
    'getRemoteAddressStrategy()" because "ownedAccess" is null'
)


def test_section1_the_signature_step_by_step_is_javas():
    """13 fields, AccessKey sorted first, 74 bytes, and the Base64 Java's hook printed."""
    assert L.JAVA_SIGNATURE == JAVA_SEND["Signature"]
    assert L.JAVA_CREDENTIALS.access_key == JAVA_SEND["AccessKey"]
    request = L.send_request()
    steps = L.signature_steps(request, L.JAVA_CREDENTIALS)
    assert steps["step"].tolist() == ["1", "2", "3", "4", "5"]
    assert steps["value"][0].startswith("13 fields: ")
    assert steps["value"][1] == "AccessKey a b c d e f g h i j k m"
    assert steps["value"][2].startswith("74 bytes: b'mqlabUserPGTopicATBW102")
    assert steps["value"][3].endswith("→ " + L.JAVA_SIGNATURE)
    data = L.content(request, L.JAVA_CREDENTIALS)
    mac = hmac.new(b"user-secret-1", data, hashlib.sha1).digest()
    assert len(data) == 74 and len(mac) == 20
    assert base64.b64encode(mac).decode() == L.JAVA_SIGNATURE
    signed = L.sign_with_hook(L.send_request(), L.JAVA_CREDENTIALS)
    assert signed.ext_fields == JAVA_SEND  # every field Java's hook put on the wire
    assert "SecretKey" not in signed.ext_fields


@pytest.mark.parametrize("seed", SEEDS)
def test_section2_who_may_send(seed):
    """Steps 6, 6, 6, 5, 3, 2, 6 decide; SEND_OK only for alice → TopicTest and the admin;
    each refusal after 3 tries."""
    t = L.who_may_send(seed)
    assert t["who"].tolist() == ["alice", "alice", "alice", "alice, wrong secret",
                                 "unknown key", "unsigned", "admin"]  # fmt: skip
    assert t["outcome"].tolist() == ["SEND_OK"] + ["REFUSED"] * 5 + ["SEND_OK"]
    assert t["step"].tolist() == ["6", "6", "6", "5", "3", "2", "6"]
    assert t["tries"].tolist() == [1, 3, 3, 3, 3, 3, 1]
    assert t["why"].tolist()[1:6] == [
        "No default permission for topic:Orders", "No default permission for topic:Payments",
        "Check signature failed for accessKey=alice-app", "No acl config for mallory-app",
        "No accessKey is configured",
    ]  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_section3_the_refused_send(seed):
    """First try: parse needs PUB on Orders; validate 1, 4, 5 go on, 6 refuses; the hook
    answers (3). Three tries 2 ms apart, each a request and a response arrow on the timeline;
    nothing stored for Orders."""
    lab, rows, start = L.refused_send(seed)
    assert list(zip(rows.component, rows.step, strict=True)) == [
        ("PlainAccessValidator.parse", "1"), ("PlainPermissionManager.validate", "1"),
        ("PlainPermissionManager.validate", "4"), ("PlainPermissionManager.validate", "5"),
        ("PlainPermissionManager.validate", "6"), ("PlainAccessValidator.doBeforeRequest", "3"),
    ]  # fmt: skip
    assert rows.text[0].endswith("as alice-app: needs {'Orders': 'PUB'}")
    assert rows.text[4] == "No default permission for topic:Orders"
    ev = lab.events(component="PlainAccessValidator.parse")
    tries = ev[(ev["t_ms"] >= start) & ev["text"].str.contains("Orders")]["t_ms"].tolist()
    assert len(tries) == 3 and tries[1] - tries[0] == tries[2] - tries[1] == 2
    assert tries[-1] <= start + 12
    fig = figures.sequence_timeline(lab, nodes=["alice-app", "broker-a"], start_ms=start,
                                    end_ms=start + 12)  # fmt: skip
    assert {y for tr in fig.data for y in tr.y if y is not None} == {"alice-app", "broker-a"}
    arrows = {tr.name: len(tr.x) // 3 for tr in fig.data if tr.name in ("request", "response")}
    assert arrows == {"request": 3, "response": 3}  # three sends, three SYSTEM_ERROR answers
    assert "Orders" not in set(lab.commit_log()["topic"])
    lab.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_section4_the_edit_the_reload_and_3887(seed):
    """Refused (6) before and just after the edit; at 5000 ms the watcher reloads the file and
    alice's account is gone (NPE at 4; 2 keys, 0 accounts); a file added: at 10 000 ms every
    file is reloaded and she may send."""
    w = L.reload_walk(seed)
    assert w["when"].tolist() == ["before the edit", "just after the edit",
                                  "after the watcher's turn", "after a file was added"]  # fmt: skip
    assert w["outcome"].tolist() == ["REFUSED", "REFUSED", "REFUSED", "SEND_OK"]
    assert w["step"].tolist() == ["6", "6", "4", "6"]
    assert w["why"][2] == NPE and w["t_ms"][2] == 5000 and w["t_ms"][3] == 10_000
    watcher = w.attrs["watcher"]
    assert list(zip(watcher.t_ms, watcher.step, watcher.text, strict=True)) == [
        (5000, "load(file)",
         "load(file): 2 access key(s), 0 account(s) in memory, 0 global white pattern(s)"),
        (5000, "3", "reloaded conf/plain_acl.yml"),
        (10_000, "load", "load: 2 access key(s), 2 account(s) in memory, 0 global white pattern(s)"),
        (10_000, "2", "reloaded every ACL file"),
    ]  # fmt: skip


def test_exercise_answers_for_seed_1():
    """13.1: the Base64 of body order-1; 13.2: default PUB → all but Invoices (SUB) and Audit
    (DENY); 13.3: saved at 2600 ms → the turn at 5000 ms."""
    assert L.params_13_1(1) == b"order-1"
    assert expected("13.1", 1) == "FfXXNk4hc0zxn3WnaP6rz7CGTTI="
    assert expected("13.2", 1) == ["Orders", "Metrics", "Payments"]
    assert expected("13.2", 0) == ["Orders", "Metrics"]  # default DENY
    assert (L.params_13_3(1), expected("13.3", 1)) == (2600, 2400)
    assert expected("13.3", 12345) == 3800


def test_wrong_answers_get_the_misconception_hints():
    r = check("13.1", L._header_only(1), seed=1)
    assert not r and "the body is part of what is signed" in r.message
    r = check("13.1", L._unsorted(1), seed=1)
    assert not r and "TreeMap" in r.message
    r = check("13.1", L._hex(1), seed=1)
    assert not r and "Base64" in r.message
    r = check("13.2", ["Orders", "Invoices", "Metrics", "Payments"], seed=1)
    assert not r and "a send needs PUB on the topic" in r.message
    r = check("13.2", list(L.TOPICS_13_2), seed=1)
    assert not r and "decided by its listed perm alone" in r.message
    r = check("13.2", [], seed=0)
    assert not r and "only to topics the account does not list" in r.message
    r = check("13.3", 0, seed=1)
    assert not r and "checks against the table it holds" in r.message
    r = check("13.3", 5000, seed=1)
    assert not r and "the save waits for the next turn" in r.message
    assert check("13.1", expected("13.1", 1), seed=1)
    assert check("13.2", ["Orders", "Metrics", "Payments"], seed=1) and check("13.3", 2400, seed=1)


@pytest.mark.parametrize("seed", [None, *SEEDS])
def test_section5_the_panel_as_written(seed):
    """Refused at 6; the edit saved, still refused; after 5000 ms the reload and no account in
    memory, refused at 4 (NPE); a conf/acl file and 5000 ms more: SEND_OK. Bad input: ⚠.
    seed None: the learner notebook's cells run as Run All runs them, up to the panel."""
    if seed is None:
        p, ns = open_panel("13_who_may_send", "L.acl_panel(")
        lab, home = ns["panel_lab"], ns["home"]
    else:
        lab, home = L.acl_lab(seed)
        p = L.acl_panel(lab, home)
    assert (
        p.inputs["access_key"].value == "alice-app" and p.inputs["send_topic"].value == "Payments"
    )
    assert "the watcher looks next at 5000 ms" in p.acl_view.value
    p.buttons["send_as"].click()
    assert p.messages[-1] == ("  → alice-app → Payments: refused at validate step 6 after 3 "
                              "tries: No default permission for topic:Payments")  # fmt: skip
    p.inputs["file"].value = p.inputs["file"].value.replace(
        "  - Orders=SUB\n", "  - Orders=SUB\n  - Payments=PUB\n")  # fmt: skip
    p.buttons["save_file"].click()
    assert p.messages[-1] == "  → conf/plain_acl.yml saved; the watcher looks at 5000 ms"
    p.buttons["send_as"].click()
    assert "refused at validate step 6" in p.messages[-1]
    p.inputs["advance_ms"].value = "5000"
    p.buttons["advance"].click()
    assert any("reloaded conf/plain_acl.yml" in m for m in p.messages[-30:])
    assert "alice-app: <b>no account in memory</b> (apache/rocketmq#3887)" in p.acl_view.value
    p.buttons["send_as"].click()
    assert p.messages[-1].startswith("  → alice-app → Payments: refused at validate step 4")
    assert "NullPointerException" in p.messages[-1]
    p.buttons["add_file"].click()
    assert p.messages[-1] == "  → conf/acl/extra-1.yml added: the next turn reloads every file"
    p.buttons["advance"].click()
    assert "alice-app: topics TopicTest=PUB, Orders=SUB, Payments=PUB" in p.acl_view.value
    p.buttons["send_as"].click()
    assert p.messages[-1] == "  → alice-app → Payments: SEND_OK (validate step 6 admitted it)"
    # bad input: a line that says what must be, and nothing written or sent
    p.inputs["file"].value = "accounts: [\n"
    p.buttons["save_file"].click()
    assert p.messages[-1].startswith("⚠ plain_acl.yml must be YAML")
    assert "Payments=PUB" in (home / "conf" / "plain_acl.yml").read_text()
    p.inputs["secret_key"].value = ""
    p.buttons["send_as"].click()
    assert p.messages[-1].startswith("⚠ access key and secret key must both be set")
    p.inputs["secret_key"].value = "alice-secret"
    p.inputs["send_topic"].value = "bad topic"
    p.buttons["send_as"].click()
    assert (
        p.messages[-1] == "⚠ to topic must be a topic name (a-z A-Z 0-9 _ - % |), got 'bad topic'"
    )
    # walk of issue 28: letters outside a-z A-Z passed the panel's check, and the client's
    # Validators#checkTopic refused the send before any request: "refused at validate step
    # None after 0 tries: None"
    sent = len(lab.trace)
    p.inputs["send_topic"].value = "Zahlungsübersicht"
    p.buttons["send_as"].click()
    assert p.messages[-1] == (
        "⚠ to topic must be a topic name (a-z A-Z 0-9 _ - % |), got 'Zahlungsübersicht'"
    )
    assert len(lab.trace) == sent  # nothing sent
    lab.close()
