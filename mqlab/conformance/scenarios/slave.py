"""What a slave answers, and the requests its SlaveSynchronize sends to the master.

Each side runs a slave of ``broker-a`` for this group (brokerId 1, brokerRole SLAVE,
``haSendHeartbeatInterval`` 1000 on both): the real one in the real cluster's JVM
(``RealCluster.start_slave``), mqlab's on the ``mqlab serve`` driver. Both learn the master's
HA address and address from their registration result (``BrokerController#registerBrokerAll``)
and copy its topics with SlaveSynchronize (3 s after start, then every 10 s). The scenario
creates its topic and sends two messages to the master, waits for a copy and the HA stream,
then asks the slave: the route (the name server lists both), a send (refused: a slave's store
takes no puts), pulls with ``slaveReadEnable`` false and true (``suggestWhichBrokerId``),
consumer offsets (a slave keeps its own table), its runtime info; and sends SlaveSynchronize's
four requests to the master as a slave does.
"""

from __future__ import annotations

from dataclasses import replace

from mqlab.conformance.scenario import Scenario, Step
from mqlab.conformance.scenarios.common import pull, query_offset, send_v2, update_offset

__all__ = ["SCENARIOS", "SLAVE_PROPERTIES"]

T = "cf_slave"
G = "cf_slave_cg"
#: The slaves' own settings on both sides (besides the master's file sizes, see sides.py):
#: reports every 1 s, so the HA stream starts within ~6 s of the slave's start.
SLAVE_PROPERTIES = {"haSendHeartbeatInterval": "1000"}
#: one SlaveSynchronize after the topic exists (first at +3 s, then every 10 s) and the HA
#: stream's first report: the slave started just before this group
SYNCED_MS = 14_000


def _slave_config(name: str, **kv: str) -> Step:
    body = "".join(f"{k}={v}\n" for k, v in kv.items())
    return Step(name, "UPDATE_BROKER_CONFIG", {}, body, to="slave")


SCENARIOS = [
    Scenario(
        "slave",
        "slave-answers",
        [
            Step(
                "create",
                "UPDATE_AND_CREATE_TOPIC",
                {
                    "topic": T,
                    "defaultTopic": "TBW102",
                    "readQueueNums": "2",
                    "writeQueueNums": "2",
                    "perm": "6",
                    "topicFilterType": "SINGLE_TAG",
                    "topicSysFlag": "0",
                    "order": "false",
                },
                expect=0,
            ),  # fmt: skip
            send_v2("send_0", T, 0, b"slave-0", n=900, expect=0),
            send_v2("send_1", T, 0, b"slave-1", n=901, expect=0),
            Step(
                "cluster",
                "GET_BROKER_CLUSTER_INFO",
                {},
                to="namesrv",
                wait_ms=SYNCED_MS,
                note="broker-a: brokerId 0 the master, 1 the slave",
            ),  # fmt: skip
            Step("route", "GET_ROUTEINFO_BY_TOPIC", {"topic": T}, to="namesrv"),
            Step(
                "topics_on_slave",
                "GET_ALL_TOPIC_CONFIG",
                {},
                to="slave",
                note="the master's topics, copied by SlaveSynchronize",
            ),  # fmt: skip
            replace(
                send_v2("send_to_slave", T, 0, b"to-the-slave", n=902),
                to="slave",
                note="a slave's store refuses puts",
            ),
            Step("max_on_slave", "GET_MAX_OFFSET", {"topic": T, "queueId": "0"}, to="slave"),
            replace(
                pull("pull_slave", G, T, 0, 0),
                to="slave",
                note="slaveReadEnable false: found, suggestWhichBrokerId 0",
            ),
            _slave_config("slave_read_on", slaveReadEnable="true"),
            replace(
                pull("pull_slave_read", G, T, 0, 0),
                to="slave",
                note="slaveReadEnable true: suggestWhichBrokerId of the group",
            ),
            _slave_config("slave_read_off", slaveReadEnable="false"),
            replace(
                pull("pull_slave_commit", G, T, 0, 1, commit_offset=1),
                to="slave",
                note="a slave never commits a pull's offset",
            ),
            replace(query_offset("offset_slave_0", G, T, 0), to="slave"),
            replace(update_offset("offset_slave_set", G, T, 0, 1), to="slave"),
            replace(
                query_offset("offset_slave_1", G, T, 0),
                to="slave",
                note="UPDATE_CONSUMER_OFFSET on the slave lands in its own table",
            ),
            query_offset("offset_master", G, T, 0, note="the master's table does not have it"),
            Step("runtime_slave", "GET_BROKER_RUNTIME_INFO", {}, to="slave"),
            Step("config_slave", "GET_BROKER_CONFIG", {}, to="slave", body_kind="properties"),
            # SlaveSynchronize#syncAll's four requests, as the slave sends them to its master
            Step("sync_topics", "GET_ALL_TOPIC_CONFIG", {}),
            Step("sync_offsets", "GET_ALL_CONSUMER_OFFSET", {}),
            Step("sync_delay", "GET_ALL_DELAY_OFFSET", {}),
            Step("sync_groups", "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", {}),
        ],
        doc="A slave of broker-a on each side: registration, a refused send, pulls with and "
        "without slaveReadEnable, consumer offsets, runtime info, and SlaveSynchronize's "
        "requests to the master.",
    ),
]
