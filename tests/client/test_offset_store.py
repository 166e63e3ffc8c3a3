"""Offset stores: RemoteBrokerOffsetStore (clustering) and LocalFileOffsetStore (broadcasting).

Vectors of RemoteBrokerOffsetStoreTest and LocalFileOffsetStoreTest (client/consumer/store,
RocketMQ 4.9.3); docs/reference.md §10.12 and §7.4 (offsets.json); mechanisms.md "The consumer's pull loop" and mechanisms.md "Offsets".
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer.offset_store import (
    LocalFileOffsetStore,
    ReadOffsetType,
    RemoteBrokerOffsetStore,
)
from mqlab.client.exception import MQClientException
from mqlab.client.mq_client_instance import MQClientInstance
from mqlab.common.message import MessageQueue
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.bodies import BrokerData, QueueData, TopicRouteData
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import dumps, loads
from mqlab.runtime.context import Node, RemotingConnectException
from mqlab.runtime.sim import SimDriver
from mqlab.runtime.task import spawn
from mqlab.store.config import MessageStoreConfig

A = "127.0.0.1:10911"
MQ = MessageQueue("T", "broker-a", 1)

MEMORY = ReadOffsetType.READ_FROM_MEMORY
STORE = ReadOffsetType.READ_FROM_STORE
FIRST = ReadOffsetType.MEMORY_FIRST_THEN_STORE


class FakeBroker(Node):
    """Answers every request with ``code`` (and ``offset`` in extFields)."""

    def __init__(self, code=0, offset=None):
        super().__init__("broker-a", A)
        self.code, self.offset, self.requests = code, offset, []

    def process_request(self, channel, request):
        self.requests.append(request)
        ext = {} if self.offset is None else {"offset": str(self.offset)}
        return RemotingCommand.create_response(self.code, "Not found" if self.code else None, ext)


def read(d, store, mq, type_):
    task = spawn(store.instance.ctx, store.read_offset(mq, type_), on_done=lambda t: None)
    d.run_until_idle()
    assert task.done and task.error is None, task.error
    return task.result


def fake_env(code=0, offset=None):
    d = SimDriver(seed=1)
    broker = FakeBroker(code, offset)
    d.add_node(broker)
    inst = MQClientInstance(ClientConfig(namesrv_addr=None), name="c1")
    d.add_node(inst)
    inst.topic_route_table["T"] = TopicRouteData(
        queue_datas=(
            QueueData(broker_name="broker-a", read_queue_nums=4, write_queue_nums=4, perm=6),
        ),
        broker_datas=(BrokerData(cluster="C", broker_name="broker-a", broker_addrs={0: A}),),
    )
    inst.broker_addr_table["broker-a"] = {0: A}
    return d, broker, inst


def real_env(tmp_path):
    d = SimDriver(seed=1)
    d.add_node(NamesrvController())
    cfg = BrokerConfig(broker_name="broker-a", listen_port=10911)
    broker = BrokerController(cfg, MessageStoreConfig(store_path_root_dir=str(tmp_path / "a")))
    d.add_node(broker)
    d.run_until_idle()
    inst = MQClientInstance(name="c1")
    d.add_node(inst)
    d.advance(100)  # the first route refresh (TBW102 via the inner producer? no consumers → none)
    return SimpleNamespace(d=d, broker=broker, inst=inst)


# -- RemoteBrokerOffsetStore ------------------------------------------------------------------------


def test_update_offset_increase_only_rules():
    """1024 → 1024; 1023 not increase-only → 1023; 1022 increase-only → stays 1023 (RemoteBrokerOffsetStoreTest)."""
    store = RemoteBrokerOffsetStore(MQClientInstance(name="c"), "G")
    store.update_offset(MQ, 1024, False)
    assert store.read_offset_from_memory(MQ) == 1024
    store.update_offset(MQ, 1023, False)
    assert store.read_offset_from_memory(MQ) == 1023
    store.update_offset(MQ, 1022, True)
    assert store.read_offset_from_memory(MQ) == 1023
    store.update_offset(MQ, 1025, True)
    assert store.read_offset_from_memory(MQ) == 1025


def test_read_from_memory_is_minus_one_when_absent():
    """READ_FROM_MEMORY of an unknown queue → −1 without any request (mechanisms.md "The consumer's pull loop" readOffset)."""
    d, broker, inst = fake_env()
    store = RemoteBrokerOffsetStore(inst, "G")
    assert read(d, store, MQ, MEMORY) == -1
    assert broker.requests == []


def test_read_from_store_broker_error_is_minus_one():
    """READ_FROM_STORE: the broker answers QUERY_NOT_FOUND (22) → −1 (RemoteBrokerOffsetStoreTest)."""
    d, broker, inst = fake_env(code=22)
    store = RemoteBrokerOffsetStore(inst, "G")
    assert read(d, store, MQ, STORE) == -1
    req = broker.requests[0]
    assert req.code == RequestCode.QUERY_CONSUMER_OFFSET
    assert req.ext_fields == {"consumerGroup": "G", "topic": "T", "queueId": "1"}


def test_read_from_store_other_exception_is_minus_two():
    """READ_FROM_STORE: no broker reachable (connect error / unknown broker) → −2 (RemoteBrokerOffsetStoreTest)."""
    d, broker, inst = fake_env()
    d.set_link("c1", "broker-a", down=True)
    store = RemoteBrokerOffsetStore(inst, "G")
    assert read(d, store, MQ, STORE) == -2
    assert read(d, store, MessageQueue("T", "broker-x", 0), STORE) == -2


def test_read_from_store_caches_the_broker_offset():
    """A broker offset is cached: READ_FROM_MEMORY then returns it; MEMORY_FIRST_THEN_STORE asks no more."""
    d, broker, inst = fake_env(code=0, offset=77)
    store = RemoteBrokerOffsetStore(inst, "G")
    assert read(d, store, MQ, FIRST) == 77
    assert read(d, store, MQ, MEMORY) == 77
    assert read(d, store, MQ, FIRST) == 77
    assert len(broker.requests) == 1


def test_persist_then_read_from_store(tmp_path):
    """Persist 1024 / 1023 / 1023 / 1025 and read each back from the broker (RemoteBrokerOffsetStoreTest)."""
    env = real_env(tmp_path)
    store = RemoteBrokerOffsetStore(env.inst, "G")
    mq = MessageQueue("T", "broker-a", 1)
    env.inst.broker_addr_table["broker-a"] = {0: A}
    got = []
    for offset, increase_only in ((1024, False), (1023, False), (1022, True), (1025, True)):
        store.update_offset(mq, offset, increase_only)
        store.persist_all({mq})
        env.d.run_until_idle()
        store.remove_offset(mq)
        assert store.read_offset_from_memory(mq) == -1
        got.append(read(env.d, store, mq, STORE))
    assert got == [1024, 1023, 1023, 1025]
    assert env.broker.consumer_offset_manager.query_offset("G", "T", 1) == 1025


def test_persist_all_is_oneway_and_forgets_unassigned_queues():
    """persistAll: oneway UPDATE_CONSUMER_OFFSET (flag 2) for assigned queues; others evicted (docs/reference.md §10.12)."""
    d, broker, inst = fake_env()
    store = RemoteBrokerOffsetStore(inst, "G")
    kept, dropped = MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 3)
    store.update_offset(kept, 18, False)
    store.update_offset(dropped, 5, False)
    store.persist_all([kept])
    d.run_until_idle()
    (req,) = broker.requests
    assert (req.code, req.flag) == (RequestCode.UPDATE_CONSUMER_OFFSET, 2)
    assert req.ext_fields == {
        "consumerGroup": "G",
        "topic": "T",
        "queueId": "0",
        "commitOffset": "18",
    }
    assert store.offset_table == {kept: 18}
    store.persist_all([])  # an empty set does nothing
    assert store.offset_table == {kept: 18}


def test_persist_one_queue_and_sync_update():
    """persist(mq) is one oneway update; update_consume_offset_to_broker(..., False) waits for SUCCESS."""
    d, broker, inst = fake_env()
    store = RemoteBrokerOffsetStore(inst, "G")
    store.persist(MQ)  # nothing cached: nothing sent
    store.update_offset(MQ, 3, False)
    store.persist(MQ)
    task = store.update_consume_offset_to_broker(MQ, 4, False)
    d.run_until_idle()
    assert [r.flag for r in broker.requests] == [2, 0]
    assert task.done and task.error is None


def test_persist_all_to_an_unreachable_broker_is_logged_not_thrown():
    """persistAll: the oneway update throws RemotingConnectException; updateConsumeOffsetToBroker logs it, offsets kept."""
    d, broker, inst = fake_env()
    store = RemoteBrokerOffsetStore(inst, "G")
    store.update_offset(MQ, 18, False)
    d.set_link("c1", "broker-a", down=True)
    task = store.update_consume_offset_to_broker(MQ, 18, True)
    store.persist_all([MQ])
    d.run_until_idle()
    assert broker.requests == []
    assert isinstance(task.error, RemotingConnectException)
    assert str(task.error) == f"connect to {A} failed"
    assert store.offset_table == {MQ: 18}
    errors = [e for e in d.recorder.events if e.kind == "error"]
    assert len(errors) == 2 and all("updateConsumeOffsetToBroker" in e.component for e in errors)


def test_remove_offset_and_clone_offset_table():
    """removeOffset → memory −1; cloneOffsetTable filters by topic, blank → all."""
    store = RemoteBrokerOffsetStore(MQClientInstance(name="c"), "G")
    store.update_offset(MQ, 1024, False)
    store.update_offset(MessageQueue("U", "broker-a", 0), 9, False)
    assert store.clone_offset_table("T") == {MQ: 1024}
    assert len(store.clone_offset_table("")) == 2
    store.remove_offset(MQ)
    assert store.read_offset_from_memory(MQ) == -1


# -- LocalFileOffsetStore ----------------------------------------------------------------------------


def local_env(tmp_path):
    d = SimDriver(seed=1)
    inst = MQClientInstance(ClientConfig(namesrv_addr=None), name="c1")
    d.add_node(inst)
    return d, inst, LocalFileOffsetStore(inst, "G", tmp_path)


def test_local_store_path_and_file_shape(tmp_path):
    """offsets.json under <dir>/<clientId>/<group>/, fastjson with MessageQueue keys (docs/reference.md §7.4)."""
    d, inst, store = local_env(tmp_path)
    assert store.store_path == tmp_path / "127.0.0.1@c1" / "G" / "offsets.json"
    mq = MessageQueue("T", "b", 0)
    store.update_offset(mq, 12, False)
    store.persist_all({mq})
    text = store.store_path.read_text()
    assert text.startswith('{\n\t"offsetTable":{')  # pretty (tab-indented), as toJson(true)
    assert dumps(loads(text)) == '{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:12}}'


def test_local_read_from_store_before_and_after_persist(tmp_path):
    """READ_FROM_STORE −1 before persistAll, 1024 after; cloneOffsetTable size 1 value 1024 (LocalFileOffsetStoreTest)."""
    d, inst, store = local_env(tmp_path)
    store.update_offset(MQ, 1024, False)
    assert read(d, store, MQ, STORE) == -1
    store.persist_all({MQ})
    assert read(d, store, MQ, STORE) == 1024
    assert store.clone_offset_table("T") == {MQ: 1024}
    store.update_offset(MQ, 1023, False)
    assert read(d, store, MQ, MEMORY) == 1023
    store.update_offset(MQ, 1022, True)
    assert read(d, store, MQ, MEMORY) == 1023


SEED_004_OFFSETS_JSON = """{
 "offsetTable":{{
   "brokerName":"broker-a",
   "queueId":3,
   "topic":"TopicTest"
  }:1470,{
   "brokerName":"broker-a",
   "queueId":2,
   "topic":"TopicTest"
  }:1471,{
   "brokerName":"broker-a",
   "queueId":1,
   "topic":"TopicTest"
  }:1470,{
   "brokerName":"broker-a",
   "queueId":0,
   "topic":"TopicTest"
  }:1470
 }
}"""


def test_local_load_reads_a_java_written_file(tmp_path):
    """The offsets.json printed in mechanisms.md "Offsets" (written by Java) loads: queue 2 at 1471, the others at 1470."""
    d, inst, store = local_env(tmp_path)
    store.store_path.parent.mkdir(parents=True)
    store.store_path.write_text(SEED_004_OFFSETS_JSON)
    store.load()
    assert store.offset_table == {
        MessageQueue("TopicTest", "broker-a", q): 1471 if q == 2 else 1470 for q in range(4)
    }


def test_local_load_falls_back_to_bak(tmp_path):
    """load(): the main file, or offsets.json.bak when the main file is empty or corrupt (docs/reference.md §7.4)."""
    d, inst, store = local_env(tmp_path)
    store.update_offset(MQ, 5, False)
    store.persist_all({MQ})
    store.update_offset(MQ, 6, False)
    store.persist_all({MQ})  # offsets.json = 6, offsets.json.bak = 5
    fresh = LocalFileOffsetStore(inst, "G", tmp_path)
    fresh.load()
    assert fresh.offset_table == {MQ: 6}
    store.store_path.write_text("{not json")
    fresh = LocalFileOffsetStore(inst, "G", tmp_path)
    fresh.load()
    assert fresh.offset_table == {MQ: 5}
    store.store_path.with_name("offsets.json.bak").write_text("{also broken")
    with pytest.raises(MQClientException, match="readLocalOffset Exception"):
        LocalFileOffsetStore(inst, "G", tmp_path).load()


def test_local_persist_and_remove_do_nothing(tmp_path):
    """persist(mq), removeOffset and updateConsumeOffsetToBroker are no-ops for the local store."""
    d, inst, store = local_env(tmp_path)
    store.update_offset(MQ, 3, False)
    store.persist(MQ)
    store.remove_offset(MQ)
    assert store.update_consume_offset_to_broker(MQ, 3, True) is None
    assert not store.store_path.exists()
    assert store.read_offset_from_memory(MQ) == 3


def test_local_store_dir_from_client_config(tmp_path):
    """Without base_dir the client config's local_offset_store_dir is used."""
    inst = MQClientInstance(ClientConfig(local_offset_store_dir=str(tmp_path)), name="c2")
    assert (
        LocalFileOffsetStore(inst, "G").store_path
        == tmp_path / "127.0.0.1@c2" / "G" / "offsets.json"
    )
