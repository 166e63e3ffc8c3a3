"""The four perms, how a YAML string becomes one, and which request codes need an admin.

Mirrors ``Permission`` (acl/common, RocketMQ 4.9.3): ``DENY`` (1), ``ANY`` (2), ``PUB`` (4)
and ``SUB`` (8) are bits; ``parsePermFromString`` reads ``PUB``, ``SUB``, ``PUB|SUB``,
``SUB|PUB`` and ``DENY`` (anything else, and no value, is DENY); ``checkPermission`` says
whether an owned perm covers a needed one (a DENY bit refuses all); ``ADMIN_CODE`` lists
the five request codes only an admin account may send. Note what 4.9.3 leaves out of
``ADMIN_CODE``: the ACL codes 50-54 themselves and every read-only admin code. Any
account that signs correctly may send them, rewrite of the ACL file included.

Tables here: the perm names and the admin codes. Code: the parse and the check.
"""

from __future__ import annotations

from collections.abc import Iterable

from mqlab.acl.acl_utils import AclException, java_split
from mqlab.common.mix_all import get_retry_topic
from mqlab.remoting.codes import RequestCode

__all__ = [
    "ADMIN_CODE",
    "ANY",
    "DENY",
    "PUB",
    "SUB",
    "check_permission",
    "check_resource_perms",
    "need_admin_perm",
    "parse_perm_from_string",
    "parse_resource_perms",
    "perm_name",
]

DENY = 1
ANY = 1 << 1
PUB = 1 << 2
SUB = 1 << 3

#: ``AclConstants``' perm strings → ``Permission``'s bits (``parsePermFromString``)
PERM_STRINGS: dict[str, int] = {"PUB": PUB, "SUB": SUB, "PUB|SUB": PUB | SUB, "SUB|PUB": PUB | SUB,
                                "DENY": DENY}  # fmt: skip

#: ``Permission.ADMIN_CODE``: the codes ``checkPerm`` refuses to a non-admin account
ADMIN_CODE: frozenset[int] = frozenset({
    RequestCode.UPDATE_AND_CREATE_TOPIC,  # 17
    RequestCode.UPDATE_BROKER_CONFIG,  # 25
    RequestCode.DELETE_TOPIC_IN_BROKER,  # 215
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,  # 200
    RequestCode.DELETE_SUBSCRIPTIONGROUP,  # 207
})  # fmt: skip


def perm_name(perm: int) -> str:
    """A perm's bits as a learner reads them: ``PUB|SUB``, ``DENY``, ``ANY``."""
    names = [
        n for n, bit in (("DENY", DENY), ("ANY", ANY), ("PUB", PUB), ("SUB", SUB)) if perm & bit
    ]
    return "|".join(names) or "0"


def check_permission(needed_perm: int, owned_perm: int) -> bool:
    """``Permission#checkPermission``: DENY owned refuses; ANY needs PUB or SUB; else the
    bits must meet."""
    if owned_perm & DENY:
        return False
    if needed_perm & ANY:
        return bool(owned_perm & PUB) or bool(owned_perm & SUB)
    return bool(needed_perm & owned_perm)


def parse_perm_from_string(perm_string: str | None) -> int:
    """``Permission#parsePermFromString``: the trimmed string's perm; unknown or None is DENY."""
    if perm_string is None:
        return DENY
    return PERM_STRINGS.get(perm_string.strip(), DENY)


def parse_resource_perms(resources: Iterable[str] | None, is_topic: bool) -> dict[str, int]:
    """``Permission#parseResourcePerms``: ``["topicA=PUB", ...]`` → ``{"topicA": PUB}``; a
    group's key is its retry topic (``groupA`` → ``%RETRY%groupA``).

    Raises:
        AclException: an item that is not ``name=perm``.
    """
    out: dict[str, int] = {}
    for resource in resources or ():
        items = java_split(resource, "=")
        if len(items) != 2:
            kind = "topic" if is_topic else "group"
            raise AclException(f"Parse resource permission failed for {kind}:{resource}")
        name = items[0].strip()
        out[name if is_topic else get_retry_topic(name)] = parse_perm_from_string(items[1].strip())
    return out


def check_resource_perms(resources: Iterable[str] | None) -> None:
    """``Permission#checkResourcePerms``: what UPDATE_AND_CREATE_ACL_CONFIG accepts.

    Raises:
        AclException: an item that is not ``Res=Perm``, or whose perm is not one of the
            five strings, with 4.9.3's two-line messages.
    """
    for resource in resources or ():
        items = java_split(resource, "=")
        if len(items) != 2:
            raise AclException(
                f"Parse Resource format error for {resource}.\n"
                "The expected resource format is 'Res=Perm'. For example: topicA=SUB"
            )
        perm = items[1].strip()
        if perm != "DENY" and parse_perm_from_string(perm) == DENY:
            raise AclException(
                f"Parse resource permission error for {resource}.\n"
                "The expected permissions are 'SUB' or 'PUB' or 'SUB|PUB' or 'PUB|SUB'."
            )


def need_admin_perm(code: int) -> bool:
    """``Permission#needAdminPerm``."""
    return code in ADMIN_CODE
