"""mqlab.acl.plain_permission_manager: loading, validate's order and messages, and the
files the admin operations write, as rocketmq-acl-4.9.3.jar does.

The written files and code 54's JSON were pinned by running the jar's
``PlainPermissionManager`` (``rocketmq.home.dir`` set to a temp dir holding ``FILE`` below)
through the same calls; only the ``timestamp`` differs (Java's clock).
"""

from __future__ import annotations

import pytest

from mqlab.acl.acl_utils import AclException, NullPointerException
from mqlab.acl.plain_access_resource import parse
from mqlab.acl.plain_permission_manager import PlainAccessConfig, PlainPermissionManager
from mqlab.acl.signature import SessionCredentials, sign_request
from mqlab.remoting.codes import RequestCode as R
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import dumps

NOW = 1795931478229  # a real epoch millisecond, as Java's clock stamps them

FILE = """globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.*

accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
    groupPerms:
      - groupA=DENY

  - accessKey: rocketmq2
    secretKey: 12345678
    whiteRemoteAddress: 192.168.1.*
    admin: true
"""

PPM = "org.apache.rocketmq.acl.plain.PlainPermissionManager"
ACL_EXC = "org.apache.rocketmq.acl.common.AclException"


@pytest.fixture
def home(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "plain_acl.yml").write_text(FILE)
    return tmp_path


def manager(home, now=NOW):
    return PlainPermissionManager(str(home), now_ms=lambda: now)


def request(code, ext, body=None, cred=None, addr="127.0.0.1:50001"):
    cmd = RemotingCommand(code, ext_fields=dict(ext), body=body)
    if cred is not None:
        sign_request(cmd, cred)
    return parse(cmd, addr)


def refusal(m, resource):
    with pytest.raises((AclException, NullPointerException)) as e:
        m.validate(resource)
    return e.value.simple_desc()


ROCKETMQ = SessionCredentials("RocketMQ", "12345678")
ADMIN = SessionCredentials("rocketmq2", "12345678")


def test_load_reads_the_default_file(home):
    """Two accounts, two global white patterns, the file's version (none: counter 0, now)."""
    m = manager(home)
    path = str(home / "conf" / "plain_acl.yml")
    assert m.file_list == [path]
    assert m.access_key_table == {"RocketMQ": path, "rocketmq2": path}
    assert [s.name for s in m.global_white_remote_address_strategy] == [
        "RangeRemoteAddressStrategy", "RangeRemoteAddressStrategy",
    ]  # fmt: skip
    owned = m.acl_plain_access_resource_map[path]["RocketMQ"]
    assert owned.resource_perm_map == {"%RETRY%groupA": 1, "topicA": 1, "topicB": 12}
    assert (owned.default_topic_perm, owned.default_group_perm, owned.admin) == (1, 8, False)
    assert owned.secret_key == "12345678"  # a YAML number, read as Java's String
    assert m.get_acl_config_data_version() == f'{{"counter":0,"timestamp":{NOW}}}'
    assert m.all_acl_config_version_json() == f'{{"{path}":{{"counter":0,"timestamp":{NOW}}}}}'


def test_load_reads_the_acl_directory_first_and_a_key_keeps_its_first_file(home):
    """conf/acl/**.yml (tools.yml left out only at conf/tools.yml), then conf/plain_acl.yml;
    an access key listed twice belongs to the first file."""
    acl = home / "conf" / "acl" / "team"
    acl.mkdir(parents=True)
    (acl / "a.yaml").write_text("accounts:\n- accessKey: RocketMQ\n  secretKey: otherkey1\n")
    (acl / "notes.txt").write_text("not read")
    m = manager(home)
    assert m.file_list == [str(acl / "a.yaml"), str(home / "conf" / "plain_acl.yml")]
    assert m.access_key_table["RocketMQ"] == str(acl / "a.yaml")
    assert m.access_key_table["rocketmq2"] == str(home / "conf" / "plain_acl.yml")


def test_load_refuses_an_empty_file_and_a_bad_pattern(home):
    """``%s file is not data``; a bad pattern's own message: the broker would not start."""
    (home / "conf" / "plain_acl.yml").write_text("")
    with pytest.raises(AclException) as e:
        manager(home)
    assert e.value.message == f"{home}/conf/plain_acl.yml file is not data"
    (home / "conf" / "plain_acl.yml").write_text("globalWhiteRemoteAddresses:\n- 192.168.*\n")
    with pytest.raises(AclException) as e:
        manager(home)
    assert e.value.message == "Netaddress examine scope Exception netaddress is 192.168.*"


def test_no_home_loads_nothing_and_refuses_everyone():
    """No rocketmq.home.dir and no ROCKETMQ_HOME: no file, every key unknown."""
    m = PlainPermissionManager(None, now_ms=lambda: NOW)
    assert (m.file_list, m.access_key_table) == ([], {})
    assert refusal(m, request(R.SEND_MESSAGE_V2, {"b": "T"}, cred=ROCKETMQ)) == (
        f"{ACL_EXC}: No acl config for RocketMQ, {PPM}.validate(PlainPermissionManager.java:640)"
    )


V2 = {"a": "PG", "b": "topicB", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "0",
      "h": "0", "i": "", "j": "0", "k": "false", "m": "false"}  # fmt: skip


def test_validate_order_and_messages(home):
    """Global white list, access key, account, account's white address, signature, admin,
    perms: each refusal with 4.9.3's message and the jar's frame."""
    m = manager(home)
    # step 1: a global white address admits even an unsigned request
    assert m.validate(request(R.UPDATE_AND_CREATE_TOPIC, {}, addr="10.10.103.9:1")) == "1"
    # step 2
    assert refusal(m, request(R.SEND_MESSAGE_V2, V2)) == (
        f"{ACL_EXC}: No accessKey is configured, {PPM}.validate(PlainPermissionManager.java:636)"
    )
    # step 3
    stranger = SessionCredentials("stranger", "12345678")
    assert refusal(m, request(R.SEND_MESSAGE_V2, V2, cred=stranger)) == (
        f"{ACL_EXC}: No acl config for stranger, {PPM}.validate(PlainPermissionManager.java:640)"
    )
    # step 4: the account's white address admits a wrong signature, and an admin code
    wrong = SessionCredentials("rocketmq2", "wrongsecret")
    assert m.validate(request(R.SEND_MESSAGE_V2, V2, cred=wrong, addr="192.168.1.4:1")) == "4"
    # step 5
    assert refusal(m, request(R.SEND_MESSAGE_V2, V2, cred=wrong)) == (
        f"{ACL_EXC}: Check signature failed for accessKey=rocketmq2, "
        f"{PPM}.validate(PlainPermissionManager.java:653)"
    )
    unsigned = request(R.SEND_MESSAGE_V2, {**V2, "AccessKey": "RocketMQ"})
    assert refusal(m, unsigned).startswith(f"{ACL_EXC}: Check signature failed for accessKey=Ro")
    # step 6: admin codes, then the perms (listed, then the defaults)
    assert refusal(m, request(R.UPDATE_AND_CREATE_TOPIC, {"topic": "T"}, cred=ROCKETMQ)) == (
        f"{ACL_EXC}: Need admin permission for request code=17, but accessKey=RocketMQ is "
        f"not, {PPM}.checkPerm(PlainPermissionManager.java:553)"
    )
    assert m.validate(request(R.UPDATE_AND_CREATE_TOPIC, {"topic": "T"}, cred=ADMIN)) == "6"
    assert m.validate(request(R.SEND_MESSAGE_V2, V2, cred=ROCKETMQ)) == "6"
    assert refusal(m, request(R.SEND_MESSAGE_V2, {**V2, "b": "topicA"}, cred=ROCKETMQ)) == (
        f"{ACL_EXC}: No default permission for topic:topicA, "
        f"{PPM}.checkPerm(PlainPermissionManager.java:583)"
    )
    assert refusal(m, request(R.SEND_MESSAGE_V2, {**V2, "b": "other"}, cred=ROCKETMQ)) == (
        f"{ACL_EXC}: No default permission for topic:other, "
        f"{PPM}.checkPerm(PlainPermissionManager.java:578)"
    )
    pull = {"topic": "topicB", "consumerGroup": "groupA"}
    assert refusal(m, request(R.PULL_MESSAGE, pull, cred=ROCKETMQ)) == (
        f"{ACL_EXC}: No default permission for group:groupA, "
        f"{PPM}.checkPerm(PlainPermissionManager.java:583)"
    )
    # the default group perm (SUB) lets another group pull topicB
    assert m.validate(request(R.PULL_MESSAGE, {**pull, "consumerGroup": "g9"}, cred=ROCKETMQ))
    # an admin with no perms listed owns everything
    assert m.validate(request(R.SEND_MESSAGE_V2, {**V2, "b": "topicA"}, cred=ADMIN)) == "6"


def test_perm_refusal_names_the_first_resource_in_hash_map_order(home):
    """Both refused: UPDATE_CONSUMER_OFFSET adds the group first, but Java's HashMap
    iterates topicA before %RETRY%groupA, so the topic is named."""
    m = manager(home)
    both = {"topic": "topicA", "consumerGroup": "groupA", "queueId": "0", "commitOffset": "1"}
    assert "for topic:topicA," in refusal(m, request(R.UPDATE_CONSUMER_OFFSET, both, cred=ROCKETMQ))


FILE1 = """globalWhiteRemoteAddresses:
- 10.10.103.*
- 192.168.0.*
accounts:
- accessKey: RocketMQ
  secretKey: 12345678
  whiteRemoteAddress: null
  admin: false
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - topicA=DENY
  - topicB=PUB|SUB
  groupPerms:
  - groupA=DENY
- accessKey: rocketmq2
  secretKey: 12345678
  whiteRemoteAddress: 192.168.1.*
  admin: true
- accessKey: newuser1
  secretKey: newsecret1
  whiteRemoteAddress: 10.0.0.*
  admin: false
  defaultTopicPerm: PUB
  topicPerms:
  - t1=SUB
  - t2=PUB|SUB
dataVersion:
- counter: 1
  timestamp: %d
"""

FILE3 = """globalWhiteRemoteAddresses:
- 10.1.*
- 10.2.0.1
accounts:
- accessKey: rocketmq2
  secretKey: 12345678
  whiteRemoteAddress: 192.168.1.*
  admin: true
- accessKey: RocketMQ
  secretKey: '12345678'
  whiteRemoteAddress: null
  admin: true
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - topicA=DENY
  - topicB=PUB|SUB
  groupPerms:
  - g1=SUB
dataVersion:
- counter: 4
  timestamp: %d
"""


def test_the_admin_operations_write_the_file_as_4_9_3(home):
    """Create, update (the account moves last, the request's fields over the old ones),
    delete, global white list: the bytes rocketmq-acl-4.9.3.jar writes, counter + 1 each."""
    t = [NOW]
    m = PlainPermissionManager(str(home), now_ms=lambda: t[0])
    path = home / "conf" / "plain_acl.yml"
    new = PlainAccessConfig("newuser1", "newsecret1", white_remote_address="10.0.0.*",
                            default_topic_perm="PUB", topic_perms=["t1=SUB", "t2=PUB|SUB"])  # fmt: skip
    assert m.update_access_config(new) is True
    assert path.read_text() == FILE1 % NOW
    assert m.access_key_table["newuser1"] == str(path)  # a new account is in memory at once
    t[0] += 10
    old = PlainAccessConfig("RocketMQ", "12345678", admin=True, group_perms=["g1=SUB"])
    assert m.update_access_config(old) is True
    assert m.delete_access_config("newuser1") is True
    assert m.delete_access_config("nobody11") is False
    assert m.update_global_white_addrs_config(["10.1.*", "10.2.0.1"]) is True
    assert path.read_text() == FILE3 % (NOW + 10)
    white, configs = m.get_all_acl_config()
    body = {"globalWhiteAddrs": white, "plainAccessConfigs": [c.to_json_dict() for c in configs]}
    assert dumps(body) == (
        '{"globalWhiteAddrs":["10.1.*","10.2.0.1"],"plainAccessConfigs":[{"accessKey":'
        '"rocketmq2","admin":true,"secretKey":"12345678","whiteRemoteAddress":"192.168.1.*"},'
        '{"accessKey":"RocketMQ","admin":true,"defaultGroupPerm":"SUB","defaultTopicPerm":'
        '"DENY","groupPerms":["g1=SUB"],"secretKey":"12345678","topicPerms":["topicA=DENY",'
        '"topicB=PUB|SUB"]}]}'
    )
    # the in-memory versions: the default file's stays until a reload; the map has the new one
    assert m.get_acl_config_data_version() == f'{{"counter":0,"timestamp":{NOW}}}'
    assert m.data_version_map[str(path)].counter == 4


def test_the_admin_operations_refuse_with_4_9_3s_messages(home):
    """Short keys, bad perms, a bad address: the messages the processor puts in the remark."""
    m = manager(home)
    cases = [
        (PlainAccessConfig("abc", "12345678"),
         "The accessKey=abc and secretKey=12345678 cannot be null and length should longer than 6"),
        (PlainAccessConfig("abcdefg", None),
         "The accessKey=abcdefg and secretKey=null cannot be null and length should longer than 6"),
        (PlainAccessConfig("abcdefg", "12345678", topic_perms=["x=FOO"]),
         "Parse resource permission error for x=FOO.\n"
         "The expected permissions are 'SUB' or 'PUB' or 'SUB|PUB' or 'PUB|SUB'."),
        (PlainAccessConfig("abcdefg", "12345678", white_remote_address="bad"),
         "Netaddress examine Exception netaddress is bad"),
    ]  # fmt: skip
    before = (home / "conf" / "plain_acl.yml").read_text()
    for config, message in cases:
        with pytest.raises(AclException) as e:
            m.update_access_config(config)
        assert e.value.message == message
    assert (home / "conf" / "plain_acl.yml").read_text() == before
    # 4.9.3 put the refused account's key in the table before the address check threw
    assert "abcdefg" in m.access_key_table


def test_an_update_applies_only_after_a_reload_and_then_breaks_the_account(home):
    """apache/rocketmq#3887: an updated account keeps its old grants until the file is
    reloaded; the reload drops it from memory, and its next request is a
    NullPointerException at validate:646. A full reload heals it."""
    m = manager(home)
    path = str(home / "conf" / "plain_acl.yml")
    topic_a = request(R.SEND_MESSAGE_V2, {**V2, "b": "topicA"}, cred=ROCKETMQ)
    assert "No default permission for topic:topicA" in refusal(m, topic_a)
    m.update_access_config(PlainAccessConfig("RocketMQ", "12345678", topic_perms=["topicA=PUB"]))
    assert "No default permission for topic:topicA" in refusal(m, topic_a)  # memory unchanged
    m.load_file(path)
    assert refusal(m, topic_a) == (
        'java.lang.NullPointerException: Cannot invoke "org.apache.rocketmq.acl.plain.'
        'PlainAccessResource.getRemoteAddressStrategy()" because "ownedAccess" is null, '
        f"{PPM}.validate(PlainPermissionManager.java:646)"
    )
    m.load()
    assert m.validate(topic_a) == "6"


def test_deleting_the_last_account_fails_in_the_version_update(home):
    """updateAclConfigFileVersion reads accounts.get(0): Index 0 out of bounds, no write."""
    (home / "conf" / "plain_acl.yml").write_text(
        "accounts:\n- accessKey: lonely12\n  secretKey: '12345678'\n"
    )
    m = manager(home)
    with pytest.raises(Exception) as e:
        m.delete_access_config("lonely12")
    assert str(e.value) == "java.lang.IndexOutOfBoundsException: Index 0 out of bounds for length 0"
    assert "lonely12" in (home / "conf" / "plain_acl.yml").read_text()


def test_global_white_update_needs_the_key_in_the_file(home):
    """No globalWhiteRemoteAddresses key in the default file: false, nothing written."""
    (home / "conf" / "plain_acl.yml").write_text(
        "accounts:\n- accessKey: someone1\n  secretKey: '12345678'\n"
    )
    m = manager(home)
    assert m.update_global_white_addrs_config(["1.2.3.4"]) is False
    assert m.update_global_white_addrs_config(None) is False


def test_a_new_account_goes_to_a_new_default_file(tmp_path):
    """No default file yet (conf/ exists): 4.9.3 creates it; the map was a new HashMap, so
    dataVersion comes first."""
    (tmp_path / "conf").mkdir()
    m = manager(tmp_path)
    assert m.update_access_config(PlainAccessConfig("someone1", "12345678")) is True
    assert (tmp_path / "conf" / "plain_acl.yml").read_text() == (
        f"dataVersion:\n- counter: 1\n  timestamp: {NOW}\naccounts:\n- accessKey: someone1\n"
        "  secretKey: '12345678'\n  admin: false\n"
    )


ORACLE_FILE = """accounts:
- accessKey: mqlabUser
  secretKey: user-secret-1
  whiteRemoteAddress: 192.168.1.*
  defaultTopicPerm: PUB
  defaultGroupPerm: SUB
  topicPerms: [acl_t_deny=DENY, acl_t_pub=PUB, acl_t_sub=SUB, acl_t_pubsub=PUB|SUB]
  groupPerms: [acl_g_deny=DENY, acl_g_pub=PUB, acl_g_sub=SUB, acl_g_pubsub=PUB|SUB]
"""


@pytest.mark.parametrize(
    ("code", "ext", "named"),
    [
        (R.PULL_MESSAGE, {"topic": "acl_t_deny", "consumerGroup": "acl_g_deny"}, "group:acl_g_deny"),
        (R.PULL_MESSAGE, {"topic": "acl_t_pub", "consumerGroup": "acl_g_pub"}, "topic:acl_t_pub"),
        (R.UPDATE_CONSUMER_OFFSET, {"topic": "acl_t_deny", "consumerGroup": "acl_g_deny"},
         "group:acl_g_deny"),
        (R.PULL_MESSAGE, {"topic": "acl_t_other", "consumerGroup": "acl_g_sub"}, "topic:acl_t_other"),
    ],
)  # fmt: skip
def test_which_resource_the_real_broker_names(tmp_path, code, ext, named):
    """The real 4.9.3 broker's answers (measured with this account): both resources refused,
    the first in HashMap order is named; a topic not listed falls to the default (578)."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "plain_acl.yml").write_text(ORACLE_FILE)
    m = manager(tmp_path)
    cred = SessionCredentials("mqlabUser", "user-secret-1")
    line = 578 if named == "topic:acl_t_other" else 583
    assert refusal(m, request(code, ext, cred=cred)) == (
        f"{ACL_EXC}: No default permission for {named}, "
        f"{PPM}.checkPerm(PlainPermissionManager.java:{line})"
    )
