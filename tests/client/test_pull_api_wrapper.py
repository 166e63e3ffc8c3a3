"""PullAPIWrapper: which node to pull from, the PULL_MESSAGE request, processPullResult.

mechanisms.md "The consumer's pull loop" (pullKernelImpl, recalculatePullFromWhichNode, processPullResult, sysFlag);
docs/reference.md §2.2 (PullMessageRequestHeader, PullSysFlag), §3, §4.6, §10.14.
"""

from __future__ import annotations

import pytest

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer.pull_api_wrapper import PullAPIWrapper, PullResult, PullStatus
from mqlab.client.exception import MQClientException
from mqlab.client.mq_client_instance import MQClientInstance
from mqlab.common.filter_api import FilterAPI
from mqlab.common.message import MessageExt, MessageQueue
from mqlab.common.message_decoder import encode_stored_message
from mqlab.common.sysflag import PullSysFlag
from mqlab.common.topic_config import TopicConfig
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Node
from mqlab.runtime.sim import SimDriver
from mqlab.runtime.task import spawn
from mqlab.store.config import MessageStoreConfig

MQ = MessageQueue("T", "broker-a", 0)
SUSPEND_COMMIT_SUB = PullSysFlag.build_sys_flag(True, True, True, False)  # 7


class FakeBroker(Node):
    def __init__(self, name, address):
        super().__init__(name, address)
        self.requests = []

    def process_request(self, channel, request):
        self.requests.append(request)
        ext = {
            "suggestWhichBrokerId": "0",
            "nextBeginOffset": "0",
            "minOffset": "0",
            "maxOffset": "0",
        }
        return RemotingCommand.create_response(19, "OFFSET_OVERFLOW_ONE", ext)


def fake_env(addrs):
    d = SimDriver(seed=1)
    nodes = {}
    for bid, addr in addrs.items():
        nodes[bid] = FakeBroker(f"node-{bid}", addr)
        d.add_node(nodes[bid])
    inst = MQClientInstance(ClientConfig(namesrv_addr=None), name="c1")
    d.add_node(inst)
    inst.broker_addr_table["broker-a"] = dict(addrs)
    return d, inst, nodes


def attached():
    inst = MQClientInstance(ClientConfig(namesrv_addr=None), name="c")
    SimDriver(seed=1).add_node(inst)
    return inst


def run(d, inst, gen):
    task = spawn(inst.ctx, gen, on_done=lambda t: None)
    d.run_until_idle()
    assert task.done
    return task


def kernel(wrapper, mq=MQ, sub="*", expression_type="TAG", sys_flag=SUSPEND_COMMIT_SUB, offset=5):
    return wrapper.pull_kernel_impl(
        mq, sub, expression_type, 100, offset, 32, sys_flag, 4, 15000, 30000
    )


def stored(queue_offset, tags=None, body=b"x"):
    props = {"TAGS": tags} if tags else {}
    m = MessageExt(topic="T", body=body, queue_id=0, queue_offset=queue_offset,
                   commit_log_offset=100 * queue_offset, store_host="127.0.0.1:10911",
                   born_host="127.0.0.1:50001", properties=props)  # fmt: skip
    return encode_stored_message(m)


# -- which node ---------------------------------------------------------------------------------------


def test_recalculate_pull_from_which_node():
    """Master (0) by default; then the last suggested id; connectBrokerByUser → defaultBrokerId (mechanisms.md "The consumer's pull loop")."""
    w = PullAPIWrapper(MQClientInstance(name="c"), "G")
    assert w.recalculate_pull_from_which_node(MQ) == 0
    w.update_pull_from_which_node(MQ, 1)
    assert w.recalculate_pull_from_which_node(MQ) == 1
    w.connect_broker_by_user, w.default_broker_id = True, 2
    assert w.recalculate_pull_from_which_node(MQ) == 2


# -- the request ----------------------------------------------------------------------------------------


def test_pull_kernel_impl_request_header_to_the_master():
    """PULL_MESSAGE to the master with every header field from the arguments (docs/reference.md §2.2)."""
    d, inst, nodes = fake_env({0: "127.0.0.1:10911"})
    t = run(d, inst, kernel(PullAPIWrapper(inst, "G")))
    assert t.result.pull_status is PullStatus.NO_NEW_MSG
    req = nodes[0].requests[0]
    assert req.code == RequestCode.PULL_MESSAGE
    assert req.ext_fields == {
        "consumerGroup": "G", "topic": "T", "queueId": "0", "queueOffset": "5", "maxMsgNums": "32",
        "sysFlag": "7", "commitOffset": "4", "suspendTimeoutMillis": "15000", "subscription": "*",
        "subVersion": "100", "expressionType": "TAG",
    }  # fmt: skip


def test_pull_from_a_slave_clears_commit_offset():
    """A suggested slave (id 1) gets the pull with COMMIT_OFFSET cleared: sysFlag 7 → 6 (mechanisms.md "The consumer's pull loop")."""
    d, inst, nodes = fake_env({0: "127.0.0.1:10911", 1: "127.0.0.1:10912"})
    w = PullAPIWrapper(inst, "G")
    w.update_pull_from_which_node(MQ, 1)
    run(d, inst, kernel(w))
    assert nodes[0].requests == []
    assert nodes[1].requests[0].ext_fields["sysFlag"] == "6"


def test_pull_from_unknown_broker_fails(real):
    """No address even after a route refresh → MQClientException "The broker[...] not exist"."""
    d, inst = real
    t = run(d, inst, kernel(PullAPIWrapper(inst, "G"), mq=MessageQueue("T", "broker-x", 0)))
    assert isinstance(t.error, MQClientException)
    assert t.error.error_message == "The broker[broker-x] not exist"


def test_sql92_needs_a_broker_of_version_4_1_0_or_later():
    """A non-TAG expression against a broker whose version is below V4_1_0_SNAPSHOT (232) is refused."""
    d, inst, nodes = fake_env({0: "127.0.0.1:10911"})
    w = PullAPIWrapper(inst, "G")
    t = run(d, inst, kernel(w, sub="a > 1", expression_type="SQL92"))
    assert isinstance(t.error, MQClientException) and "does not upgrade" in t.error.error_message
    inst.broker_version_table["broker-a"] = {"127.0.0.1:10911": 399}
    t = run(d, inst, kernel(w, sub="a > 1", expression_type="SQL92"))
    assert t.error is None and nodes[0].requests[-1].ext_fields["expressionType"] == "SQL92"


# -- the reply ------------------------------------------------------------------------------------------


def test_process_pull_result_refilters_by_tag_string():
    """FOUND: decode, keep only TAGS in the subscription's tag set (untagged dropped), stamp MIN/MAX_OFFSET (§10.14)."""
    w = PullAPIWrapper(attached(), "G")
    body = stored(0, "TagA") + stored(1, "TagB") + stored(2) + stored(3, "TagA")
    pr = PullResult(pull_status=PullStatus.FOUND, next_begin_offset=4, min_offset=0, max_offset=9,
                    suggest_which_broker_id=1, message_binary=body)  # fmt: skip
    out = w.process_pull_result(MQ, pr, FilterAPI.build_subscription_data("T", "TagA || TagC"))
    assert [m.queue_offset for m in out.msg_found_list] == [0, 3]
    m = out.msg_found_list[0]
    assert (m.get_property("MIN_OFFSET"), m.get_property("MAX_OFFSET"), m.broker_name) == (
        "0",
        "9",
        "broker-a",
    )
    assert out.message_binary is None
    assert w.recalculate_pull_from_which_node(MQ) == 1


def test_process_pull_result_star_keeps_everything():
    """Subscription "*" has no tag set: every decoded message is kept, untagged ones too."""
    w = PullAPIWrapper(attached(), "G")
    body = stored(0, "TagA") + stored(1)
    pr = PullResult(pull_status=PullStatus.FOUND, next_begin_offset=2, min_offset=0, max_offset=2,
                    message_binary=body)  # fmt: skip
    out = w.process_pull_result(MQ, pr, FilterAPI.build_subscription_data("T", "*"))
    assert [m.queue_offset for m in out.msg_found_list] == [0, 1]


def test_process_pull_result_other_statuses_only_record_the_node():
    """NO_NEW_MSG: no decoding, the list stays empty, the suggested node is remembered."""
    w = PullAPIWrapper(attached(), "G")
    pr = PullResult(pull_status=PullStatus.NO_NEW_MSG, next_begin_offset=0, min_offset=0, max_offset=0,
                    suggest_which_broker_id=0, message_binary=None)  # fmt: skip
    out = w.process_pull_result(MQ, pr, FilterAPI.build_subscription_data("T", "*"))
    assert out.msg_found_list == [] and w.pull_from_which_node_table == {MQ: 0}


# -- against a real broker ---------------------------------------------------------------------------


@pytest.fixture
def real(tmp_path):
    d = SimDriver(seed=1)
    d.add_node(NamesrvController())
    b = BrokerController(
        BrokerConfig(), MessageStoreConfig(store_path_root_dir=str(tmp_path / "a"))
    )
    d.add_node(b)
    d.run_until_idle()
    b.topic_config_manager.update_topic_config(
        TopicConfig("T", read_queue_nums=4, write_queue_nums=4), d.now
    )
    b.register_broker_all()
    inst = MQClientInstance(name="c1")
    d.add_node(inst)
    d.run_until_idle()
    return d, inst


@pytest.mark.parametrize(
    "offset,status", [(0, PullStatus.NO_NEW_MSG), (5, PullStatus.OFFSET_ILLEGAL)]
)
def test_empty_queue_status_depends_on_the_offset(real, offset, status):
    """Empty queue without SUSPEND: offset 0 → 19 NO_NEW_MSG, offset 5 → 21 OFFSET_ILLEGAL, next 0 (docs/reference.md §10.2)."""
    d, inst = real
    w = PullAPIWrapper(inst, "G")
    t = run(
        d,
        inst,
        kernel(w, sys_flag=PullSysFlag.build_sys_flag(False, False, True, False), offset=offset),
    )
    assert t.error is None, t.error
    assert t.result.pull_status is status and t.result.next_begin_offset == 0
    # the route of T was fetched on demand (the address was unknown before the first pull)
    assert inst.find_broker_address_in_publish("broker-a") == "127.0.0.1:10911"
