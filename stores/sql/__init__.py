"""The SQL system of record (SQLAlchemy 2): memories, their history, judgments, the knowledge graph's truth
(entities/relations), raw inputs and the projection outbox.

Everything else (Qdrant vectors, the FalkorDB/Neo4j graph) is a projection that can be rebuilt from these
tables. SQLite (default, one file) and PostgreSQL (postgresql+psycopg) run the same code. `SQLStore` is
composed of one class per concept over `SQLStoreBase`, which owns the engine, transactions and locks.

Modules: base.py (engine, transactions, locks, projection intents) with statistics.py (planner statistics);
schema.py (the tables and their dict shapes), migrations.py, core_rows.py (rows through SQLAlchemy Core),
values.py (ids, times, scope conditions); one module per concept: memories.py, judgments.py, graph_truth.py
(entities.py + relations.py over graph_rows.py), outbox.py, purge.py, lifecycle.py and lifecycle_undo.py,
feedback.py, transfer.py, profiles.py, links.py, run_undo.py (a failed add run undone), findings.py (the judgment log's audit findings and daily
reports), measures.py (what the server's metrics read), store_settings.py (settings the contents depend on, recorded
once: the encoder precision that wrote the vectors).
"""

from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.feedback import FEEDBACK_VALUES, MemoryFeedback
from memoryx.stores.sql.findings import JudgmentAudits  # audit findings and daily reports
from memoryx.stores.sql.graph_truth import GraphTruth
from memoryx.stores.sql.judgments import JUDGMENT_STATUSES, VERIFICATION_RESULTS, JudgmentLog
from memoryx.stores.sql.lifecycle import MemoryLifecycle
from memoryx.stores.sql.lifecycle_undo import ConsolidationUndo
from memoryx.stores.sql.links import MemoryLinks  # memory <-> memory links (agent tools)
from memoryx.stores.sql.measures import StoreMeasures  # what the server's metrics read
from memoryx.stores.sql.memories import MemoryRecords
from memoryx.stores.sql.migrations import MIGRATIONS, SCHEMA_VERSION
from memoryx.stores.sql.outbox import PROJECTION_KINDS, ProjectionOutbox
from memoryx.stores.sql.profiles import ProfileValues  # user and group profiles
from memoryx.stores.sql.purge import ScopePurge
from memoryx.stores.sql.run_undo import RunUndo  # a failed add run's rows undone
from memoryx.stores.sql.schema import (
    JUDGMENT_FIELDS,
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
from memoryx.stores.sql.store_settings import StoreSettings  # what the store's contents depend on
from memoryx.stores.sql.transfer import HistoryTransfer  # a memory's history replaced on import


class SQLStore(MemoryRecords, JudgmentLog, GraphTruth, ProjectionOutbox, ScopePurge, MemoryLifecycle, ConsolidationUndo,
               MemoryFeedback, HistoryTransfer, ProfileValues, MemoryLinks, JudgmentAudits,
               StoreMeasures, RunUndo, StoreSettings):
    """System of record. Thread-safe: each method is one short transaction on its own session."""


__all__ = [
    "FEEDBACK_VALUES", "JUDGMENT_FIELDS", "JUDGMENT_STATUSES", "MIGRATIONS", "PROJECTION_KINDS", "SCHEMA_VERSION",
    "VERIFICATION_RESULTS", "Base", "EntityRow", "GraphTruth", "HistoryRow", "JudgmentLog", "JudgmentRow",
    "MemoryLifecycle", "MemoryRecords", "MemoryRow", "OutboxRow", "ProjectionOutbox", "RawInputRow", "RelationRow", "SQLStore", "ScopePurge",
    "SQLStoreBase", "SchemaVersion",
]
