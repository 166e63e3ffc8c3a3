"""What no one may do: every request code the 4.9.3 broker dispatches, refused by its ACL.

Not a RocketMQ class: rows of the ``acl`` group (``mqlab.conformance.scenarios.acl`` runs them
after its perm scenarios, on the same ``broker-acl``). For each of the 58 broker codes of
:data:`mqlab.conformance.coverage.DISPATCHED` (the registered processors and every ``case`` of
``AdminBrokerProcessor#processRequest``), three requests with the same header:

1. ``unsigned_<code>``: no ``AccessKey`` (``PlainPermissionManager#validate``, line 636);
2. ``wrong_secret_<code>``: the user's access key, signed with another secret (line 653);
3. ``no_perm_<code>``: signed by the user where 4.9.3 checks a perm for the code: the admin
   codes (``Permission.ADMIN_CODE``: 17, 25, 200, 207, 215; line 553) and the codes
   ``PlainAccessValidator#parse`` names a topic or group for (the header names ``acl_t_deny``
   and ``acl_g_deny``, both DENY for the user; line 583). For the other 44 codes 4.9.3 checks
   no perm at all: any account that signs may send them (``acl-admin-only/acl_info_by_user``
   and ``acl-admin-codes/acl_create_by_user`` show two), so there is no perm to lack.

Every row expects SYSTEM_ERROR (1): the harness compares code and remark with the real
broker's. The two :class:`SideAction` steps ``record_acl_state`` take, on each side, the
broker's topics, groups, consumer offsets, broker config, commit-log max offset, ACL config
and the bytes of ``plain_acl.yml`` before and after the rows (:func:`acl_state`); the test
(tests/conformance/test_acl_vs_real.py) checks that nothing changed.

The name server's 20 codes are not here: 4.9.3's name server has no ACL
(``acl-who/route_unsigned``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mqlab.acl.permission import ADMIN_CODE
from mqlab.acl.plain_access_resource import RESOURCES_BY_CODE
from mqlab.acl.signature import SessionCredentials
from mqlab.conformance.coverage import DISPATCHED
from mqlab.conformance.scenario import Scenario, SideAction, Step, json_body
from mqlab.conformance.scenarios.acl_accounts import ADMIN, USER
from mqlab.remoting.codes import RequestCode

__all__ = ["SCENARIOS", "BROKER_CODES", "PERM_CODES", "HEADER", "acl_state", "step_names"]

#: every code the 4.9.3 broker dispatches, in coverage order
BROKER_CODES: tuple[int, ...] = tuple(d.code for d in DISPATCHED if d.side == "broker")
#: the codes 4.9.3 checks a perm for: admin-only, or a topic / group named by the request
PERM_CODES: frozenset[int] = frozenset(c for c in BROKER_CODES
                                       if c in ADMIN_CODE or c in RESOURCES_BY_CODE)  # fmt: skip

#: one header for every code: each field any code's ``parse`` reads names a DENY resource
HEADER: dict[str, str] = {
    "topic": "acl_t_deny", "b": "acl_t_deny", "originTopic": "acl_t_deny",
    "group": "acl_g_deny", "consumerGroup": "acl_g_deny", "groupName": "acl_g_deny",
    "queueId": "0", "commitOffset": "0", "offset": "0", "delayLevel": "0",
}  # fmt: skip
#: HEART_BEAT's resources are in its body: the user's DENY group and topic
HEARTBEAT = json_body({
    "clientID": "127.0.0.1@acl-refusals",
    "consumerDataSet": [{"groupName": "acl_g_deny",
                         "subscriptionDataSet": [{"topic": "acl_t_deny"}]}],
    "producerDataSet": [],
})  # fmt: skip

_WRONG = SessionCredentials(USER.access_key, "not-the-secret")


def _rows(code: int) -> list[Step]:
    body = HEARTBEAT if code == RequestCode.HEART_BEAT else None
    out = [
        Step(f"unsigned_{code}", code, dict(HEADER), body, to="acl", expect=1,
             note="no AccessKey"),
        Step(f"wrong_secret_{code}", code, dict(HEADER), body, to="acl", expect=1,
             credentials=_WRONG, note="the user's key, another secret"),
    ]  # fmt: skip
    if code in PERM_CODES:
        what = "admin-only" if code in ADMIN_CODE else "acl_t_deny / acl_g_deny are DENY"
        out.append(Step(f"no_perm_{code}", code, dict(HEADER), body, to="acl", expect=1,
                        credentials=USER, note=f"the user: {what}"))  # fmt: skip
    return out


def step_names() -> list[str]:
    """The request rows' names, in order."""
    return [s.name for sc in SCENARIOS for s in sc.steps if isinstance(s, Step)]


SCENARIOS = [
    Scenario(
        "acl",
        "acl-refused-codes",
        [
            SideAction(
                "state_before",
                "record_acl_state",
                ("before",),
                note="topics, groups, offsets, config, store, ACL file",
            ),
            *[step for code in BROKER_CODES for step in _rows(code)],
            SideAction("state_after", "record_acl_state", ("after",), note="the same, to compare"),
        ],  # fmt: skip
        doc="Each of the 58 broker codes unsigned, with a wrong secret, and (where 4.9.3 "
        "checks a perm) by the user without it: all refused, nothing changed.",
    ),
]


#: what :func:`acl_state` reads, as the admin: code -> key
_READS = {
    "GET_ALL_TOPIC_CONFIG": "topics",
    "GET_ALL_SUBSCRIPTIONGROUP_CONFIG": "groups",
    "GET_ALL_CONSUMER_OFFSET": "offsets",
    "GET_ALL_DELAY_OFFSET": "delay_offsets",
    "GET_BROKER_CONFIG": "config",
    "GET_BROKER_CLUSTER_ACL_CONFIG": "acl_config",
    "GET_BROKER_CLUSTER_ACL_INFO": "acl_info",
    "GET_BROKER_RUNTIME_INFO": "runtime",
}


def acl_state(addr: str, home: Path | str) -> dict[str, Any]:
    """One ACL broker's state, read by the admin over the wire, and its ``plain_acl.yml``.

    ``topics``, ``groups``, ``offsets``, ``delay_offsets``, ``acl_config``: the bodies (with
    their data versions); ``config``: GET_BROKER_CONFIG's body and version; ``acl_info``:
    GET_BROKER_CLUSTER_ACL_INFO's ext fields; ``commit_log``: the runtime info's
    commitLogMinOffset / commitLogMaxOffset; ``acl_file``: the file's bytes.
    """
    from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook
    from mqlab.conformance.raw_tcp import RawTcpClient

    client = RawTcpClient()
    out: dict[str, Any] = {}
    try:
        for name, key in _READS.items():
            answer = client.start(addr, int(RequestCode[name]), None, None,
                                  rpc_hook=AclClientRPCHook(ADMIN)).result()  # fmt: skip
            cmd = answer.command
            if cmd is None or cmd.code != 0:
                raise RuntimeError(f"{name} to {addr}: {cmd and (cmd.code, cmd.remark)} "
                                   f"{answer.error}")  # fmt: skip
            body = cmd.body.decode("utf-8") if cmd.body else None
            if key == "runtime":
                table = json.loads(body)["table"]
                out["commit_log"] = (table["commitLogMinOffset"], table["commitLogMaxOffset"])
            elif key == "config":
                out[key] = (body, (cmd.ext_fields or {}).get("version"))
            elif key == "acl_info":
                out[key] = dict(cmd.ext_fields or {})
            else:
                out[key] = body
    finally:
        client.close()
    out["acl_file"] = (Path(home) / "conf" / "plain_acl.yml").read_bytes()
    return out
