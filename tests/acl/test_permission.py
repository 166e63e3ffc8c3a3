"""mqlab.acl.permission: perm bits, strings, the check, and the resource lists 4.9.3 takes."""

from __future__ import annotations

import pytest

from mqlab.acl.acl_utils import AclException
from mqlab.acl.permission import (
    ADMIN_CODE,
    ANY,
    DENY,
    PUB,
    SUB,
    check_permission,
    check_resource_perms,
    need_admin_perm,
    parse_perm_from_string,
    parse_resource_perms,
)


def test_bits():
    """DENY 1, ANY 2, PUB 4, SUB 8 (``Permission``)."""
    assert (DENY, ANY, PUB, SUB) == (1, 2, 4, 8)


@pytest.mark.parametrize(
    ("text", "perm"),
    [("PUB", 4), ("SUB", 8), ("PUB|SUB", 12), ("SUB|PUB", 12), ("DENY", 1), (" PUB ", 4),
     ("pub", 1), ("PUB | SUB", 1), ("", 1), (None, 1)],
)  # fmt: skip
def test_parse_perm_from_string(text, perm):
    """The five strings (trimmed, case as written); anything else and null are DENY."""
    assert parse_perm_from_string(text) == perm


@pytest.mark.parametrize(
    ("needed", "owned", "ok"),
    [(PUB, PUB, True), (PUB, SUB, False), (SUB, PUB | SUB, True), (PUB, DENY, False),
     (PUB, DENY | PUB, False), (ANY, SUB, True), (ANY, PUB, True), (ANY, DENY, False),
     (PUB | SUB, SUB, True)],
)  # fmt: skip
def test_check_permission(needed, owned, ok):
    """A DENY bit refuses all; ANY needs PUB or SUB; else the bits must meet."""
    assert check_permission(needed, owned) is ok


def test_parse_resource_perms_maps_groups_to_retry_topics():
    """``groupA=SUB`` is kept as ``%RETRY%groupA``; names and perms are trimmed."""
    assert parse_resource_perms(["topicA=PUB", " topicB = PUB|SUB "], True) == {
        "topicA": PUB, "topicB": PUB | SUB,
    }  # fmt: skip
    assert parse_resource_perms(["groupA=SUB"], False) == {"%RETRY%groupA": SUB}
    with pytest.raises(AclException) as e:
        parse_resource_perms(["groupA"], False)
    assert e.value.message == "Parse resource permission failed for group:groupA"


def test_check_resource_perms_messages():
    """UPDATE_AND_CREATE_ACL_CONFIG's two refusals, 4.9.3's two-line texts."""
    check_resource_perms(["a=DENY", "b=PUB|SUB", "c=SUB|PUB"])
    with pytest.raises(AclException) as e:
        check_resource_perms(["x"])
    assert e.value.message == (
        "Parse Resource format error for x.\n"
        "The expected resource format is 'Res=Perm'. For example: topicA=SUB"
    )
    with pytest.raises(AclException) as e:
        check_resource_perms(["x=FOO"])
    assert e.value.message == (
        "Parse resource permission error for x=FOO.\n"
        "The expected permissions are 'SUB' or 'PUB' or 'SUB|PUB' or 'PUB|SUB'."
    )


def test_admin_codes():
    """Only 17, 25, 200, 207, 215 need an admin; the ACL codes 50-54 do not."""
    assert sorted(ADMIN_CODE) == [17, 25, 200, 207, 215]
    assert need_admin_perm(25) and not need_admin_perm(50) and not need_admin_perm(310)
