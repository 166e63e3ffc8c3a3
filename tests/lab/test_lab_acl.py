"""Lab(broker={"acl_enable": True}, rocketmq_home=dir): simulated brokers with 4.9.3's ACL,
reading <dir>/conf/plain_acl.yml, across a restart too."""

from __future__ import annotations

from mqlab import Lab
from mqlab.remoting.codes import RequestCode as R

ACL = """accounts:
- accessKey: RocketMQ
  secretKey: '12345678'
"""


def test_a_lab_broker_with_acl_refuses_the_unsigned_and_keeps_its_home_on_restart(tmp_path):
    """The broker reads the accounts; an unsigned request is refused with 4.9.3's remark;
    a restarted broker reads the same home."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "plain_acl.yml").write_text(ACL)
    lab = Lab(seed=1, broker={"acl_enable": True}, rocketmq_home=tmp_path)
    broker = lab.broker("broker-a")
    assert sorted(broker.access_validator.acl_plug_engine.access_key_table) == ["RocketMQ"]
    c = lab.raw.send(broker.broker_addr, R.GET_BROKER_RUNTIME_INFO, {})
    lab.run_until_idle()
    assert (c.code, c.remark) == (
        1,
        "org.apache.rocketmq.acl.common.AclException: No accessKey is configured, "
        "org.apache.rocketmq.acl.plain.PlainPermissionManager.validate("
        "PlainPermissionManager.java:636)",
    )
    restarted = lab.restart_broker("broker-a")
    assert restarted.rocketmq_home_dir == str(tmp_path)
    assert restarted.access_validator is not None
    assert Lab(seed=1).broker("broker-a").access_validator is None
