"""Committed consume offsets per consumer group and queue, and consumerOffset.json.

Mirrors ``ConsumerOffsetManager`` (broker/offset, RocketMQ 4.9.3); mechanisms.md "Pull processing" step 11
(the pull path commits the client's offset), mechanisms.md "Where a new queue starts" (``queryConsumerOffset``); docs/reference.md
§10.4 (plain overwrite, −1 when absent), §7.4 (file shape and ``.bak`` fallback).

What this module owns: ``offset_table`` keyed ``"topic@group"`` → {queueId: offset} and
the file ``<config_dir>/consumerOffset.json``. What it must not know: the message store
and the consumer manager. The one Java method that needs them
(``scanUnsubscribedTopic``) takes them as two lookup functions.

The file is fastjson's ``Map<String, Map<Integer, Long>>`` with **unquoted** integer
queue-id keys. fastjson's pretty printer puts each entry of a String-keyed map on its own
line but writes the entries of an Integer-keyed map on the opening line and only the
closing brace on a new line; real broker files look like this (tabs)::

    {
        "offsetTable":{
                "TopicTest@group1":{0:120,1:118
                }
        }
    }

:meth:`ConsumerOffsetManager.encode` reproduces that byte for byte. Keys are written
sorted (``topic@group`` by text, queue ids numerically); Java writes hash-map order.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mqlab.broker.config import ConfigManager
from mqlab.common.filter_api import SubscriptionData
from mqlab.remoting import fastjson

__all__ = ["ConsumerOffsetManager", "TOPIC_GROUP_SEPARATOR", "CONSUMER_OFFSET_JSON"]

#: ``ConsumerOffsetManager.TOPIC_GROUP_SEPARATOR``.
TOPIC_GROUP_SEPARATOR = "@"
#: File name under the broker's config directory.
CONSUMER_OFFSET_JSON = "consumerOffset.json"


def _split_key(topic_at_group: str) -> list[str]:
    """Java ``String#split("@")``: trailing empty strings are dropped."""
    parts = topic_at_group.split(TOPIC_GROUP_SEPARATOR)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


class ConsumerOffsetManager(ConfigManager):
    """Broker-side store of consumer progress (clustering consumers).

    Attributes:
        offset_table: ``"topic@group"`` → {queue id: next offset to consume}.
    """

    __slots__ = ("config_dir", "offset_table", "_tracer")

    def __init__(self, config_dir: Path | None = None, *, tracer: Any = None) -> None:
        self.config_dir = config_dir
        self.offset_table: dict[str, dict[int, int]] = {}
        # Commits are too frequent to trace one by one; kept for symmetry with the others.
        self._tracer = tracer

    # -- commit and query --------------------------------------------------------------------

    def commit_offset(
        self, client_host: str, group: str, topic: str, queue_id: int, offset: int
    ) -> None:
        """Store ``offset`` for (group, topic, queue), overwriting whatever was there.

        Mirrors ``ConsumerOffsetManager#commitOffset`` (broker/offset, RocketMQ 4.9.3);
        mechanisms.md "Pull processing" step 11; docs/reference.md §10.4: a smaller value than the stored one is accepted
        too (Java only logs a ``[NOTIFYME]`` warning naming ``client_host``).
        """
        key = topic + TOPIC_GROUP_SEPARATOR + group
        self.offset_table.setdefault(key, {})[queue_id] = offset

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        """The committed offset, or −1 if none. Mirrors ``ConsumerOffsetManager#queryOffset``
        (group, topic, queueId); docs/reference.md §10.4 step 1."""
        table = self.offset_table.get(topic + TOPIC_GROUP_SEPARATOR + group)
        if table is None:
            return -1
        return table.get(queue_id, -1)

    def query_offset_table(self, group: str, topic: str) -> dict[int, int] | None:
        """The live {queueId: offset} map of (group, topic), or ``None``.

        Mirrors ``ConsumerOffsetManager#queryOffset(group, topic)``.
        """
        return self.offset_table.get(topic + TOPIC_GROUP_SEPARATOR + group)

    def which_topic_by_consumer(self, group: str) -> list[str]:
        """Topics the group has offsets for, sorted (Java: a HashSet).

        Mirrors ``ConsumerOffsetManager#whichTopicByConsumer``.
        """
        topics = set()
        for key in self.offset_table:
            parts = _split_key(key)
            if len(parts) == 2 and parts[1] == group:
                topics.add(parts[0])
        return sorted(topics)

    def which_group_by_topic(self, topic: str) -> list[str]:
        """Groups that have offsets on the topic, sorted (Java: a HashSet).

        Mirrors ``ConsumerOffsetManager#whichGroupByTopic``.
        """
        groups = set()
        for key in self.offset_table:
            parts = _split_key(key)
            if len(parts) == 2 and parts[0] == topic:
                groups.add(parts[1])
        return sorted(groups)

    def clone_offset(self, src_group: str, dest_group: str, topic: str) -> None:
        """Copy the source group's offsets on ``topic`` to ``dest_group`` (replacing them).

        Mirrors ``ConsumerOffsetManager#cloneOffset``.
        """
        offsets = self.offset_table.get(topic + TOPIC_GROUP_SEPARATOR + src_group)
        if offsets is not None:
            self.offset_table[topic + TOPIC_GROUP_SEPARATOR + dest_group] = dict(offsets)

    def query_min_offset_in_all_group(
        self,
        topic: str,
        filter_groups: str | None,
        get_min_offset_in_queue: Callable[[str, int], int],
    ) -> dict[int, int]:
        """Per queue of ``topic``: the smallest committed offset of any group that is
        still at or above the queue's min offset (QUERY_CORRECTION_OFFSET).

        Mirrors ``ConsumerOffsetManager#queryMinOffsetInAllGroup`` (broker/offset,
        RocketMQ 4.9.3), including what it does to ``filterGroups``: Java walks
        ``offsetTable.keySet()`` and ``Iterator#remove``s every ``*@group`` key of
        each filter group, and a key set's iterator removes from the map itself. So the
        named groups' committed offsets are DELETED from the broker, on every topic
        (checked on a 4.9.3 broker: QUERY_CONSUMER_OFFSET then answers
        QUERY_NOT_FOUND), not merely left out of the minimum.

        Args:
            topic: the topic.
            filter_groups: comma-separated groups (blank: none).
            get_min_offset_in_queue: ``MessageStore#getMinOffsetInQueue(topic, queueId)``.
        """
        if filter_groups is not None and filter_groups.strip():
            for group in filter_groups.split(","):
                for key in list(self.offset_table):
                    parts = key.split(TOPIC_GROUP_SEPARATOR)
                    if len(parts) > 1 and parts[1] == group:
                        del self.offset_table[key]
        queue_min: dict[int, int] = {}
        for key, offsets in self.offset_table.items():
            if _split_key(key)[:1] != [topic]:
                continue
            for queue_id, offset in offsets.items():
                if offset >= get_min_offset_in_queue(topic, queue_id):
                    old = queue_min.get(queue_id)
                    queue_min[queue_id] = offset if old is None else min(offset, old)
        return queue_min

    def remove_offset(self, group: str) -> list[str]:
        """Drop every ``*@group`` entry (the admin "delete subscription group" path).

        Mirrors ``ConsumerOffsetManager#removeOffset``.

        Returns:
            The removed ``topic@group`` keys (Java logs them).
        """
        removed = [
            key
            for key in self.offset_table
            if group in key and len(parts := _split_key(key)) == 2 and parts[1] == group
        ]
        for key in removed:
            del self.offset_table[key]
        return removed

    def scan_unsubscribed_topic(
        self,
        find_subscription_data: Callable[[str, str], SubscriptionData | None],
        get_min_offset_in_queue: Callable[[str, int], int],
    ) -> list[str]:
        """Forget offsets of (topic, group) pairs nobody subscribes to and that the store
        has already deleted past.

        Mirrors ``ConsumerOffsetManager#scanUnsubscribedTopic`` and
        ``#offsetBehindMuchThanData`` (broker/offset, RocketMQ 4.9.3): an entry goes when
        the consumer manager has no subscription for it AND its table is non-empty AND
        every stored offset ≤ the queue's min offset in the store.

        Args:
            find_subscription_data: ``ConsumerManager#findSubscriptionData(group, topic)``.
            get_min_offset_in_queue: ``MessageStore#getMinOffsetInQueue(topic, queueId)``.

        Returns:
            The removed keys.
        """
        removed: list[str] = []
        for key, table in list(self.offset_table.items()):
            parts = _split_key(key)
            if len(parts) != 2:
                continue
            topic, group = parts
            if find_subscription_data(group, topic) is not None or not table:
                continue
            if all(off <= get_min_offset_in_queue(topic, qid) for qid, off in table.items()):
                del self.offset_table[key]
                removed.append(key)
        return removed

    # -- serialisation -----------------------------------------------------------------------

    def to_json_dict(self) -> dict[str, Any]:
        """``{"offsetTable":{"topic@group":{queueId:offset}}}`` with int keys, sorted."""
        return {
            "offsetTable": {
                key: {qid: self.offset_table[key][qid] for qid in sorted(self.offset_table[key])}
                for key in sorted(self.offset_table)
            }
        }

    def encode(self, pretty_format: bool = False) -> str:
        """The fastjson text of this manager; pretty as fastjson 1.2.x writes it.

        Mirrors ``ConsumerOffsetManager#encode(boolean)`` (``RemotingSerializable.toJson``);
        docs/reference.md §7.4. Compact: ``{"offsetTable":{"TopicTest@group1":{0:120,1:118}}}``.
        Pretty: see the module docstring (Integer-keyed maps stay on one line).
        """
        doc = self.to_json_dict()
        if not pretty_format:
            return fastjson.dumps(doc)
        table = doc["offsetTable"]
        if not table:
            return '{\n\t"offsetTable":{}\n}'
        lines = []
        for key, offsets in table.items():
            inner = ",".join(f"{qid}:{off}" for qid, off in offsets.items())
            # fastjson MapSerializer: no newline before non-String keys, one before "}".
            body = "{" + inner + "\n\t\t}" if offsets else "{}"
            lines.append("\t\t" + fastjson.dumps(key) + ":" + body)
        return '{\n\t"offsetTable":{\n' + ",\n".join(lines) + "\n\t}\n}"

    def decode(self, json_string: str) -> None:
        """Replace the table with the file's (queue-id keys quoted or not).

        Mirrors ``ConsumerOffsetManager#decode``.

        Raises:
            ValueError: the text is not a ConsumerOffsetManager object.
        """
        obj = fastjson.loads(json_string)
        if not isinstance(obj, dict):
            raise ValueError("consumerOffset.json: expected a JSON object")
        raw = obj.get("offsetTable") or {}
        if not isinstance(raw, dict):
            raise ValueError("consumerOffset.json: offsetTable must be an object")
        table: dict[str, dict[int, int]] = {}
        for key, offsets in raw.items():
            if not isinstance(offsets, dict):
                raise ValueError(f"consumerOffset.json: offsets of {key!r} must be an object")
            table[str(key)] = {int(q): int(o) for q, o in offsets.items()}
        self.offset_table = table

    def config_file_path(self) -> Path | None:
        """``<config_dir>/consumerOffset.json``."""
        return None if self.config_dir is None else self.config_dir / CONSUMER_OFFSET_JSON
