"""The ``acl`` group's accounts: our own small ``plain_acl.yml``, written by our code.

Not a RocketMQ class. Both sides of the ``acl`` conformance group read the same accounts from
``<home>/conf/plain_acl.yml``, where 4.9.3's ``PlainPermissionManager`` looks for them
(``${rocketmq.home.dir}/conf/plain_acl.yml``); the keys are 4.9.3's (``PlainAccessConfig``,
``AclConstants``): ``globalWhiteRemoteAddresses`` and ``accounts`` with ``accessKey``,
``secretKey``, ``whiteRemoteAddress``, ``admin``, ``defaultTopicPerm``, ``defaultGroupPerm``,
``topicPerms``, ``groupPerms`` (``name=PERM`` lines, PERM one of DENY, PUB, SUB, PUB|SUB).

4.9.3 refuses (``PlainPermissionManager#checkPlainAccessConfig``) an access key or a secret
key of 6 characters or fewer: every key here is longer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mqlab.acl.signature import SessionCredentials

__all__ = [
    "ACCOUNTS",
    "ADMIN",
    "GLOBAL_WHITE",
    "USER",
    "WHITE",
    "plain_acl",
    "write_plain_acl",
]

#: The admin account: ``admin: true``, no perms listed (``checkPerm`` lets an admin with no
#: perm table through).
ADMIN = SessionCredentials("mqlabAdmin", "admin-secret-1")
#: The user: one topic and one group per perm, and default perms for the rest.
USER = SessionCredentials("mqlabUser", "user-secret-1")
#: An account white-listed for 127.0.0.1 (where every request of the harness comes from): its
#: requests pass with its access key and no signature (``PlainPermissionManager#validate``).
WHITE = SessionCredentials("mqlabWhite", "white-secret-1")

#: Global white addresses that match no loopback address: their presence changes nothing for
#: 127.0.0.1 (a pattern with ``*`` and one with ``{a,b}``, 4.9.3's two multi-address forms).
GLOBAL_WHITE = ["10.10.103.*", "192.168.0.{1,2}"]

ACCOUNTS: list[dict[str, Any]] = [
    {
        "accessKey": ADMIN.access_key,
        "secretKey": ADMIN.secret_key,
        "whiteRemoteAddress": "",
        "admin": True,
    },
    {
        "accessKey": USER.access_key,
        "secretKey": USER.secret_key,
        "whiteRemoteAddress": "192.168.1.*",
        "admin": False,
        "defaultTopicPerm": "PUB",
        "defaultGroupPerm": "SUB",
        "topicPerms": [
            "acl_t_deny=DENY",
            "acl_t_pub=PUB",
            "acl_t_sub=SUB",
            "acl_t_pubsub=PUB|SUB",
        ],
        "groupPerms": [
            "acl_g_deny=DENY",
            "acl_g_pub=PUB",
            "acl_g_sub=SUB",
            "acl_g_pubsub=PUB|SUB",
        ],
    },
    {
        "accessKey": WHITE.access_key,
        "secretKey": WHITE.secret_key,
        "whiteRemoteAddress": "127.0.0.1",
        "admin": False,
        "defaultTopicPerm": "DENY",
        "defaultGroupPerm": "DENY",
    },
]


def plain_acl(
    accounts: list[dict[str, Any]] | None = None, global_white: list[str] | None = None
) -> str:
    """The YAML text of a ``plain_acl.yml`` (block style, keys in the order given)."""
    doc = {
        "globalWhiteRemoteAddresses": list(GLOBAL_WHITE if global_white is None else global_white),
        "accounts": [dict(a) for a in (ACCOUNTS if accounts is None else accounts)],
    }
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def write_plain_acl(home: Path, text: str | None = None) -> Path:
    """Write ``<home>/conf/plain_acl.yml`` (our accounts unless ``text``); returns its path.

    Written to a temp name and renamed, so a watcher never reads half a file.
    """
    conf = Path(home) / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    path = conf / "plain_acl.yml"
    tmp = conf / ".plain_acl.yml.tmp"
    tmp.write_text(plain_acl() if text is None else text, encoding="utf-8")
    tmp.replace(path)
    return path
