"""The SQL system of record (SQLAlchemy 2): memories, their history, judgments, the knowledge graph's truth
(entities/relations), raw inputs and the projection outbox.

Everything else (Qdrant vectors, the FalkorDB/Neo4j graph) is a projection that can be rebuilt from these
tables. SQLite (default, one file) and PostgreSQL (postgresql+psycopg) run the same code. `SQLStore` is
composed of one class per concept over `SQLStoreBase`, which owns the engine, transactions and locks.
"""

from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.graph_truth import GraphTruth
from memoryx.stores.sql.judgments import JUDGMENT_STATUSES, VERIFICATION_RESULTS, JudgmentLog
from memoryx.stores.sql.memories import MemoryRecords
from memoryx.stores.sql.lifecycle import MemoryLifecycle
from memoryx.stores.sql.outbox import PROJECTION_KINDS, ProjectionOutbox
from memoryx.stores.sql.feedback import FEEDBACK_VALUES, MemoryFeedback  # issue 12
from memoryx.stores.sql.transfer import HistoryTransfer  # issue 12: import
from memoryx.stores.sql.purge import ScopePurge
from memoryx.stores.sql.profiles import ProfileValues  # issue 13: user and group profiles
from memoryx.stores.sql.links import MemoryLinks  # issue 13: memory <-> memory links (agent tools)
from memoryx.stores.sql.schema import (
    JUDGMENT_FIELDS,
    MIGRATIONS,
    SCHEMA_VERSION,
    Base,
    EntityRow,
    HistoryRow,
    JudgmentRow,
    MemoryRow,
    OutboxRow,
    RawInputRow,
    RelationRow,
    SchemaVersion,
)


class SQLStore(MemoryRecords, JudgmentLog, GraphTruth, ProjectionOutbox, ScopePurge, MemoryLifecycle, MemoryFeedback, HistoryTransfer, ProfileValues, MemoryLinks):
    """System of record. Thread-safe: each method is one short transaction on its own session."""


__all__ = [
    "JUDGMENT_FIELDS", "JUDGMENT_STATUSES", "MIGRATIONS", "PROJECTION_KINDS", "SCHEMA_VERSION",
    "VERIFICATION_RESULTS", "Base", "EntityRow", "GraphTruth", "HistoryRow", "JudgmentLog", "JudgmentRow",
    "MemoryLifecycle", "MemoryRecords", "MemoryRow", "OutboxRow", "ProjectionOutbox", "RawInputRow", "RelationRow", "SQLStore", "ScopePurge",
    "SQLStoreBase", "SchemaVersion",
]
