"""HA replication between a master's store and its slaves' (store/ha, RocketMQ 4.9.3).

One module per mechanism (docs/design.md §6.1), mechanisms.md "HA replication":
``ha_service`` (``HAService``, ``AcceptSocketService``), ``ha_connection`` (``HAConnection``
with its ``ReadSocketService`` and ``WriteSocketService``), ``group_transfer_service``
(``GroupTransferService``, ``GroupCommitRequest``), ``ha_client`` (the slave's ``HAClient``).
"""

from mqlab.store.ha.group_transfer_service import GroupCommitRequest, GroupTransferService
from mqlab.store.ha.ha_client import HAClient
from mqlab.store.ha.ha_connection import HEADER_SIZE, REPORT_SIZE, HAConnection
from mqlab.store.ha.ha_service import HAService

__all__ = [
    "HAService",
    "HAConnection",
    "HAClient",
    "GroupTransferService",
    "GroupCommitRequest",
    "HEADER_SIZE",
    "REPORT_SIZE",
]
