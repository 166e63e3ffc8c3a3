"""A name server + brokers on the simulation driver, and a raw client to poke them."""

from __future__ import annotations

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.codes import RequestCode
from mqlab.runtime.raw_client import RawClient
from mqlab.runtime.sim import SimDriver
from mqlab.store.config import MessageStoreConfig

NAMESRV = "127.0.0.1:9876"


class Cluster:
    def __init__(self, tmp_path, seed=1, brokers=1, trace_level=None, **broker_kw):
        kw = {} if trace_level is None else {"trace_level": trace_level}
        self.d = SimDriver(seed=seed, **kw)
        self.tmp_path = tmp_path
        self.namesrv = NamesrvController()
        self.d.add_node(self.namesrv)
        self.brokers = []
        for i in range(brokers):
            self.add_broker(chr(ord("a") + i), **broker_kw)
        self.client = RawClient("client")
        self.d.add_node(self.client)
        self.d.run_until_idle()

    def add_broker(self, letter, **broker_kw):
        i = ord(letter) - ord("a")
        cfg = BrokerConfig(broker_name=f"broker-{letter}", listen_port=10911 + 10 * i, **broker_kw)
        store = MessageStoreConfig(store_path_root_dir=str(self.tmp_path / f"store-{letter}"))
        b = BrokerController(cfg, store)
        self.d.add_node(b)
        self.brokers.append(b)
        return b

    @property
    def broker(self):
        return self.brokers[0]

    def call(self, addr, code, ext=None, body=None, **kw):
        c = self.client.send(addr, code, ext, body, **kw)
        self.d.run_until_idle()
        return c

    def send(
        self,
        topic,
        body=b"hello",
        tags=None,
        queue_id=0,
        broker=None,
        props=None,
        producer_group="PG",
        default_queue_nums=4,
        reconsume_times=None,
        max_reconsume=None,
    ):
        p = dict(props or {})
        if tags:
            p["TAGS"] = tags
        p.setdefault("WAIT", "true")
        ext = {
            "a": producer_group,
            "b": topic,
            "c": "TBW102",
            "d": str(default_queue_nums),
            "e": str(queue_id),
            "f": "0",
            "g": str(self.d.now),
            "h": "0",
            "i": "".join(f"{k}\x01{v}\x02" for k, v in p.items())[:-1],
            "j": str(reconsume_times or 0),
            "k": "false",
            "m": "false",
        }
        if max_reconsume is not None:
            ext["l"] = str(max_reconsume)
        return self.call(
            (broker or self.broker).broker_addr, RequestCode.SEND_MESSAGE_V2, ext, body
        )

    def pull_ext(
        self,
        topic,
        queue_id=0,
        offset=0,
        group="CG",
        sys_flag=6,
        sub="*",
        commit_offset=0,
        max_msgs=32,
        suspend=15000,
        sub_version=0,
    ):
        return {
            "consumerGroup": group,
            "topic": topic,
            "queueId": str(queue_id),
            "queueOffset": str(offset),
            "maxMsgNums": str(max_msgs),
            "sysFlag": str(sys_flag),
            "commitOffset": str(commit_offset),
            "suspendTimeoutMillis": str(suspend),
            "subscription": sub,
            "subVersion": str(sub_version),
            "expressionType": "TAG",
        }

    def pull(self, topic, broker=None, run=True, **kw):
        c = self.client.send(
            (broker or self.broker).broker_addr,
            RequestCode.PULL_MESSAGE,
            self.pull_ext(topic, **kw),
        )
        if run:
            self.d.run_until_idle()
        return c
